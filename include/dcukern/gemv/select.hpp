// GEMV row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <iterator>

#include "capabilities/gemv_rows.hpp"
#include "dcukern/gemv/params.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern {

struct GemvOp : RowTable<capabilities::GemvRow, std::size(capabilities::kGemvRows), capabilities::kGemvRows> {
  // Whether this build holds the kernel (a host-only build answers for a device build of the target).
  static constexpr bool compiled_in(GemvKernel k) {
#if DCUKERN_PLATFORM_HIP
    return k != GemvKernel::mma;
#elif DCUKERN_PLATFORM_CUDA
    return k == GemvKernel::generic || k == GemvKernel::rowwise || k == GemvKernel::splitk ||
           k == GemvKernel::mma;
#elif DCUKERN_PLATFORM_SIM  // the simulated device: no tensor-core PTX
    return k == GemvKernel::generic || k == GemvKernel::rowwise || k == GemvKernel::splitk;
#else
    (void)k;
    return true;
#endif
  }
};

inline const capabilities::GemvRow* find_gemv_row(const char* id) { return find_row<GemvOp>(id); }

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_gemv(const GemvParams& p, const TargetInfo& target, const capabilities::GemvRow** row,
                          Explanation* why = nullptr) {
  return validate_and_choose<GemvOp, GemvCall>("gemv", p, validate_gemv, target, nullptr, row, why);
}

// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_gemv_row(const GemvParams& p, const TargetInfo& target, const char* id,
                             const capabilities::GemvRow** row) {
  return validate_and_choose<GemvOp, GemvCall>("gemv", p, validate_gemv, target, id, row, nullptr);
}

}  // namespace dcukern
