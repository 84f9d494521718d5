// conv1d.vec8 (Seqs = 1) / conv1d.vec8x2 (Seqs = 2) — the causal conv1d update, 8 channels per thread
// with 16-byte accesses.
// Contract: dim a multiple of 8; x, y, weight, bias, state base 16-byte aligned; weight rows contiguous
// (row stride == width); x and y row strides and the state slot stride multiples of 8 elements / 16 bytes.
// Work split: one thread per (group of Seqs consecutive sequences, group of 8 channels), grid-stride. The
// group's 8*width weights and 8 biases are read once for its Seqs sequences; per sequence its 8 inputs
// and 8*(width-1) state values are contiguous runs read as 16-byte vectors, the shifted state and the 8
// outputs are written the same way. Every load that does not depend on a slot (weights, bias, x, the
// slots themselves) is issued before the first wait; only the state loads wait for their slot.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

// Threads per SM / CU (in blocks of kConvThreads) the register allocation must allow, for one sequence
// per thread; Seqs per thread divide it.
#ifndef DCUKERN_CONV1D_MIN_BLOCKS
#define DCUKERN_CONV1D_MIN_BLOCKS 1
#endif
constexpr int kConvMinBlocks = DCUKERN_CONV1D_MIN_BLOCKS;

template <int W, int Seqs, DType DT, DType SDT>
__global__ void __launch_bounds__(kConvThreads, (kConvMinBlocks + Seqs - 1) / Seqs) conv1d_vec8_kernel(Conv1dArgs a) {
  constexpr int kHist = W - 1;
  const int64_t groups = a.dim / 8;
  const int64_t total = (int64_t(a.batch) + Seqs - 1) / Seqs * groups;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int b0 = static_cast<int>(idx / groups) * Seqs;
    const int64_t c0 = (idx % groups) * 8;
    int64_t slot[Seqs];
    float x[Seqs][8], w[8 * W], bias[8];
#pragma unroll
    for (int q = 0; q < Seqs; ++q) {
      slot[q] = b0 + q < a.batch ? a.slots[b0 + q] : -1;
      if (b0 + q < a.batch) load_elems<DT>(static_cast<const char*>(a.x) + ((b0 + q) * a.ldx + c0) * kElemBytes<DT>, x[q]);
    }
    load_elems<DT>(static_cast<const char*>(a.w) + c0 * W * kElemBytes<DT>, w);
    if (a.bias) load_elems<DT>(static_cast<const char*>(a.bias) + c0 * kElemBytes<DT>, bias);
    float st[Seqs][8 * kHist];
    char* sp[Seqs];
#pragma unroll
    for (int q = 0; q < Seqs; ++q) {
      sp[q] = static_cast<char*>(a.state) + (slot[q] * a.slot_stride + c0 * kHist) * kElemBytes<SDT>;
      if (slot_valid(slot[q], a.num_slots)) load_elems<SDT>(sp[q], st[q]);
    }
#pragma unroll
    for (int q = 0; q < Seqs; ++q) {
      if (b0 + q >= a.batch) break;
      float y[8];
      const bool valid = slot_valid(slot[q], a.num_slots);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        float acc = a.bias ? bias[i] : 0.f;
#pragma unroll
        for (int j = 0; j < kHist; ++j) acc = fmaf(w[i * W + j], st[q][i * kHist + j], acc);
        acc = fmaf(w[i * W + kHist], x[q][i], acc);
        y[i] = valid ? (a.silu ? silu(acc) : acc) : 0.f;
#pragma unroll
        for (int j = 0; j + 1 < kHist; ++j) st[q][i * kHist + j] = st[q][i * kHist + j + 1];
        st[q][i * kHist + kHist - 1] = x[q][i];
      }
      if (valid) store_elems<SDT>(sp[q], st[q]);
      store_elems<DT>(static_cast<char*>(a.y) + ((b0 + q) * a.ldy + c0) * kElemBytes<DT>, y);
    }
  }
}

}  // namespace dcukern::gdn_detail
