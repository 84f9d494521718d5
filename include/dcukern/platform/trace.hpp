// Opt-in phase trace of a kernel's blocks, for finding where a call's time goes (bench/trace_report.py for
// attention, bench/sampling_trace_report.py for sampling).
// Compiled in only with DCUKERN_TRACE=1 on CUDA (the CMake option DCUKERN_TRACE sets it for the
// benchmarks); otherwise every macro below is empty and the kernels' code is what it is without them.
//
//   DCUKERN_TRACE_BLOCK(kind)       first statement of a traced kernel: thread 0 takes the block's record
//                                   (one atomic, so put it before the dependent launch's wait, where its
//                                   round trip overlaps the kernel before) and stamps point 0 there;
//   DCUKERN_TRACE_STAMP(i)          thread 0 stamps point i (1 .. kTracePoints - 1): a plain store;
//   DCUKERN_TRACE_BLOCK_END(i)      a block barrier, then point i: the block's end, every thread's work done.
//
// A record holds the launch's %gridid (one per launch: it groups a call's blocks), the kind (which kernel),
// the block, its SM and the stamps (%globaltimer, ns). Records go to dcukern_trace_records in arrival
// order; the host reads them with trace_records() and clears them with trace_reset(). One copy of the
// buffer per translation unit (no relocatable device code): read it from the file that launched the kernels.
#pragma once
#include <cstdint>

#include "dcukern/platform/detect.hpp"

#if defined(DCUKERN_TRACE) && DCUKERN_TRACE && DCUKERN_PLATFORM_CUDA
#include <vector>

#include "dcukern/platform/runtime.hpp"

namespace dcukern {

constexpr int kTracePoints = 7;
constexpr uint32_t kTraceCapacity = 1u << 19;
enum class TraceKind : uint32_t {
  attention_mma = 0,
  attention_merge = 1,
  sampling_split = 2,      // sampling_split_kernel (bench/sampling_trace_report.py)
  sampling_threshold = 3,  // sampling_threshold_kernel
};

struct TraceRecord {
  uint64_t grid;
  uint64_t t[kTracePoints];  // 0: never stamped
  uint32_t kind, block, sm, unused;
};

__device__ TraceRecord dcukern_trace_records[kTraceCapacity];
__device__ uint32_t dcukern_trace_count;

__device__ __forceinline__ uint64_t trace_clock() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0's record of this block (kTraceCapacity: none, the buffer is full); other threads get 0 and never use it.
__device__ __forceinline__ uint32_t trace_open(TraceKind kind) {
  if (threadIdx.x != 0) return 0;
  const uint64_t t = trace_clock();
  uint64_t grid;
  uint32_t sm;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  const uint32_t i = atomicAdd(&dcukern_trace_count, 1u);
  if (i >= kTraceCapacity) return kTraceCapacity;
  TraceRecord& r = dcukern_trace_records[i];
  r.grid = grid, r.kind = static_cast<uint32_t>(kind), r.block = blockIdx.x, r.sm = sm;
  r.t[0] = t;
  for (int p = 1; p < kTracePoints; ++p) r.t[p] = 0;
  return i;
}
__device__ __forceinline__ void trace_stamp(uint32_t slot, int point) {
  if (threadIdx.x == 0 && slot < kTraceCapacity) dcukern_trace_records[slot].t[point] = trace_clock();
}

// Host side: clear the buffer (before the launches to trace) and read what they wrote.
inline Status trace_reset() {
  const uint32_t zero = 0;
  return runtime_status(cudaMemcpyToSymbol(dcukern_trace_count, &zero, sizeof zero), "trace_reset");
}
inline Status trace_records(std::vector<TraceRecord>* out) {
  uint32_t n = 0;
  if (Status s = runtime_status(cudaMemcpyFromSymbol(&n, dcukern_trace_count, sizeof n), "trace_records"); !s.ok())
    return s;
  out->resize(n < kTraceCapacity ? n : kTraceCapacity);
  return runtime_status(cudaMemcpyFromSymbol(out->data(), dcukern_trace_records, out->size() * sizeof(TraceRecord)),
                        "trace_records");
}

}  // namespace dcukern

#define DCUKERN_TRACE_ON 1
#define DCUKERN_TRACE_BLOCK(kind) const uint32_t dcukern_trace_slot_ = ::dcukern::trace_open(kind)
#define DCUKERN_TRACE_STAMP(i) ::dcukern::trace_stamp(dcukern_trace_slot_, i)
#define DCUKERN_TRACE_BLOCK_END(i) (__syncthreads(), ::dcukern::trace_stamp(dcukern_trace_slot_, i))
#else
#define DCUKERN_TRACE_ON 0
#define DCUKERN_TRACE_BLOCK(kind)
#define DCUKERN_TRACE_STAMP(i)
#define DCUKERN_TRACE_BLOCK_END(i)
#endif
