// Tests of the simulated device itself (platform/sim/): the index variables over 3-D grids, barriers and
// their votes, wave shuffles and ballots as the CUDA programming guide defines them, the block reductions
// and scans built on them, exited threads, launch errors, graph capture and replay, the aborts on a
// divergent barrier or a wave operation some lanes never reach (in a child process), and where allocations lie.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <cstdint>
#include <vector>

#include "dcukern/platform/block.hpp"
#include "dcukern/platform/runtime.hpp"
#include "dcukern/platform/warp.hpp"

namespace {

using dcukern::launch_plain;

// Device memory holding `n` ints, read back as a vector.
struct Ints {
  int* d = nullptr;
  size_t n;
  explicit Ints(size_t count, int fill = -1) : n(count) {
    REQUIRE(simMalloc(reinterpret_cast<void**>(&d), n * sizeof(int)) == simSuccess);
    std::vector<int> h(n, fill);
    simMemcpy(d, h.data(), n * sizeof(int), simMemcpyHostToDevice);
  }
  ~Ints() { simFree(d); }
  std::vector<int> get() const {
    std::vector<int> h(n);
    simMemcpy(h.data(), d, n * sizeof(int), simMemcpyDeviceToHost);
    return h;
  }
};

__global__ void write_ids(int* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = int(block * 10000 + thread);
}

// Each thread's value of the shuffle `kind` (0 index, 1 xor, 2 up, 3 down) of its lane number.
__global__ void shuffles(int* out, int kind, int arg, int width) {
  const int lane = int(threadIdx.x % 32);
  int r = 0;
  if (kind == 0) r = __shfl_sync(0xffffffffu, lane, arg, width);
  if (kind == 1) r = __shfl_xor_sync(0xffffffffu, lane, arg, width);
  if (kind == 2) r = __shfl_up_sync(0xffffffffu, lane, unsigned(arg), width);
  if (kind == 3) r = __shfl_down_sync(0xffffffffu, lane, unsigned(arg), width);
  out[threadIdx.x] = r;
}

// Votes: ballot of odd lanes, then __syncthreads_count / _or / _and of threadIdx.x < limit.
__global__ void votes(int* out, int limit) {
  const bool below = int(threadIdx.x) < limit;
  const unsigned ballot = __ballot_sync(0xffffffffu, threadIdx.x % 2 == 1);
  const int count = __syncthreads_count(below), any = __syncthreads_or(below), all = __syncthreads_and(below);
  if (threadIdx.x == 0) out[0] = int(ballot), out[1] = count, out[2] = any, out[3] = all;
}

// Block sum and exclusive scan of v = threadIdx.x * 3 + 1 over 512 threads.
__global__ void reduce_and_scan(int* out) {
  using Reduce = dcukern::BlockReduce<int, 512>;
  using Scan = dcukern::BlockScan<int, 512>;
  __shared__ typename Reduce::storage_type rs;
  __shared__ typename Scan::storage_type ss;
  const int v = int(threadIdx.x) * 3 + 1;
  const int sum = Reduce::sum(v, rs);
  int total = 0;
  out[1 + threadIdx.x] = Scan::exclusive_sum(v, total, ss);
  if (threadIdx.x == 0) out[0] = sum;
  if (threadIdx.x == 1) out[513] = total;
}

// Threads at or above `keep` exit first; the others still meet at a barrier and exchange through shared memory.
__global__ void early_exit(int* out, int keep) {
  __shared__ int s[256];
  if (int(threadIdx.x) >= keep) return;
  s[threadIdx.x] = int(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % unsigned(keep)];
}

__global__ void add_one(int* p) { p[threadIdx.x] += 1; }

__global__ void divergent_barrier(int* out) {
  if (threadIdx.x < 32) __syncthreads();
  else __syncthreads();
  out[threadIdx.x] = 1;
}

// Lanes 16-31 go on to a barrier instead of the shuffle that names them (exited lanes would be fine).
__global__ void partial_shuffle(int* out) {
  if (threadIdx.x % 32 < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
  __syncthreads();
}

// Whether `run` ends its process with SIGABRT (run in a child).
template <class F>
bool aborts(F run) {
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {  // the child: quiet, and without the test framework's crash handler (it would report a crash)
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::signal(SIGABRT, SIG_DFL);
    run();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

}  // namespace

TEST_CASE("simulated device: index variables over a 3-D grid of 3-D blocks") {
  const dim3 grid(3, 2, 2), block(4, 3, 5);
  Ints out(3 * 2 * 2 * 4 * 3 * 5);
  REQUIRE(launch_plain(write_ids, grid, block, 0, nullptr, out.d) == simSuccess);
  const auto h = out.get();
  for (int b = 0; b < 12; ++b)
    for (int t = 0; t < 60; ++t) CHECK(h[size_t(b * 60 + t)] == b * 10000 + t);
}

TEST_CASE("simulated device: shuffles follow CUDA's definitions, widths 32 and 8") {
  Ints out(64);
  for (int width : {32, 8})
    for (int arg : {0, 1, 3, 5}) {
      for (int kind = 0; kind < 4; ++kind) {
        REQUIRE(launch_plain(shuffles, dim3(1), dim3(64), 0, nullptr, out.d, kind, arg, width) == simSuccess);
        const auto h = out.get();
        for (int t = 0; t < 64; ++t) {
          const int lane = t % 32, base = lane & ~(width - 1), in_seg = lane % width;
          int want = lane;
          if (kind == 0) want = base + arg % width;
          if (kind == 1) want = ((lane ^ arg) & ~(width - 1)) == base ? lane ^ arg : lane;
          if (kind == 2) want = in_seg >= arg ? lane - arg : lane;
          if (kind == 3) want = in_seg + arg < width ? lane + arg : lane;
          INFO("kind " << kind << " arg " << arg << " width " << width << " thread " << t);
          CHECK(h[size_t(t)] == want);
        }
      }
    }
}

TEST_CASE("simulated device: ballots and barrier votes") {
  Ints out(4);
  for (int limit : {0, 1, 100, 128}) {
    REQUIRE(launch_plain(votes, dim3(1), dim3(128), 0, nullptr, out.d, limit) == simSuccess);
    const auto h = out.get();
    CHECK(unsigned(h[0]) == 0xAAAAAAAAu);
    CHECK(h[1] == limit);
    CHECK(h[2] == (limit > 0));
    CHECK(h[3] == (limit == 128));
  }
}

TEST_CASE("simulated device: block reductions and scans of the platform layer") {
  Ints out(514);
  REQUIRE(launch_plain(reduce_and_scan, dim3(2), dim3(512), 0, nullptr, out.d) == simSuccess);
  const auto h = out.get();
  int run = 0;
  for (int t = 0; t < 512; ++t) {
    CHECK(h[size_t(1 + t)] == run);
    run += t * 3 + 1;
  }
  CHECK(h[0] == run);
  CHECK(h[513] == run);
}

TEST_CASE("simulated device: threads that exit do not hold a barrier") {
  Ints out(256);
  REQUIRE(launch_plain(early_exit, dim3(1), dim3(256), 0, nullptr, out.d, 100) == simSuccess);
  const auto h = out.get();
  for (int t = 0; t < 256; ++t) CHECK(h[size_t(t)] == (t < 100 ? (t + 1) % 100 : -1));
}

TEST_CASE("simulated device: launch errors run nothing") {
  Ints out(4, 0);
  CHECK(launch_plain(add_one, dim3(1), dim3(1025), 0, nullptr, out.d) == simErrorInvalidConfiguration);
  CHECK(launch_plain(add_one, dim3(0), dim3(4), 0, nullptr, out.d) == simErrorInvalidConfiguration);
  CHECK(launch_plain(add_one, dim3(1), dim3(4), 16, nullptr, out.d) == simErrorInvalidConfiguration);
  CHECK(simGetLastError() == simErrorInvalidConfiguration);
  CHECK(simGetLastError() == simSuccess);
  CHECK(out.get() == std::vector<int>(4, 0));
}

TEST_CASE("simulated device: a captured graph runs its steps at each replay, in order") {
  Ints out(4, 0);
  simStream_t s = nullptr;
  REQUIRE(simStreamCreate(&s) == simSuccess);
  REQUIRE(simStreamBeginCapture(s, simStreamCaptureModeGlobal) == simSuccess);
  REQUIRE(simMemsetAsync(out.d, 0, 4 * sizeof(int), s) == simSuccess);
  REQUIRE(launch_plain(add_one, dim3(1), dim3(4), 0, s, out.d) == simSuccess);
  REQUIRE(launch_plain(add_one, dim3(1), dim3(2), 0, s, out.d) == simSuccess);
  simGraph_t g = nullptr;
  REQUIRE(simStreamEndCapture(s, &g) == simSuccess);
  CHECK(out.get() == std::vector<int>(4, 0));  // nothing ran during the capture
  simGraphExec_t exec = nullptr;
  REQUIRE(simGraphInstantiate(&exec, g) == simSuccess);
  REQUIRE(simMemset(out.d, 7, 4 * sizeof(int)) == simSuccess);
  for (int rep = 0; rep < 2; ++rep) {
    REQUIRE(simGraphLaunch(exec, s) == simSuccess);
    CHECK(out.get() == std::vector<int>{2, 2, 1, 1});  // the memset first, then both launches
  }
  simGraphExecDestroy(exec);
  simGraphDestroy(g);
  simStreamDestroy(s);
}

TEST_CASE("simulated device: a divergent barrier or a wave operation some lanes skip aborts the run") {
  Ints out(64, 0);
  CHECK(aborts([&] { (void)launch_plain(divergent_barrier, dim3(1), dim3(64), 0, nullptr, out.d); }));
  CHECK(aborts([&] { (void)launch_plain(partial_shuffle, dim3(1), dim3(64), 0, nullptr, out.d); }));
  CHECK_FALSE(aborts([&] { (void)launch_plain(add_one, dim3(1), dim3(64), 0, nullptr, out.d); }));
}

TEST_CASE("simulated device: allocations lie one after the other at 256-byte boundaries, the same on every machine") {
  if (!dcukern::sim::Memory::instance().packing()) {
    MESSAGE("allocations come from the host heap here (AddressSanitizer, or no address range): not checked");
    return;
  }
  void *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(simMalloc(&a, 1000) == simSuccess);
  REQUIRE(simMalloc(&b, 256) == simSuccess);
  REQUIRE(simFree(b) == simSuccess);  // never reused
  REQUIRE(simMalloc(&c, 1) == simSuccess);
  CHECK(reinterpret_cast<uintptr_t>(a) % 256 == 0);
  CHECK(static_cast<char*>(b) == static_cast<char*>(a) + 1024);
  CHECK(static_cast<char*>(c) == static_cast<char*>(b) + 256);
  simFree(a);
  simFree(c);
}
