// Launch of the kernels an attention row names: argument block, grid sizes, and the runtime -> template
// dispatch (q dtype x KV dtype), each switch ending in an explicit error.
#pragma once
#include <cmath>
#include <type_traits>

#include "dcukern/attention/kernels/grouped.hpp"
#include "dcukern/attention/kernels/merge.hpp"
#include "dcukern/attention/kernels/mma.hpp"
#include "dcukern/attention/kernels/row.hpp"
#include "dcukern/attention/select.hpp"
#include "dcukern/platform/device_context.hpp"

namespace dcukern::attn_detail {

inline AttnArgs make_args(const AttentionParams& p) {
  AttnArgs a{};
  a.q = static_cast<const uint16_t*>(p.q.data);
  a.o = static_cast<uint16_t*>(p.o.data);
  a.k = p.kv.k;
  a.v = p.kv.v;
  a.q_bs = p.q.batch_stride, a.q_ts = p.q.token_stride, a.q_hs = p.q.head_stride;
  a.o_bs = p.o.batch_stride, a.o_ts = p.o.token_stride, a.o_hs = p.o.head_stride;
  a.page_stride = p.kv.page_stride, a.token_stride = p.kv.token_stride, a.head_stride = p.kv.head_stride;
  a.block_table = p.block_table;
  a.bt_stride = p.block_table_stride;
  a.capacity = int64_t(p.max_pages) * p.kv.page_size;
  a.page_size = p.kv.page_size;
  a.context_lens = p.context_lens;
  a.lse = p.lse;
  a.tokens = p.q_tokens, a.hq = p.num_q_heads, a.group = p.num_q_heads / p.num_kv_heads, a.head_dim = p.head_dim;
  a.scale = p.scale > 0.f ? p.scale : static_cast<float>(1.0 / std::sqrt(double(p.head_dim)));
  a.soft_cap = p.soft_cap;
  a.k_scale = p.kv.k_scale, a.v_scale = p.kv.v_scale;
  a.window_left = p.window_left;
  a.alibi = p.alibi_slopes;
  a.sinks = p.sinks;
  a.num_chunks = 1;
  a.chunk_size = a.capacity;
  a.num_kv_heads = p.num_kv_heads;
  a.page_div = make_fast_divide(static_cast<uint32_t>(p.kv.page_size));
  a.q_is_bf16 = p.q.dtype == DType::bf16;
  const uintptr_t row_bits = reinterpret_cast<uintptr_t>(p.kv.k) | reinterpret_cast<uintptr_t>(p.kv.v) |
                             static_cast<uintptr_t>((p.kv.page_stride | p.kv.token_stride | p.kv.head_stride) *
                                                    int64_t(dtype_bytes(p.kv.dtype)));
  a.kv_rows_16b = row_bits % 16 == 0 && p.head_dim % 16 == 0;
  return a;
}

// Calls f(std::integral_constant<int, kDim>{}) with the head_dim bound (64, 128 or 256) whose kernels
// take `head_dim`: with with_shallow_ring_dim below, the only places the runtime head_dim picks a
// compiled instantiation.
template <class F>
decltype(auto) with_head_dim_bound(int head_dim, F&& f) {
  if (head_dim <= 64) return f(std::integral_constant<int, 64>{});
  if (head_dim <= 128) return f(std::integral_constant<int, 128>{});
  return f(std::integral_constant<int, 256>{});
}

// The same for the pipelined kernel's shallow ring, whose only instantiations are head_dim bounds
// kShallowRingDim (attention_shallow_ring) and twice that (attention_wide_shallow_ring).
template <class F>
decltype(auto) with_shallow_ring_dim(int head_dim, F&& f) {
  if (head_dim <= kShallowRingDim) return f(std::integral_constant<int, kShallowRingDim>{});
  return f(std::integral_constant<int, 2 * kShallowRingDim>{});
}

// Blocks of a query-tile kernel: (query tile, KV head, chunk, sequence); 0 when over the grid limit.
inline unsigned tile_grid_blocks(const AttnArgs& a, int64_t rows) {
  const int64_t blocks = rows / (int64_t(a.tokens) * a.hq) * a.num_kv_heads * a.q_tiles * a.num_chunks;
  return blocks > kAttnMaxGridBlocks ? 0u : static_cast<unsigned>(blocks);
}

// The grouped kernel for the call's head_dim bound and query tile (a.q_tiles set from attention_q_tiles;
// 8-row tiles exist up to head_dim 128 only, attention_kernel_max_tile).
template <DType KVT, int kDim>
Status launch_grouped_dim(int tile, const AttnArgs& a, unsigned blocks, stream_t s) {
  auto launch = [&](auto kernel) {
    return runtime_status(launch_plain(kernel, dim3(blocks), dim3(kAttnThreads), 0, s, a), "attention launch");
  };
  switch (tile) {
    case 1: return launch(&attention_grouped_kernel<KVT, kDim, 1>);
    case 2: return launch(&attention_grouped_kernel<KVT, kDim, 2>);
    case 4: return launch(&attention_grouped_kernel<KVT, kDim, 4>);
    case 8:
      if constexpr (kDim <= 128) return launch(&attention_grouped_kernel<KVT, kDim, 8>);
      break;
  }
  return Status::unsupported("attention: query tile of " + std::to_string(tile) + " rows");
}

template <DType KVT>
Status launch_grouped(int tile, const AttnArgs& a, unsigned n, stream_t s) {
  return with_head_dim_bound(a.head_dim,
                             [&](auto dim) { return launch_grouped_dim<KVT, decltype(dim)::value>(tile, a, n, s); });
}

// How a call's kernels go out: the stream; the pipelined row's ring depth (attention_shallow_ring's answer
// for the call); whether the mma kernels and the merge may be programmatic dependent launches
// (DeviceFacts::dependent_launch), and on which device. The split kernels let the merge launch from their
// start (grid_dependents_launch), and the merge waits for them to end (grid_dependency_wait): its launch
// overlaps their work. (Measured on the H200 against an ordinary merge launch, B = 1 and 8: 0.94-0.99x the
// time at context 512, 0.98-1.01x at 4096 and 32768.) The mma kernels wait for the kernel before them
// first thing, so they start as soon as it lets them (attention_merge_starts_next).
struct LaunchSetup {
  stream_t stream = nullptr;
  bool shallow = false;
  bool dependent = false;
  int device = 0;
  bool sliced_merge = false;  // attention_sliced_merge's answer for the call
};

#if DCUKERN_PLATFORM_CUDA
// The tensor-core kernel of one head_dim bound and variant, with its dynamic shared memory.
template <DType KVT, int kDim, MmaVariant kVariant>
Status launch_mma_dim(const AttnArgs& a, unsigned n, const LaunchSetup& ls) {
  constexpr int bytes = mma_dynamic_shared_bytes<KVT, kDim, kVariant>();
  if constexpr (bytes > 0) {
    // Devices with less shared memory per block than the ring needs (sm_86/89/120: 99 KiB) refuse it:
    // the call is unsupported there, and the runtime's error state is cleared for later calls.
    const void* kernel = reinterpret_cast<const void*>(&attention_mma_kernel<KVT, kDim, kVariant>);
    if (runtime_allow_dynamic_shared(kernel, bytes) != kRuntimeSuccess) {
      (void)runtime_last_error();
      return Status::unsupported("attention: the kernel needs " + std::to_string(bytes) +
                                 " bytes of shared memory per block; this device allows less");
    }
  }
  return runtime_status(launch_dependent(ls.dependent, ls.device, attention_mma_kernel<KVT, kDim, kVariant>, dim3(n),
                                         dim3(kMmaThreads<KVT, kDim, kVariant>), bytes, ls.stream, a),
                        "attention launch");
}
// Blocks of the instantiation one SM of the current device (ordinal `device`) holds: the runtime's answer
// for its registers and shared memory, asked once (resident_blocks); 0 where the runtime refuses its
// shared memory or cannot say. The error state is left clear.
template <DType KVT, int kDim, MmaVariant kVariant>
int mma_resident_blocks(int device) {
  constexpr int bytes = mma_dynamic_shared_bytes<KVT, kDim, kVariant>();
  const void* kernel = reinterpret_cast<const void*>(&attention_mma_kernel<KVT, kDim, kVariant>);
  if (bytes > 0 && runtime_allow_dynamic_shared(kernel, bytes) != kRuntimeSuccess) {
    (void)runtime_last_error();
    return 0;
  }
  return resident_blocks(kernel, device, kMmaThreads<KVT, kDim, kVariant>, bytes);
}
template <DType KVT, MmaVariant kVariant>
int resident_blocks_for(int head_dim, int device) {
  return with_head_dim_bound(
      head_dim, [&](auto dim) { return mma_resident_blocks<KVT, decltype(dim)::value, kVariant>(device); });
}
template <MmaVariant kVariant>
int resident_blocks_for(DType kv, int head_dim, int device) {
  switch (kv) {
    case DType::f16: return resident_blocks_for<DType::f16, kVariant>(head_dim, device);
    case DType::bf16: return resident_blocks_for<DType::bf16, kVariant>(head_dim, device);
    case DType::fp8_e4m3: return resident_blocks_for<DType::fp8_e4m3, kVariant>(head_dim, device);
    default: return 0;
  }
}
#endif

// Resident blocks per SM of the kernel the launch takes for this call, for the kernels whose split plan
// fills one wave (attention_kernel_block_target): asked of the runtime, so the plan follows the compiled
// registers and shared memory. 0: not asked or unknown (the plan keeps its default). `shallow`: the
// shallow ring (attention_shallow_ring, attention_wide_shallow_ring: kShallowRingKv only). `device`: the
// current device's ordinal.
inline int attention_resident_blocks(AttentionKernel kernel, DType kv, int head_dim, bool shallow, int device) {
#if DCUKERN_PLATFORM_CUDA
  if (kernel == AttentionKernel::mma_split_pipeline) {
    if (shallow)
      return with_shallow_ring_dim(head_dim, [&](auto dim) {
        return mma_resident_blocks<kShallowRingKv, decltype(dim)::value, MmaVariant::smem_pipeline_shallow>(device);
      });
    return resident_blocks_for<MmaVariant::smem_pipeline>(kv, head_dim, device);
  }
#endif
  (void)kernel, (void)kv, (void)head_dim, (void)shallow, (void)device;
  return 0;
}

#if DCUKERN_PLATFORM_CUDA
// The variant's kernel for the call's head_dim bound.
template <DType KVT, MmaVariant kVariant>
Status launch_mma(const AttnArgs& a, unsigned n, const LaunchSetup& ls) {
  return with_head_dim_bound(a.head_dim,
                             [&](auto dim) { return launch_mma_dim<KVT, decltype(dim)::value, kVariant>(a, n, ls); });
}
// The pipelined kernel: its shallow ring where the call takes it (kShallowRingKv only: attention_shallow_ring
// at head_dim bound kShallowRingDim, attention_wide_shallow_ring at twice that).
template <DType KVT>
Status launch_pipeline(const AttnArgs& a, unsigned n, const LaunchSetup& ls) {
  if constexpr (KVT == kShallowRingKv)
    if (ls.shallow)
      return with_shallow_ring_dim(a.head_dim, [&](auto dim) {
        return launch_mma_dim<KVT, decltype(dim)::value, MmaVariant::smem_pipeline_shallow>(a, n, ls);
      });
  return launch_mma<KVT, MmaVariant::smem_pipeline>(a, n, ls);
}
#endif

// Split rows run unsplit when the plan has one chunk and no fixed chunk size (a.part_o == nullptr).
template <DType QT, DType KVT>
Status launch_typed(AttentionKernel kernel, int tile, const AttnArgs& a, int64_t rows, const LaunchSetup& ls) {
  const bool split = a.part_o != nullptr;
  const stream_t s = ls.stream;
  switch (kernel) {
    case AttentionKernel::row:
    case AttentionKernel::split_kv: {
      const dim3 grid(static_cast<unsigned>(split ? rows * a.num_chunks : rows)), block(kAttnThreads);
      const runtime_error_t e = split ? launch_plain(&attention_row_kernel<QT, KVT, true>, grid, block, 0, s, a)
                                      : launch_plain(&attention_row_kernel<QT, KVT, false>, grid, block, 0, s, a);
      if (Status st = runtime_status(e, "attention launch"); !st.ok()) return st;
      break;
    }
    case AttentionKernel::grouped:
    case AttentionKernel::grouped_split: {
      const unsigned n = tile_grid_blocks(a, rows);
      if (n == 0) return Status::unsupported("attention: more than 2^31 - 1 blocks");
      if (Status st = launch_grouped<KVT>(tile, a, n, s); !st.ok()) return st;
      break;
    }
#if DCUKERN_PLATFORM_CUDA
    case AttentionKernel::mma:
    case AttentionKernel::mma_split:
    case AttentionKernel::mma_split_pipeline: {
      const unsigned n = tile_grid_blocks(a, rows);
      if (n == 0) return Status::unsupported("attention: more than 2^31 - 1 blocks");
      Status st = kernel == AttentionKernel::mma_split_pipeline ? launch_pipeline<KVT>(a, n, ls)
                                                                 : launch_mma<KVT, MmaVariant::standard>(a, n, ls);
      if (!st.ok()) return st;
      break;
    }
#endif
    default: return Status::unsupported("attention: kernel not compiled into this build");
  }
  // A main kernel that failed to launch returned above: no merge then (o and lse untouched).
  if (!split) return Status::success();
  const auto merge = ls.sliced_merge ? &attention_merge_sliced_kernel<QT> : &attention_merge_kernel<QT>;
  const auto blocks = static_cast<unsigned>(merge_blocks(rows, a.head_dim, ls.sliced_merge));
  return runtime_status(launch_dependent(ls.dependent, ls.device, merge, dim3(blocks), dim3(kMergeThreads), 0, s, a),
                        "attention merge launch");
}

template <DType QT>
Status launch_q(AttentionKernel kernel, int tile, DType kv, const AttnArgs& a, int64_t rows, const LaunchSetup& ls) {
  switch (kv) {
    case DType::f16: return launch_typed<QT, DType::f16>(kernel, tile, a, rows, ls);
    case DType::bf16: return launch_typed<QT, DType::bf16>(kernel, tile, a, rows, ls);
    case DType::fp8_e4m3: return launch_typed<QT, DType::fp8_e4m3>(kernel, tile, a, rows, ls);
    default: break;
  }
  return Status::unsupported(std::string("attention: KV dtype ") + dtype_name(kv));
}

inline Status launch(AttentionKernel kernel, int tile, DType q, DType kv, const AttnArgs& a, int64_t rows,
                     const LaunchSetup& ls) {
  if (rows > kAttnMaxGridBlocks) return Status::unsupported("attention: more than 2^31 - 1 query rows");
  if (a.part_o && merge_blocks(rows, a.head_dim, ls.sliced_merge) > kAttnMaxGridBlocks)
    return Status::unsupported("attention: the merge needs more than 2^31 - 1 blocks");
  switch (q) {
    case DType::f16: return launch_q<DType::f16>(kernel, tile, kv, a, rows, ls);
    case DType::bf16: return launch_q<DType::bf16>(kernel, tile, kv, a, rows, ls);
    default: break;
  }
  return Status::unsupported(std::string("attention: q dtype ") + dtype_name(q));
}

}  // namespace dcukern::attn_detail
