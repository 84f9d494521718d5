// dcukern-audit's smoke runs: a device copy of a host vector, freed at scope exit (ptr null when the
// allocation failed; the op call then reports the null pointer).
#pragma once
#include <vector>

#include "dcukern/platform/runtime.hpp"

namespace dcukern::smoke {

struct DeviceCopy {
  void* ptr = nullptr;
  template <class T>
  explicit DeviceCopy(const std::vector<T>& h) {
    if (runtime_malloc(&ptr, h.size() * sizeof(T)) == kRuntimeSuccess)
      (void)runtime_copy_to_device(ptr, h.data(), h.size() * sizeof(T));
    else
      ptr = nullptr;
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() {
    if (ptr) (void)runtime_free(ptr);
  }
};

}  // namespace dcukern::smoke
