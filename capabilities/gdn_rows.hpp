// Gated-delta-net capability rows: the recurrent state update and the causal conv1d update. Selection
// order: forced, tuned for the detected target (none yet), then the general rows below, top to bottom.
// Each op's generic row accepts every valid call, so a valid call always runs. Specialised rows with a
// narrower contract (gdn.tiled.*.c16: B = 1) come before the general rows they beat.
#pragma once
#include "dcukern/core/dtype.hpp"
#include "dcukern/gdn/kernel_id.hpp"
#include "dcukern/gdn/params.hpp"
#include "dcukern/registry/row.hpp"

namespace dcukern::capabilities {

using GdnRow = CapabilityRow<GdnContract, GdnKernel>;
using Conv1dRow = CapabilityRow<Conv1dContract, Conv1dKernel>;

namespace gdn_rows {
// Tiled rows: K a power of two in 64..256, V a multiple of the column block, 16-byte state fragments.
// max_batch: the .c16 rows are faster than the 32-column ones only where B * HV * V / 32 blocks leave the
// GPU underfilled; measured on the H200 at B = 1 (faster) and B = 8 (slower), so they take B = 1 only
// (again at bc98058, with the [V,K] tiles' bulk prefetch: 1.03-1.27x the time at B = 8 to 512).
constexpr GdnContract tiled(GdnStateLayout layout, int cols = 32, int max_batch = 0) {
  GdnContract c{};
  c.layouts = static_cast<uint8_t>(1u << static_cast<unsigned>(layout));
  c.k_values = (1u << 6) | (1u << 7) | (1u << 8);
  c.v_multiple = cols;
  c.state_align_bytes = 16;
  c.max_batch = max_batch;
  return c;
}
constexpr Conv1dContract vec8() {
  Conv1dContract c{};
  c.dim_multiple = 8;
  c.align_bytes = 16;
  c.needs_contiguous = true;
  return c;
}
// conv1d.lanes: 128 channels per team of 32 lanes (4 a lane), so dim a multiple of 128.
constexpr Conv1dContract lanes() {
  Conv1dContract c = vec8();
  c.dim_multiple = 128;
  return c;
}
// conv1d.vec8.staged: faster than conv1d.vec8 with an f32 state only (H200, 44a671b: B = 256 22.0 vs
// 27.2 us, B = 32 5.6 vs 6.3, B = 1 3.4 vs 4.3; with a bf16 state 0.88x at B = 256), so it takes f32 states.
constexpr Conv1dContract vec8_f32_state() {
  Conv1dContract c = vec8();
  c.state_dtypes = dtypes(DType::f32);
  return c;
}
constexpr Semantics kInPlace{true, false, true};
constexpr const char* kEvidence =
    "tests/device/gdn_device_test.cu (sm_90, H200); capabilities/evidence/gdn-sm_90.json; AMD / Hygon: "
    "compile only (portable HIP, no target instruction)";
constexpr const char* kStagedEvidence =
    "tests/device/gdn_device_test.cu (sm_90, H200, 44a671b); capabilities/evidence/gdn-sm_90-1780eac.json "
    "(conv1d_staged_44a671b); AMD / Hygon: compile only (portable HIP, no target instruction)";
}  // namespace gdn_rows

inline constexpr GdnRow kGdnRows[] = {
    {"gdn.tiled.kv.c16",
     "[K,V] state, K in {64,128,256}: B = 1 only: 16-column tile per block, twice the blocks of gdn.tiled.kv",
     0, nullptr, gdn_rows::tiled(GdnStateLayout::kv, 16, 1), gdn_rows::kInPlace, gdn_rows::kEvidence, "gdn.tiled.kv",
     GdnKernel::tiled_kv16, "gdn_tiled_kernel<dcukern::gdn_detail::KvTile<16,"},
    {"gdn.tiled.vk.c16",
     "[V,K] state, K in {64,128,256}: B = 1 only: 16-row tile per block, twice the blocks of gdn.tiled.vk",
     0, nullptr, gdn_rows::tiled(GdnStateLayout::vk, 16, 1), gdn_rows::kInPlace, gdn_rows::kEvidence, "gdn.tiled.vk",
     GdnKernel::tiled_vk16, "gdn_tiled_kernel<dcukern::gdn_detail::VkTile<16,"},
    {"gdn.tiled.kv", "[K,V] state, K in {64,128,256}: 32-column tile per block held in registers, 16-byte loads",
     0, nullptr, gdn_rows::tiled(GdnStateLayout::kv), gdn_rows::kInPlace, gdn_rows::kEvidence, "gdn.generic",
     GdnKernel::tiled_kv, "gdn_tiled_kernel<dcukern::gdn_detail::KvTile<32,"},
    {"gdn.tiled.vk", "[V,K] state, K in {64,128,256}: 32-row tile per block held in registers, 16-byte loads",
     0, nullptr, gdn_rows::tiled(GdnStateLayout::vk), gdn_rows::kInPlace, gdn_rows::kEvidence, "gdn.generic",
     GdnKernel::tiled_vk, "gdn_tiled_kernel<dcukern::gdn_detail::VkTile<32,"},
    {"gdn.generic", "any valid call: one block per (sequence, value head), scalar state access", 0, nullptr,
     GdnContract{}, gdn_rows::kInPlace, gdn_rows::kEvidence, "none (accepts every valid call)", GdnKernel::generic,
     "gdn_generic_kernel<"},
};

inline constexpr Conv1dRow kConv1dRows[] = {
    {"conv1d.lanes",
     "4 channels per lane, a team of 32 lanes per sequence: the state run read and written as lane-consecutive "
     "vectors through shared memory, the weights shared by the block's 4 sequences; dim a multiple of 128",
     0, nullptr, gdn_rows::lanes(), gdn_rows::kInPlace, gdn_rows::kEvidence, "conv1d.vec8.staged", Conv1dKernel::lanes,
     "conv1d_lanes_kernel<"},
    {"conv1d.vec8.staged",
     "conv1d.vec8's update with lane-consecutive 16-byte state runs transposed through shared memory and the "
     "weights read once per block of 8 sequences; f32 state (where it beats conv1d.vec8)",
     0, nullptr, gdn_rows::vec8_f32_state(), gdn_rows::kInPlace, gdn_rows::kStagedEvidence, "conv1d.vec8",
     Conv1dKernel::vec8_staged,
     "conv1d_staged_kernel<"},
    {"conv1d.vec8", "8 channels per thread, 16-byte loads of x, weights, state and bias", 0, nullptr,
     gdn_rows::vec8(), gdn_rows::kInPlace, gdn_rows::kEvidence, "conv1d.generic", Conv1dKernel::vec8,
     "conv1d_vec8_kernel<"},
    {"conv1d.generic", "any valid call: one thread per (sequence, channel), scalar loads", 0, nullptr,
     Conv1dContract{}, gdn_rows::kInPlace, gdn_rows::kEvidence, "none (accepts every valid call)",
     Conv1dKernel::generic, "conv1d_generic_kernel<"},
};

}  // namespace dcukern::capabilities
