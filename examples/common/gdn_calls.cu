// The one unit of dcukern-audit, the GDN device tests and benchmark that includes dcukern/gdn.hpp.
#include "common/gdn_calls.hpp"

#include "dcukern/gdn.hpp"

namespace dcukern::calls {

Status gdn_recurrent(const GdnParams& p, stream_t stream, const GdnOptions& opt) {
  return dcukern::gdn_recurrent(p, stream, opt);
}
Status conv1d_update(const Conv1dParams& p, stream_t stream, const GdnOptions& opt) {
  return dcukern::conv1d_update(p, stream, opt);
}

}  // namespace dcukern::calls
