// Capability reports as Markdown, host side: the target table, and for one target every row of every
// op with whether it is enabled there and why not. Used by dcukern-audit.
#pragma once
#include <cstdio>
#include <string>

#include "capabilities/targets.hpp"
#include "dcukern/attention/select.hpp"
#include "dcukern/gdn/select.hpp"
#include "dcukern/gemv/select.hpp"
#include "dcukern/sampling/select.hpp"
#include "dcukern/sampling/transform_select.hpp"
#include "dcukern/registry/resolve.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern::report {

inline std::string feature_names(FeatureSet f) {
  const std::string s = feature_list(f);
  return s.empty() ? "-" : s;
}

inline void print_target(const TargetInfo& t) {
  std::printf("| %s | %s | %s | wave%d | %d KiB | %s | %s | %s | %s |\n", t.name, vendor_name(t.vendor), t.products,
              t.wave_size, t.lds_bytes / 1024, feature_names(t.features).c_str(), feature_names(t.unverified).c_str(),
              t.debian_toolchain ? "yes" : "no", confidence_name(t.confidence));
}

inline void print_target_table() {
  std::printf("| target | vendor | products | wave | LDS | confirmed features | unverified (never used) | "
              "Debian toolchain builds | confidence |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const TargetInfo& t : capabilities::kTargets) print_target(t);
}

// Every row of Op on `target`: enabled or not, and why. `this_build`: the target is this build's device,
// so a kernel not compiled into this build counts; otherwise the report answers for a build made for
// `target` (where each platform's kernels are compiled in).
template <class Op>
void print_rows(const char* op_name, const TargetInfo& target, bool this_build) {
  std::printf("\n### %s on %s\n\n| row | enabled | why not | needs | contract | fallback | evidence |\n"
              "|---|---|---|---|---|---|---|\n", op_name, target.name);
  for (const auto& row : Op::rows()) {
    const std::string why = row_unavailable_reason(row, target, !this_build || Op::compiled_in(row.kernel));
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", row.id, why.empty() ? "yes" : "no",
                why.empty() ? "-" : why.c_str(), feature_names(row.isa_needs).c_str(),
                row.contract.describe().c_str(), row.fallback,
                row.evidence ? row.evidence : "none yet (runs only when forced)");
  }
}

// All ops' rows on one target. A new op adds one line here and one in print_all_matrices.
inline void print_all_rows(const TargetInfo& target, bool this_build) {
  print_rows<GemvOp>("gemv", target, this_build);
  print_rows<GdnOp>("gdn recurrent update", target, this_build);
  print_rows<Conv1dOp>("causal conv1d update", target, this_build);
  print_rows<SamplingOp>("sampling", target, this_build);
  print_rows<TransformOp>("sampling transforms", target, this_build);
  print_rows<AttentionOp>("paged-KV decode attention", target, this_build);
}

// Rows × targets: which row is enabled where, in a build for that target.
template <class Op>
void print_matrix(const char* op_name) {
  std::printf("\n### %s rows by target\n\n| row |", op_name);
  for (const TargetInfo& t : capabilities::kTargets) std::printf(" %s |", t.name);
  std::printf("\n|---|");
  for (size_t i = 0; i < std::size(capabilities::kTargets); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& row : Op::rows()) {
    std::printf("| %s |", row.id);
    for (const TargetInfo& t : capabilities::kTargets)
      std::printf(" %s |", row_unavailable_reason(row, t, true).empty() ? "yes" : ".");
    std::printf("\n");
  }
}

inline void print_all_matrices() {
  print_matrix<GemvOp>("gemv");
  print_matrix<GdnOp>("gdn recurrent update");
  print_matrix<Conv1dOp>("causal conv1d update");
  print_matrix<SamplingOp>("sampling");
  print_matrix<TransformOp>("sampling transforms");
  print_matrix<AttentionOp>("paged-KV decode attention");
}

}  // namespace dcukern::report
