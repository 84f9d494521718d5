// Sampling benchmark on the issue's shapes: B in {1, 32, 128, 512} (and 64, where the rows change), V in
// {151936, 248320}, top-k + top-p with k in {20, 50, 1000}, p in {0.8, 0.95}, fp32 and bf16 logits (normal,
// sd 2: LLM-like spread); beyond the issue's grid, rows without top-k (k0): top-p 0.95 alone (p95; 0.8
// alone, p80, on the top-p row and auto), no filter at all (p100, temperature 1), and min-p 0.05 alone (mp5,
// in place of the p part: auto and the min-p row).
// Logits rotate through > 4x L2 (HBM-cold); time from graph replay. Counters: us per call, logits
// bytes / time, that as % of the read bandwidth measured in this run, and time over one logits read
// (reads = us * read bandwidth / logits bytes; the issue's bound: <= 3 at B >= 128, <= 5 at B = 32).
// The last name part is the row: auto (selection, with a workspace), or a pinned row (split.vec,
// block.vec, stream.vec; unfiltered.vec in the no-filter cells only, top_p.vec in the k0 cells, min_p.vec in
// the mp5 cells). A pinned row is forced for its cells: a row without device evidence is measured too.
#include <vector>

#include "dcukern/platform/numeric.hpp"
#include "harness.hpp"
#include "common/sampling_calls.hpp"  // the sampling API, compiled in one unit
#if DCUKERN_TRACE  // a traced build: the kernels in this unit, whose trace buffer (one a unit) write_trace reads
#include "common/sampling_calls.cu"
#endif

using namespace dcukern;
using namespace dcukern::bench;

namespace {

// Deterministic approximately-normal logits (sum of 4 uniforms, sd 2).
__global__ void fill_logits(void* p, int64_t n, uint32_t seed, bool bf16) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    for (int r = 0; r < 4; ++r) {
      h ^= h >> 15;
      h *= 2246822519u;
      h ^= h >> 13;
      h *= 3266489917u;
      s += (h & 0xffffff) / float(1 << 24) - 0.5f;
    }
    const float x = s * 3.4641f;  // sd 2
    if (bf16) static_cast<uint16_t*>(p)[i] = float_to_bf16(x);
    else static_cast<float*>(p)[i] = x;
  }
}

struct Buffers {
  int copies;
  int64_t b, v;
  DType dt;
  std::vector<void*> logits;
  int32_t* tokens;
  void* workspace;
  size_t workspace_bytes;
  Buffers(DType dt_, int64_t b_, int64_t v_) : b(b_), v(v_), dt(dt_) {
    copies = rotation_copies(bytes());
    for (int c = 0; c < copies; ++c) {
      void* p;
      device_alloc(&p, bytes());
      fill_logits<<<2048, 256>>>(p, b * v, 77u + c, dt == DType::bf16);
      logits.push_back(p);
    }
    device_alloc(&tokens, b * 4);
    workspace_bytes = sampling_workspace_bytes(params(0, 20, 0.9f));
    device_alloc(&workspace, workspace_bytes);
    if (Status e = calls::sampling_workspace_init(workspace, workspace_bytes, nullptr); !e.ok())
      fail(e.to_string().c_str());
    BENCH_RT(runtime_synchronize());
  }
  ~Buffers() {
    for (void* p : logits) (void)runtime_free(p);
    (void)runtime_free(tokens);
    (void)runtime_free(workspace);
  }
  size_t bytes() const { return size_t(b) * v * dtype_bytes(dt); }
  SamplingParams params(int c, int k, float p, float min_p = 0.0f) const {
    SamplingParams s;
    s.logits = {logits[c], dt, b, v, v};
    s.tokens = {tokens, DType::i32, b};
    s.top_k.value = k;
    s.top_p.value = p;
    s.min_p.value = min_p;
    s.seed = 1;
    s.offset = uint64_t(c);
    return s;
  }
};

void bench_sampling(benchmark::State& st, DType dt, int64_t b, int64_t v, int k, float p, float min_p,
                    const char* row, const std::string& name) {
  Buffers buf(dt, b, v);
  const ScopedForce forced(row);  // (pinned rows only)
  Explanation why;
  const SamplingOptions pin{row, &why};
  if (Status e = calls::sample(buf.params(0, k, p, min_p), buf.workspace, buf.workspace_bytes, nullptr, pin);
      !e.ok()) {
    st.SkipWithError(e.to_string().c_str());
    return;
  }
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(buf.copies, [&](stream_t s, int c) {
      const Status e =
          calls::sample(buf.params(c, k, p, min_p), buf.workspace, buf.workspace_bytes, s, SamplingOptions{row});
      if (!e.ok()) fail(e.to_string().c_str());
    });
  st.SetIterationTime(us * 1e-6);
  write_trace(name, us);  // traced builds only (harness.hpp)
  const double gbs = double(buf.bytes()) / us / 1e3;
  st.counters["us"] = us;
  st.counters["GBps"] = gbs;
  st.counters["read_bw_GBps"] = read_bandwidth_gbs();
  st.counters["pct_read_bw"] = 100.0 * gbs / read_bandwidth_gbs();
  st.counters["reads"] = read_bandwidth_gbs() / gbs;
  st.SetLabel(row ? row : why.chosen);
}

void add(DType dt, int64_t v, int64_t b, int k, float p, float min_p, const std::string& filters, const char* row) {
  const std::string impl = std::string(row) == "auto" ? "auto" : std::string(row).substr(9);
  const std::string name = std::string("sampling/") + dtype_name(dt) + "/V" + std::to_string(v) + "/B" +
                           std::to_string(b) + "/k" + std::to_string(k) + "/" + filters + "/" + impl;
  const char* pinned = std::string(row) == "auto" ? nullptr : row;
  benchmark::RegisterBenchmark(name.c_str(), bench_sampling, dt, b, v, k, p, min_p, pinned, name)
      ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

void register_all() {
  for (DType dt : {DType::f32, DType::bf16})
    for (int64_t v : {151936, 248320})
      for (int64_t b : {1, 32, 64, 128, 512}) {
        for (const char* row : {"auto", "sampling.min_p.vec"}) add(dt, v, b, 0, 1.0f, 0.05f, "mp5", row);
        for (int k : {0, 20, 50, 1000})
          for (float p : {0.8f, 0.95f, 1.0f})
            for (const char* row : {"auto", "sampling.unfiltered.vec", "sampling.top_p.vec", "sampling.stream.vec",
                                    "sampling.split.vec", "sampling.block.vec"}) {
              // top-k + top-p 0.8 / 0.95; k0: top-p 0.95, or none; top-p 0.8 alone on the top-p row (and auto)
              const bool top_p_cell = std::string(row) == "sampling.top_p.vec" || std::string(row) == "auto";
              if (k > 0 ? p > 0.99f : p < 0.9f && !top_p_cell) continue;
              if (std::string(row) == "sampling.unfiltered.vec" && (k > 0 || p < 0.99f)) continue;
              if (std::string(row) == "sampling.top_p.vec" && k > 0) continue;
              add(dt, v, b, k, p, 0.0f, "p" + std::to_string(int(p * 100 + 0.5f)), row);
            }
      }
}

}  // namespace

int main(int argc, char** argv) { return dcukern::bench::run_benchmarks(argc, argv, register_all); }
