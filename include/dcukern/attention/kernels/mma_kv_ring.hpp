// The shared-memory ring of the pipelined tensor-core attention kernel (attention_mma_kernel,
// MmaVariant::smem_pipeline): per warp, kStages stages, each holding one 16-key group's K rows and V rows,
// filled by cp.async while the math of earlier groups runs. A row is stored as 8-element chunks (one
// KvVec: 16 bytes for f16/bf16, 8 for fp8) with the chunk index XOR-swizzled by the row, so that the
// fragment reads of MmaHeadMap's sector map hit distinct shared-memory banks (f16/bf16 at head_dim 64
// and 128, fp8 at 128; fp8 at 64 reads two-way). Host and device: the host tests check the swizzle is a
// permutation of each row and count the bank conflicts.
#pragma once
#include "dcukern/platform/detect.hpp"

namespace dcukern::attn_detail {

template <int kDim, int kElemBytes>
struct MmaKvRing {
  static_assert(kDim % 64 == 0 && kDim <= 128, "the ring holds head_dim bounds 64 and 128");
  static constexpr int kChunks = kDim / 8;                     // chunks per row
  static constexpr int kChunkBytes = 8 * kElemBytes;           // 16 (f16/bf16) or 8 (fp8)
  static constexpr int kMatrixBytes = 16 * kDim * kElemBytes;  // K (or V) rows of 16 keys
  static constexpr int kStageBytes = 2 * kMatrixBytes;
  static constexpr int kWarpBytes = 24 * 1024;                 // ring per warp: <= 96 KiB for a 4-warp block
  static constexpr int kStages = kWarpBytes / kStageBytes < 4 ? kWarpBytes / kStageBytes : 4;
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
