// gemv.generic — the fallback: any valid call (any N 1..16, any K, strides, alignment).
// Work split: one wave per output column m (a row of W), grid-stride over M; lanes stride over K with
// scalar loads; one wave reduction per output element.
#pragma once
#include "dcukern/gemv/kernels/common.hpp"
#include "dcukern/gemv/params.hpp"

namespace dcukern::gemv_detail {

template <DType DT>
__global__ void gemv_generic_kernel(GemvArgs a) {
  const int lane = lane_id();
  for (int64_t m = global_wave(); m < a.m; m += grid_waves()) {
    float acc[kGemvMaxN] = {};
    const uint16_t* wr = a.w + m * a.ldw;
    for (int64_t k = lane; k < a.k; k += kWarpSize) {
      const float wv = to_float<DT>(wr[k]);
#pragma unroll
      for (int n = 0; n < kGemvMaxN; ++n)
        if (n < a.n) acc[n] = fmaf(wv, to_float<DT>(a.x[n * a.ldx + k]), acc[n]);
    }
#pragma unroll
    for (int n = 0; n < kGemvMaxN; ++n) {
      if (n < a.n) {
        const float s = warp_sum(acc[n]);
        if (lane == 0) store_output<DT>(a, n, m, s);
      }
    }
  }
}

}  // namespace dcukern::gemv_detail
