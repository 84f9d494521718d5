// ISA audit: checks compiled device assembly against the capability tables.
//   dcukern-isa-audit ASM_DIR gfx906 gfx908 ...      (reads ASM_DIR/<target>.s)
// For each target and each row enabled there: the row's kernels are present, not compiled out (they
// load from memory), and contain an instruction proving each ISA feature the row needs. For each
// feature the target lacks: no instruction exclusive to it appears anywhere (e.g. no v_dot2c on
// gfx906), and the kernels of rows disabled for lack of an instruction are compiled out (their device
// guards hold). Prints a Markdown table per target; exits 1 on any mismatch.
#include <cxxabi.h>

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
};

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
    if (current) current->lines.push_back(line);
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

bool loads_memory(const Kernel& k) {
  for (const char* m : {"global_load", "buffer_load", "flat_load"})
    if (contains_mnemonic(k.lines, m)) return true;
  return false;
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
        if (loads_memory(*k)) verdict = "GUARD MISSING: body compiled for a target without " + feature_list(row.isa_needs & ~t.features);
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
    }
    failures += verdict != "ok";
    std::printf("| %s | %s | %s | %zu | %s | %s |\n", op, row.id, enabled ? "yes" : "no", mine.size(), proof.c_str(),
                verdict.c_str());
  }
  return failures;
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
    std::printf("\n### %s (%zu kernels)\n\n| op | row | enabled | kernels | proof | verdict |\n|---|---|---|---|---|---|\n",
                t->name, kernels.size());
    if (kernels.empty()) {
      std::printf("| - | - | - | 0 | - | NO KERNELS IN ASSEMBLY |\n");
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
      std::printf("| - | (no %s without %s) | - | - | - | %s |\n", f.forbidden, f.name, found ? "FORBIDDEN INSTRUCTION FOUND" : "ok");
      failures += found;
    }
  }
  std::printf("\nISA audit: %s (%d mismatches)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
