// The pipelined tensor-core attention kernel's shared-memory ring (attention/kernels/mma_kv_ring.hpp):
// the swizzle permutes each row's chunks and is linear as the kernel's addressing needs, stages and warps
// do not overlap, and the fragment reads of the sector head map (and the copies' writes) hit distinct banks
// where the header says so.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <vector>

#include "dcukern/attention/kernels/mma_head_map.hpp"
#include "dcukern/attention/kernels/mma_kv_ring.hpp"

using dcukern::attn_detail::MmaHeadMap;
using dcukern::attn_detail::MmaKvRing;

namespace {

// Worst number of accesses sharing a 4-byte bank in one shared-memory wavefront: 16-byte accesses are
// served 8 lanes at a time, 8-byte accesses 16 lanes at a time (128 bytes per wavefront).
template <class Offset>
int worst_bank_sharing(int access_bytes, Offset offset_of_lane) {
  const int lanes_per_wave = 128 / access_bytes;
  int worst = 0;
  for (int first = 0; first < 32; first += lanes_per_wave) {
    std::map<int, int> bank_uses;
    for (int lane = first; lane < first + lanes_per_wave; ++lane)
      for (int w = 0; w < access_bytes / 4; ++w) ++bank_uses[(offset_of_lane(lane) / 4 + w) % 32];
    for (const auto& [bank, n] : bank_uses) worst = std::max(worst, n);
  }
  return worst;
}

template <int kDim, int kElemBytes>
void check_ring(int want_ways) {
  using Ring = MmaKvRing<kDim, kElemBytes>;
  using Map = MmaHeadMap<kDim, true>;
  INFO("kDim " << kDim << " element bytes " << kElemBytes);
  // Every (stage, matrix, row, chunk) has its own chunk-aligned slot inside the warp's ring.
  std::set<int> slots;
  for (int st = 0; st < Ring::kStages; ++st)
    for (int r = 0; r < 16; ++r)
      for (int ch = 0; ch < Ring::kChunks; ++ch)
        for (int off : {Ring::k_offset(st, r, ch), Ring::v_offset(st, r, ch)}) {
          CHECK(off % Ring::kChunkBytes == 0);
          CHECK(off >= 0);
          CHECK(off < Ring::kStages * Ring::kStageBytes);
          slots.insert(off);
        }
  CHECK(slots.size() == std::size_t(Ring::kStages) * 2 * 16 * Ring::kChunks);
  CHECK(Ring::kStages >= 2);
  CHECK(Ring::kStages * Ring::kStageBytes <= Ring::kWarpBytes);
  CHECK(Ring::kWarpBytes <= 48 * 1024);  // a 4-warp block's ring within sm_90's 227 KiB
  // Linear within a stage (V's past kMatrixBytes): the kernel's copies and fragment reads XOR a lane's own
  // offset with compile-time ones.
  int nonlinear = 0;
  for (int r = 0; r < 16; ++r)
    for (int r2 = 0; r2 < 16; ++r2)
      for (int ch = 0; ch < Ring::kChunks; ++ch)
        for (int ch2 = 0; ch2 < Ring::kChunks; ++ch2) {
          nonlinear += Ring::k_offset(0, r ^ r2, ch ^ ch2) != (Ring::k_offset(0, r, ch) ^ Ring::k_offset(0, r2, ch2));
          nonlinear += (Ring::v_offset(0, r ^ r2, ch ^ ch2) ^ Ring::kMatrixBytes) !=
                       (Ring::v_offset(0, r, ch) ^ Ring::v_offset(0, r2, ch2));
        }
  CHECK(nonlinear == 0);
  CHECK((Ring::kMatrixBytes & (Ring::kMatrixBytes - 1)) == 0);
  // The copies: lane l, step j writes chunk idx % kChunks of row idx / kChunks (idx = l + 32 j).
  for (int j = 0; j < 16 * Ring::kChunks / 32; ++j) {
    CHECK(worst_bank_sharing(Ring::kChunkBytes, [&](int l) {
            const int idx = l + 32 * j;
            return Ring::k_offset(0, idx / Ring::kChunks, idx % Ring::kChunks);
          }) == 1);
    CHECK(worst_bank_sharing(Ring::kChunkBytes, [&](int l) {
            const int idx = l + 32 * j;
            return Ring::v_offset(0, idx / Ring::kChunks, idx % Ring::kChunks);
          }) == 1);
  }
  // fp8's 16-byte copies (two chunks a piece, attention_mma_kernel's copy_pieces): a pair of chunks stays
  // adjacent and in order under the swizzle, 16-byte aligned, and the writes do not share banks.
  if constexpr (kElemBytes == 1) {
    constexpr int kPieces = Ring::kChunks / 2;
    for (int r = 0; r < 16; ++r)
      for (int p = 0; p < kPieces; ++p) {
        CHECK(Ring::k_offset(1, r, 2 * p) % 16 == 0);
        CHECK(Ring::v_offset(1, r, 2 * p) % 16 == 0);
        CHECK(Ring::k_offset(1, r, 2 * p + 1) == Ring::k_offset(1, r, 2 * p) + 8);
        CHECK(Ring::v_offset(1, r, 2 * p + 1) == Ring::v_offset(1, r, 2 * p) + 8);
      }
    for (int j = 0; j < 16 * kPieces / 32; ++j) {
      CHECK(worst_bank_sharing(16, [&](int l) {
              const int idx = l + 32 * j;
              return Ring::k_offset(0, idx / kPieces, 2 * (idx % kPieces));
            }) == 1);
      CHECK(worst_bank_sharing(16, [&](int l) {
              const int idx = l + 32 * j;
              return Ring::v_offset(0, idx / kPieces, 2 * (idx % kPieces));
            }) == 1);
    }
  }
  // The fragment reads: K rows g and g + 8 at the lane's K vectors; V rows 2c, 2c + 1, 2c + 8, 2c + 9 at
  // its V vectors (lane = 4 g + c).
  int worst = 0;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < Map::kKVecs; ++i)
      worst = std::max(worst, worst_bank_sharing(Ring::kChunkBytes, [&](int l) {
                         return Ring::k_offset(0, 8 * t + l / 4, Map::k_elem(l % 4, i) / 8);
                       }));
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < Map::kVVecs; ++i)
      worst = std::max(worst, worst_bank_sharing(Ring::kChunkBytes, [&](int l) {
                         return Ring::v_offset(0, 2 * (l % 4) + (r & 1) + 8 * (r >> 1), Map::v_elem(l / 4, i) / 8);
                       }));
  CHECK(worst == want_ways);
}

}  // namespace

TEST_CASE("attention: the pipelined kernel's shared-memory ring") {
  check_ring<64, 2>(1);
  check_ring<128, 2>(1);
  check_ring<256, 2>(1);
  check_ring<128, 1>(1);
  check_ring<256, 1>(1);
  check_ring<64, 1>(2);  // fp8 at head_dim 64 reads two-way (documented in the header)
}
