// Half of a program of two translation units (unit_a.cpp, unit_b.cpp) that both include every op and call each
// entry: the program links only if everything the headers define may be defined in several units (a template,
// inline, or internal), as a header-only library must allow. The calls pass empty arguments, which every op
// rejects before it launches anything.
#pragma once
#include <algorithm>

#include "dcukern/dcukern.hpp"

namespace {  // each unit its own copy, so each instantiates every op's launch path and kernels

// Whether every op's entry, called with empty arguments, rejected the call with invalid_argument.
bool every_empty_call_rejected() {
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
  return std::all_of(std::begin(calls), std::end(calls),
                     [](const Status& s) { return s.code() == StatusCode::invalid_argument; });
}

}  // namespace
