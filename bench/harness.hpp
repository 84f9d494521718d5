// Benchmark harness (CUDA and HIP flavours): the device's measured read bandwidth, buffers rotated through
// more than 4x L2 so that reads come from HBM, and kernel time from graph replay.
#pragma once
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dcukern/platform/block.hpp"
#include "dcukern/platform/runtime.hpp"
#include "dcukern/platform/trace.hpp"
#include "dcukern/platform/vec.hpp"

#define BENCH_RT(expr)                                                                                      \
  do {                                                                                                      \
    const dcukern::runtime_error_t bench_err_ = (expr);                                                     \
    if (bench_err_ != dcukern::kRuntimeSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, dcukern::runtime_error_string(bench_err_)); \
      std::exit(2);                                                                                         \
    }                                                                                                       \
  } while (0)

// The runtime calls of the harness beyond the platform layer (device properties, streams, graphs, events):
// the same calls under CUDA's and HIP's prefixes.
#if DCUKERN_PLATFORM_HIP
#define BENCH_GPU(name) hip##name
#else
#define BENCH_GPU(name) cuda##name
#endif

namespace dcukern::bench {

#if DCUKERN_PLATFORM_HIP
using DeviceProp = hipDeviceProp_t;
#else
using DeviceProp = cudaDeviceProp;
#endif

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "benchmark failed: %s\n", what);
  std::exit(2);
}

// *p = a device allocation of `bytes` (the run stops if there is none).
template <class T>
void device_alloc(T** p, size_t bytes) {
  void* v = nullptr;
  BENCH_RT(runtime_malloc(&v, bytes));
  *p = static_cast<T*>(v);
}

struct DeviceInfo {
  int sms = 0;
  int sm_major = 0;  // compute capability's major version (CUDA), the gfx family's (HIP)
  size_t l2_bytes = 0;
  std::string name;
};

inline const DeviceInfo& device_info() {
  static DeviceInfo info = [] {
    DeviceInfo d;
    DeviceProp p;
    BENCH_RT(BENCH_GPU(GetDeviceProperties)(&p, 0));
    d.sms = p.multiProcessorCount;
    d.sm_major = p.major;
    d.l2_bytes = p.l2CacheSize;
    d.name = p.name;
    return d;
  }();
  return info;
}

// How many copies of a buffer of `bytes` to rotate through so that together they exceed 4x L2.
inline int rotation_copies(size_t bytes) {
  const size_t target = 4 * device_info().l2_bytes + device_info().l2_bytes;  // 5x L2, margin included
  return static_cast<int>(std::max<size_t>(1, (target + bytes - 1) / bytes));
}

// Time of one enqueue, in microseconds: `launches` enqueues (cycling through `copies` buffer sets) are
// captured in one graph; the graph is replayed, and the median replay time is divided by `launches`.
inline double graph_time_us(int copies, const std::function<void(stream_t, int)>& enqueue, int replays = 15) {
  // The stream below does not wait for the legacy default stream: finish what the caller queued there
  // first (the benches' selection call uses the same buffers and workspace as every timed call).
  BENCH_RT(runtime_synchronize());
  stream_t s;
  BENCH_RT(BENCH_GPU(StreamCreateWithFlags)(&s, BENCH_GPU(StreamNonBlocking)));
  enqueue(s, 0);  // eager warm-up: module load and library set-up stay outside the capture
  BENCH_RT(BENCH_GPU(StreamSynchronize)(s));
  BENCH_RT(BENCH_GPU(GetLastError)());
  const int launches = std::max(copies, 20);
  BENCH_GPU(Graph_t) graph;
  BENCH_GPU(GraphExec_t) exec;
  BENCH_RT(BENCH_GPU(StreamBeginCapture)(s, BENCH_GPU(StreamCaptureModeGlobal)));
  for (int i = 0; i < launches; ++i) enqueue(s, i % copies);
  BENCH_RT(BENCH_GPU(StreamEndCapture)(s, &graph));
  BENCH_RT(BENCH_GPU(GraphInstantiate)(&exec, graph, nullptr, nullptr, 0));
  BENCH_GPU(Event_t) a, b;
  BENCH_RT(BENCH_GPU(EventCreate)(&a));
  BENCH_RT(BENCH_GPU(EventCreate)(&b));
  BENCH_RT(BENCH_GPU(GraphLaunch)(exec, s));  // warm-up
  BENCH_RT(BENCH_GPU(StreamSynchronize)(s));
  std::vector<float> ms(replays);
  for (auto& t : ms) {
    BENCH_RT(BENCH_GPU(EventRecord)(a, s));
    BENCH_RT(BENCH_GPU(GraphLaunch)(exec, s));
    BENCH_RT(BENCH_GPU(EventRecord)(b, s));
    BENCH_RT(BENCH_GPU(EventSynchronize)(b));
    BENCH_RT(BENCH_GPU(EventElapsedTime)(&t, a, b));
  }
  std::sort(ms.begin(), ms.end());
#if DCUKERN_TRACE_ON
  // A traced build (platform/trace.hpp): one more replay with the trace cleared first, so that the records
  // the caller reads (write_trace) are those of one replay of the graph.
  if (Status e = trace_reset(); !e.ok()) fail(e.to_string().c_str());
  BENCH_RT(BENCH_GPU(GraphLaunch)(exec, s));
  BENCH_RT(BENCH_GPU(StreamSynchronize)(s));
#endif
  BENCH_RT(BENCH_GPU(EventDestroy)(a));
  BENCH_RT(BENCH_GPU(EventDestroy)(b));
  BENCH_RT(BENCH_GPU(GraphExecDestroy)(exec));
  BENCH_RT(BENCH_GPU(GraphDestroy)(graph));
  BENCH_RT(BENCH_GPU(StreamDestroy)(s));
  return 1000.0 * ms[ms.size() / 2] / launches;
}

#if DCUKERN_TRACE_ON
// A traced build: appends the last graph_time_us replay's records to the file named by DCUKERN_TRACE_OUT
// (nothing where it is unset), after a line "CELL <name> <records> <us a call>"; each record a line
// "grid kind block sm t0 .. t6" (the kTracePoints stamps; bench/trace_report.py reads them).
inline void write_trace(const std::string& name, double us) {
  const char* path = std::getenv("DCUKERN_TRACE_OUT");
  if (!path) return;
  std::vector<TraceRecord> records;
  if (Status e = trace_records(&records); !e.ok()) fail(e.to_string().c_str());
  FILE* f = std::fopen(path, "a");
  if (!f) fail("cannot open DCUKERN_TRACE_OUT");
  std::fprintf(f, "CELL %s %zu %.3f\n", name.c_str(), records.size(), us);
  for (const TraceRecord& r : records) {
    std::fprintf(f, "%llu %u %u %u", static_cast<unsigned long long>(r.grid), r.kind, r.block, r.sm);
    for (uint64_t t : r.t) std::fprintf(f, " %llu", static_cast<unsigned long long>(t));
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}
#else
inline void write_trace(const std::string&, double) {}
#endif

// Streaming-read ceiling: 16-byte non-temporal loads, 4 in flight per thread, a block sum written per
// block so that nothing can be optimised away.
constexpr int kReadThreads = 512;
__global__ void __launch_bounds__(kReadThreads) read_kernel(const vec16_t* p, int64_t n, uint32_t* out) {
  uint32_t acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    vec16_t v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = load_stream16(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const vec16_t v = load_stream16(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  __shared__ typename BlockReduce<uint32_t, kReadThreads>::storage_type storage;
  const uint32_t total = BlockReduce<uint32_t, kReadThreads>::sum(acc, storage);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// Measured read bandwidth in GB/s (1e9 bytes/s) over a 4 GiB buffer, the best of a few launch shapes.
inline double read_bandwidth_gbs() {
  static double gbs = [] {
    const size_t bytes = size_t(4) << 30;
    void* buf;
    uint32_t* out;
    device_alloc(&buf, bytes);
    BENCH_RT(runtime_memset_async(buf, 0x5a, bytes, nullptr));
    device_alloc(&out, 1 << 20);
    double best = 0;
    for (int blocks_per_sm : {2, 4, 8}) {
      const int grid = blocks_per_sm * device_info().sms;
      const double us = graph_time_us(1, [&](stream_t s, int) {
        read_kernel<<<grid, kReadThreads, 0, s>>>(static_cast<const vec16_t*>(buf), bytes / 16, out);
      }, 5);
      best = std::max(best, bytes / us / 1e3);
    }
    BENCH_RT(runtime_free(buf));
    BENCH_RT(runtime_free(out));
    return best;
  }();
  return gbs;
}

// The main() of every benchmark binary: report the device and the read bandwidth (also into the JSON
// context), register the op's benchmarks, run them.
inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  benchmark::Initialize(&argc, argv);
  std::printf("device: %s, %d SMs, L2 %zu MB, measured read bandwidth %.0f GB/s\n", device_info().name.c_str(),
              device_info().sms, device_info().l2_bytes >> 20, read_bandwidth_gbs());
  benchmark::AddCustomContext("device", device_info().name);
  benchmark::AddCustomContext("read_bw_GBps", std::to_string(read_bandwidth_gbs()));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace dcukern::bench
