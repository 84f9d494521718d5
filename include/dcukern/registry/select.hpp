// Row selection, shared by every op. Order: forced rows, then rows tuned for this target, then the
// general rows in table order. A row is taken when it is not disabled, has device evidence (or is
// forced), its ISA needs are confirmed features of the target, it is compiled into this build, and its
// contract accepts the call. The first
// hit is taken and its hit counter incremented; on request, every rejection is recorded with its reason.
// The selection itself allocates nothing unless an Explanation is asked for.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dcukern/core/status.hpp"
#include "dcukern/registry/overrides.hpp"
#include "dcukern/registry/row.hpp"
#include "dcukern/registry/target.hpp"

namespace dcukern {

struct Rejection {
  const char* row_id;
  std::string reason;
};

struct Explanation {
  std::string target;
  const char* chosen = nullptr;  // row id, nullptr if none
  std::vector<Rejection> rejected;
  std::string to_string() const {
    std::string s = "target " + target + ": ";
    s += chosen ? std::string("chose ") + chosen : std::string("no row accepts the call");
    for (const auto& r : rejected) s += std::string("\n  ") + r.row_id + ": " + r.reason;
    return s;
  }
};

// Names of the features in `missing`, joined.
inline std::string feature_list(FeatureSet missing) {
  std::string s;
  for (unsigned f = 0; f < static_cast<unsigned>(Feature::count); ++f)
    if (missing & (FeatureSet(1) << f)) s += (s.empty() ? "" : ", ") + std::string(feature_name(Feature(f)));
  return s;
}

// Why `row` cannot run on `target` at all, whatever the call (nullptr/empty: it can). Covers the
// override, target-tuning and ISA checks; `compiled_in` says whether this build holds the kernel.
template <class Row>
std::string row_unavailable_reason(const Row& row, const TargetInfo& target, bool compiled_in) {
  if (Overrides::instance().is_disabled(row.id)) return "disabled by override (DCUKERN_DISABLE or API)";
  if (!row.evidence && !Overrides::instance().is_forced(row.id))
    return "no device evidence yet (DCUKERN_FORCE runs it anyway)";
  if (row.tuned_for && std::string(row.tuned_for) != target.name)
    return std::string("tuned for ") + row.tuned_for + " only";
  if (!has_all(target.features, row.isa_needs)) {
    const FeatureSet missing = row.isa_needs & ~target.features;
    if (missing & target.code_lacks)
      return std::string("needs ") + feature_list(missing) + ", which this program's device code for " + target.name +
             " lacks (built for an older target)";
    const bool claimed = has_all(target.features | target.unverified, row.isa_needs);
    return std::string("needs ") + feature_list(missing) + (claimed ? ", unverified on " : ", which ") +
           target.name + (claimed ? "" : " lacks");
  }
  if (!compiled_in) return "kernel not compiled into this build (other platform)";
  return {};
}

// Per-op hit counters, one per row, process-wide.
template <class Op>
struct HitCounters {
  static std::atomic<uint64_t>* counters() {
    static std::atomic<uint64_t> c[Op::kRowCount] = {};
    return c;
  }
  static uint64_t hits(std::size_t row) { return counters()[row].load(std::memory_order_relaxed); }
};

// An op's table of rows as the functions below read it: Op::Row, Op::kRowCount, Op::rows(). An op
// derives from it and adds compiled_in(kernel).
template <class RowT, std::size_t N, const RowT (&kTable)[N]>
struct RowTable {
  using Row = RowT;
  static constexpr std::size_t kRowCount = N;
  static constexpr const Row (&rows())[N] { return kTable; }
};

// Op supplies: Op::rows() (array of rows), Op::kRowCount, Op::compiled_in(kernel), and the call type
// with contract.check(call) -> const char* reason (nullptr = accepted).
template <class Op, class Call>
const typename Op::Row* select_row(const TargetInfo& target, const Call& call, Explanation* why) {
  const auto& rows = Op::rows();
  if (why) why->target = target.name;
  auto consider = [&](const typename Op::Row& row) -> bool {
    const bool compiled = Op::compiled_in(row.kernel);
    const bool quick_ok = !Overrides::instance().is_disabled(row.id) &&
                          (row.evidence || Overrides::instance().is_forced(row.id)) &&
                          (!row.tuned_for || std::string_view(row.tuned_for) == target.name) &&
                          has_all(target.features, row.isa_needs) && compiled;
    if (!quick_ok) {
      if (why) why->rejected.push_back({row.id, row_unavailable_reason(row, target, compiled)});
      return false;
    }
    if (const char* reason = row.contract.check(call)) {
      if (why) why->rejected.push_back({row.id, reason});
      return false;
    }
    return true;
  };
  auto take = [&](std::size_t i) {
    HitCounters<Op>::counters()[i].fetch_add(1, std::memory_order_relaxed);
    if (why) why->chosen = rows[i].id;
    return &rows[i];
  };
  const std::size_t n = Op::kRowCount;
  // Pass 0: forced rows; pass 1: tuned rows for this target; pass 2: general rows.
  for (int pass = 0; pass < 3; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto& row = rows[i];
      const bool forced = Overrides::instance().is_forced(row.id);
      if (pass == 0 && !forced) continue;
      if (pass == 1 && (forced || !row.tuned_for)) continue;
      if (pass == 2 && (forced || row.tuned_for)) continue;
      if (consider(row)) return take(i);
    }
  }
  return nullptr;
}

// Per-call options every op takes.
struct RowOptions {
  const char* row = nullptr;       // run exactly this row (still checked: ISA, evidence, contract)
  Explanation* explain = nullptr;  // filled with the chosen row and every rejection
};

template <class Op>
const typename Op::Row* find_row(const char* id) {
  for (const auto& r : Op::rows())
    if (std::strcmp(r.id, id) == 0) return &r;
  return nullptr;
}

// The row for a validated call of `op`: the registry's choice (id == nullptr), or the row named `id`,
// checked like any other (pinning never opens a row whose ISA needs, evidence or contract fail).
// *row is never null on success.
template <class Op, class Call>
Status choose_row(const char* op, const Call& call, const TargetInfo& target, const char* id,
                  const typename Op::Row** row, Explanation* why) {
  if (!id) {
    *row = select_row<Op>(target, call, why);
    if (!*row) return Status::unsupported(std::string(op) + ": no row accepts this call on " + target.name);
    return Status::success();
  }
  *row = find_row<Op>(id);
  if (!*row) return Status::invalid(std::string(op) + ": no row named '" + id + "'");
  std::string reason = row_unavailable_reason(**row, target, Op::compiled_in((*row)->kernel));
  if (reason.empty())
    if (const char* r = (*row)->contract.check(call)) reason = r;
  if (!reason.empty()) return Status::unsupported(std::string(op) + ": row " + id + " cannot run this call: " + reason);
  return Status::success();
}

// Validates `p` into a call (validate(p, &call): the op's contract-independent checks), lets
// `prepare(call)` add what the caller knows beyond p (e.g. that it passes a workspace), then choose_row;
// `call_out`, where given, receives the call. The body of every op's select and check functions.
struct NoPrepare {
  template <class Call>
  void operator()(Call&) const {}
};
template <class Op, class Call, class Params, class Validate, class Prepare = NoPrepare>
Status validate_and_choose(const char* op, const Params& p, Validate validate, const TargetInfo& target,
                           const char* id, const typename Op::Row** row, Explanation* why,
                           Prepare prepare = Prepare{}, Call* call_out = nullptr) {
  Call call;
  if (Status s = validate(p, &call); !s.ok()) return s;
  prepare(call);
  if (call_out) *call_out = call;
  return choose_row<Op>(op, call, target, id, row, why);
}

}  // namespace dcukern
