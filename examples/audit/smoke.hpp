// dcukern-audit's smoke runs, one file each (audit/<op>_smoke.cu, compiled apart so that a build spreads them
// over its jobs): every row enabled on this device runs one small problem inside its contract against the host
// reference. Each prints one Markdown table row per run and returns the number of failed runs.
#pragma once
#include "dcukern/registry/target.hpp"

namespace dcukern::smoke {

int gemv_smoke(const TargetInfo& target);
int attention_smoke(const TargetInfo& target);
int gdn_smoke(const TargetInfo& target);
int conv1d_smoke(const TargetInfo& target);
int sampling_smoke(const TargetInfo& target);

}  // namespace dcukern::smoke
