// The simulated device's scheduler: runs a grid one block at a time on the calling host thread, each
// thread of the block a fiber (sim/fiber.hpp) that runs until it reaches a barrier, a wave operation or
// its end, then yields. What the simulation keeps of the device's semantics:
//   - __syncthreads waits for every thread of the block that has not exited; threads that wait at
//     different barriers, or a barrier that some live threads never reach, are reported and abort the run
//     (on the device, undefined behaviour);
//   - wave operations (shuffles, ballots, __syncwarp) wait for the live lanes of their mask, wave 32;
//   - shared memory is one copy per kernel (blocks run one after another), atomics are plain
//     read-modify-writes (one host thread), and global memory is host memory.
// Between two waits a thread runs alone, the lower thread indices first each round (DCUKERN_SIM_ORDER=
// descending: the higher first). A missing barrier then shows as wrong data, in one order or the other:
// a thread reads before another has written, or writes over what another has yet to read.
// What it does not keep: concurrency between blocks (a kernel that waits for another block to progress
// deadlocks here), timing, caches and the memory model (a missing fence is not seen), and anything written
// in PTX. It checks kernel logic, not speed.
#pragma once
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dcukern/platform/sim/fiber.hpp"

namespace dcukern::sim {

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};

constexpr int kSimWarp = 32;
constexpr unsigned kSimMaxThreads = 1024;

enum class Wait : uint8_t { none, block, warp, done };

struct Engine {
  // The block being run.
  uint3 thread_idx{0, 0, 0}, block_idx{0, 0, 0};
  uint3 index_of[kSimMaxThreads] = {};  // threadIdx of each linear thread index
  dim3 block_dim, grid_dim;
  unsigned threads = 0, current = 0;
  // Per thread: saved stack pointer, what it waits for, its wave-operation mask and vote.
  void* sp[kSimMaxThreads] = {};
  Wait wait[kSimMaxThreads] = {};
  uint32_t mask[kSimMaxThreads] = {};
  uint64_t word[2][kSimMaxThreads] = {};  // values exchanged by wave operations: two rounds, per thread
  uint32_t warp_round[kSimMaxThreads / kSimWarp] = {};  // wave operations each wave has completed
  int vote[kSimMaxThreads] = {};
  int block_votes = 0;  // threads whose __syncthreads_* predicate held, at the last block barrier
  void* scheduler_sp = nullptr;
  const void* where[kSimMaxThreads] = {};  // the code address each thread waits at (for reports)
  const char* barrier_file[kSimMaxThreads] = {};  // the source line of the block barrier it waits at
  int barrier_line[kSimMaxThreads] = {};
  void* fake_stack[kSimMaxThreads] = {};  // AddressSanitizer's per-context state (sim/fiber.hpp)
  void* scheduler_fake_stack = nullptr;
  const void* scheduler_bottom = nullptr;
  size_t scheduler_size = 0;
  void (*body)(void*) = nullptr;
  void* body_arg = nullptr;
  bool running = false;
  bool reverse = false;  // each round runs the threads from the highest index down (DCUKERN_SIM_ORDER)
  StackPool stacks;
};

inline Engine the_engine;  // constant-initialised: no guard on the many reads of threadIdx
inline Engine& engine() { return the_engine; }

inline void set_thread(Engine& e, unsigned t) {
  e.current = t;
  e.thread_idx = e.index_of[t];
}

// The running thread stops until the scheduler releases it. Not inlined: its return address tells
// where the thread waits (fail() reports it).
__attribute__((noinline)) inline void yield_as(Wait w, uint32_t lanes = 0xffffffffu) {
  Engine& e = engine();
  const unsigned t = e.current;
  e.where[t] = __builtin_return_address(0);
  e.wait[t] = w;
  e.mask[t] = lanes;
  asan_before_switch(w == Wait::done ? nullptr : &e.fake_stack[t], e.scheduler_bottom, e.scheduler_size);
  switch_context(&e.sp[t], e.scheduler_sp);
  asan_after_switch(e.fake_stack[t], nullptr, nullptr);
  set_thread(e, t);
}

[[noreturn]] inline void fiber_entry() {
  Engine& e = engine();
  asan_after_switch(nullptr, &e.scheduler_bottom, &e.scheduler_size);
  e.body(e.body_arg);
  yield_as(Wait::done);
  std::abort();  // a finished fiber is never resumed
}

// A code address as module+offset (addr2line -f -C -i -e MODULE OFFSET names the source line).
inline void print_address(const void* a) {
  Dl_info info{};
  if (a && dladdr(a, &info) && info.dli_fbase && info.dli_fname)
    std::fprintf(stderr, " %s+0x%zx", info.dli_fname, size_t(uintptr_t(a) - uintptr_t(info.dli_fbase)));
  else std::fprintf(stderr, " %p", a);
}

// Reports what each thread of the block waits at, as runs of consecutive threads: the wait, the address of
// the wait and, where the code keeps frame pointers (-fno-omit-frame-pointer), the callers of the run's
// first thread, read from its stack (the frame pointer switch_context saved, then the chain).
inline void report_waits(const Engine& e) {
  static const char* const kWait[] = {"runnable", "block barrier", "wave operation", "ended"};
  for (unsigned t = 0; t < e.threads;) {
    unsigned u = t + 1;
    while (u < e.threads && e.wait[u] == e.wait[t] && e.where[u] == e.where[t] &&
           e.barrier_line[u] == e.barrier_line[t])
      ++u;
    std::fprintf(stderr, "  threads %u-%u: %s at", t, u - 1, kWait[int(e.wait[t])]);
    if (e.wait[t] == Wait::block) std::fprintf(stderr, " %s:%d,", e.barrier_file[t], e.barrier_line[t]);
    print_address(e.where[t]);
    if (e.wait[t] == Wait::block || e.wait[t] == Wait::warp) {
      const auto lo = uintptr_t(e.stacks.bottom(t)), hi = lo + e.stacks.bytes();
      auto fp = static_cast<const uintptr_t*>(e.sp[t])[5];  // rbp, below the return address (fiber.hpp)
      std::fprintf(stderr, "; called from");
      for (int depth = 0; depth < 16 && fp >= lo && fp + 16 <= hi && fp % 8 == 0; ++depth) {
        const auto* frame = reinterpret_cast<const uintptr_t*>(fp);
        print_address(reinterpret_cast<const void*>(frame[1]));
        if (frame[0] <= fp) break;
        fp = frame[0];
      }
    }
    std::fprintf(stderr, "\n");
    t = u;
  }
}

[[noreturn]] inline void fail(const char* what) {
  Engine& e = engine();
  std::fprintf(stderr, "dcukern simulated device: %s (block %u,%u,%u, thread %u)\n", what, e.block_idx.x,
               e.block_idx.y, e.block_idx.z, e.current);
  if (e.running) report_waits(e);
  std::abort();
}

// Wave w's waiting lanes may go on when every live lane of their masks waits at a wave operation.
inline bool release_warp(Engine& e, unsigned first, unsigned end) {
  uint32_t wanted = 0, waiting = 0, live = 0;
  for (unsigned t = first; t < end; ++t) {
    const uint32_t bit = 1u << (t - first);
    if (e.wait[t] != Wait::done) live |= bit;
    if (e.wait[t] == Wait::warp) {
      waiting |= bit;
      wanted |= e.mask[t];
    }
  }
  if (!waiting || (wanted & live & ~waiting)) return false;
  for (unsigned t = first; t < end; ++t)
    if (e.wait[t] == Wait::warp) e.wait[t] = Wait::none;
  ++e.warp_round[first / kSimWarp];
  return true;
}

// Runs body(arg) as every thread of block `block_idx`: rounds in which each runnable thread runs until
// it waits, then releases the waves, or the block barrier, whose threads have all arrived.
inline void run_block(Engine& e, uint3 block_idx, void (*body)(void*), void* arg) {
  e.block_idx = block_idx;
  e.body = body;
  e.body_arg = arg;
  for (unsigned t = 0; t < e.threads; ++t) {
    e.sp[t] = e.stacks.start(t, fiber_entry);
    e.wait[t] = Wait::none;
  }
  for (;;) {
    for (unsigned i = 0; i < e.threads; ++i) {
      const unsigned t = e.reverse ? e.threads - 1 - i : i;
      if (e.wait[t] != Wait::none) continue;
      set_thread(e, t);
      asan_before_switch(&e.scheduler_fake_stack, e.stacks.bottom(t), e.stacks.bytes());
      switch_context(&e.scheduler_sp, e.sp[t]);
      asan_after_switch(e.scheduler_fake_stack, nullptr, nullptr);
    }
    bool released = false;
    for (unsigned w = 0; w < e.threads; w += kSimWarp)
      released |= release_warp(e, w, std::min(w + kSimWarp, e.threads));
    if (released) continue;
    unsigned live = 0, at_barrier = 0, votes = 0;
    for (unsigned t = 0; t < e.threads; ++t) {
      if (e.wait[t] == Wait::done) continue;
      ++live;
      if (e.wait[t] == Wait::block) ++at_barrier, votes += e.vote[t] != 0;
    }
    if (live == 0) return;
    if (at_barrier != live) fail("a barrier or wave operation that not every live thread reaches (deadlock)");
    for (unsigned t = 0, first = e.threads; t < e.threads; ++t) {
      if (e.wait[t] != Wait::block) continue;
      if (first == e.threads) first = t;
      else if (e.barrier_line[t] != e.barrier_line[first] || std::strcmp(e.barrier_file[t], e.barrier_file[first]))
        fail("the block's threads wait at different barriers (divergence)");
    }
    e.block_votes = int(votes);
    for (unsigned t = 0; t < e.threads; ++t)
      if (e.wait[t] == Wait::block) e.wait[t] = Wait::none;
  }
}

// Runs the whole grid, blocks in order of their linear index.
inline bool run_grid(dim3 grid, dim3 block, void (*body)(void*), void* arg) {
  Engine& e = engine();
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > kSimMaxThreads || grid.x == 0 || grid.y == 0 || grid.z == 0) return false;
  if (e.running) fail("a kernel launched from device code");
  e.running = true;
  const char* order = std::getenv("DCUKERN_SIM_ORDER");
  e.reverse = order && std::strcmp(order, "descending") == 0;
  e.stacks.reserve(kSimMaxThreads, 256 * 1024);
  e.threads = unsigned(threads);
  e.block_dim = block;
  for (unsigned t = 0; t < e.threads; ++t)
    e.index_of[t] = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
  e.grid_dim = grid;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) run_block(e, {x, y, z}, body, arg);
  e.running = false;
  return true;
}

}  // namespace dcukern::sim
