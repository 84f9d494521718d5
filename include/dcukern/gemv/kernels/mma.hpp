// gemv.mma — skinny GEMM on NVIDIA tensor cores (sm_80+), N = 1..16.
// Contract: K, ldx, ldw multiples of 8; x, W 16-byte aligned.
// Work split: a block of 8 warps owns one 16-row tile of W (the M side of mma.sync m16n8k16) and
// strides over tiles; the warps split K in steps of 32. Per step a lane loads 16 bytes of W rows g and
// g+8 and 16 bytes of x row(s) g (and g+8), at the same k offset: since a dot product does not care
// about the order of k, the k order inside a step is permuted so that these whole-vector loads land
// directly in the A and B fragments, with no shuffles and no shared memory. Partial tiles are summed
// across warps in shared memory.
#pragma once
#include "dcukern/gemv/kernels/common.hpp"

namespace dcukern::gemv_detail {

constexpr int kMmaThreads = 256;

template <DType DT>
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1) {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  if constexpr (DT == DType::f16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
#endif
}

// kNT: tiles of 8 along N (1: N <= 8, 2: N <= 16).
template <DType DT, int kNT>
__global__ void __launch_bounds__(kMmaThreads) gemv_mma_kernel(GemvArgs a) {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  constexpr int kWarps = kMmaThreads / 32;
  constexpr int kUnroll = 4;
  __shared__ float partial[kWarps][16][8 * kNT];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, c = lane % 4;
  const int64_t tiles = (a.m + 15) / 16;
  const int64_t steps = (a.k + 31) / 32;

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m_lo = tile * 16 + g, m_hi = m_lo + 8;
    const bool lo_ok = m_lo < a.m, hi_ok = m_hi < a.m;
    const uint16_t* w_lo = a.w + (lo_ok ? m_lo : 0) * a.ldw + c * 8;
    const uint16_t* w_hi = a.w + (hi_ok ? m_hi : 0) * a.ldw + c * 8;
    const uint16_t* x_row[kNT];
    bool x_ok[kNT];
#pragma unroll
    for (int t = 0; t < kNT; ++t) {
      x_ok[t] = g + 8 * t < a.n;
      x_row[t] = a.x + (x_ok[t] ? g + 8 * t : 0) * a.ldx + c * 8;
    }
    float d[kNT][4] = {};

    auto step = [&](int64_t s, vec16_t& wl, vec16_t& wh, vec16_t (&xv)[kNT]) {
      const int64_t k = s * 32;
      const bool in = k + c * 8 < a.k;
      wl = lo_ok && in ? load_stream16(w_lo + k) : vec16_zero();
      wh = hi_ok && in ? load_stream16(w_hi + k) : vec16_zero();
#pragma unroll
      for (int t = 0; t < kNT; ++t) xv[t] = x_ok[t] && in ? load16(x_row[t] + k) : vec16_zero();
    };
    auto accumulate = [&](const vec16_t& wl, const vec16_t& wh, const vec16_t (&xv)[kNT]) {
#pragma unroll
      for (int t = 0; t < kNT; ++t) {
        mma_16816<DT>(d[t], wl.x, wh.x, wl.y, wh.y, xv[t].x, xv[t].y);
        mma_16816<DT>(d[t], wl.z, wh.z, wl.w, wh.w, xv[t].z, xv[t].w);
      }
    };

    int64_t s = warp;
    for (; s + (kUnroll - 1) * kWarps < steps; s += kUnroll * kWarps) {
      vec16_t wl[kUnroll], wh[kUnroll], xv[kUnroll][kNT];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) step(s + u * kWarps, wl[u], wh[u], xv[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) accumulate(wl[u], wh[u], xv[u]);
    }
    for (; s < steps; s += kWarps) {
      vec16_t wl, wh, xv[kNT];
      step(s, wl, wh, xv);
      accumulate(wl, wh, xv);
    }

    // d[t] = {(g, 8t+2c), (g, 8t+2c+1), (g+8, 8t+2c), (g+8, 8t+2c+1)} as (row, n)
#pragma unroll
    for (int t = 0; t < kNT; ++t) {
      partial[warp][g][8 * t + 2 * c] = d[t][0];
      partial[warp][g][8 * t + 2 * c + 1] = d[t][1];
      partial[warp][g + 8][8 * t + 2 * c] = d[t][2];
      partial[warp][g + 8][8 * t + 2 * c + 1] = d[t][3];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 16 * 8 * kNT; i += blockDim.x) {
      const int row = i / (8 * kNT), n = i % (8 * kNT);
      const int64_t m = tile * 16 + row;
      if (n < a.n && m < a.m) {
        float sum = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) sum += partial[w][row][n];
        store_output<DT>(a, n, m, sum);
      }
    }
    __syncthreads();
  }
#else
  unreachable_on_this_target();
#endif
}

}  // namespace dcukern::gemv_detail
