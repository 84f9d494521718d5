// ISA audit: checks compiled device assembly against the capability tables.
//   dcukern-isa-audit ASM_DIR gfx906 gfx908 ...      (reads ASM_DIR/<target>.s)
// For each target and each row enabled there: the row's kernels are present, not compiled out (they
// load from memory), and contain an instruction proving each ISA feature the row needs. For each
// feature the target lacks: no instruction exclusive to it appears anywhere (e.g. no v_dot2c on
// gfx906), and the kernels of rows disabled for lack of an instruction are compiled out (their device
// guards hold). Beside each row: the largest register count, scratch size and the lowest occupancy the
// compiler reports for its kernels (the resource comments after each function), so a kernel that spills
// or runs one wave per SIMD on a target shows here before anyone runs it there. Prints a Markdown table
// per target; exits 1 on any mismatch.
#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "capabilities/targets.hpp"
#include "dcukern/attention/select.hpp"
#include "dcukern/gdn/select.hpp"
#include "dcukern/gemv/select.hpp"
#include "dcukern/sampling/select.hpp"
#include "dcukern/sampling/transform_select.hpp"

using namespace dcukern;

namespace {

struct Kernel {
  std::string name;  // demangled
  std::vector<std::string> lines;
  int vgprs = -1, scratch = -1, occupancy = -1;  // from the compiler's comments (-1: not reported)
};

// "; Name: 12" -> 12 when the line is that comment, else -1.
int comment_value(const std::string& line, const char* name) {
  const std::string key = std::string("; ") + name + ": ";
  return line.rfind(key, 0) == 0 ? std::atoi(line.c_str() + key.size()) : -1;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : mangled;
}

// Splits AMDGPU assembly into functions: from "<symbol>:" after ".type <symbol>,@function" to ".Lfunc_end".
std::vector<Kernel> read_kernels(const std::string& path, std::vector<std::string>* all_lines) {
  std::ifstream in(path);
  std::vector<Kernel> kernels;
  std::string line, pending;
  Kernel* current = nullptr;
  while (std::getline(in, line)) {
    all_lines->push_back(line);
    const auto type_pos = line.find(".type\t");
    if (type_pos != std::string::npos && line.find("@function") != std::string::npos) {
      const auto start = type_pos + 6;
      pending = line.substr(start, line.find(',', start) - start);
      continue;
    }
    if (!pending.empty() && line.rfind(pending + ":", 0) == 0) {  // "symbol:  ; @symbol"
      kernels.push_back({demangle(pending), {}});
      current = &kernels.back();
      pending.clear();
      continue;
    }
    if (current && line.rfind(".Lfunc_end", 0) == 0) {
      current = nullptr;
      continue;
    }
    if (current) {
      current->lines.push_back(line);
    } else if (!kernels.empty()) {  // the resource comments follow the function's end
      Kernel& k = kernels.back();
      if (int v = comment_value(line, "TotalNumVgprs"); v >= 0) k.vgprs = v;
      else if (int n = comment_value(line, "NumVgprs"); n >= 0 && k.vgprs < 0) k.vgprs = n;
      if (int v = comment_value(line, "ScratchSize"); v >= 0) k.scratch = v;
      if (int v = comment_value(line, "Occupancy"); v >= 0) k.occupancy = v;
    }
  }
  return kernels;
}

bool contains_mnemonic(const std::vector<std::string>& lines, const char* mnemonic) {
  for (const auto& l : lines) {
    const auto first = l.find_first_not_of(" \t");
    if (first != std::string::npos && l.compare(first, std::strlen(mnemonic), mnemonic) == 0) return true;
  }
  return false;
}

// A call (to a device-library function that is not linked for this target here): the compiler then
// reserves a default stack, so its register and scratch numbers are not the final ones.
bool calls_out(const Kernel& k) { return contains_mnemonic(k.lines, "s_swappc_b64"); }

bool loads_memory(const Kernel& k) {
  for (const char* m : {"global_load", "buffer_load", "flat_load"})
    if (contains_mnemonic(k.lines, m)) return true;
  return false;
}

// GFX11.0 (gfx1100-gfx1103) computes v_mad_u64_u32 / v_mad_i64_i32 wrongly when the destination overlaps a
// source: LLVM marks the destination early-clobber on those targets and its assembler rejects an overlap
// ("destination must be different than all sources"), but clang 15 still allocates overlapping registers in
// some 64-bit multiplies (llvm-project issue 59358), and its object files carry them unchecked.
bool has_mad64_overlap_bug(const TargetInfo& t) { return std::string(t.name).rfind("gfx110", 0) == 0; }

// Register range of an operand "v7" or "v[6:7]"; false for anything else (SGPRs, constants).
bool vgpr_range(const std::string& op, int* lo, int* hi) {
  if (std::sscanf(op.c_str(), "v[%d:%d]", lo, hi) == 2) return true;
  if (op.size() > 1 && op[0] == 'v' && std::isdigit(static_cast<unsigned char>(op[1]))) {
    *lo = *hi = std::atoi(op.c_str() + 1);
    return true;
  }
  return false;
}

// The kernel's first "v_mad_u64_u32 / v_mad_i64_i32 vdst, sdst, src0, src1, src2" whose vdst overlaps a VGPR
// source, or "" where there is none.
std::string mad64_overlap(const Kernel& k) {
  for (const auto& l : k.lines) {
    const auto first = l.find_first_not_of(" \t");
    if (first == std::string::npos || (l.compare(first, 13, "v_mad_u64_u32") && l.compare(first, 13, "v_mad_i64_i32")))
      continue;
    std::vector<std::string> ops;
    std::stringstream rest(l.substr(first + 13));
    for (std::string op; std::getline(rest, op, ',');) {
      op.erase(0, op.find_first_not_of(" \t"));
      ops.push_back(op.substr(0, op.find_first_of(" \t")));
    }
    int d_lo, d_hi, lo, hi;
    if (ops.size() < 5 || !vgpr_range(ops[0], &d_lo, &d_hi)) continue;
    for (size_t i = 2; i < 5; ++i)
      if (vgpr_range(ops[i], &lo, &hi) && lo <= d_hi && d_lo <= hi) return l.substr(first);
  }
  return "";
}

template <class Op>
int audit_rows(const char* op, const TargetInfo& t, const std::vector<Kernel>& kernels) {
  int failures = 0;
  for (const auto& row : Op::rows()) {
    if (row.tuned_for) continue;  // tuned rows launch a general row's kernel, audited there
    const bool enabled = row_unavailable_reason(row, t, true).empty();
    std::vector<const Kernel*> mine;
    for (const auto& k : kernels)
      if (k.name.find(row.kernel_symbol) != std::string::npos) mine.push_back(&k);
    std::string verdict = "ok", proof = "-";
    if (!enabled && !has_all(t.features, row.isa_needs)) {
      // Disabled for lack of an instruction: its kernels must be compiled out here (guarded bodies).
      for (const Kernel* k : mine)
        if (loads_memory(*k))
          verdict = "GUARD MISSING: body compiled for a target without " + feature_list(row.isa_needs & ~t.features);
      if (!mine.empty() && verdict == "ok") proof = "compiled out";
    }
    if (enabled) {
      if (mine.empty()) verdict = "MISSING: no kernel named " + std::string(row.kernel_symbol);
      for (const Kernel* k : mine)
        if (!loads_memory(*k)) verdict = "COMPILED OUT: " + k->name.substr(0, 60);
      for (unsigned f = 0; f < unsigned(Feature::count) && verdict == "ok"; ++f) {
        if (!(row.isa_needs & (FeatureSet(1) << f))) continue;
        const FeatureInfo& info = kFeatureInfo[f];
        bool found = false;
        for (const Kernel* k : mine)
          for (const char* m : info.proof)
            if (m && contains_mnemonic(k->lines, m)) {
              found = true;
              proof = m;
            }
        if (!found) verdict = std::string("CLAIM NOT IN ASM: ") + info.name;
      }
      if (has_mad64_overlap_bug(t))
        for (const Kernel* k : mine) {
          if (verdict != "ok") break;  // the row's first failure is its verdict
          if (const std::string bad = mad64_overlap(*k); !bad.empty())
            verdict = "HAZARD: " + bad + " (destination overlaps a source: wrong on GFX11.0)";
        }
    }
    failures += verdict != "ok";
    int vgprs = -1, scratch = -1, occupancy = 1 << 20;
    bool unlinked = false;
    for (const Kernel* k : mine)
      if (loads_memory(*k)) {
        unlinked = unlinked || calls_out(*k);
        vgprs = std::max(vgprs, k->vgprs), scratch = std::max(scratch, k->scratch);
        if (k->occupancy >= 0) occupancy = std::min(occupancy, k->occupancy);
      }
    const std::string res = unlinked ? "unknown (calls unlinked code)"
                            : vgprs < 0 ? "-"
                                        : std::to_string(vgprs) + " / " + std::to_string(scratch) + " / " +
                                              (occupancy == 1 << 20 ? std::string("?") : std::to_string(occupancy));
    std::printf("| %s | %s | %s | %zu | %s | %s | %s |\n", op, row.id, enabled ? "yes" : "no", mine.size(),
                res.c_str(), proof.c_str(), verdict.c_str());
  }
  return failures;
}

// Kernels the compiler reports spilling to scratch or limited to one wave per SIMD (no latency hiding),
// per kernel template: not a mismatch, a warning with the numbers.
void print_resource_warnings(const std::vector<Kernel>& kernels) {
  struct Tally {
    int flagged = 0, total = 0, vgpr_lo = 1 << 20, vgpr_hi = 0, scratch = 0, occ_lo = 1 << 20, occ_hi = 0;
  };
  std::map<std::string, Tally> by_template;
  int unlinked = 0;
  for (const Kernel& k : kernels) {
    if (!loads_memory(k)) continue;
    if (calls_out(k)) {
      ++unlinked;
      continue;
    }
    std::string name = k.name.substr(0, k.name.find('<'));
    if (name.rfind("void ", 0) == 0) name.erase(0, 5);
    Tally& t = by_template[name];
    ++t.total;
    if (k.scratch <= 0 && k.occupancy != 1) continue;
    ++t.flagged;
    t.vgpr_lo = std::min(t.vgpr_lo, k.vgprs), t.vgpr_hi = std::max(t.vgpr_hi, k.vgprs);
    t.scratch = std::max(t.scratch, k.scratch);
    t.occ_lo = std::min(t.occ_lo, k.occupancy), t.occ_hi = std::max(t.occ_hi, k.occupancy);
  }
  if (unlinked)
    std::printf("\n%d kernels call device-library code that is not linked for this target here: their register "
                "and scratch numbers are not final and are left out below.\n",
                unlinked);
  std::string rows;
  for (const auto& [name, t] : by_template)
    if (t.flagged)
      rows += "| " + name + " | " + std::to_string(t.flagged) + " of " + std::to_string(t.total) + " | " +
              std::to_string(t.vgpr_lo) + "-" + std::to_string(t.vgpr_hi) + " | " + std::to_string(t.scratch) +
              " | " + std::to_string(t.occ_lo) + "-" + std::to_string(t.occ_hi) + " |\n";
  if (!rows.empty())
    std::printf("\nResource warnings: instantiations that spill to scratch or run one wave per SIMD.\n\n"
                "| kernel template | instantiations | VGPRs | max scratch bytes | waves per SIMD |\n"
                "|---|---|---|---|---|\n%s\n",
                rows.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ASM_DIR TARGET...\n", argv[0]);
    return 2;
  }
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    const TargetInfo* t = capabilities::find_target(argv[i]);
    if (!t) {
      std::fprintf(stderr, "unknown target %s\n", argv[i]);
      return 2;
    }
    std::vector<std::string> all;
    const auto kernels = read_kernels(std::string(argv[1]) + "/" + argv[i] + ".s", &all);
    std::printf(
        "\n### %s (%zu kernels)\n\n| op | row | enabled | kernels | max VGPRs / scratch bytes / min waves per SIMD "
        "| proof | verdict |\n|---|---|---|---|---|---|---|\n",
        t->name, kernels.size());
    if (kernels.empty()) {
      std::printf("| - | - | - | 0 | - | - | NO KERNELS IN ASSEMBLY |\n");
      ++failures;
      continue;
    }
    failures += audit_rows<GemvOp>("gemv", *t, kernels);
    failures += audit_rows<GdnOp>("gdn", *t, kernels);
    failures += audit_rows<Conv1dOp>("conv1d", *t, kernels);
    failures += audit_rows<SamplingOp>("sampling", *t, kernels);
    failures += audit_rows<TransformOp>("sampling transforms", *t, kernels);
    failures += audit_rows<AttentionOp>("attention", *t, kernels);
    for (const FeatureInfo& f : kFeatureInfo) {
      if (!f.forbidden || has_feature(*t, f.feature)) continue;
      const bool found = contains_mnemonic(all, f.forbidden);
      std::printf("| - | (no %s without %s) | - | - | - | - | %s |\n", f.forbidden, f.name,
                  found ? "FORBIDDEN INSTRUCTION FOUND" : "ok");
      failures += found;
    }
    if (has_mad64_overlap_bug(*t)) {
      int hazards = 0;
      for (const Kernel& k : kernels) hazards += !mad64_overlap(k).empty();
      std::printf("| - | (no v_mad_u64_u32 / v_mad_i64_i32 destination overlapping a source: GFX11.0) | - | %zu "
                  "| - | - | %s |\n", kernels.size(),
                  hazards ? (std::to_string(hazards) + " KERNELS WITH AN OVERLAP").c_str() : "ok");
      failures += hazards > 0;
    }
    print_resource_warnings(kernels);
  }
  std::printf("\nISA audit: %s (%d mismatches)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
