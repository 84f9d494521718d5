// gdn.tiled.kv / gdn.tiled.vk — the fast recurrent step for K in {64, 128, 256}, V a multiple of 32.
// Contract: state pool base and slot stride 16-byte aligned (f32 or bf16 state), either layout (one row
// and one tile policy per layout); inputs through any strides.
// Work split: one block of 128 threads per (sequence, value head, block of 32 state columns j). The
// block's K x 32 state tile is loaded once into registers as 16-byte fragments, kept there for all T
// tokens (rounded to the pool dtype after each token, so T tokens give the bits of T single steps) and
// stored once (plus once per token where token slots are asked for). Per token: q and k are staged in
// shared memory; the tile policy computes S^T k and S^T q of the decayed state with fused fp32 FMAs,
// reduces them over K (policy-specific, below), forms u = beta (v - S^T k), o = S^T q + u (k.q), and
// applies S += k u^T. The state is read once and written once per call: the kernel is bound by memory.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"
#include "dcukern/gdn/kernels/tile_kv.hpp"
#include "dcukern/gdn/kernels/tile_vk.hpp"

namespace dcukern::gdn_detail {

template <template <int, DType> class Tile, int K, DType DT, DType SDT>
__global__ void __launch_bounds__(kTiledThreads) gdn_tiled_kernel(GdnArgs a) {
  using T = Tile<K, SDT>;
  const int col_blocks = a.vdim / kTileCols;
  const int vb = blockIdx.x % col_blocks;
  const int hv = (blockIdx.x / col_blocks) % a.hv;
  const int b = blockIdx.x / (col_blocks * a.hv);
  const int j0 = vb * kTileCols;
  const int64_t slot = a.slots[b];
  if (!slot_valid(slot, a.num_slots)) {
    zero_outputs<DT>(a, b, hv, j0, kTileCols);
    return;
  }
  __shared__ float stage[2][2 * K];
  __shared__ typename T::Shared shared;
  const int tid = threadIdx.x;
  const char* const head = head_state<SDT>(a, slot, hv);
  float s[T::kFrags][T::kFragElems];
#pragma unroll
  for (int r = 0; r < T::kFrags; ++r) load_elems<SDT>(head + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);

  for (int t = 0; t < a.tokens; ++t) {
    const TokenQK tk = stage_qk<DT>(a, b, t, hv, stage[t & 1]);
    const Gate gt = gate(a, b, t, hv);
    const int64_t v_at = a.v.at(b, t, hv) + j0;
    const int64_t o_at = b * a.o_bs + t * a.o_ts + hv * a.o_hs + j0;
    T::template step<DT>(s, tk, gt, a.v.p, v_at, a.o, o_at, shared);
    if (char* snap = token_state<SDT>(a, b, t, hv)) {
#pragma unroll
      for (int r = 0; r < T::kFrags; ++r) store_elems<SDT>(snap + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);
    }
  }
  char* const out = head_state<SDT>(a, slot, hv);
#pragma unroll
  for (int r = 0; r < T::kFrags; ++r) store_elems<SDT>(out + T::offset(tid, r, j0, a.vdim) * kElemBytes<SDT>, s[r]);
}

}  // namespace dcukern::gdn_detail
