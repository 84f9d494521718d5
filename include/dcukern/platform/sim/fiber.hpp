// Fibers for the simulated device: one stack and one saved stack pointer per simulated thread, switched
// cooperatively on one host thread. x86-64 (System V): a context switch saves the callee-saved registers
// on the stack it leaves and restores them from the one it enters, so a switch costs a few nanoseconds (no
// system call, unlike swapcontext). The fibers share the thread's floating-point environment (the SSE and
// x87 control words are not switched: device code does not change them).
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define DCUKERN_SIM_ASAN 1
#else
#define DCUKERN_SIM_ASAN 0
#endif

#if !defined(__x86_64__)
#error "the simulated device needs an x86-64 host"
#endif

namespace dcukern::sim {

// Saves the running context on its stack, stores that stack pointer in *from, and resumes the context
// whose stack pointer is `to`.
__attribute__((naked, noinline)) inline void switch_context(void** /*from*/, void* /*to*/) {
  asm("pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
}

// AddressSanitizer (-fsanitize=address) follows the switches between stacks when told of each: before
// one, the stack entered (its lowest address and size) and where to keep the leaving context's fake
// stack (null when the leaving fiber has ended); after one, in the context entered, that context's saved
// fake stack and, where wanted, the bounds of the stack it came from.
inline void asan_before_switch(void** fake_stack, const void* bottom, size_t size) {
#if DCUKERN_SIM_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
  (void)fake_stack, (void)bottom, (void)size;
#endif
}
inline void asan_after_switch(void* fake_stack, const void** from_bottom, size_t* from_size) {
#if DCUKERN_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
#else
  (void)fake_stack, (void)from_bottom, (void)from_size;
#endif
}

// `count` stacks of `bytes` each, mapped once (pages are committed as they are touched) with a guard page
// below each, so that a simulated thread that overflows its stack faults instead of corrupting another's.
class StackPool {
 public:
  static constexpr size_t kGuard = 4096;
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() { release(); }

  // At least `count` stacks of `bytes` (a multiple of 4096).
  void reserve(size_t count, size_t bytes) {
    if (count <= count_ && bytes == bytes_) return;
    release();
    const size_t stride = bytes + kGuard;
    void* p = mmap(nullptr, count * stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "dcukern simulated device: cannot map %zu fiber stacks\n", count);
      std::abort();
    }
    for (size_t i = 0; i < count; ++i) mprotect(static_cast<char*>(p) + i * stride, kGuard, PROT_NONE);
    base_ = static_cast<char*>(p);
    count_ = count;
    bytes_ = bytes;
  }
  const void* bottom(size_t i) const { return base_ + i * (bytes_ + kGuard) + kGuard; }
  size_t bytes() const { return bytes_; }

  // The initial stack pointer of a fiber on stack i that starts in entry() (which must never return):
  // switch_context() restores six zero registers, then returns into entry with the stack aligned as after
  // a call.
  void* start(size_t i, void (*entry)()) const {
    char* top = base_ + (i + 1) * (bytes_ + kGuard);
    auto* sp = reinterpret_cast<uint64_t*>(top);
    *--sp = 0;                                  // entry's return address: never used
    *--sp = reinterpret_cast<uint64_t>(entry);  // switch_context's ret goes here (sp % 16 == 0 above it)
    for (int r = 0; r < 6; ++r) *--sp = 0;      // rbp rbx r12 r13 r14 r15
    return sp;
  }

 private:
  void release() {
    if (base_) munmap(base_, count_ * (bytes_ + kGuard));
    base_ = nullptr;
    count_ = bytes_ = 0;
  }
  char* base_ = nullptr;
  size_t count_ = 0, bytes_ = 0;
};

}  // namespace dcukern::sim
