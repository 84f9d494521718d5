// Fibers for the simulated device: one stack and one saved stack pointer per simulated thread, switched
// cooperatively on one host thread. x86-64 (System V): a context switch saves the callee-saved registers
// and the SSE / x87 control words on the stack it leaves and restores them from the one it enters, so a
// switch costs a few nanoseconds (no system call, unlike swapcontext).
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

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
      "subq $8, %rsp\n\t"
      "stmxcsr (%rsp)\n\t"
      "fnstcw 4(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\t"
      "fldcw 4(%rsp)\n\t"
      "addq $8, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
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
  // The initial stack pointer of a fiber on stack i that starts in entry() (which must never return):
  // switch_context() restores six zero registers and the current control words, then returns into entry
  // with the stack aligned as after a call.
  void* start(size_t i, void (*entry)()) const {
    char* top = base_ + (i + 1) * (bytes_ + kGuard);
    auto* sp = reinterpret_cast<uint64_t*>(top);
    *--sp = 0;                                  // entry's return address: never used
    *--sp = reinterpret_cast<uint64_t>(entry);  // switch_context's ret goes here (sp % 16 == 0 above it)
    for (int r = 0; r < 6; ++r) *--sp = 0;      // rbp rbx r12 r13 r14 r15
    *--sp = 0;
    uint32_t mxcsr = 0;
    uint16_t fpucw = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    auto* words = reinterpret_cast<uint32_t*>(sp);
    words[0] = mxcsr;
    words[1] = fpucw;
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
