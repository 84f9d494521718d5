// Which platform this translation unit is compiled for. Includes no runtime header.
//   DCUKERN_PLATFORM_HIP   hipcc / clang -x hip (AMD, Hygon DTK)
//   DCUKERN_PLATFORM_CUDA  nvcc
//   DCUKERN_PLATFORM_SIM   a plain C++ compiler with DCUKERN_SIMULATE_DEVICE defined: the device code runs
//                          on the host, on the simulated device (platform/sim/): CUDA's non-PTX code paths
//   DCUKERN_PLATFORM_HOST  a plain C++ compiler otherwise: registry, references and host tests only
//   DCUKERN_DEVICE_PASS    1 while compiling device code
//   DCUKERN_HD             __host__ __device__ where a device compiler is in use (code shared by both)
//   DCUKERN_CUDA_MIN_BLOCKS(n)  the second __launch_bounds__ argument for "n blocks per SM on CUDA": clang
//                          reads that argument as waves per EU (SIMD) for AMD, so a CUDA-tuned register
//                          bound would force AMD kernels into scratch; on HIP it is 1 (no bound)
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#define DCUKERN_PLATFORM_HIP 1
#elif defined(__CUDACC__)
#define DCUKERN_PLATFORM_CUDA 1
#elif defined(DCUKERN_SIMULATE_DEVICE)
#define DCUKERN_PLATFORM_SIM 1
#else
#define DCUKERN_PLATFORM_HOST 1
#endif

#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)
#define DCUKERN_DEVICE_PASS 1
#endif

#if DCUKERN_PLATFORM_HOST || DCUKERN_PLATFORM_SIM
#define DCUKERN_HD
#else
#define DCUKERN_HD __host__ __device__
#endif

#if DCUKERN_PLATFORM_HIP
#define DCUKERN_CUDA_MIN_BLOCKS(n) 1
#else
#define DCUKERN_CUDA_MIN_BLOCKS(n) (n)
#endif
