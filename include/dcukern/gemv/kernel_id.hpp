// The GEMV kernel variants. A capability row names one; gemv/launch.hpp maps each to its kernel.
#pragma once
#include <cstdint>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class GemvKernel : uint8_t {
  generic,         // any valid call, scalar loads
  rowwise,         // N = 1, 16-byte loads, one wave per W row, portable fp32 FMA
  rowwise_fdot2,   // as rowwise, fp16 via v_dot2_f32_f16
  rowwise_dot2c,   // as rowwise, fp16 via v_dot2c_f32_f16 (inline asm)
  splitk,          // N <= 16, x staged in LDS, persistent blocks over M, portable fp32 FMA
  splitk_fdot2,    // as splitk, fp16 via v_dot2_f32_f16
  splitk_dot2c,    // as splitk, fp16 via v_dot2c_f32_f16
  mma,             // N <= 16, NVIDIA mma.sync m16n8k16 (W as the A operand), split-K over warps
};

// The instruction features a kernel's code uses (guarded in device code by DCUKERN_DEVICE_HAS_*). A row
// that launches the kernel must need at least these: a host test checks it.
constexpr FeatureSet gemv_kernel_isa(GemvKernel k) {
  switch (k) {
    case GemvKernel::rowwise_fdot2:
    case GemvKernel::splitk_fdot2: return features(Feature::dot2_f32_f16);
    case GemvKernel::rowwise_dot2c:
    case GemvKernel::splitk_dot2c: return features(Feature::dot2c_f32_f16);
    case GemvKernel::mma: return features(Feature::nv_mma_f16);
    default: return 0;
  }
}

}  // namespace dcukern
