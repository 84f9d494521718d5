// conv1d.vec8.staged — conv1d.vec8's update with every global access a run of consecutive 16-byte vectors
// across consecutive lanes, and the weights read once per block instead of once per sequence.
// Contract: that of conv1d.vec8 (dim a multiple of 8; x, y, weight, bias, state base 16-byte aligned;
// weight rows contiguous; x and y row strides and the state slot stride multiples of 16 bytes).
// Work split: a block of kConvThreads threads takes one tile of kStagedChannels channels for kStagedSeqs
// sequences: teams of kStagedLanes threads, 8 channels per thread, each team kStagedSeqsPerThread
// sequences (2 for a 2-byte state, 1 for f32). The tile's weights and bias go to shared memory once per
// block. Each sequence's state run for the tile (contiguous in the pool) is read with lane-consecutive
// 16-byte loads, transposed through shared memory into each thread's window of 8 channels, updated as in
// conv1d.vec8, and written back the same way. Every load is issued before the first store. Block
// barriers only, so the split does not depend on the wave size.
#pragma once
#include "dcukern/gdn/kernels/conv1d_generic.hpp"
#include "dcukern/gdn/kernels/conv1d_vec8.hpp"

namespace dcukern::gdn_detail {

constexpr int kStagedLanes = 32;                           // threads per team (one sequence at a time)
constexpr int kStagedChannels = 8 * kStagedLanes;          // channels per tile
constexpr int kStagedTeams = kConvThreads / kStagedLanes;  // teams per block
// At most 64 registers on NVIDIA (4 blocks of 256 per SM: one wave of 512 blocks at B = 256, 8192
// channels); not applied on AMD, where the second bound means waves per SIMD (DCUKERN_CUDA_MIN_BLOCKS).
constexpr int kStagedMinBlocks = 4;

// kStagedLanes * N 16-byte vectors of dtype T in shared memory, read and written in two orders: coalesced
// (vector q = lane + kStagedLanes * r, r < N) and per lane (lane g owns vectors N * g .. N * g + N - 1).
// Even N is padded by one vector in 8, so that neither order has bank conflicts for N = 2 and 4.
template <DType T, int N>
struct LaneRuns {
  static constexpr int kPer = 16 / kElemBytes<T>;  // elements per vector
  vec16_t v[kStagedLanes * N * (N % 2 ? 8 : 9) / 8];

  __device__ __forceinline__ vec16_t& at(int q) { return v[N % 2 ? q : q + q / 8]; }
  __device__ __forceinline__ void get(int lane, float (&out)[N * kPer]) {
#pragma unroll
    for (int i = 0; i < N; ++i) unpack16<T>(at(N * lane + i), out + i * kPer);
  }
  __device__ __forceinline__ void put(int lane, const float (&in)[N * kPer]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      float e[kPer];
#pragma unroll
      for (int k = 0; k < kPer; ++k) e[k] = in[i * kPer + k];
      store_elems<T>(&at(N * lane + i), e);
    }
  }
};

// Sequences per thread: 2 for a 2-byte state, 1 for f32, so that every thread has the same state bytes in
// flight (96 at width 4) and a block the same shared memory (27-30 KiB at width 4).
template <DType SDT>
inline constexpr int kStagedSeqsPerThread = 4 / kElemBytes<SDT>;
// Sequences per block: kStagedTeams teams of kStagedLanes threads, each team kStagedSeqsPerThread sequences.
template <DType SDT>
inline constexpr int kStagedSeqs = kStagedTeams * kStagedSeqsPerThread<SDT>;

template <int W, DType DT, DType SDT>
__global__ void __launch_bounds__(kConvThreads, DCUKERN_CUDA_MIN_BLOCKS(kStagedMinBlocks))
    conv1d_staged_kernel(Conv1dArgs a) {
  constexpr int kHist = W - 1, kS = kStagedSeqsPerThread<SDT>;
  constexpr int kStateVecs = 8 * kHist * kElemBytes<SDT> / 16;  // per thread and sequence
  constexpr int kWeightVecs = 8 * W * kElemBytes<DT> / 16;      // per thread
  __shared__ LaneRuns<DT, kWeightVecs> w_sm;
  __shared__ vec16_t bias_sm[kStagedLanes];
  __shared__ LaneRuns<SDT, kStateVecs> state_sm[kStagedSeqs<SDT>];
  begin_dependent_kernel();

  const int t = threadIdx.x, lane = t % kStagedLanes, team = t / kStagedLanes;
  const int64_t c0 = int64_t(blockIdx.y) * kStagedChannels;
  const int64_t left = (a.dim - c0) / 8;
  const int groups = left < kStagedLanes ? static_cast<int>(left) : kStagedLanes;  // 8-channel groups in the tile
  const int state_vecs = groups * kStateVecs;  // of a sequence's run in the tile
  int b[kS];  // sequence s of this thread: b[s]; its state run in state_sm[team + kStagedTeams * s]
  bool has_state[kS];
  char* sp[kS];
  vec16_t xv[kS], sv[kS][kStateVecs];

  // Every load before the first store (the pool is updated in place, so no load may follow a store).
  // Those that need no slot first: the tile's weights (a vector for each of the first threads), its bias
  // (the last kStagedLanes threads), the thread's 8 inputs of each sequence.
  const int tb = t - (kConvThreads - kStagedLanes);
  const char* const wp = static_cast<const char*>(a.w) + c0 * W * kElemBytes<DT>;
  const vec16_t wv = t < groups * kWeightVecs ? load16(wp + 16 * t) : vec16_zero();
  const vec16_t bv = a.bias && tb >= 0 && tb < groups
                         ? load16(static_cast<const char*>(a.bias) + (c0 + 8 * tb) * kElemBytes<DT>)
                         : vec16_zero();
#pragma unroll
  for (int s = 0; s < kS; ++s) {
    b[s] = blockIdx.x * kStagedSeqs<SDT> + team + kStagedTeams * s;
    xv[s] = b[s] < a.batch && lane < groups
                ? load16(static_cast<const char*>(a.x) + (b[s] * a.ldx + c0 + 8 * lane) * kElemBytes<DT>)
                : vec16_zero();
  }
  // Each sequence's state run for the tile: state_vecs vectors, lane-consecutive.
#pragma unroll
  for (int s = 0; s < kS; ++s) {
    const int64_t slot = b[s] < a.batch ? a.slots[b[s]] : -1;
    has_state[s] = slot_valid(slot, a.num_slots);
    sp[s] = static_cast<char*>(a.state) + ((has_state[s] ? slot : 0) * a.slot_stride + c0 * kHist) * kElemBytes<SDT>;
#pragma unroll
    for (int r = 0; r < kStateVecs; ++r) {
      const int q = lane + kStagedLanes * r;
      sv[s][r] = has_state[s] && q < state_vecs ? load16(sp[s] + 16 * q) : vec16_zero();
    }
  }
  if (t < kStagedLanes * kWeightVecs) w_sm.at(t) = wv;
  if (tb >= 0) bias_sm[tb] = bv;
#pragma unroll
  for (int s = 0; s < kS; ++s)
#pragma unroll
    for (int r = 0; r < kStateVecs; ++r) state_sm[team + kStagedTeams * s].at(lane + kStagedLanes * r) = sv[s][r];
  __syncthreads();

  // Each sequence's 8 channels of the thread: window, weights and bias in the thread's own order; the
  // updated window goes back to shared memory, y to its row.
#pragma unroll
  for (int s = 0; s < kS; ++s) {
    if (b[s] >= a.batch || lane >= groups) continue;
    float y[8];
    if (has_state[s]) {
      float x[8], w[8 * W], bias[8], st[8 * kHist];
      unpack16<DT>(xv[s], x);
      unpack16<DT>(bias_sm[lane], bias);
      w_sm.get(lane, w);
      state_sm[team + kStagedTeams * s].get(lane, st);
      conv1d_group<W>(a, x, w, bias, st, y);
      state_sm[team + kStagedTeams * s].put(lane, st);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) y[i] = 0.f;
    }
    store_elems<DT>(static_cast<char*>(a.y) + (b[s] * a.ldy + c0 + 8 * lane) * kElemBytes<DT>, y);
  }
  __syncthreads();

#pragma unroll
  for (int s = 0; s < kS; ++s) {
    if (!has_state[s]) continue;
#pragma unroll
    for (int r = 0; r < kStateVecs; ++r) {
      const int q = lane + kStagedLanes * r;
      if (q < state_vecs) *reinterpret_cast<vec16_t*>(sp[s] + 16 * q) = state_sm[team + kStagedTeams * s].at(q);
    }
  }
}

}  // namespace dcukern::gdn_detail
