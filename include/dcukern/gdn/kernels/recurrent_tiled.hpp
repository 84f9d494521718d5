// gdn.tiled.kv / gdn.tiled.vk (and their .c16 variants for B = 1) — the fast recurrent step for K in {64, 128, 256},
// V a multiple of the tile's Cols (32, or 16 for .c16).
// Contract: state pool base and slot stride 16-byte aligned (f32 or bf16 state), either layout (one tile
// policy per layout); inputs through any strides.
// Work split: one block of 128 threads per (sequence, value head, block of Cols state columns j). The
// block's K x Cols state tile is loaded once into registers as 16-byte vectors, kept there for all T
// tokens (rounded to the pool dtype after each token, so T tokens give the bits of T single steps) and
// stored once (plus once per token where token slots are asked for).
// Latency chain: a token's q, k, v and gating inputs do not depend on the slot, so they are issued
// with it (token 0) or while the previous token computes (tokens > 0), and kept unconverted until the
// state loads are issued; only the state loads wait for the slot. Per token: q and k are staged in shared
// memory with each wave's sums for their norms (one barrier); the tile policy sums the decayed state
// against the raw k and q (norms and decay are scalars applied after the sums), forms u = beta (v - S^T k),
// o = S^T q + u (k.q) and applies S += k u^T. The state is read once and written once per call: the
// kernel is bound by memory. Launched as a dependent launch (platform/dependent_launch.hpp): every tile
// fetches its state (and, with kPrefetchInputs, its inputs) into L2 while the kernel before finishes.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"
#include "dcukern/gdn/kernels/tile_kv.hpp"
#include "dcukern/gdn/kernels/tile_vk.hpp"

namespace dcukern::gdn_detail {

// Blocks per SM the register allocation must allow on CUDA: state bytes in flight. On the H200, 6 (at
// most 80 registers) against no bound (114 for the [K,V] f32 tile: 4 blocks): 76-78 % against 61-63 % of
// read bandwidth for gdn.tiled.kv at B >= 128, 82-84 % against 73-75 % for gdn.tiled.vk. Not applied on
// AMD (DCUKERN_CUDA_MIN_BLOCKS): there it meant 6 waves per SIMD, 40-80 registers, and the state tile
// went to scratch (the ISA audit's resource report).
constexpr int kTiledMinBlocks = 6;

template <class T, DType DT>
__global__ void __launch_bounds__(kTiledThreads, DCUKERN_CUDA_MIN_BLOCKS(kTiledMinBlocks)) gdn_tiled_kernel(GdnArgs a) {
  constexpr int K = T::kK, Cols = T::kCols;
  constexpr DType SDT = T::kState;
  const uint32_t pair = divide(blockIdx.x, a.col_div);  // (sequence, value head) pair
  const int vb = int(blockIdx.x - pair * a.col_div.divisor);
  const int b = int(divide(pair, a.hv_div));
  const int hv = int(pair) - b * a.hv;
  const int j0 = vb * Cols;
  const int tid = threadIdx.x;
#if DCUKERN_DEPENDENT_LAUNCH
  {  // While the kernel before finishes: the block's token-0 inputs (tiles with kPrefetchInputs) and its
    // state tile, at the slot as read now if in range, into L2. A hint only: all is read again after the wait.
    if constexpr (T::kPrefetchInputs) {
      QkRegs<DT, K, kTiledThreads>::prefetch(a, b, 0, hv);
      if (tid < Cols) prefetch_l2(static_cast<const ElemBits<DT>*>(a.v.p) + a.v.at(b, 0, hv) + j0 + tid);
    }
    const int64_t guess = a.slots[b];
    if (slot_valid(guess, a.num_slots)) {
      const char* const head = head_state<SDT>(a, guess, hv);
      T::prefetch_state(head, tid, j0, a.vdim);
    }
  }
#endif
  begin_dependent_kernel();  // a dependent launch (launch.hpp)

  // The slot heads the longest chain (slot -> state); token 0's inputs do not depend on it. All are
  // issued here and kept unconverted (ElemBits, GateIn), so nothing waits on them before the state loads.
  const int64_t slot = a.slots[b];
  QkRegs<DT, K, kTiledThreads> qk;
  qk.load(a, b, 0, hv);
  GateIn gin = load_gate(a, b, 0, hv);
  typename T::template VRegs<DT> vr = T::template load_v<DT>(a.v.p, a.v.at(b, 0, hv) + j0);
  if (!slot_valid(slot, a.num_slots)) {
    zero_outputs<DT>(a, b, hv, j0, Cols);
    return;
  }
  const char* const head = head_state<SDT>(a, slot, hv);
  float s[T::kVecs][T::kVecElems];
#pragma unroll
  for (int r = 0; r < T::kVecs; ++r) load_elems<SDT>(head + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);

  __shared__ float stage[2][QkRegs<DT, K, kTiledThreads>::kStageFloats];
  __shared__ typename T::Shared shared;
  for (int t = 0;; ++t) {
    const TokenQK tk = qk.publish(a, stage[t & 1]);
    const Gate gt = finish_gate(a, gin);
    const typename T::template VRegs<DT> v_now = vr;
    if (t + 1 < a.tokens) {  // the next token's inputs, in flight while this one computes
      qk.load(a, b, t + 1, hv);
      gin = load_gate(a, b, t + 1, hv);
      vr = T::template load_v<DT>(a.v.p, a.v.at(b, t + 1, hv) + j0);
    }
    const int64_t o_at = b * a.o_bs + t * a.o_ts + hv * a.o_hs + j0;
    T::template step<DT>(s, tk, gt, v_now, a.o, o_at, shared);
    if (char* snap = token_state<SDT>(a, b, t, hv)) {
#pragma unroll
      for (int r = 0; r < T::kVecs; ++r) store_elems<SDT>(snap + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);
    }
    if (t + 1 >= a.tokens) break;
  }
  char* const out = head_state<SDT>(a, slot, hv);
#pragma unroll
  for (int r = 0; r < T::kVecs; ++r) store_elems<SDT>(out + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);
}

}  // namespace dcukern::gdn_detail
