// A pointer moved by a few bytes, for the validators' element-alignment checks (never dereferenced).
#pragma once
#include <cstdint>

template <class T>
T* moved_by_bytes(T* p, int bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + bytes);
}
