// Sampling capability rows. Selection order: forced, tuned for the detected target, then the general
// rows below, top to bottom. The generic row accepts every valid call, so a valid call always runs.
#pragma once
#include "dcukern/core/dtype.hpp"
#include "dcukern/registry/row.hpp"
#include "dcukern/sampling/kernel_id.hpp"
#include "dcukern/sampling/params.hpp"

namespace dcukern::capabilities {

using SamplingRow = CapabilityRow<SamplingContract, SamplingKernel>;

namespace sampling_rows {
constexpr DTypeMask kAll = dtypes(DType::f32, DType::bf16, DType::f16);
constexpr SamplingContract vectorised() {
  SamplingContract c{kAll};
  c.align_bytes = 16;
  c.vector_bytes = 16;
  return c;
}
constexpr SamplingContract split(SamplingContract c) {
  c.needs_workspace = true;
  return c;
}
constexpr Semantics kSplitSemantics{true, true, false};
constexpr const char* kSplitEvidence =
    "tests/device/sampling_{,edges_}device_test.cu (sm_90, H200, at 13beda6 and 57d97e6); "
    "capabilities/evidence/sampling-sm_90-d5dc319.json (the current kernels on the H200), sampling-sm_90.json "
    "(below 64 rows; sampling-sm_90-d5c2793.json at every batch; the fp32 rows' threshold sample, fine buckets "
    "and 40-element tiles on an H100: sampling-sm_90-fp32-f1fb3c3.json; the cluster rows' relaxed first "
    "arrival, tests and speed on an H100: sampling-sm_90-cluster-arrival-4504447.json); AMD: compile only";
constexpr const char* kEvidence =
    "tests/host/sampling_*_test.cpp; tests/device/sampling_{,edges_}device_test.cu (sm_90, H200); "
    "capabilities/evidence/sampling-sm_90.json; AMD: compile only";

// Batches from kStreamBatchMin rows take the stream row. Measured on the H200 against sampling.split.vec
// (top-k + top-p, capabilities/evidence/sampling-sm_90.json, every V, k and p): B = 64 0.81-0.94x the time,
// B = 128 0.65-0.74x, B = 512 fp32 0.78-0.86x, bf16 0.84-0.98x (k = 1000 the slower); B = 32 1.05-1.27x and
// B = 1 1.45-2.3x (p = 0.8, an earlier run), where a row's stream through one SM is the time and the split
// row spreads it over several.
constexpr int64_t kStreamBatchMin = 64;
constexpr const char* kStreamEvidence =
    "tests/device/sampling_{,edges_}device_test.cu (sm_90, H200, at 13beda6 and 57d97e6); "
    "capabilities/evidence/sampling-sm_90.json (at 13beda6), sampling-sm_90-d5dc319.json; AMD: compile only";
// Rows without a filter (engines' default parameters): before the rows above, which run the one-block
// algorithm over such rows after their tiles' pass.
// Measured against the rows automatic selection took before it (no filter, temperature 1): 0.08-0.61x the
// time at every B and V (capabilities/evidence/sampling-sm_90-unfiltered-53c09a7.json, an H100).
constexpr const char* kUnfilteredEvidence =
    "tests/device/sampling_{,edges_}device_test.cu (sm_90: H100, at 53c09a7, e0a95a5 and 2b5cad4); "
    "capabilities/evidence/sampling-sm_90-unfiltered-53c09a7.json, sampling-sm_90-draw-2b5cad4.json; AMD: compile only";
constexpr SamplingContract unfiltered() {
  SamplingContract c = split(vectorised());
  c.filters = 0;
  return c;
}
// Rows whose only filter is top-p (top_k and min_p off, as engines that expose top_p alone send):
// before the rows above, which run the one-block algorithm over such rows after their tiles' pass.
// Measured against the rows automatic selection took before it (top-p 0.95 alone): 0.06-0.48x the time at
// every B and V, 27.3-27.7 us at B = 1 (capabilities/evidence/sampling-sm_90-top-p.json, an H100).
constexpr const char* kTopPEvidence =
    "tests/device/sampling_{,edges_}device_test.cu (sm_90: H100, at faadd72, e0a95a5 and 2b5cad4); "
    "capabilities/evidence/sampling-sm_90-top-p.json, sampling-sm_90-min-p-e0a95a5.json, "
    "sampling-sm_90-draw-2b5cad4.json; AMD: compile only";
constexpr SamplingContract top_p_alone() {
  SamplingContract c = split(vectorised());
  c.filters = kFilterTopP;
  return c;
}
// Rows whose only filter is min-p (top_k and top_p off): before the rows below, which run the one-block
// algorithm over such rows after their tiles' pass.
// Measured against the rows automatic selection took before it (min-p 0.05 alone): 0.11-0.83x the time at
// every B and V, 10.8-11.0 us at B = 1 (capabilities/evidence/sampling-sm_90-min-p-e0a95a5.json, an H100).
constexpr const char* kMinPEvidence =
    "tests/device/sampling_{,edges_}device_test.cu (sm_90: H100, at e0a95a5 and 2b5cad4); "
    "capabilities/evidence/sampling-sm_90-min-p-e0a95a5.json, sampling-sm_90-draw-2b5cad4.json; AMD: compile only";
constexpr SamplingContract min_p_alone() {
  SamplingContract c = split(vectorised());
  c.filters = kFilterMinP;
  return c;
}
constexpr SamplingContract streamed() {
  SamplingContract c = split(vectorised());
  c.batch_min = kStreamBatchMin;
  return c;
}
}  // namespace sampling_rows

inline constexpr SamplingRow kSamplingRows[] = {
    {"sampling.unfiltered.vec",
     "rows without a filter (top_k, top_p and min_p off as host values): one block per 8192-element tile, "
     "16-byte loads, each tile's maximum and its sum of weights; the row's last block picks the tile by "
     "inverse CDF over the tiles' sums, reads it again and picks the token (the logits read once)",
     0, nullptr, sampling_rows::unfiltered(), sampling_rows::kSplitSemantics, sampling_rows::kUnfilteredEvidence,
     "sampling.top_p.vec",
     SamplingKernel::unfiltered_vec, "sampling_unfiltered_kernel<"},
    {"sampling.top_p.vec",
     "rows whose only filter is top-p (top_k and min_p off as host values; top_p a host value or per row): "
     "by rejection, two kernels over 8192-element tiles, 16-byte loads: the unfiltered row's draw gives four "
     "independent proposals from the whole softmax, then each tile sums its fixed-point mass before each "
     "proposal and the row's last block takes the first proposal inside the top-p set (all four miss with "
     "probability <= (1 - top_p)^4: the one-block algorithm there, at its own uniform)",
     0, nullptr, sampling_rows::top_p_alone(), sampling_rows::kSplitSemantics, sampling_rows::kTopPEvidence,
     "sampling.stream.vec",
     SamplingKernel::top_p_vec, "sampling_top_p_kernel<"},
    {"sampling.min_p.vec",
     "rows whose only filter is min-p (top_k and top_p off as host values; min_p a host value or per row): "
     "two kernels over 8192-element tiles, 16-byte loads: the unfiltered row's pass finds the row's maximum, "
     "then each tile sums its weights at or above min_p of it and the row's last block draws by inverse CDF "
     "over the tiles' sums, then inside one tile (the logits read twice, one tile a third time)",
     0, nullptr, sampling_rows::min_p_alone(), sampling_rows::kSplitSemantics, sampling_rows::kMinPEvidence,
     "sampling.stream.vec",
     SamplingKernel::min_p_vec, "sampling_min_p_kernel<"},
    {"sampling.stream.vec",
     "one block per row streams the row's tiles (bf16: 32768 elements, fp16 and fp32 16384 on CUDA; half "
     "that on HIP) through two register buffers, 16-byte loads: top-k rows list their elements at or above a "
     "value-bin threshold from an eighth of the row into shared memory as the tiles land, then draw (the logits "
     "read once, no second kernel); other rows, or lists whose count misses [k, 2048]: the one-block algorithm "
     "there",
     0, nullptr, sampling_rows::streamed(), sampling_rows::kSplitSemantics, sampling_rows::kStreamEvidence,
     "sampling.split.vec",
     SamplingKernel::stream_vec, "sampling_stream_kernel<"},
    {"sampling.split.vec",
     "top-k rows: one block per tile of the row (8192 elements; from 32 rows bf16 32768, fp16 16384, fp32 "
     "16384 up to 63, or 20480 where that puts the batch's tiles in one round; bf16 32768 below 32 rows "
     "where a row is then a cluster of 2-8 tiles), 16-byte loads, lists its elements at or above a cut: "
     "below 64 rows for k <= 128 (k * tiles <= 1024) "
     "the tile's own (no threshold kernel when k is one value for the batch), else a value-bin threshold "
     "from an eighth of the row (one block per row); the row's last block gathers the lists and draws (the "
     "logits read once; on sm_90, bf16 rows of 2-8 tiles whose clusters all fit at once: the row's tiles "
     "form one cluster and hand their lists to its first block through shared memory); other rows, or "
     "lists whose count misses [k, 2048]: the one-block algorithm there",
     0, nullptr, sampling_rows::split(sampling_rows::vectorised()), sampling_rows::kSplitSemantics,
     sampling_rows::kSplitEvidence, "sampling.split", SamplingKernel::split_vec, "sampling_split_kernel<true,"},
    {"sampling.split", "one block per tile of a row, scalar loads (as sampling.split.vec; 8192-element tiles "
     "at every batch)", 0, nullptr,
     sampling_rows::split(SamplingContract{sampling_rows::kAll}), sampling_rows::kSplitSemantics,
     sampling_rows::kSplitEvidence, "sampling.block.vec", SamplingKernel::split, "sampling_split_kernel<false,"},
    {"sampling.block.vec", "one block per row, 16-byte loads; histogram cut + shared-memory resolve", 0, nullptr,
     sampling_rows::vectorised(), {}, sampling_rows::kEvidence, "sampling.block", SamplingKernel::block_vec,
     "sampling_block_kernel<true,"},
    {"sampling.block", "any valid call: one block per row, scalar loads", 0, nullptr,
     SamplingContract{sampling_rows::kAll}, {}, sampling_rows::kEvidence, "none (accepts every valid call)",
     SamplingKernel::block, "sampling_block_kernel<false,"},
};

}  // namespace dcukern::capabilities
