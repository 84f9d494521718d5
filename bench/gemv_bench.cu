// GEMV benchmark on the Qwen3.5-27B decode shapes: every runnable row, automatic selection and (CUDA
// flavour) cuBLAS. Weights rotate through > 4x L2 (HBM-cold); time from graph replay. Counters: us per call,
// GB/s of bytes moved (W + x + y + bias), % of the read bandwidth measured in this run, and with cuBLAS
// its time over this time (vs_cublas > 1: faster than cuBLAS). The HIP flavour has no vendor BLAS cells
// (hipBLAS is not a dependency of this build).
#include "dcukern/platform/detect.hpp"
#if DCUKERN_PLATFORM_CUDA
#include <cublas_v2.h>
#endif

#include <map>
#include <memory>
#include <tuple>

#include "dcukern/gemv.hpp"
#include "gemv_problem.hpp"
#include "harness.hpp"

using namespace dcukern;
using namespace dcukern::bench;

namespace {

#if DCUKERN_PLATFORM_CUDA
cublasHandle_t cublas() {
  static cublasHandle_t h = [] {
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) fail("cublasCreate");
    return handle;
  }();
  return h;
}

double cublas_time(DType dt, const Buffers& b) {
  const cudaDataType_t t = dt == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.f, beta = 0.f;
  static void* workspace = nullptr;
  constexpr size_t kWorkspace = 64 << 20;
  if (!workspace) device_alloc(&workspace, kWorkspace);
  return graph_time_us(b.copies, [&](stream_t s, int c) {
    // cublasSetStream resets the workspace, so set ours after it: under capture cuBLAS must not allocate.
    if (cublasSetStream(cublas(), s) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(cublas(), workspace, kWorkspace) != CUBLAS_STATUS_SUCCESS)
      fail("cublasSetStream/cublasSetWorkspace");
    // Column-major: y^T[M, N] = W[K, M]^T x^T[K, N]
    if (cublasGemmEx(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, int(b.m), b.n, int(b.k), &alpha, b.w[c], t, int(b.k), b.x[c],
                     t, int(b.k), &beta, b.y[c], t, int(b.m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
        CUBLAS_STATUS_SUCCESS)
      fail("cublasGemmEx");
  });
}
#endif

using Key = std::tuple<std::string, DType, int>;
std::map<Key, double>& cublas_times() {
  static std::map<Key, double> m;
  return m;
}

void report(benchmark::State& st, double us, const Buffers& b, double cublas_us) {
  st.SetIterationTime(us * 1e-6);
  const double gbs = b.bytes() / us / 1e3;
  st.counters["us"] = us;
  st.counters["GBps"] = gbs;
  st.counters["read_bw_GBps"] = read_bandwidth_gbs();
  st.counters["pct_read_bw"] = 100.0 * gbs / read_bandwidth_gbs();
  if (cublas_us > 0) st.counters["vs_cublas"] = cublas_us / us;
}

#if DCUKERN_PLATFORM_CUDA
void bench_cublas(benchmark::State& st, DType dt, Shape s, int n) {
  Buffers b(dt, s, n);
  double us = 0;
  for (auto _ : st) us = cublas_time(dt, b);
  cublas_times()[{s.name, dt, n}] = us;
  report(st, us, b, us);
  st.SetLabel("cublas");
}
#endif

// row == nullptr: automatic selection.
void bench_row(benchmark::State& st, DType dt, Shape s, int n, const char* row) {
  Buffers b(dt, s, n);
  Explanation why;
  if (Status e = gemv(b.params(dt, 0), nullptr, GemvOptions{row, &why}); !e.ok()) {
    st.SkipWithError(e.to_string().c_str());
    return;
  }
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t stream, int c) {
      if (Status e = gemv(b.params(dt, c), stream, GemvOptions{row}); !e.ok()) fail(e.to_string().c_str());
    });
  report(st, us, b, cublas_times()[{s.name, dt, n}]);
  st.SetLabel(row ? row : why.chosen);
}

void register_all() {
  const DeviceContext* ctx = nullptr;
  if (Status e = current_device_context(&ctx); !e.ok()) fail(e.to_string().c_str());
  for (DType dt : {DType::f16, DType::bf16})
    for (const Shape& s : kShapes)
      for (int n : kNs) {
        const std::string base = std::string("gemv/") + s.name + "/" + dtype_name(dt) + "/N" + std::to_string(n) + "/";
#if DCUKERN_PLATFORM_CUDA
        benchmark::RegisterBenchmark((base + "cublas").c_str(), bench_cublas, dt, s, n)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
#endif
        benchmark::RegisterBenchmark((base + "auto").c_str(), bench_row, dt, s, n, nullptr)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
        for (const auto& row : GemvOp::rows()) {
          if (row.tuned_for || !row_unavailable_reason(row, *ctx->target.info, GemvOp::compiled_in(row.kernel)).empty())
            continue;
          if (row.contract.n_max < n) continue;
          benchmark::RegisterBenchmark((base + row.id).c_str(), bench_row, dt, s, n, row.id)
              ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
        }
      }
}

}  // namespace

int main(int argc, char** argv) { return dcukern::bench::run_benchmarks(argc, argv, register_all); }
