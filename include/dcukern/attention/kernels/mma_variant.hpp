// The tensor-core attention kernel's instantiations (attention_mma_kernel, mma.hpp): its variants, the query
// tile, the head map each takes, the warps that share a key group, the register bound, the pipelined
// variants' ring, and a launch's dynamic shared memory. Host and device (attention/launch.hpp sizes launches
// from these).
#pragma once
#include "dcukern/attention/kernels/common.hpp"
#include "dcukern/attention/kernels/mma_kv_ring.hpp"
#include "dcukern/core/dtype.hpp"

namespace dcukern::attn_detail {

constexpr int kMmaTile = 8;  // query rows per block tile

// The head map per instantiation, as measured on the H200 at d9ab41f (both maps over the bench grid,
// capabilities/evidence/attention-sm_90-d9ab41f.json):
// sector-contiguous loads for fp8 (0.5 % slower to 12 % faster at 32x8x128, 7-36 % faster at 24x4x256)
// and for head_dim 256 (3-27 % faster with bf16); the strided map for f16/bf16 up to head_dim 128 (up to
// 4 % faster where B x context >= 128K; the sector map was up to 8 % faster on the small cases).
template <DType KVT, int kDim>
constexpr bool kMmaSectorMap = KVT == DType::fp8_e4m3 || kDim > 128;

// The kernel's variants (a row names one, attention/launch.hpp maps it).
enum class MmaVariant : uint8_t {
  standard,
  // K/V reach registers through a per-warp shared-memory ring (mma_kv_ring.hpp) that cp.async fills
  // kStages - 1 groups ahead, so a warp's loads stay in flight during its math without holding
  // registers; sector head map. sm_90 registers (CUDA 13's ptxas): 128 at head_dim 128 (bf16, fp8) and at
  // bf16 256, 152 at fp8 256. Shared memory per block: 96 KiB (2 blocks per SM) up to head_dim 128 and for
  // fp8 at 256, 192 KiB at f16/bf16 256 (8 warps there, kMmaHeadSplit).
  // Row attention.mma_split.smem_pipeline (sm_90).
  smem_pipeline,
  // The same with a 3-stage ring: fp8 at head_dim bound 128 takes 48 KiB a block, so 4 blocks share an
  // SM (2 with smem_pipeline's 6 stages); fp8 at 256 splits the head over two warps (kMmaHeadSplit), 8 warps
  // and 96 KiB a block, 2 blocks an SM. The pipelined row launches it where attention_shallow_ring and
  // attention_wide_shallow_ring say (kernel_id.hpp).
  smem_pipeline_shallow,
};

// Warps that share each 16-key group, each over its own kDim / kMmaHeadSplit head elements: 2 for the
// pipelined variants at head_dim bound 256 with f16/bf16 KV, whose ring (192 KiB) leaves room for one
// block an SM, so that the SM runs 8 warps instead of 4 (at B = 1 one warp a scheduler was the bound:
// capabilities/evidence/attention-sm_90-8820378.json, profile_b1_long_context). The two warps sum their halves
// of S through shared memory (one 64-thread barrier a group); each keeps its half of O.
// fp8 at 256 splits only in the shallow ring: its 3 stages of 128 elements (12 KiB a warp, 96 KiB a block)
// and 127 registers let 2 blocks of 8 warps share an SM (kMmaMinBlocks).
template <DType KVT, int kDim, MmaVariant kVariant>
constexpr int kMmaHeadSplit = kVariant != MmaVariant::standard && kDim > 128 &&
                                      (KVT != DType::fp8_e4m3 || kVariant == MmaVariant::smem_pipeline_shallow)
                                  ? 2
                                  : 1;
template <DType KVT, int kDim, MmaVariant kVariant>
constexpr int kMmaThreads = kAttnThreads * kMmaHeadSplit<KVT, kDim, kVariant>;
// Blocks per SM the register allocation must allow (sm_90): 2 for the shallow ring's head-split instance
// (at most 128 registers), else 0: no bound, the compiler's choice (a bound of 1 changes it: ptxas then
// allots up to 16 more registers to some of the other instances).
template <DType KVT, int kDim, MmaVariant kVariant>
constexpr int kMmaMinBlocks =
    kVariant == MmaVariant::smem_pipeline_shallow && kMmaHeadSplit<KVT, kDim, kVariant> > 1 ? 2 : 0;

// The ring of a pipelined variant (per warp, over the warp's head elements).
template <DType KVT, int kDim, MmaVariant kVariant>
using MmaRing = MmaKvRing<kDim / kMmaHeadSplit<KVT, kDim, kVariant>, KVT == DType::fp8_e4m3 ? 1 : 2,
                          kVariant == MmaVariant::smem_pipeline_shallow ? 3 : 6>;

// Dynamic shared memory of a launch: the pipeline's rings (the epilogue's s_acc reuses them), else none.
template <DType KVT, int kDim, MmaVariant kVariant>
constexpr int mma_dynamic_shared_bytes() {
  if constexpr (kVariant != MmaVariant::standard) {
    using Ring = MmaRing<KVT, kDim, kVariant>;
    constexpr int ring = kMmaThreads<KVT, kDim, kVariant> / 32 * Ring::kStages * Ring::kStageBytes;
    constexpr int acc = kAttnThreads / 32 * kMmaTile * kDim * 4;  // one slot a team of kMmaHeadSplit warps
    return ring > acc ? ring : acc;
  } else {
    return 0;
  }
}

}  // namespace dcukern::attn_detail
