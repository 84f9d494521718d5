// conv1d.lanes — the causal conv1d update with every state access lane-coalesced: a team of 32 lanes takes
// one sequence's 128 channels, 4 per lane.
// Contract: dim a multiple of 128 (kLanesChannels); x, y, weight, bias, state base and the state slot stride
// 16-byte aligned; weight rows contiguous (row stride == width); x and y row strides multiples of 8
// elements. State in the activation dtype or f32.
// Work split: a block of kLanesSeqs teams per (kLanesSeqs sequences, 128 channels), grid (dim / 128,
// sequence groups; grid-stride beyond 65535 groups): team = sequence, lane = 4 channels. The teams read
// the same 128 channels' weights and bias (cache hits after the first).
// A team's state run (128 * (width-1) elements, contiguous in the pool) is read as lane-consecutive 4-element
// vectors (8 bytes for a 16-bit state, 16 for f32), exchanged through shared memory into each lane's
// 4-channel window, updated as in conv1d.vec8 and written back the same way. A team exchanges through its
// own part of shared memory only, ordered by wave-level barriers (a team never spans two waves). Against
// per-thread windows read in place (48-byte strided runs, conv1d.vec8), every global access of the state
// covers whole sectors.
#pragma once
#include "dcukern/gdn/kernels/conv1d_vec8.hpp"

namespace dcukern::gdn_detail {

constexpr int kLanesTeam = 32;                   // lanes per team (one sequence)
constexpr int kLanesSeqs = 4;                    // teams (sequences) per block
constexpr int kLanesChannels = 4 * kLanesTeam;   // channels per team

// Sequence groups of one launch; the grid is (channel blocks, groups up to kLanesMaxGridY), channel blocks
// fastest, so that the blocks running together read neighbouring parts of the same slots' state.
__host__ __device__ inline int64_t conv1d_lanes_groups(int64_t batch) { return (batch + kLanesSeqs - 1) / kLanesSeqs; }
constexpr int64_t kLanesMaxGridY = 65535;

// One block's work: sequences group * kLanesSeqs + team, channels cb * kLanesChannels onwards.
template <int W, DType DT, DType SDT>
__device__ __forceinline__ void conv1d_lanes_block(const Conv1dArgs& a, int64_t group, int64_t cb,
                                                   Vec4<SDT> (&runs)[kLanesSeqs][kLanesTeam * (W - 1)]) {
  constexpr int kHist = W - 1;
  using StateVec = Vec4<SDT>;
  const int lane = threadIdx.x % kLanesTeam, team = threadIdx.x / kLanesTeam;
  const int64_t b = group * kLanesSeqs + team;
  const int64_t c0 = cb * kLanesChannels + 4 * lane;
  const bool active = b < a.batch;

  // The loads that need no slot first, kept unconverted until the state loads are issued (no instruction
  // waits on them earlier): weights, bias, x.
  using ActVec = Vec4<DT>;
  ActVec wv[W];
  const char* const wp = static_cast<const char*>(a.w) + c0 * W * kElemBytes<DT>;
#pragma unroll
  for (int i = 0; i < W; ++i) wv[i] = *reinterpret_cast<const ActVec*>(wp + sizeof(ActVec) * i);
  const ActVec bv = a.bias ? *reinterpret_cast<const ActVec*>(static_cast<const char*>(a.bias) + c0 * kElemBytes<DT>)
                           : vec4_zero<DT>();
  const ActVec xv =
      active ? *reinterpret_cast<const ActVec*>(static_cast<const char*>(a.x) + (b * a.ldx + c0) * kElemBytes<DT>)
             : vec4_zero<DT>();
  const int64_t slot = active ? a.slots[b] : -1;
  const bool has_state = slot_valid(slot, a.num_slots);
  // The team's run: 128 channels' windows, lane-consecutive vectors lane + kLanesTeam * r.
  StateVec* const run = reinterpret_cast<StateVec*>(static_cast<char*>(a.state) +
                                                    ((has_state ? slot : 0) * a.slot_stride + (c0 - 4 * lane) * kHist) *
                                                        kElemBytes<SDT>);
  StateVec* const mine = &runs[team][kHist * lane];  // this lane's window, kHist vectors
  if (has_state) {
    StateVec in[kHist];
#pragma unroll
    for (int r = 0; r < kHist; ++r) in[r] = run[lane + kLanesTeam * r];
#pragma unroll
    for (int r = 0; r < kHist; ++r) runs[team][lane + kLanesTeam * r] = in[r];
  }
  wave_sync();

  float y[4] = {};
  if (has_state) {
    float w[4 * W], bias[4], x[4], st[4 * kHist];
#pragma unroll
    for (int i = 0; i < W; ++i) unpack4<DT>(wv[i], w + 4 * i);
    unpack4<DT>(bv, bias);
    unpack4<DT>(xv, x);
#pragma unroll
    for (int r = 0; r < kHist; ++r) unpack4<SDT>(mine[r], st + 4 * r);
    conv1d_group<W>(a, x, w, bias, st, y);
    // The shifted windows from the elements' bits: each channel's kHist elements move down by one and x
    // enters last (no rounding: the state holds exact copies of inputs).
    StateVec old[kHist];
    uint32_t bits[4 * kHist];
#pragma unroll
    for (int r = 0; r < kHist; ++r) old[r] = mine[r];
#pragma unroll
    for (int e = 0; e < 4 * kHist; ++e) {
      const int i = e / kHist;  // channel
      if (e % kHist != kHist - 1) bits[e] = vec4_bits<SDT>(old, e + 1);
      else if constexpr (SDT == DT) bits[e] = vec4_bits<DT>(&xv, i);
      else bits[e] = __float_as_uint(x[i]);
    }
#pragma unroll
    for (int r = 0; r < kHist; ++r) mine[r] = vec4_from_bits<SDT>(bits + 4 * r);
  }
  if (active) *reinterpret_cast<Vec4<DT>*>(static_cast<char*>(a.y) + (b * a.ldy + c0) * kElemBytes<DT>) = pack4<DT>(y);
  wave_sync();

  if (has_state) {
#pragma unroll
    for (int r = 0; r < kHist; ++r) run[lane + kLanesTeam * r] = runs[team][lane + kLanesTeam * r];
  }
}

// The lines of x and of the state runs that a block's trip reads, into L2 (prefetch_l2: a hint, at the
// slots as read now if in range).
template <int W, DType DT, DType SDT>
__device__ __forceinline__ void conv1d_lanes_prefetch(const Conv1dArgs& a, int64_t group, int64_t cb) {
  const int lane = threadIdx.x % kLanesTeam, team = threadIdx.x / kLanesTeam;
  const int64_t b = group * kLanesSeqs + team;
  if (b >= a.batch) return;
  const int64_t c0 = cb * kLanesChannels + 4 * lane;
  prefetch_l2(static_cast<const char*>(a.x) + (b * a.ldx + c0) * kElemBytes<DT>);
  const int64_t slot = a.slots[b];
  if (!slot_valid(slot, a.num_slots)) return;
  const char* const run =
      static_cast<const char*>(a.state) + (slot * a.slot_stride + (c0 - 4 * lane) * (W - 1)) * kElemBytes<SDT>;
#pragma unroll
  for (int r = 0; r < W - 1; ++r) prefetch_l2(run + sizeof(Vec4<SDT>) * (lane + kLanesTeam * r));
}

template <int W, DType DT, DType SDT>
__global__ void __launch_bounds__(kLanesTeam * kLanesSeqs) conv1d_lanes_kernel(Conv1dArgs a) {
  __shared__ Vec4<SDT> runs[kLanesSeqs][kLanesTeam * (W - 1)];
#if DCUKERN_DEPENDENT_LAUNCH
  conv1d_lanes_prefetch<W, DT, SDT>(a, blockIdx.y, blockIdx.x);  // the first trip's, while the kernel before ends
#endif
  begin_dependent_kernel();
  const int64_t groups = conv1d_lanes_groups(a.batch);
  for (int64_t group = blockIdx.y; group < groups; group += gridDim.y) {  // every thread of a block: same trips
    conv1d_lanes_block<W, DT, SDT>(a, group, blockIdx.x, runs);
    wave_sync();  // the next trip's exchange reuses runs
  }
}

}  // namespace dcukern::gdn_detail
