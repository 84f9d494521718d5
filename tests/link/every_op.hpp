// Half of a program of two translation units (unit_a.cpp, unit_b.cpp) that both include every op and call each
// entry: the program links only if everything the headers define may be defined in several units (a template,
// inline, or internal), as a header-only library must allow. The calls pass empty arguments, which every op
// rejects before it launches anything.
#pragma once
#include "dcukern/dcukern.hpp"

namespace {  // each unit its own copy, so each instantiates every op's launch path and kernels

// How many of the calls with empty arguments were rejected with invalid_argument (all of them: kEmptyCalls).
int empty_calls_rejected() {
  using namespace dcukern;
  const Status calls[] = {
      gemv(GemvParams{}, nullptr),
      attention(AttentionParams{}, nullptr, 0, nullptr),
      gdn_recurrent(GdnParams{}, nullptr),
      conv1d_update(Conv1dParams{}, nullptr),
      sample(SamplingParams{}, nullptr),
      sample(SamplingParams{}, nullptr, 0, nullptr),
      softmax(RowTransformParams{}, nullptr),
      top_k_mask_logits(RowTransformParams{}, nullptr),
      top_k_renorm_probs(RowTransformParams{}, nullptr),
      top_p_renorm_probs(RowTransformParams{}, nullptr),
  };
  int rejected = 0;
  for (const Status& s : calls) rejected += s.code() == StatusCode::invalid_argument ? 1 : 0;
  return rejected;
}
constexpr int kEmptyCalls = 10;

}  // namespace
