// The GDN API's entry points as non-inline functions, compiled in one unit (gdn_calls.cu) that dcukern-audit,
// the GDN device tests and the GDN benchmark link (dcukern_link_calls, top CMakeLists.txt): dcukern/gdn.hpp
// compiles every GDN and conv1d kernel into each unit that includes it. The callers include the host side only
// (dcukern/gdn/select.hpp: parameters, row selection).
#pragma once
#include "dcukern/platform/runtime.hpp"
#include "dcukern/gdn/select.hpp"

namespace dcukern::calls {

Status gdn_recurrent(const GdnParams& p, stream_t stream, const GdnOptions& opt = {});
Status conv1d_update(const Conv1dParams& p, stream_t stream, const GdnOptions& opt = {});

}  // namespace dcukern::calls
