// The simulated device's memory (simMalloc / simFree). Allocations are placed one after the other at 256-byte
// boundaries in one reserved range of host address space, as a GPU's allocator packs small buffers, and never
// reused; a freed allocation's whole pages go back to the host. So a buffer's neighbours are the same on every
// machine: a test whose view runs past its own buffer meets the same next buffer everywhere, and a validation
// verdict that depends on where buffers lie (an overlap with a buffer the call writes) is one verdict, not the
// host heap's accident. Where the range cannot be reserved or is used up, and in builds with
// AddressSanitizer (DCUKERN_SIM_SANITIZE: its red zones catch out-of-bounds accesses), allocations come from the
// host heap. Linux (mmap, madvise).
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define DCUKERN_SIM_HEAP_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DCUKERN_SIM_HEAP_MEMORY 1
#endif
#endif

namespace dcukern::sim {

class Memory {
 public:
  static constexpr size_t kAlign = 256;
  static Memory& instance() {  // never destroyed: buffers of static objects may be freed at exit
    static Memory* m = new Memory;
    return *m;
  }
  void* allocate(size_t bytes) {
    bytes = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
    if (base_ && bytes <= kReserve - used_) {
      char* p = base_ + used_;
      used_ += bytes;
      packed_[p] = bytes;
      return p;
    }
    return ::operator new(bytes, std::align_val_t(kAlign), std::nothrow);
  }
  void release(void* p) {
    const auto it = packed_.find(p);
    if (it == packed_.end()) {
      ::operator delete(p, std::align_val_t(kAlign));
      return;
    }
    // The whole pages inside the allocation go back to the host (read as zeros if touched again).
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) / kPage * kPage;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + it->second) / kPage * kPage;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    packed_.erase(it);
  }
  // Whether allocations are packed (else they come from the host heap: see above).
  bool packing() const { return base_ != nullptr; }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

 private:
  static constexpr size_t kReserve = size_t(1) << 40;  // 1 TiB of address space, backed only where touched
  static constexpr size_t kPage = 4096;
  Memory() {
#ifndef DCUKERN_SIM_HEAP_MEMORY
    void* r = mmap(nullptr, kReserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r != MAP_FAILED) base_ = static_cast<char*>(r);
#endif
  }
  char* base_ = nullptr;
  size_t used_ = 0;
  std::map<void*, size_t> packed_;  // live allocations in the range, by address
};

}  // namespace dcukern::sim
