// dcukern-audit: what this machine is and which kernels dcukern uses on it.
//   dcukern-audit                 with a GPU: device facts, detected target, a smoke run of every row
//                                 enabled here (GEMV, attention, GDN step, conv1d update, sampling, row
//                                 transforms) against the host reference, and the capability table for
//                                 this target.
//                                 without a GPU (or a host-only build): the target table and which row
//                                 is enabled on which target.
//   dcukern-audit --target gfx906 the capability table for that target (any name the runtime reports).
// Output is Markdown. Exit status: 0, or 1 if a smoke run failed, 2 on bad arguments.
#include <cstdio>
#include <cstring>
#include <string>

#include "audit/report.hpp"
#include "dcukern/platform/detect.hpp"
#if !DCUKERN_PLATFORM_HOST
#include "audit/smoke.hpp"
#include "dcukern/platform/device_context.hpp"
#endif

using namespace dcukern;

namespace {

void print_target_header(const ResolvedTarget& r) {
  const TargetInfo& t = *r.info;
  std::printf("Target: **%s**%s — %s, wave%d, %d KiB LDS\n\nConfirmed features: %s  \nUnverified (never open a "
              "row): %s  \nFacts from: %s\n",
              t.name, r.exact ? "" : (" (unlisted '" + r.canonical + "': family fallback, no features)").c_str(),
              vendor_name(t.vendor), t.wave_size, t.lds_bytes / 1024, report::feature_names(t.features).c_str(),
              report::feature_names(t.unverified).c_str(), t.source);
  if (t.vendor != Vendor::nvidia && !t.debian_toolchain)
    std::printf("\n> This project's toolchain does not build for %s: the rows' AMD / Hygon compile and ISA-audit "
                "evidence below comes from the targets it builds, not from %s. The rows open here on the table's "
                "features alone.\n", t.name, t.name);
}

#if !DCUKERN_PLATFORM_HOST
// Returns -1 when there is no usable GPU, else the number of failed smoke rows.
int audit_this_device() {
  int count = 0;
  if (runtime_device_count(&count) != kRuntimeSuccess || count == 0) return -1;
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) {
    std::printf("device query failed: %s\n", s.to_string().c_str());
    return -1;
  }
  const DeviceFacts& f = ctx->facts;
  std::printf("# dcukern audit of this machine\n\n| device | architecture | compute units | wave size | shared memory "
              "per block | runtime version | dependent launches | thread-block clusters |\n"
              "|---|---|---|---|---|---|---|---|\n| %s | %s | %d | %d | %zu KiB | %d | %s | %s |\n\n",
              f.name.c_str(), f.arch_name.c_str(), f.compute_units, f.wave_size, f.shared_mem_per_block / 1024,
              f.runtime_version, f.dependent_launch ? "yes" : "no", f.clusters ? "yes" : "no");
  print_target_header(ctx->target);
  const TargetInfo& target = *ctx->target.info;
  const int failures = smoke::gemv_smoke(target) + smoke::attention_smoke(target) + smoke::gdn_smoke(target) +
                       smoke::conv1d_smoke(target) + smoke::sampling_smoke(target);
  report::print_all_rows(*ctx->target.info, /*this_build=*/true);
  return failures;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const char* target = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      target = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--target NAME]\n", argv[0]);
      return 2;
    }
  }
  if (target) {
    const ResolvedTarget r = resolve_target(target);
    if (!r.info) {
      std::fprintf(stderr, "'%s' is not a gfx or sm architecture name\n", target);
      return 2;
    }
    std::printf("# dcukern capability report for %s\n\n", target);
    print_target_header(r);
    report::print_all_rows(*r.info, /*this_build=*/false);
    return 0;
  }
#if !DCUKERN_PLATFORM_HOST
  const int failures = audit_this_device();
  if (failures >= 0) return failures == 0 ? 0 : 1;
  std::printf("No usable GPU here: showing the capability tables for every known target.\n\n");
#else
  std::printf("Host-only build: showing the capability tables for every known target.\n\n");
#endif
  std::printf("# dcukern targets\n\n");
  report::print_target_table();
  report::print_all_matrices();
  return 0;
}
