// The second half of split-KV: combines a query row's chunk partials (fp32 outputs normalised per chunk,
// base-2 LSEs) into the final output and natural-log LSE. Two work splits of the same sums:
//   attention_merge_kernel         one block per query row (calls with many rows);
//   attention_merge_sliced_kernel  one block per (query row, kMergeSlice head elements), its partial loads
//                                  issued before the LSEs are read: more blocks, one memory latency fewer
//                                  (attention_sliced_merge, attention/kernel_id.hpp, says when).
// Contract: the workspace written by a split kernel for the same plan (part_o [rows, chunks, D], part_lse
// [rows, chunks]).
// Every wave reads all of the row's chunk LSEs (lanes stride over the chunks, then a butterfly reduction,
// so every lane of every wave holds the same max and sum). Each output element sums its chunks c into
// accumulator c % n (n: the row kernel's waves, the sliced kernel's kMergeLanes), in increasing c,
// skipping chunks of weight 0, then the accumulators in order: where n is the same (32-lane waves) the two
// kernels do the same operations in the same order and give the same bits. A chunk's place in each sum
// depends only on its index and empty chunks (lse = -inf) add nothing, so with a fixed chunk size the
// result depends only on the row's own chunks: its bits do not depend on the batch around it, nor on which
// kernel ran. The sink joins the denominator here (once per row); a row without keys gives zeros and LSE
// -inf. Launched as a programmatic dependent of the split kernel where the device has them
// (attention/launch.hpp, LaunchSetup); where a.merge_starts_next, each block lets the next kernel launch once
// its wait is over.
#pragma once
#include "dcukern/attention/kernels/common.hpp"

namespace dcukern::attn_detail {

// The row's chunk LSEs reduced by one wave: M (base-2 max, -inf when every chunk is empty) and L (the sum
// of the chunks' weights 2^(lse - M), then the sink's).
struct ChunkStats {
  float M, L;
  bool empty;
};
__device__ __forceinline__ ChunkStats chunk_stats(const AttnArgs& a, const float* lse, int h) {
  const int nc = a.num_chunks;
  ChunkStats st{neg_inf(), 0.f, true};
  for (int c = lane_id(); c < nc; c += kWarpSize) st.M = lse[c] > st.M ? lse[c] : st.M;
  st.M = warp_max(st.M);
  st.empty = !(st.M > neg_inf());
  if (!st.empty) {
    for (int c = lane_id(); c < nc; c += kWarpSize)
      if (lse[c] > neg_inf()) st.L += device_exp2(lse[c] - st.M);
    st.L = warp_sum(st.L);
    if (a.sinks) st.L += device_exp2(a.sinks[h] * kLog2e - st.M);
  }
  return st;
}

// Writes element d of the row's output (the weighted sum `o`) and, from its element 0, the row's LSE.
template <DType QT>
__device__ __forceinline__ void write_merged(const AttnArgs& a, int64_t row, const RowInfo& r, const ChunkStats& st,
                                             int d, float o) {
  a.o[r.b * a.o_bs + r.t * a.o_ts + r.h * a.o_hs + d] = from_float<QT>(st.empty ? 0.f : o * (1.f / st.L));
  if (d == 0 && a.lse) a.lse[row] = st.empty ? neg_inf() : (st.M + device_log2(st.L)) * kLn2;
}

// One block per query row. Wave w adds the chunks c = w, w + waves, ... (lanes stride over head_dim;
// kAhead chunks' loads are issued before they are added), and the waves' sums are added in wave order.
template <DType QT>
__global__ void __launch_bounds__(kMergeThreads) attention_merge_kernel(AttnArgs a) {
  constexpr int kWaves = kMergeThreads / kWarpSize;
  constexpr int kPerLane = (kAttnMaxHeadDim + kWarpSize - 1) / kWarpSize;  // head elements per lane
  constexpr int kAhead = 4;                                                 // chunks in flight per wave
  __shared__ float s_o[kWaves][kAttnMaxHeadDim];
  DCUKERN_TRACE_BLOCK(TraceKind::attention_merge);  // trace points: 0 entry, 1 released, 2 exit
  grid_dependency_wait();  // launched as a dependent of the split kernel: its partials are complete after this
  DCUKERN_TRACE_STAMP(1);
  if (a.merge_starts_next) grid_dependents_launch();
  const int64_t row = blockIdx.x;
  const RowInfo r = row_info(a, row);
  const int D = a.head_dim, nc = a.num_chunks;
  const int lane = lane_id(), wave = static_cast<int>(threadIdx.x) / kWarpSize;
  const float* lse = a.part_lse + row * nc;
  const float* part = a.part_o + row * nc * D;
  const ChunkStats st = chunk_stats(a, lse, r.h);

  float acc[kPerLane] = {};
  if (!st.empty)
    for (int c0 = wave; c0 < nc; c0 += kWaves * kAhead) {
      float w[kAhead], x[kAhead][kPerLane];
#pragma unroll
      for (int i = 0; i < kAhead; ++i) {
        const int c = c0 + i * kWaves;
        w[i] = c < nc && lse[c] > neg_inf() ? device_exp2(lse[c] - st.M) : 0.f;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
          const int d = lane + j * kWarpSize;
          x[i][j] = w[i] > 0.f && d < D ? part[int64_t(c) * D + d] : 0.f;
        }
      }
#pragma unroll
      for (int i = 0; i < kAhead; ++i)
        if (w[i] > 0.f)
#pragma unroll
          for (int j = 0; j < kPerLane; ++j) acc[j] += w[i] * x[i][j];
    }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j)
    if (lane + j * kWarpSize < D) s_o[wave][lane + j * kWarpSize] = acc[j];
  __syncthreads();

  for (int d = static_cast<int>(threadIdx.x); d < D; d += kMergeThreads) {
    float o = 0.f;
#pragma unroll
    for (int w = 0; w < kWaves; ++w) o += s_o[w][d];
    write_merged<QT>(a, row, r, st, d, o);
  }
  DCUKERN_TRACE_BLOCK_END(2);
}

constexpr int kMergeSlice = 32;                           // head elements per block of the sliced merge
constexpr int kMergeLanes = kMergeThreads / kMergeSlice;  // its accumulators per element (the row kernel's
                                                          // waves where waves have 32 lanes)
constexpr int kMergeAhead = 16;                           // a thread's chunks in flight

// Blocks of the merge for `rows` query rows of head_dim D: one a row, or with the sliced kernel one a row
// and slice.
constexpr int64_t merge_blocks(int64_t rows, int head_dim, bool sliced) {
  return sliced ? rows * ((head_dim + kMergeSlice - 1) / kMergeSlice) : rows;
}

// One block per (query row, slice of kMergeSlice head elements). Thread t adds element t % kMergeSlice of
// the slice over chunks c = t / kMergeSlice + kMergeLanes * i (the row kernel's order where waves have 32
// lanes); its first kMergeAhead partials are loaded before the row's LSEs are read, so both arrive in one
// memory latency. (The residency target: with the block size alone, ptxas held the kernel to 40 registers
// and spilled.)
template <DType QT>
__global__ void __launch_bounds__(kMergeThreads, DCUKERN_CUDA_MIN_BLOCKS(8))
    attention_merge_sliced_kernel(AttnArgs a) {
  static_assert(kMergeThreads % kMergeSlice == 0, "whole slices per block");
  constexpr int kRound = kMergeLanes * kMergeAhead;  // chunks per round of loads
  __shared__ float s_acc[kMergeLanes][kMergeSlice];
  const int D = a.head_dim, nc = a.num_chunks, tid = static_cast<int>(threadIdx.x);
  const uint32_t slices = static_cast<uint32_t>((D + kMergeSlice - 1) / kMergeSlice);
  const int64_t row = blockIdx.x / slices;  // rows * slices < 2^31 (attention/launch.hpp)
  const int d = static_cast<int>(blockIdx.x % slices) * kMergeSlice + tid % kMergeSlice;
  const int first = tid / kMergeSlice;  // the thread's first chunk of a round
  DCUKERN_TRACE_BLOCK(TraceKind::attention_merge);  // trace points: 0 entry, 1 released, 2 exit
  grid_dependency_wait();  // launched as a dependent of the split kernel: its partials are complete after this
  DCUKERN_TRACE_STAMP(1);
  if (a.merge_starts_next) grid_dependents_launch();
  const float* lse = a.part_lse + row * nc;
  const float* part = a.part_o + row * nc * D + d;  // + c * D: chunk c's element d

  float x[kMergeAhead];
  auto load_round = [&](int c0) {
#pragma unroll
    for (int i = 0; i < kMergeAhead; ++i) {
      const int c = c0 + first + kMergeLanes * i;
      x[i] = c < nc && d < D ? part[int64_t(c) * D] : 0.f;
    }
  };
  load_round(0);
  const RowInfo r = row_info(a, row);
  const ChunkStats st = chunk_stats(a, lse, r.h);

  float acc = 0.f;
  if (!st.empty)
    for (int c0 = 0; c0 < nc; c0 += kRound) {
#pragma unroll
      for (int i = 0; i < kMergeAhead; ++i) {
        const int c = c0 + first + kMergeLanes * i;
        const float w = c < nc && lse[c] > neg_inf() ? device_exp2(lse[c] - st.M) : 0.f;
        if (w > 0.f) acc += w * x[i];
      }
      if (c0 + kRound < nc) load_round(c0 + kRound);
    }
  s_acc[first][tid % kMergeSlice] = acc;
  __syncthreads();
  if (tid < kMergeSlice && d < D) {
    float o = 0.f;
#pragma unroll
    for (int lc = 0; lc < kMergeLanes; ++lc) o += s_acc[lc][tid];
    write_merged<QT>(a, row, r, st, d, o);
  }
  DCUKERN_TRACE_BLOCK_END(2);
}

}  // namespace dcukern::attn_detail
