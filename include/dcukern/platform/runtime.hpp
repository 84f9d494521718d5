// The runtime vocabulary: the only header that includes hip_runtime.h or cuda_runtime.h. Streams,
// errors, device queries. (Debian's HIP 5.2 headers for the NVIDIA platform do not build with CUDA 13,
// so the NVIDIA build talks to the CUDA runtime directly.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dcukern/core/status.hpp"
#include "dcukern/platform/detect.hpp"

#if DCUKERN_PLATFORM_HIP
#include <hip/hip_runtime.h>
#elif DCUKERN_PLATFORM_CUDA
#include <cuda_runtime.h>
#elif DCUKERN_PLATFORM_SIM
#include "dcukern/platform/sim/runtime_api.hpp"
#else
#error "dcukern/platform/runtime.hpp needs hipcc or nvcc; host-only code includes the registry headers only"
#endif

namespace dcukern {

#if DCUKERN_PLATFORM_HIP
using stream_t = hipStream_t;
using runtime_error_t = hipError_t;
constexpr runtime_error_t kRuntimeSuccess = hipSuccess;
inline const char* runtime_error_string(runtime_error_t e) { return hipGetErrorString(e); }
inline runtime_error_t runtime_get_device(int* d) { return hipGetDevice(d); }
inline runtime_error_t runtime_device_count(int* n) { return hipGetDeviceCount(n); }
inline runtime_error_t runtime_last_error() { return hipGetLastError(); }
inline runtime_error_t runtime_malloc(void** p, size_t bytes) { return hipMalloc(p, bytes); }
inline runtime_error_t runtime_free(void* p) { return hipFree(p); }
inline runtime_error_t runtime_copy_to_device(void* d, const void* h, size_t bytes) {
  return hipMemcpy(d, h, bytes, hipMemcpyHostToDevice);
}
inline runtime_error_t runtime_copy_to_host(void* h, const void* d, size_t bytes) {
  return hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost);
}
inline runtime_error_t runtime_synchronize() { return hipDeviceSynchronize(); }
inline runtime_error_t runtime_memset_async(void* d, int value, size_t bytes, stream_t s) {
  return hipMemsetAsync(d, value, bytes, s);
}
// Lets `kernel` launch with up to `bytes` of dynamic shared memory (beyond the 48 KiB default).
inline runtime_error_t runtime_allow_dynamic_shared(const void* kernel, int bytes) {
  return hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
// Blocks of `kernel` one compute unit holds at `threads` threads and `shared_bytes` of dynamic shared memory.
inline runtime_error_t runtime_resident_blocks(int* blocks, const void* kernel, int threads, int shared_bytes) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, shared_bytes);
}
#elif DCUKERN_PLATFORM_SIM
using stream_t = simStream_t;
using runtime_error_t = simError_t;
constexpr runtime_error_t kRuntimeSuccess = simSuccess;
inline const char* runtime_error_string(runtime_error_t e) { return simGetErrorString(e); }
inline runtime_error_t runtime_get_device(int* d) { return simGetDevice(d); }
inline runtime_error_t runtime_device_count(int* n) { return simGetDeviceCount(n); }
inline runtime_error_t runtime_last_error() { return simGetLastError(); }
inline runtime_error_t runtime_malloc(void** p, size_t bytes) { return simMalloc(p, bytes); }
inline runtime_error_t runtime_free(void* p) { return simFree(p); }
inline runtime_error_t runtime_copy_to_device(void* d, const void* h, size_t bytes) {
  return simMemcpy(d, h, bytes, simMemcpyHostToDevice);
}
inline runtime_error_t runtime_copy_to_host(void* h, const void* d, size_t bytes) {
  return simMemcpy(h, d, bytes, simMemcpyDeviceToHost);
}
inline runtime_error_t runtime_synchronize() { return simDeviceSynchronize(); }
inline runtime_error_t runtime_memset_async(void* d, int value, size_t bytes, stream_t s) {
  return simMemsetAsync(d, value, bytes, s);
}
inline runtime_error_t runtime_allow_dynamic_shared(const void*, int bytes) {
  return bytes == 0 ? simSuccess : simErrorInvalidValue;  // dynamic shared memory is not simulated
}
// As an sm_90 SM holds them without a register bound: 2048 threads, at most 32 blocks.
inline runtime_error_t runtime_resident_blocks(int* blocks, const void*, int threads, int) {
  *blocks = threads > 0 ? std::min(32, 2048 / threads) : 0;
  return simSuccess;
}
#else
using stream_t = cudaStream_t;
using runtime_error_t = cudaError_t;
constexpr runtime_error_t kRuntimeSuccess = cudaSuccess;
inline const char* runtime_error_string(runtime_error_t e) { return cudaGetErrorString(e); }
inline runtime_error_t runtime_get_device(int* d) { return cudaGetDevice(d); }
inline runtime_error_t runtime_device_count(int* n) { return cudaGetDeviceCount(n); }
inline runtime_error_t runtime_last_error() { return cudaGetLastError(); }
inline runtime_error_t runtime_malloc(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
inline runtime_error_t runtime_free(void* p) { return cudaFree(p); }
inline runtime_error_t runtime_copy_to_device(void* d, const void* h, size_t bytes) {
  return cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
}
inline runtime_error_t runtime_copy_to_host(void* h, const void* d, size_t bytes) {
  return cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
}
inline runtime_error_t runtime_synchronize() { return cudaDeviceSynchronize(); }
inline runtime_error_t runtime_memset_async(void* d, int value, size_t bytes, stream_t s) {
  return cudaMemsetAsync(d, value, bytes, s);
}
inline runtime_error_t runtime_allow_dynamic_shared(const void* kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
inline runtime_error_t runtime_resident_blocks(int* blocks, const void* kernel, int threads, int shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, shared_bytes);
}
#endif

// The answer of ask() for `key`, asked of the runtime once and kept (the runtime's attribute and occupancy
// queries cost microseconds of host time; launches ask them on every call). Each call site's `ask` is a
// lambda, a type of its own, so each has its own answers: a few dozen keys at most, a linear search under
// a mutex. The key names the kernel and the device (and the shape where the answer depends on it).
template <class Ask, class... Key>
inline auto asked_once(Ask ask, Key... key) -> decltype(ask()) {
  using Answer = decltype(ask());
  static std::mutex mutex;
  static std::vector<std::pair<std::tuple<Key...>, Answer>> known;
  const std::tuple<Key...> k(key...);
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& entry : known)
    if (entry.first == k) return entry.second;
  const Answer answer = ask();
  known.emplace_back(k, answer);
  return answer;
}

// Blocks of `kernel` one compute unit of the current device, ordinal `device`, holds at `threads` threads and
// `shared_bytes` of dynamic shared memory (which the caller has allowed: runtime_allow_dynamic_shared);
// 0 where the runtime cannot say (its error state is left clear). Asked once per kernel, device and shape.
inline int resident_blocks(const void* kernel, int device, int threads, int shared_bytes = 0) {
  return asked_once(
      [&] {
        int blocks = 0;
        if (runtime_resident_blocks(&blocks, kernel, threads, shared_bytes) != kRuntimeSuccess) {
          (void)runtime_last_error();
          blocks = 0;
        }
        return blocks;
      },
      kernel, device, threads, shared_bytes);
}

#if DCUKERN_PLATFORM_CUDA
// The PTX version (compute capability x 10) the code of `kernel` that runs on `device` (the current device)
// was compiled from: code JIT-compiled from older PTX lacks what that PTX lacks. Asked once per kernel and
// device; the answers are kept per kernel, not per signature: kernels of the same signature may come from
// translation units built for different targets. 0 where the runtime cannot say.
inline int kernel_ptx_version(const void* kernel, int device) {
  return asked_once(
      [&] {
        cudaFuncAttributes attr{};
        if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess) return attr.ptxVersion;
        (void)cudaGetLastError();  // (only its own error: a caller's pending one stays)
        return 0;
      },
      kernel, device);
}
// Whether that code was built for compute capability 9.0 or later: it has grid_dependency_wait() and the
// cluster code in it.
inline bool kernel_built_for_sm90(const void* kernel, int device) { return kernel_ptx_version(kernel, device) >= 90; }
// How many clusters of `cluster` blocks of `threads` threads of `kernel` (no dynamic shared memory) the
// current device, ordinal `device`, runs at once (0 on error). Asked once per kernel, device and shape.
inline int resident_clusters(const void* kernel, int device, int cluster, int threads) {
  return asked_once(
      [&] {
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(unsigned(cluster));
        config.blockDim = dim3(unsigned(threads));
        cudaLaunchAttribute attribute[1];
        attribute[0].id = cudaLaunchAttributeClusterDimension;
        attribute[0].val.clusterDim.x = unsigned(cluster);
        attribute[0].val.clusterDim.y = attribute[0].val.clusterDim.z = 1;
        config.attrs = attribute;
        config.numAttrs = 1;
        int count = 0;
        if (cudaOccupancyMaxActiveClusters(&count, kernel, &config) != cudaSuccess) count = 0;
        (void)cudaGetLastError();
        return count;
      },
      kernel, device, cluster, threads);
}
#endif

// Launches kernel<<<grid, block, shared, s>>>(args...) on the current device, ordinal `device`, as a
// programmatic dependent launch where `dependent` (DeviceFacts::dependent_launch: CUDA, sm_90 and later)
// and the kernel's code for this device was compiled for it: its blocks may start while the kernel before
// it on the stream finishes, and wait for it in grid_dependency_wait() (platform/dependent_launch.hpp),
// which the kernel must call before it touches memory an earlier kernel may use. Otherwise an ordinary
// launch. Graph capture keeps the dependency as a programmatic edge.
// cluster > 1: in clusters of that many consecutive blocks along x (platform/cluster.hpp; grid.x a multiple
// of it). Only for kernels that kernel_built_for_sm90 on a device with DeviceFacts::clusters: the caller
// checks (cluster_launch_ok, device_context.hpp); elsewhere the launch fails.
template <class... Params, class... Args>
inline runtime_error_t launch_dependent_cluster(bool dependent, int device, unsigned cluster, void (*kernel)(Params...),
                                                dim3 grid, dim3 block, size_t shared, stream_t s, Args... args) {
#if DCUKERN_PLATFORM_CUDA
  // (Every launch through cudaLaunchKernelEx, which returns its own status: kernel<<<>>> followed by
  // cudaGetLastError() would also report an earlier call's error that the caller has not cleared.)
  dependent = dependent && kernel_built_for_sm90(reinterpret_cast<const void*>(kernel), device);
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = s;
  cudaLaunchAttribute attribute[2];
  unsigned n = 0;
  if (dependent) {
    attribute[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attribute[n].id = cudaLaunchAttributeClusterDimension;
    attribute[n].val.clusterDim.x = cluster;
    attribute[n].val.clusterDim.y = 1;
    attribute[n++].val.clusterDim.z = 1;
  }
  config.attrs = attribute;
  config.numAttrs = n;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
#elif DCUKERN_PLATFORM_SIM
  (void)dependent, (void)device;
  if (cluster > 1) return simErrorInvalidConfiguration;
  return simLaunchKernel(kernel, grid, block, shared, s, args...);
#else
  (void)dependent, (void)device;
  if (cluster > 1) return hipErrorInvalidConfiguration;  // no clusters: cluster_launch_ok says no first
  kernel<<<grid, block, shared, s>>>(static_cast<Params>(args)...);
  return runtime_last_error();
#endif
}

// The same without clusters.
template <class... Params, class... Args>
inline runtime_error_t launch_dependent(bool dependent, int device, void (*kernel)(Params...), dim3 grid,
                                        dim3 block, size_t shared, stream_t s, Args... args) {
  return launch_dependent_cluster(dependent, device, 1, kernel, grid, block, shared, s, args...);
}

// An ordinary launch, kernel<<<grid, block, shared, s>>>(args...), on the current device.
template <class... Params, class... Args>
inline runtime_error_t launch_plain(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, stream_t s,
                                    Args... args) {
  return launch_dependent_cluster(false, -1, 1, kernel, grid, block, shared, s, args...);
}

inline Status runtime_status(runtime_error_t e, const char* what) {
  if (e == kRuntimeSuccess) return Status::success();
  return Status::error(StatusCode::runtime_error, std::string(what) + ": " + runtime_error_string(e));
}

// Facts about one device read from the runtime: the raw architecture name and the counts a launch needs.
struct DeviceFacts {
  std::string arch_name;  // "gfx906:sramecc+:xnack-" or "sm_90"
  std::string name;       // marketing name
  int compute_units = 0;
  int wave_size = 0;
  size_t shared_mem_per_block = 0;
  int runtime_version = 0;
  bool dependent_launch = false;  // programmatic dependent launch (launch_dependent): CUDA, sm_90 and later
  bool clusters = false;          // thread-block clusters (platform/cluster.hpp): CUDA, sm_90 and later
};

inline Status query_device_facts(int device, DeviceFacts* f) {
#if DCUKERN_PLATFORM_HIP
  hipDeviceProp_t p;
  if (auto e = hipGetDeviceProperties(&p, device); e != hipSuccess) return runtime_status(e, "hipGetDeviceProperties");
  f->arch_name = p.gcnArchName;
  f->name = p.name;
  f->compute_units = p.multiProcessorCount;
  f->wave_size = p.warpSize;
  f->shared_mem_per_block = p.sharedMemPerBlock;
  (void)hipRuntimeGetVersion(&f->runtime_version);
#elif DCUKERN_PLATFORM_SIM
  (void)device;
  f->arch_name = sim::arch_name();
  f->name = "dcukern simulated device";
  f->compute_units = sim::env_int("DCUKERN_SIM_COMPUTE_UNITS", 132);
  f->wave_size = sim::kSimWarp;
  f->shared_mem_per_block = 48 * 1024;
#else
  cudaDeviceProp p;
  if (auto e = cudaGetDeviceProperties(&p, device); e != cudaSuccess)
    return runtime_status(e, "cudaGetDeviceProperties");
  f->arch_name = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  f->name = p.name;
  f->compute_units = p.multiProcessorCount;
  f->wave_size = p.warpSize;
  f->shared_mem_per_block = p.sharedMemPerBlock;
  f->dependent_launch = p.major >= 9;
  f->clusters = p.major >= 9;
  (void)cudaRuntimeGetVersion(&f->runtime_version);
#endif
  return Status::success();
}

}  // namespace dcukern
