// sampling_threshold_kernel: the first kernel of the split rows. One block of kBlock threads per row
// (threshold_threads, workspace.hpp).
// For a row the fast path may serve (split_fast_row) but for those whose tiles take their own cuts
// (split_local_row), a value bin tau (w.threshold[row]) such that the row most likely holds between top_k
// and kSplitCap elements in value bins >= tau; kNoThreshold for the other rows and for a sample with a NaN.
// Estimate: the sample is the first 256 bytes of every 2 KB of the row (one eighth); aiming at T elements
// of the row at or above tau (T = 4k up to k = 128, then sqrt(kSplitCap * k), the geometric middle of k
// and the cap), tau is the value bin where the sample's count from its top reaches m = max(16, T / 8)
// (sample_target, workspace.hpp). Over logits in random order the count of the row at or above the m-th
// largest sampled element leaves [k, kSplitCap] with probability below 1e-6 per row up to k = 1000
// (binomial tails of an eighth-sample, ties in tau's bin aside; tests/host/sampling_ref_test.cpp); it
// leaves more often for k near the cap.
// The estimate decides speed only: the tiles count the elements at or above tau exactly, and the row's
// last block runs the one-block algorithm when that count lies outside [k, kSplitCap].
// Before its wait for the kernel before it, each block asks L2 for its row's sample (prefetch_sample).
// Work split: the sample's 16-byte loads go round the block's threads in groups held in registers
// (SampleRegs): a pass for the sample's largest element, then a pass counting the kWindow value bins
// below it in shared memory (count_sample; a row of one group is loaded once), then the crossing
// (scan_crossings).
#pragma once
#include "dcukern/platform/trace.hpp"
#include "dcukern/sampling/kernels/split_scan.hpp"

namespace dcukern::sampling_detail {

// A thread's share of one group of the row's sample, in registers (ElementRegs, as a tile's). Load j of
// the sample (kW elements) starts at element (j / L) * kStride + (j % L) * kW, L = kRun / kW loads a run;
// this thread's loads in group g are j = g * kGroupLoads + q * kBlock + tid. bf16 keeps its
// packed pairs (32 elements in 16 words); other types hold 16 floats. Every load is issued
// unconditionally (past the end from the row's start), so that a group's loads are in flight together;
// their elements read as -inf, and `live` counts the loads that lie inside the row (a prefix of q: the
// count skips the rest). Offsets are 32-bit: a row holds at most kSamplingMaxVocab elements.
// fp32 rows in the wide block hold 32 floats a thread (eight loads): one group covers the sample of a row of
// up to kSamplingMaxVocab elements, so the count pass reads no group a second time.
template <DType DT, bool kVec, int kBlock>
inline constexpr int kSampleElements = DT == DType::bf16 && kVec                                       ? 32
                                       : DT == DType::f32 && kVec && kBlock == kThresholdThreadsWide ? 32
                                                                                                    : 16;
template <DType DT, bool kVec, int kBlock>
struct SampleRegs : ElementRegs<DT == DType::bf16 && kVec, kSampleElements<DT, kVec, kBlock>> {
  using Base = ElementRegs<DT == DType::bf16 && kVec, kSampleElements<DT, kVec, kBlock>>;
  using Base::kCount, Base::kPairs, Base::w, Base::f;
  static constexpr int kElt = DT == DType::f32 ? 4 : 2;
  static constexpr uint32_t kRun = kSampleRunBytes / kElt, kStride = kSampleStrideBytes / kElt;  // elements
  static constexpr int kW = kVec ? 16 / kElt : 1;  // elements a load
  static constexpr int kLoads = kCount / kW;       // loads a thread, a group
  static constexpr uint32_t kGroupLoads = uint32_t(kLoads) * kBlock;
  static_assert(kSamplingMaxVocab * 4 < (int64_t(1) << 31), "32-bit offsets");
  int live;  // loads of this group inside the row

  __device__ __forceinline__ static uint32_t groups(uint32_t vocab) {
    const uint32_t loads = (vocab + kStride - 1) / kStride * (kRun / kW);
    return (loads + kGroupLoads - 1) / kGroupLoads;
  }

  __device__ __forceinline__ void load(const void* row, uint32_t vocab, uint32_t group) {
    constexpr uint32_t kPerRun = kRun / kW;                                  // loads a run
    constexpr uint32_t kStep = (kBlock / kPerRun) * kStride;  // from load q to q + 1 of a thread
    static_assert(kBlock % kPerRun == 0, "a thread's loads keep their place in the run");
    const uint32_t j0 = group * kGroupLoads + threadIdx.x;
    const uint32_t first0 = j0 / kPerRun * kStride + j0 % kPerRun * kW;
    live = 0;
#pragma unroll
    for (int q = 0; q < kLoads; ++q) {
      const uint32_t first = first0 + uint32_t(q) * kStep;
      const bool in = first < vocab;  // kVec: V is a multiple of kW, so the whole load lies inside
      live += in ? 1 : 0;
      if constexpr (kVec) {
        const vec16_t v = load16(static_cast<const char*>(row) + (in ? first : 0u) * kElt);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const uint32_t word = vec16_word(v, c);
          if constexpr (kPairs) w[q * 4 + c] = in ? word : 0xFF80FF80u;  // -inf, -inf
          else if constexpr (DT == DType::f32) f[q * 4 + c] = in ? __uint_as_float(word) : -INFINITY;
          else {
            unpack2<DT>(word, f[q * 8 + 2 * c], f[q * 8 + 2 * c + 1]);
            if (!in) f[q * 8 + 2 * c] = f[q * 8 + 2 * c + 1] = -INFINITY;
          }
        }
      } else {
        const float v = RowLoader<DT, false>{row, int64_t(vocab)}.scalar(in ? first : 0u);
        f[q] = in ? v : -INFINITY;
      }
    }
  }
};

// Counts of the value bins top, top - 1, .. top - kWindow + 1 of x's elements: count[d] for bin top - d.
// Per element a bin and an increment in shared memory, without branches: elements outside the window
// increment a spare slot past it (min(d, kWindow + lane); nothing reads them). When the window lies among
// positive floats (below FLT_MAX's bin, so no +inf is folded into it) or among negative ones, the bin is
// an add to the top 16 bits of the float; otherwise value_bin() (signed zeros, +inf).
enum class WindowSign { positive, negative, mixed };
template <WindowSign kSign, class Regs>
__device__ __forceinline__ void count_sample(const Regs& x, uint32_t top, uint32_t* count) {
  const uint32_t spare = uint32_t(kWindow + lane_id());
#pragma unroll
  for (int q = 0; q < Regs::kLoads; ++q) {
    if (q >= x.live) continue;  // this load and the ones after it lie past the row's end
#pragma unroll
    for (int e = 0; e < Regs::kW; ++e) {
      const int u = q * Regs::kW + e;
      const uint32_t h = x.high16(u);
      uint32_t d;
      if constexpr (kSign == WindowSign::positive) d = top - 0x8000u - h;         // bin = h + 0x8000
      else if constexpr (kSign == WindowSign::negative) d = h - (0xFFFFu - top);  // bin = 0xFFFF - h
      else d = top - value_bin(x[u]);
      atomicAdd(&count[min(d, spare)], 1u);  // unconditional: no branch per element
    }
  }
}
template <class Regs>
__device__ __forceinline__ void count_sample(const Regs& x, uint32_t top, uint32_t* count) {
  constexpr uint32_t kPlusZeroBin = 0x8000u, kMaxFiniteBin = 0xFF7Fu;
  if (top >= kPlusZeroBin + uint32_t(kWindow) && top < kMaxFiniteBin)
    count_sample<WindowSign::positive>(x, top, count);
  else if (top < kPlusZeroBin)
    count_sample<WindowSign::negative>(x, top, count);
  else
    count_sample<WindowSign::mixed>(x, top, count);
}

template <int kBlock>
struct ThresholdShared {
  uint32_t count[kWindow + kWarpSize];  // a window of value bins, then spare slots (count_sample)
  uint32_t b32[4];
  uint32_t wave_word[kBlock / 32], wave_sum[kBlock / 32];  // per-wave partials
};

// The row's threshold bin from its sample (the estimate above), in every thread of a block of kBlock
// threads; kNoThreshold when the sample holds a NaN (block-uniform). s: scratch with count[kWindow +
// kWarpSize], b32[4] and wave_word / wave_sum[kBlock / 32] (ThresholdShared, or the stream kernel's
// ScanShared). The row's streaming kernel (stream_kernel.hpp) runs it too.
template <bool kVec, DType DT, int kBlock, class Scratch>
__device__ inline uint32_t sample_threshold(const SamplingArgs& a, int64_t row, int32_t top_k, Scratch& s) {
  const void* start = row_start<DT>(a, row);
  const uint32_t vocab = uint32_t(a.vocab);
  SampleRegs<DT, kVec, kBlock> x;
  const uint32_t groups = x.groups(vocab);
  float largest = -INFINITY;  // this thread's largest sampled element, or a NaN when it saw one
  for (uint32_t g = groups; g-- > 0;) {  // the first group stays in registers for the count
    x.load(start, vocab, g);
    largest = fmax_nan(largest, thread_max(x));
  }
  for (int b = threadIdx.x; b < kWindow + kWarpSize; b += kBlock) s.count[b] = 0;
  const uint32_t word = block_max_word<kBlock>(
      largest != largest ? kNaNWord : order_key(finite_logit(largest)), s.wave_word);
  if (word == kNaNWord) return kNoThreshold;  // the row's scan finds the NaN and the row is invalid
  const uint32_t top = word >> 16;
  for (uint32_t g = 0; g < groups; ++g) {
    if (g > 0) x.load(start, vocab, g);
    count_sample(x, top, s.count);
  }
  __syncthreads();
  const uint32_t target = sample_target(top_k);
  const Crossings cr = scan_crossings<kBlock>(s.count, kWindow, target, target, s);
  // Not reached within the window: its lowest bin (the row's count then decides).
  const uint32_t reach = cr.o[0] < uint32_t(kWindow) ? cr.o[0] : uint32_t(kWindow - 1);
  // Bins at or below 0x80 start at -inf (bin_floor): 0 there, every element, keeps append_keys' mask exact.
  return top > reach + 0x80u ? top - reach : 0u;
}

template <bool kVec, DType DT, int kBlock>
__global__ void __launch_bounds__(kBlock, DCUKERN_CUDA_MIN_BLOCKS(kBlock == kThresholdThreadsWide ? 1 : 2))
    sampling_threshold_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ ThresholdShared<kBlock> s;
  DCUKERN_TRACE_BLOCK(TraceKind::sampling_threshold);  // trace points: 0 entry, 1 released, 2 end
  const int64_t row = blockIdx.x;
  prefetch_sample<DT, kBlock>(a, row);
  begin_dependent_kernel();
  DCUKERN_TRACE_STAMP(1);
  const RowParams p = row_params(a, row);
  const bool fast = split_fast_row(p, a.vocab) && !split_local_top_k(w.rows, p.top_k, w.tiles);
  const uint32_t threshold = fast ? sample_threshold<kVec, DT, kBlock>(a, row, p.top_k, s) : kNoThreshold;
  if (threadIdx.x == 0) w.threshold[row] = threshold;
  DCUKERN_TRACE_BLOCK_END(2);
}

}  // namespace dcukern::sampling_detail
