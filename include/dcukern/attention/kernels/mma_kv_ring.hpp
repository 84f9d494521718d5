// The shared-memory ring of the pipelined tensor-core attention kernel (attention_mma_kernel,
// MmaVariant::smem_pipeline): per warp, kStages stages, each holding one 16-key group's K rows and V rows,
// filled by cp.async while the math of earlier groups runs. A row is stored as 8-element chunks (one
// KvVec: 16 bytes for f16/bf16, 8 for fp8) with the chunk index XOR-swizzled by the row, so that the
// fragment reads of MmaHeadMap's sector map hit distinct shared-memory banks (f16/bf16 at every head_dim
// bound, fp8 at 128 and 256; fp8 at 64 reads two-way). fp8's XOR masks are multiples of 4, so chunks 2p and
// 2p + 1 stay adjacent and in order: a 16-byte copy fills both. Host and device: the host tests check the
// swizzle is a permutation of each row, keeps fp8's chunk pairs together and count the bank conflicts.
// The offsets within a stage are GF(2)-linear in (row, chunk) (rows times a power of two, chunks XORed with
// row bits; V's past kMatrixBytes, a power of two above them): offset(r ^ r', ch ^ ch') = offset(r, ch) ^
// offset(r', ch'), so the kernel finds a lane's slots as its own offset XOR compile-time constants (the host
// tests check this too).
#pragma once
#include "dcukern/platform/detect.hpp"

namespace dcukern::attn_detail {

template <int kDim, int kElemBytes, int kMaxStages = 6>
struct MmaKvRing {
  static_assert(kDim % 64 == 0 && kDim <= 256, "the ring holds head_dim bounds 64, 128 and 256");
  static constexpr int kChunks = kDim / 8;                     // chunks per row
  static constexpr int kChunkBytes = 8 * kElemBytes;           // 16 (f16/bf16) or 8 (fp8)
  static constexpr int kMatrixBytes = 16 * kDim * kElemBytes;  // K (or V) rows of 16 keys
  static constexpr int kStageBytes = 2 * kMatrixBytes;
  // Ring per warp: 24 KiB (a 4-warp block's 96 KiB leave room for 2 blocks per SM on sm_90), or 3 stages
  // where 24 KiB hold fewer than 2 (f16/bf16 rows of 256: 48 KiB a warp; the kernel splits those heads over
  // two warps of 128 elements each instead, kMmaHeadSplit: 8 rings of 24 KiB, 1 block per SM). Up to 6
  // stages: fp8 at head_dim 128 takes 6 (measured on the H200: with 4 stages, 64 KiB a block, its 155
  // registers let 3 blocks share an SM, and batches 32-64 ran 1.09-1.21x slower). kMaxStages caps the
  // count (the shallow ring of MmaVariant::smem_pipeline_shallow: 3).
  static constexpr int kWarpBytes = 2 * kStageBytes <= 24 * 1024 ? 24 * 1024 : 3 * kStageBytes;
  static constexpr int kStages = kWarpBytes / kStageBytes < kMaxStages ? kWarpBytes / kStageBytes : kMaxStages;
  static_assert(kStages >= 2, "a ring needs a stage to fill while one is read");

  // Where chunk `chunk` of row `row` lies within K's (V's) rows: the row's chunks permuted by an XOR.
  DCUKERN_HD static constexpr int k_chunk(int row, int chunk) {
    return chunk ^ ((kElemBytes == 1 ? (row & 3) << 2 : (row & 1) << 2) & (kChunks - 1));
  }
  DCUKERN_HD static constexpr int v_chunk(int row, int chunk) {
    return chunk ^ ((kElemBytes == 1 ? (row & 6) << 1 : (row & 6)) & (kChunks - 1));
  }
  // Byte offsets within a warp's ring.
  DCUKERN_HD static constexpr int k_offset(int stage, int row, int chunk) {
    return stage * kStageBytes + (row * kChunks + k_chunk(row, chunk)) * kChunkBytes;
  }
  DCUKERN_HD static constexpr int v_offset(int stage, int row, int chunk) {
    return stage * kStageBytes + kMatrixBytes + (row * kChunks + v_chunk(row, chunk)) * kChunkBytes;
  }
};

}  // namespace dcukern::attn_detail
