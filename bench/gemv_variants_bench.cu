// GEMV kernel-configuration sweep (CUDA): times compile-time variants of the mma and rowwise kernels
// (warps per block, k-steps in flight, row tiles per block) on the decode shapes, launching the kernels
// directly. Its results choose the defaults in gemv/launch.hpp; the rows themselves are measured by
// gemv_bench.
#include <string>

#include "gemv_problem.hpp"
#include "harness.hpp"

using namespace dcukern;
using namespace dcukern::bench;
using namespace dcukern::gemv_detail;

namespace {

GemvArgs args(const Buffers& b, DType dt, int c) {
  const GemvParams p = b.params(dt, c);
  return GemvArgs{static_cast<const uint16_t*>(p.x.data), static_cast<const uint16_t*>(p.w.data), nullptr,
                  static_cast<uint16_t*>(p.y.data), b.n, b.m, b.k, b.k, b.k, b.m};
}

void report(benchmark::State& st, double us, const Buffers& b) {
  st.SetIterationTime(us * 1e-6);
  st.counters["us"] = us;
  st.counters["pct_read_bw"] = 100.0 * b.bytes() / us / 1e3 / read_bandwidth_gbs();
}

template <class Cfg>
void bench_mma(benchmark::State& st, Shape s, int n) {
  constexpr DType dt = DType::bf16;
  Buffers b(dt, s, n);
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t stream, int c) {
      const unsigned grid = unsigned((b.m + Cfg::kRows - 1) / Cfg::kRows);
      if (n <= 8) gemv_mma_kernel<dt, 1, Cfg><<<grid, Cfg::kThreads, 0, stream>>>(args(b, dt, c));
      else gemv_mma_kernel<dt, 2, Cfg><<<grid, Cfg::kThreads, 0, stream>>>(args(b, dt, c));
    });
  report(st, us, b);
}

template <int kUnroll>
void bench_rowwise(benchmark::State& st, Shape s) {
  constexpr DType dt = DType::bf16;
  Buffers b(dt, s, 1);
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t stream, int c) {
      gemv_rowwise_kernel<FmaDot, dt, kUnroll><<<unsigned((b.m + 7) / 8), 256, 0, stream>>>(args(b, dt, c));
    });
  report(st, us, b);
}

template <class Cfg>
void add_mma(const char* name) {
  for (const Shape& s : kShapes)
    for (int n : {1, 8, 16})
      benchmark::RegisterBenchmark(
          (std::string("mma/") + name + "/" + s.name + "/N" + std::to_string(n)).c_str(), bench_mma<Cfg>, s, n)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}
template <int kUnroll>
void add_rowwise() {
  for (const Shape& s : kShapes)
    benchmark::RegisterBenchmark((std::string("rowwise/u") + std::to_string(kUnroll) + "/" + s.name).c_str(),
                                 bench_rowwise<kUnroll>, s)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::printf("device: %s, measured read bandwidth %.0f GB/s\n", device_info().name.c_str(), read_bandwidth_gbs());
  add_rowwise<4>();  // first: also brings the clocks up before the sweep proper
  add_mma<MmaConfig<8, 4, 1>>("w8u4t1");
  add_mma<MmaConfig<8, 8, 1>>("w8u8t1");
  add_mma<MmaConfig<8, 4, 1, true>>("w8u4t1run");
  add_mma<MmaConfig<8, 8, 1, true>>("w8u8t1run");
  add_mma<MmaConfig<4, 8, 1, true>>("w4u8t1run");
  add_mma<MmaConfig<8, 4, 2, true>>("w8u4t2run");
  add_rowwise<2>();
  add_rowwise<4>();
  add_rowwise<8>();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
