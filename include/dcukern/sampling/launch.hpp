// Launch of the kernel a sampling row names: block rows one block per row; the stream row one block per
// row (stream_kernel.hpp, a dependent launch where the device has them); the unfiltered row one block per
// tile of kUnfilteredItems elements a thread (unfiltered_kernel.hpp, a dependent launch too); the top-p and
// min-p rows that kernel in their role, then their second kernel (top_p_kernel.hpp, min_p_kernel.hpp) over
// the same tiles, both dependent launches; split rows
// the threshold kernel (one block per row, of threshold_threads(batch, compute units) threads; not where
// split_thresholds says no row needs it), then one block per tile of each row (that kernel leaves the
// workspace's counters zero for the next call; batches of more than kSyncRows rows zero them first), in
// clusters of a row's tiles where split_clustered says so, the device has clusters and every row's cluster
// is resident at once (a second round of clusters cost more than the clusters save: capabilities/evidence/).
// Both split kernels are dependent launches where the device has them (platform/dependent_launch.hpp).
// Runtime dtype -> template dispatch, ending in an explicit error.
#pragma once
#include "dcukern/platform/device_context.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/kernels/min_p_kernel.hpp"
#include "dcukern/sampling/kernels/split_kernel.hpp"
#include "dcukern/sampling/kernels/split_threshold.hpp"
#include "dcukern/sampling/kernels/stream_kernel.hpp"
#include "dcukern/sampling/kernels/top_p_kernel.hpp"
#include "dcukern/sampling/select.hpp"

namespace dcukern::sampling_detail {

// The wide fp32 tiles (split_wide_f32) where DCUKERN_CUDA_MIN_BLOCKS holds the split kernel at 2 blocks an SM:
// CUDA (and the simulated device, which runs CUDA's code paths).
#if DCUKERN_PLATFORM_CUDA || DCUKERN_PLATFORM_SIM
constexpr bool kSplitWideTiles = true;
#else
constexpr bool kSplitWideTiles = false;
#endif

template <bool kVec, DType DT>
Status launch_kernels(const SamplingArgs& a, const SplitWorkspace* w, int64_t batch, const DeviceContext& ctx,
                      stream_t s) {
  if (!w) {
    return runtime_status(launch_plain(sampling_block_kernel<kVec, DT>, dim3(unsigned(batch)), dim3(kThreads), 0, s, a),
                          "sampling launch");
  }
  auto launch = [&](auto kernel, int64_t blocks, const char* what, int threads = kThreads) {
    return launch_dependent_on(ctx, what, kernel, dim3(unsigned(blocks)), dim3(unsigned(threads)), s, a, *w);
  };
  if (w->thresholds) {
    const int threads = threshold_threads(batch, ctx.facts.compute_units);
    const auto kernel = threads == kThresholdThreadsWide ? sampling_threshold_kernel<kVec, DT, kThresholdThreadsWide>
                                                         : sampling_threshold_kernel<kVec, DT, kThresholdThreads>;
    if (Status e = launch(kernel, batch, "sampling threshold launch", threads); !e.ok()) return e;
  }
  const int64_t grid = batch * w->tiles;
  if constexpr (kVec) {  // the scalar-load row takes one instance at every batch (split_layout)
    if constexpr (DT == DType::bf16) {  // split_items: 64 elements a thread (32+ rows, or clusters)
#if DCUKERN_PLATFORM_CUDA  // a row's tiles as one cluster (split_clustered)
      const auto clustered = sampling_split_kernel<kVec, DT, 2, 64, true>;
      if (split_clustered(w->items, w->tiles) &&
          cluster_launch_ok(ctx, reinterpret_cast<const void*>(clustered), w->tiles, kThreads, batch))
        return launch_cluster_on(ctx, "sampling launch", unsigned(w->tiles), clustered, dim3(unsigned(grid)),
                                 dim3(unsigned(kThreads)), s, a, *w);
#endif
      if (w->items == 64) return launch(sampling_split_kernel<kVec, DT, 2, 64>, grid, "sampling launch");
    } else {
#if DCUKERN_PLATFORM_CUDA  // the occupancy variants differ on CUDA only (DCUKERN_CUDA_MIN_BLOCKS)
      static_assert(split_items(kSplitLargeBatch, 0, DType::f16, true) == 32 &&
                        split_items(kSplitLargeBatch, 0, DType::f32, true) == 16,
                    "tile sizes");
      if (batch >= kSplitLargeBatch) {  // split_items: 32 elements a thread for fp16 there, 16 for fp32
        if constexpr (DT == DType::f32) return launch(sampling_split_kernel<kVec, DT, 3, 16>, grid, "sampling launch");
        else return launch(sampling_split_kernel<kVec, DT, 3, 32>, grid, "sampling launch");
      }
#endif
      if constexpr (kSplitWideTiles && DT == DType::f32)  // split_wide_f32
        if (w->items == kSplitWideItems)
          return launch(sampling_split_kernel<kVec, DT, kSplitWideBlocksPerSm, kSplitWideItems>, grid,
                        "sampling launch");
      if (w->items == 32)  // batches of kSplitPairsBatch rows or more (split_items)
        return launch(sampling_split_kernel<kVec, DT, 2, 32>, grid, "sampling launch");
    }
  }
  return launch(sampling_split_kernel<kVec, DT, 2, kScalarSplitItems>, grid, "sampling launch");
}

template <DType DT>
Status launch_stream(const SamplingArgs& a, const SplitWorkspace& w, int64_t batch, const DeviceContext& ctx,
                     stream_t s) {
  return launch_dependent_on(ctx, "sampling launch", sampling_stream_kernel<DT, kStreamItems<DT>>,
                             dim3(unsigned(batch)), dim3(unsigned(kThreads)), s, a, w);
}

template <DType DT>
Status launch_unfiltered(const SamplingArgs& a, const SplitWorkspace& w, int64_t batch, const DeviceContext& ctx,
                         stream_t s) {
  return launch_dependent_on(ctx, "sampling launch", sampling_unfiltered_kernel<DT>, dim3(unsigned(batch * w.tiles)),
                             dim3(unsigned(kThreads)), s, a, w);
}

// A two-kernel row: the unfiltered kernel in `kRole`, then `second`, over the same tiles.
template <DType DT, UnfilteredRole kRole, class Kernel>
Status launch_two_kernels(Kernel second, const SamplingArgs& a, const SplitWorkspace& w, int64_t batch,
                          const DeviceContext& ctx, stream_t s) {
  const dim3 grid{unsigned(batch * w.tiles)}, block{unsigned(kThreads)};
  const auto first = sampling_unfiltered_kernel<DT, kRole>;
  if (Status e = launch_dependent_on(ctx, "sampling launch", first, grid, block, s, a, w); !e.ok()) return e;
  return launch_dependent_on(ctx, "sampling launch", second, grid, block, s, a, w);
}

// The kernels of `kernel` (block, split, stream, unfiltered, top-p or min-p rows) for the runtime dtype.
template <bool kVec>
Status launch_dtype(SamplingKernel kernel, DType dt, const SamplingArgs& a, const SplitWorkspace* w, int64_t batch,
                    const DeviceContext& ctx, stream_t s) {
  auto run = [&](auto dtype) {
    constexpr DType DT = decltype(dtype)::value;
    if constexpr (kVec) {
      if (kernel == SamplingKernel::stream_vec) return launch_stream<DT>(a, *w, batch, ctx, s);
      if (kernel == SamplingKernel::unfiltered_vec) return launch_unfiltered<DT>(a, *w, batch, ctx, s);
      if (kernel == SamplingKernel::top_p_vec)
        return launch_two_kernels<DT, UnfilteredRole::top_p>(sampling_top_p_kernel<DT>, a, *w, batch, ctx, s);
      if (kernel == SamplingKernel::min_p_vec)
        return launch_two_kernels<DT, UnfilteredRole::min_p>(sampling_min_p_kernel<DT>, a, *w, batch, ctx, s);
    }
    return launch_kernels<kVec, DT>(a, w, batch, ctx, s);
  };
  switch (dt) {
    case DType::f32: return run(std::integral_constant<DType, DType::f32>{});
    case DType::bf16: return run(std::integral_constant<DType, DType::bf16>{});
    case DType::f16: return run(std::integral_constant<DType, DType::f16>{});
    default: break;
  }
  return Status::unsupported(std::string("sampling: unsupported logits dtype ") + dtype_name(dt));
}

// Rows whose kernels take kUnfilteredItems elements a thread, and no threshold kernel.
inline bool unfiltered_tiles(SamplingKernel k) {
  return k == SamplingKernel::unfiltered_vec || k == SamplingKernel::top_p_vec || k == SamplingKernel::min_p_vec;
}
// Rows that take the caller's workspace (and advance the device offset themselves).
inline bool uses_workspace(SamplingKernel k) {
  return k == SamplingKernel::split || k == SamplingKernel::split_vec || k == SamplingKernel::stream_vec ||
         unfiltered_tiles(k);
}

// `workspace`: the caller's workspace, at least split_workspace_bytes(batch, V) (split and stream rows only);
// their kernels advance the device offset themselves when `advance`.
inline Status launch(SamplingKernel kernel, DType dt, const SamplingArgs& a, int64_t batch, void* workspace,
                     bool advance, const DeviceContext& ctx, stream_t s) {
  SplitWorkspace w{};
  if (uses_workspace(kernel)) {  // the workspace's counters are zero (sampling_workspace_init, then every call)
    const int resident_pairs = kSplitWideTiles ? ctx.facts.compute_units : 0;
    w = split_layout(workspace, batch, a.vocab, dt, kernel == SamplingKernel::split_vec, ctx.facts.clusters,
                     resident_pairs);
    w.advance = advance;
    if (unfiltered_tiles(kernel)) {  // their own tiles, inside the regions of 16-item tiles
      w.items = kUnfilteredItems;
      w.tiles = split_tiles(a.vocab, kUnfilteredItems);
    }
    w.thresholds =  // (the stream kernel and the unfiltered tiles' kernels take none)
        kernel != SamplingKernel::stream_vec && !unfiltered_tiles(kernel) &&
        split_thresholds(batch, a.top_k_ptr != nullptr, a.top_k, w.tiles);
    if (batch > kSyncRows) {  // other shapes' regions may overlap these counters (workspace.hpp)
      const Status e =
          runtime_status(runtime_memset_async(workspace, 0, split_sync_bytes(batch), s), "sampling workspace");
      if (!e.ok()) return e;
    }
  }
  switch (kernel) {
    case SamplingKernel::block: return launch_dtype<false>(kernel, dt, a, nullptr, batch, ctx, s);
    case SamplingKernel::block_vec: return launch_dtype<true>(kernel, dt, a, nullptr, batch, ctx, s);
    case SamplingKernel::split: return launch_dtype<false>(kernel, dt, a, &w, batch, ctx, s);
    case SamplingKernel::split_vec:
    case SamplingKernel::stream_vec:
    case SamplingKernel::unfiltered_vec:
    case SamplingKernel::top_p_vec:
    case SamplingKernel::min_p_vec: return launch_dtype<true>(kernel, dt, a, &w, batch, ctx, s);
  }
  return Status::unsupported("sampling: kernel not compiled into this build");
}

}  // namespace dcukern::sampling_detail
