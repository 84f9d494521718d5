// GEMV row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <cstring>
#include <iterator>

#include "capabilities/gemv_rows.hpp"
#include "dcukern/gemv/params.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern {

struct GemvOp {
  using Row = capabilities::GemvRow;
  static constexpr std::size_t kRowCount = std::size(capabilities::kGemvRows);
  static constexpr const Row (&rows())[kRowCount] { return capabilities::kGemvRows; }
  // Whether this build holds the kernel (a host-only build answers for a device build of the target).
  static constexpr bool compiled_in(GemvKernel k) {
#if DCUKERN_PLATFORM_HIP
    return k != GemvKernel::mma;
#elif DCUKERN_PLATFORM_CUDA
    return k == GemvKernel::generic || k == GemvKernel::rowwise || k == GemvKernel::splitk ||
           k == GemvKernel::mma;
#else
    (void)k;
    return true;
#endif
  }
};

inline const capabilities::GemvRow* find_gemv_row(const char* id) {
  for (const auto& r : GemvOp::rows())
    if (std::strcmp(r.id, id) == 0) return &r;
  return nullptr;
}

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_gemv(const GemvParams& p, const TargetInfo& target, const capabilities::GemvRow** row,
                          Explanation* why = nullptr) {
  GemvCall call;
  if (Status s = validate_gemv(p, &call); !s.ok()) return s;
  *row = select_row<GemvOp>(target, call, why);
  if (!*row) return Status::unsupported(std::string("gemv: no row accepts this call on ") + target.name);
  return Status::success();
}

// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_gemv_row(const GemvParams& p, const TargetInfo& target, const char* id,
                             const capabilities::GemvRow** row) {
  GemvCall call;
  if (Status s = validate_gemv(p, &call); !s.ok()) return s;
  *row = find_gemv_row(id);
  if (!*row) return Status::invalid(std::string("gemv: no row named '") + id + "'");
  std::string why = row_unavailable_reason(**row, target, GemvOp::compiled_in((*row)->kernel));
  if (why.empty())
    if (const char* reason = (*row)->contract.check(call)) why = reason;
  if (!why.empty()) return Status::unsupported(std::string("gemv: row ") + id + " cannot run this call: " + why);
  return Status::success();
}

}  // namespace dcukern
