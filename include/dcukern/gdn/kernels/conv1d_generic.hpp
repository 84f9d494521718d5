// conv1d.generic — the fallback causal conv1d update: any valid call (width 2..4, any dim, strides,
// alignment; state in the activation dtype or f32).
// Work split: one thread per (sequence, channel), grid-stride; scalar loads of the channel's width-1
// state values, weights, bias and x; the state is shifted in place by the same thread.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

constexpr int kConvThreads = 256;

template <DType DT, DType SDT>
__global__ void __launch_bounds__(kConvThreads) conv1d_generic_kernel(Conv1dArgs a) {
  begin_dependent_kernel();
  const int64_t total = int64_t(a.batch) * a.dim;
  const int hist = a.width - 1;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int b = static_cast<int>(idx / a.dim);
    const int64_t c = idx % a.dim;
    const int64_t slot = a.slots[b];
    if (!slot_valid(slot, a.num_slots)) {
      store_elem<DT>(a.y, b * a.ldy + c, 0.f);
      continue;
    }
    const int64_t st = slot * a.slot_stride + c * hist;
    const float x = load_elem<DT>(a.x, b * a.ldx + c);
    float acc = a.bias ? load_elem<DT>(a.bias, c) : 0.f;
    float prev[kConv1dMaxWidth - 1];
    for (int j = 0; j < hist; ++j) {
      prev[j] = load_elem<SDT>(a.state, st + j);
      acc = fmaf(load_elem<DT>(a.w, c * a.ldw + j), prev[j], acc);
    }
    acc = fmaf(load_elem<DT>(a.w, c * a.ldw + hist), x, acc);
    for (int j = 0; j + 1 < hist; ++j) store_elem<SDT>(a.state, st + j, prev[j + 1]);
    store_elem<SDT>(a.state, st + hist - 1, x);
    store_elem<DT>(a.y, b * a.ldy + c, a.silu ? silu(acc) : acc);
  }
}

}  // namespace dcukern::gdn_detail
