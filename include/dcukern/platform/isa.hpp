// Device-pass feature tests and the wave size. DCUKERN_DEVICE_HAS_* are defined from the compiler's
// target macros, and a static_assert ties them to the target table: code guarded by a macro is compiled
// in exactly where the table lets a row that needs it be selected.
#pragma once
#include "capabilities/targets.hpp"
#include "dcukern/platform/detect.hpp"

#if defined(__HIP_DEVICE_COMPILE__)
#if defined(__gfx906__)
#define DCUKERN_DEVICE_TARGET "gfx906"
#elif defined(__gfx908__)
#define DCUKERN_DEVICE_TARGET "gfx908"
#elif defined(__gfx90a__)
#define DCUKERN_DEVICE_TARGET "gfx90a"
#elif defined(__gfx940__)
#define DCUKERN_DEVICE_TARGET "gfx940"
#elif defined(__gfx942__)
#define DCUKERN_DEVICE_TARGET "gfx942"
#elif defined(__gfx950__)
#define DCUKERN_DEVICE_TARGET "gfx950"
#elif defined(__gfx1030__)
#define DCUKERN_DEVICE_TARGET "gfx1030"
#elif defined(__gfx1100__)
#define DCUKERN_DEVICE_TARGET "gfx1100"
#endif
// v_dot2_f32_f16 (LLVM dot2-insts / dot10-insts)
#if defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || \
    defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__) || defined(__gfx1030__) ||  \
    defined(__gfx1100__)
#define DCUKERN_DEVICE_HAS_DOT2_F32_F16 1
#endif
// v_dot2c_f32_f16 (dot5-insts), under that mnemonic (gfx11 renamed it v_dot2acc_f32_f16)
#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
    defined(__gfx942__) || defined(__gfx950__) || defined(__gfx1030__)
#define DCUKERN_DEVICE_HAS_DOT2C_F32_F16 1
#endif
#endif  // __HIP_DEVICE_COMPILE__

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DCUKERN_DEVICE_HAS_NV_MMA_F16 1
#endif

#ifndef DCUKERN_DEVICE_HAS_DOT2_F32_F16
#define DCUKERN_DEVICE_HAS_DOT2_F32_F16 0
#endif
#ifndef DCUKERN_DEVICE_HAS_DOT2C_F32_F16
#define DCUKERN_DEVICE_HAS_DOT2C_F32_F16 0
#endif
#ifndef DCUKERN_DEVICE_HAS_NV_MMA_F16
#define DCUKERN_DEVICE_HAS_NV_MMA_F16 0
#endif

#ifdef DCUKERN_DEVICE_TARGET
static_assert(dcukern::capabilities::find_target(DCUKERN_DEVICE_TARGET) != nullptr,
              "device target missing from the table");
static_assert(dcukern::has_feature(*dcukern::capabilities::find_target(DCUKERN_DEVICE_TARGET),
                                   dcukern::Feature::dot2_f32_f16) == bool(DCUKERN_DEVICE_HAS_DOT2_F32_F16),
              "target table and device guard disagree on dot2_f32_f16");
static_assert(dcukern::has_feature(*dcukern::capabilities::find_target(DCUKERN_DEVICE_TARGET),
                                   dcukern::Feature::dot2c_f32_f16) == bool(DCUKERN_DEVICE_HAS_DOT2C_F32_F16),
              "target table and device guard disagree on dot2c_f32_f16");
#if defined(__AMDGCN_WAVEFRONT_SIZE)
static_assert(dcukern::capabilities::find_target(DCUKERN_DEVICE_TARGET)->wave_size == __AMDGCN_WAVEFRONT_SIZE,
              "target table and compiler disagree on the wave size");
#endif
#endif

namespace dcukern {
// Wave (warp) size of the device pass. Only meaningful inside device code; never use it as a kernel
// template argument (the host pass sees another value).
#if defined(__AMDGCN_WAVEFRONT_SIZE)
constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#elif DCUKERN_PLATFORM_HIP
constexpr int kWarpSize = 64;
#else
constexpr int kWarpSize = 32;
#endif
}  // namespace dcukern
