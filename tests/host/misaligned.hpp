// Pointers for the validators' tests, never dereferenced: one moved by a few bytes (the element-alignment
// checks), and views 1 TiB apart, so that no two overlap whatever shape a test asks for (the aliasing
// checks, core/overlap.hpp, would reject the call).
#pragma once
#include <cstdint>

template <class T>
T* moved_by_bytes(T* p, int bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + bytes);
}

template <class T>
T* fake_view(uintptr_t slot) {
  return reinterpret_cast<T*>(slot << 40);
}
