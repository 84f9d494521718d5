// gdn.generic — the fallback recurrent step: any valid call (any K, V <= 256, either state layout, f32
// or bf16 state, any strides and alignment).
// Work split: one block per (sequence, value head). Per token the block stages q and k in shared memory;
// each thread owns whole columns j of the state (grid of threads strides over V) and makes two passes
// over its column in the pool: S^T k and S^T q of the decayed state, then the update written back. The
// pool slot itself is the working state, so T tokens give the bits of T single steps.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

constexpr int kGenericThreads = 128;

template <DType DT, DType SDT>
__global__ void __launch_bounds__(kGenericThreads) gdn_generic_kernel(GdnArgs a) {
  begin_dependent_kernel();
  const int hv = blockIdx.x % a.hv;
  const int b = blockIdx.x / a.hv;
  const int64_t slot = a.slots[b];
  if (!slot_valid(slot, a.num_slots)) {
    zero_outputs<DT>(a, b, hv, 0, a.vdim);
    return;
  }
  __shared__ float stage[2][2 * kGdnMaxHeadDim];
  char* const head = head_state<SDT>(a, slot, hv);
  const bool kv = a.kv_layout;
  // Element (i, j) of the [K, V] state, wherever the layout puts it.
  auto off = [&](int i, int j) { return kv ? int64_t(i) * a.vdim + j : int64_t(j) * a.kdim + i; };
  for (int t = 0; t < a.tokens; ++t) {
    const TokenQK tk = stage_qk<DT>(a, b, t, hv, stage[t & 1]);
    const Gate gt = gate(a, b, t, hv);
    char* const snapshot = token_state<SDT>(a, b, t, hv);
    for (int j = threadIdx.x; j < a.vdim; j += blockDim.x) {
      float dk = 0.f, dq = 0.f;
      for (int i = 0; i < a.kdim; ++i) {
        const float s = load_elem<SDT>(head, off(i, j)) * gt.decay;
        dk = fmaf(s, tk.ks[i] * tk.rk, dk);
        dq = fmaf(s, tk.qs[i] * tk.rq, dq);
      }
      const float u = gt.beta * (load_elem<DT>(a.v.p, a.v.at(b, t, hv) + j) - dk);
      store_elem<DT>(a.o, b * a.o_bs + t * a.o_ts + hv * a.o_hs + j, fmaf(u, tk.kq, dq));
      for (int i = 0; i < a.kdim; ++i) {
        const float s = fmaf(tk.ks[i] * tk.rk, u, load_elem<SDT>(head, off(i, j)) * gt.decay);
        store_elem<SDT>(head, off(i, j), s);
        if (snapshot) store_elem<SDT>(snapshot, off(i, j), s);
      }
    }
  }
}

}  // namespace dcukern::gdn_detail
