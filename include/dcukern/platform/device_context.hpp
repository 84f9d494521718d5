// Per-device facts resolved against the target table, computed once per device and cached
// (the first call on a device queries its properties; later calls read the cache, lock-free).
#pragma once
#include <array>
#include <atomic>
#include <mutex>

#include "dcukern/platform/runtime.hpp"
#include "dcukern/registry/resolve.hpp"

namespace dcukern {

struct DeviceContext {
  int device = -1;
  DeviceFacts facts;
  // The device's target, as rows are selected for it: target.info points at code_target, the target
  // table's entry less the features the code running on the device was not built for
  // (features_missing_from_code).
  ResolvedTarget target;
  TargetInfo code_target{};
};

#if DCUKERN_PLATFORM_CUDA
namespace platform_detail {
// An empty kernel built like the library's kernels of this program: the PTX version of its code on a
// device is theirs (the program is taken to build its device code for one set of targets).
template <int = 0>
__global__ void code_version_probe() {}
}  // namespace platform_detail
#endif

// Features of a target that the code running on `device` lacks though the device has them: on CUDA, code
// JIT-compiled from PTX below compute_80 has no mma.sync (the mma kernels' bodies are a trap there), so
// their rows must not be chosen: nv_mma_f16 goes. Nothing elsewhere (HIP code objects are per target).
inline FeatureSet features_missing_from_code(int device) {
#if DCUKERN_PLATFORM_CUDA
  const void* probe = reinterpret_cast<const void*>(&platform_detail::code_version_probe<>);
  return kernel_ptx_version(probe, device) >= 80 ? FeatureSet(0) : feature_bit(Feature::nv_mma_f16);
#else
  (void)device;
  return 0;
#endif
}

// Context of the current device. Fails (no_device) where there is no usable device.
inline Status current_device_context(const DeviceContext** out) {
  constexpr int kMaxDevices = 64;
  static std::array<std::atomic<const DeviceContext*>, kMaxDevices> cache{};
  static std::array<DeviceContext, kMaxDevices> storage{};
  static std::mutex init_mutex;
  int device = 0;
  if (auto e = runtime_get_device(&device); e != kRuntimeSuccess)
    return Status::error(StatusCode::no_device, std::string("no usable GPU: ") + runtime_error_string(e));
  if (device < 0 || device >= kMaxDevices) return Status::unsupported("device ordinal above 63");
  if (const DeviceContext* c = cache[device].load(std::memory_order_acquire)) {
    *out = c;
    return Status::success();
  }
  std::lock_guard<std::mutex> g(init_mutex);
  if (const DeviceContext* c = cache[device].load(std::memory_order_acquire)) {
    *out = c;
    return Status::success();
  }
  DeviceContext& ctx = storage[device];
  ctx.device = device;
  if (Status s = query_device_facts(device, &ctx.facts); !s.ok()) return s;
  ctx.target = resolve_target(ctx.facts.arch_name);
  if (!ctx.target.info) return Status::unsupported("unrecognised architecture name '" + ctx.facts.arch_name + "'");
  ctx.code_target = for_code_lacking(*ctx.target.info, features_missing_from_code(device));
  ctx.target.info = &ctx.code_target;
  cache[device].store(&ctx, std::memory_order_release);
  *out = &ctx;
  return Status::success();
}

// launch_dependent (runtime.hpp) on the context's device, as a Status that names `what`: a programmatic
// dependent launch where the device has them. For kernels that call grid_dependency_wait() before they
// touch memory an earlier kernel may use (platform/dependent_launch.hpp).
template <class... Params, class... Args>
inline Status launch_dependent_on(const DeviceContext& ctx, const char* what, void (*kernel)(Params...), dim3 grid,
                                  dim3 block, stream_t s, Args... args) {
  return runtime_status(launch_dependent(ctx.facts.dependent_launch, ctx.device, kernel, grid, block, 0, s, args...),
                        what);
}

// Whether `kernel` may be launched in clusters of `cluster` blocks of `threads` threads on the context's
// device (launch_dependent_cluster) with all `clusters` of them resident at once: the device has clusters,
// the kernel's code for it was built for sm_90 or later, and the occupancy allows that many.
inline bool cluster_launch_ok(const DeviceContext& ctx, const void* kernel, int cluster, int threads,
                              int64_t clusters) {
#if DCUKERN_PLATFORM_CUDA
  return ctx.facts.clusters && kernel_built_for_sm90(kernel, ctx.device) &&
         clusters <= resident_clusters(kernel, ctx.device, cluster, threads);
#else
  (void)ctx, (void)kernel, (void)cluster, (void)threads, (void)clusters;
  return false;
#endif
}

// launch_dependent_on in clusters of `cluster` consecutive blocks (cluster_launch_ok first).
template <class... Params, class... Args>
inline Status launch_cluster_on(const DeviceContext& ctx, const char* what, unsigned cluster, void (*kernel)(Params...),
                                dim3 grid, dim3 block, stream_t s, Args... args) {
  return runtime_status(
      launch_dependent_cluster(ctx.facts.dependent_launch, ctx.device, cluster, kernel, grid, block, 0, s, args...),
      what);
}

}  // namespace dcukern
