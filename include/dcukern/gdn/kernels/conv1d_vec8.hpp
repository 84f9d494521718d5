// conv1d.vec8 — the causal conv1d update, 8 channels per thread with 16-byte accesses.
// Contract: dim a multiple of 8; x, y, weight, bias, state base 16-byte aligned; weight rows contiguous
// (row stride == width); x and y row strides and the state slot stride multiples of 8 elements / 16 bytes.
// Work split: one thread per (sequence, group of 8 channels), grid-stride. The group's 8*(width-1)
// state values, 8*width weights, 8 inputs and 8 biases are contiguous runs read as 16-byte vectors;
// the shifted state and the 8 outputs are written the same way.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

// The update of one group of N channels in registers: y[i] = bias[i] + sum_j w[i][j] * [state_i, x_i][j]
// (then silu), and the state window of each channel shifted by one with x appended. bias is read only
// when the call has one.
template <int W, int N>
__device__ __forceinline__ void conv1d_group(const Conv1dArgs& a, const float (&x)[N], const float (&w)[N * W],
                                             const float (&bias)[N], float (&st)[N * (W - 1)], float (&y)[N]) {
  constexpr int kHist = W - 1;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float acc = a.bias ? bias[i] : 0.f;
#pragma unroll
    for (int j = 0; j < kHist; ++j) acc = fmaf(w[i * W + j], st[i * kHist + j], acc);
    acc = fmaf(w[i * W + kHist], x[i], acc);
    y[i] = a.silu ? silu(acc) : acc;
#pragma unroll
    for (int j = 0; j + 1 < kHist; ++j) st[i * kHist + j] = st[i * kHist + j + 1];
    st[i * kHist + kHist - 1] = x[i];
  }
}

template <int W, DType DT, DType SDT>
__global__ void __launch_bounds__(kConvThreads) conv1d_vec8_kernel(Conv1dArgs a) {
  constexpr int kHist = W - 1;
  begin_dependent_kernel();
  const int64_t groups = a.dim / 8;
  const int64_t total = int64_t(a.batch) * groups;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int b = static_cast<int>(idx / groups);
    // (channel offsets in 32 bits, dim <= kConv1dMaxDim: a 64-bit one compiles for GFX11.0 to a v_mad_u64_u32
    // that overlaps its source, which the ISA audit rejects)
    const int c0 = static_cast<int>(idx % groups) * 8;
    const int64_t slot = a.slots[b];
    float y[8];
    if (!slot_valid(slot, a.num_slots)) {
#pragma unroll
      for (int i = 0; i < 8; ++i) y[i] = 0.f;
      store_elems<DT>(static_cast<char*>(a.y) + (b * a.ldy + c0) * kElemBytes<DT>, y);
      continue;
    }
    float x[8], w[8 * W], st[8 * kHist], bias[8];
    load_elems<DT>(static_cast<const char*>(a.x) + (b * a.ldx + c0) * kElemBytes<DT>, x);
    load_elems<DT>(static_cast<const char*>(a.w) + c0 * W * kElemBytes<DT>, w);
    char* const sp = static_cast<char*>(a.state) + (slot * a.slot_stride + c0 * kHist) * kElemBytes<SDT>;
    load_elems<SDT>(sp, st);
    if (a.bias) load_elems<DT>(static_cast<const char*>(a.bias) + c0 * kElemBytes<DT>, bias);
    conv1d_group<W>(a, x, w, bias, st, y);
    store_elems<SDT>(sp, st);
    store_elems<DT>(static_cast<char*>(a.y) + (b * a.ldy + c0) * kElemBytes<DT>, y);
  }
}

}  // namespace dcukern::gdn_detail
