// The capability record: one row per kernel variant (DESIGN.md's five fields). The op-specific part is
// the tensor contract; everything else is shared by all ops.
#pragma once
#include "dcukern/registry/features.hpp"

namespace dcukern {

struct Semantics {
  bool graph_safe = true;       // no host sync, no allocation, capturable in a HIP/CUDA graph
  bool needs_workspace = false;
  bool in_place = false;
};

template <class Contract, class KernelId>
struct CapabilityRow {
  const char* id;            // "gemv.rowwise"; the name used by DCUKERN_DISABLE / DCUKERN_FORCE
  const char* summary;       // one line: what the variant does
  FeatureSet isa_needs;      // 1. device & toolchain: instruction features it needs
  const char* tuned_for;     //    tuned rows: the one target they apply to (nullptr: a general row)
  Contract contract;         // 2. kernel preconditions
  Semantics semantics;       // 3. framework semantics
  const char* evidence;      // 4. tests and evidence files that back it; nullptr: no device evidence
                             //    yet, so the row is never selected unless forced
  const char* fallback;      // 5. what runs when it is disabled or its contract fails
  KernelId kernel;           //    which kernel it launches
  const char* kernel_symbol; //    fragment of the demangled kernel name (ISA audit)
};

}  // namespace dcukern
