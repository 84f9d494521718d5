// NVIDIA tensor-core matrix multiply-accumulate (mma.sync m16n8k16, f16 or bf16 inputs, fp32 accumulate),
// compiled where the device pass has it (DCUKERN_DEVICE_HAS_NV_MMA_F16); elsewhere an empty body that
// the registry never reaches (rows using it need Feature::nv_mma_f16).
// Fragments (lane = 4 * g + c): A 16x16 row-major: a0 = row g, cols 2c..2c+1; a1 = row g+8; a2 = row g,
// cols 2c+8..2c+9; a3 = row g+8, cols 2c+8..2c+9. B 16x8: b0 = rows 2c..2c+1, col g; b1 = rows 2c+8..2c+9.
// C 16x8: d[0..1] = row g, cols 2c..2c+1; d[2..3] = row g+8.
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/isa.hpp"

namespace dcukern {

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

}  // namespace dcukern
