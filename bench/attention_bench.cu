// Paged-KV decode attention benchmark (issue 3): B in {1, 8, 32, 64, 128} x context in {512, 4096, 32768};
// heads (Hq/Hkv/D) 32/8/128 and 24/4/256; page size 16 and 544; bf16 KV and fp8 e4m3 KV; q/o bf16; rows
// attention.mma_split.smem_pipeline, attention.mma_split and attention.grouped_split, each forced by id
// (the per-row rows run at a few % of bandwidth and would take minutes over this grid). Then two sweeps
// for the pipelined row at page size 16, context 32768: the split plan's block target (blocks_per_cu 1,
// 2, 4 at B 1 and 8; the row's default is its resident blocks per SM) and the head-major pool layout
// [num_pages, Hkv, page_size, D] (a block's keys of one page are then one contiguous run instead of
// D-element pieces Hkv * D apart).
// Every call passes max_context_len = the context (the batch's longest, as engines pass it; without it
// the plan sizes chunks from the table's capacity: 544 positions for a 512-token context at page size
// 544). Pages are scattered through the pool (deterministic shuffle); pools rotate through > 4x L2 where
// they are smaller (HBM-cold); time from graph replay. Counters: us per call, GB/s of KV bytes read,
// % of the read bandwidth measured in this run, and the call's plan (chunks a query row, 1 when unsplit;
// shallow_ring 1 where the pipelined row takes its 3-stage ring: attention_call_plan). Targets: >= 85 %
// where B x context >= 128K, >= 70 % at B = 1, context 32768; page size 544 within 10 % of page size 16.
#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/attention_calls.hpp"  // the attention API, compiled in one unit
#if DCUKERN_TRACE  // a traced build: the kernels in this unit, whose trace buffer (one a unit) write_trace reads
#include "common/attention_calls.cu"
#endif
#include "harness.hpp"

using namespace dcukern;
using namespace dcukern::bench;

namespace {

struct Heads {
  int hq, hkv, d;
};
// A measurement beside the grid's defaults: the plan's block target, the pool layout.
struct Variant {
  int blocks_per_cu = 0;    // 0: the plan's default
  bool head_major = false;  // [num_pages, Hkv, page_size, D] instead of [num_pages, page_size, Hkv, D]
  std::string label() const {  // "" for the defaults, else "/bpc<N>" or "/hnd"
    return blocks_per_cu ? "/bpc" + std::to_string(blocks_per_cu) : head_major ? "/hnd" : "";
  }
};
constexpr Heads kHeads[] = {{32, 8, 128}, {24, 4, 256}};
constexpr int kBatches[] = {1, 8, 32, 64, 128};
constexpr int kContexts[] = {512, 4096, 32768};

__global__ void fill_bytes_kernel(uint8_t* p, int64_t n, uint32_t seed, bool fp8) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    // fp8: finite e4m3 bytes of magnitude < 2 (exponent field <= 7); bf16: values in [-1, 1) per element pair
    if (fp8) p[i] = uint8_t((h & 0x80u) | (h % 0x40u));
    else p[i] = (i & 1) ? uint8_t(0x3f ^ (h & 0x80u)) : uint8_t(h);
  }
}

struct AttnBuffers {
  Heads hd;
  int batch, ctx, page_size, pages_per_seq, copies;
  DType kvt;
  bool head_major;
  int64_t num_pages, pool_bytes;
  std::vector<uint8_t*> k, v;
  uint16_t *q, *o;
  int32_t *table, *lens;
  float* lse;
  void* ws = nullptr;
  size_t ws_bytes = 0;

  AttnBuffers(Heads h, int b, int c, int ps, DType t, bool hnd)
      : hd(h), batch(b), ctx(c), page_size(ps), kvt(t), head_major(hnd) {
    pages_per_seq = (ctx + ps - 1) / ps;
    num_pages = int64_t(batch) * pages_per_seq;
    pool_bytes = num_pages * ps * hd.hkv * hd.d * dtype_bytes(kvt);
    copies = rotation_copies(size_t(2 * pool_bytes));
    for (int i = 0; i < copies; ++i) {
      uint8_t *kp, *vp;
      device_alloc(&kp, pool_bytes);
      device_alloc(&vp, pool_bytes);
      fill_bytes_kernel<<<2048, 256>>>(kp, pool_bytes, 17u + i, kvt == DType::fp8_e4m3);
      fill_bytes_kernel<<<2048, 256>>>(vp, pool_bytes, 91u + i, kvt == DType::fp8_e4m3);
      k.push_back(kp);
      v.push_back(vp);
    }
    const int64_t qn = int64_t(batch) * hd.hq * hd.d;
    device_alloc(&q, qn * 2);
    device_alloc(&o, qn * 2);
    BENCH_RT(runtime_memset_async(q, 0x3c, qn * 2, nullptr));
    device_alloc(&lse, int64_t(batch) * hd.hq * 4);
    std::vector<int32_t> perm(num_pages), lens_h(batch, ctx);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
    device_alloc(&table, num_pages * 4);
    device_alloc(&lens, batch * 4);
    BENCH_RT(runtime_copy_to_device(table, perm.data(), num_pages * 4));
    BENCH_RT(runtime_copy_to_device(lens, lens_h.data(), batch * 4));
    BENCH_RT(runtime_synchronize());
  }
  ~AttnBuffers() {
    for (auto* p : k) (void)runtime_free(p);
    for (auto* p : v) (void)runtime_free(p);
    for (void* p : std::initializer_list<void*>{q, o, table, lens, lse, ws}) (void)runtime_free(p);
  }
  AttentionParams params(int c) const {
    AttentionParams p;
    p.batch = batch, p.num_q_heads = hd.hq, p.num_kv_heads = hd.hkv, p.head_dim = hd.d;
    const int64_t row = int64_t(hd.hq) * hd.d;
    p.q = {q, DType::bf16, row, row, hd.d};
    p.o = {o, DType::bf16, row, row, hd.d};
    const int64_t token_stride = head_major ? hd.d : int64_t(hd.hkv) * hd.d;
    const int64_t head_stride = head_major ? int64_t(page_size) * hd.d : hd.d;
    p.kv = {k[c], v[c], kvt, num_pages, page_size, int64_t(page_size) * hd.hkv * hd.d, token_stride, head_stride};
    if (kvt == DType::fp8_e4m3) p.kv.k_scale = p.kv.v_scale = 0.5f;
    p.block_table = table, p.max_pages = pages_per_seq, p.block_table_stride = pages_per_seq;
    p.context_lens = lens;
    p.max_context_len = ctx;  // the batch's longest context, as an engine passes it: sizes the split plan
    p.lse = lse;
    return p;
  }
  double kv_bytes() const { return 2.0 * double(batch) * ctx * hd.hkv * hd.d * dtype_bytes(kvt); }
};

// "attention/32x8x128/bf16/ps16/B8/ctx4096/<row>" (+ the variant's label): the name the evidence script
// parses.
std::string bench_name(const Heads& h, DType kvt, int ps, int batch, int ctx, const char* row, const Variant& var) {
  std::string s = "attention/" + std::to_string(h.hq) + "x" + std::to_string(h.hkv) + "x" + std::to_string(h.d) +
                  "/" + dtype_name(kvt) + "/ps" + std::to_string(ps) + "/B" + std::to_string(batch) + "/ctx" +
                  std::to_string(ctx) + "/" + row;
  return s + var.label();
}

void bench_attention(benchmark::State& st, Heads h, int batch, int ctx, int ps, DType kvt, const char* row,
                     Variant var) {
  Overrides::instance().force(row);
  AttnBuffers b(h, batch, ctx, ps, kvt, var.head_major);
  AttentionPlanOptions plan;
  plan.blocks_per_cu = var.blocks_per_cu;
  b.ws_bytes = calls::attention_workspace_bytes(b.params(0), plan);
  if (b.ws_bytes) device_alloc(&b.ws, b.ws_bytes);
  AttentionOptions opt;
  opt.row = row;
  opt.plan = plan;
  if (Status e = calls::attention(b.params(0), b.ws, b.ws_bytes, nullptr, opt); !e.ok()) {
    Overrides::instance().unforce(row);
    st.SkipWithError(e.to_string().c_str());
    return;
  }
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t s, int c) {
      if (Status e = calls::attention(b.params(c), b.ws, b.ws_bytes, s, opt); !e.ok()) fail(e.to_string().c_str());
    });
  Overrides::instance().unforce(row);
  write_trace(bench_name(h, kvt, ps, batch, ctx, row, var), us);  // traced builds only (harness.hpp)
  st.SetIterationTime(us * 1e-6);
  const double gbs = b.kv_bytes() / us / 1e3;
  st.counters["us"] = us;
  st.counters["GBps"] = gbs;
  st.counters["read_bw_GBps"] = read_bandwidth_gbs();
  st.counters["pct_read_bw"] = 100.0 * gbs / read_bandwidth_gbs();
  AttentionCallPlan cp;  // what the call ran: its chunks a query row (1: unsplit) and ring depth
  if (calls::attention_call_plan(b.params(0), b.ws != nullptr, &cp, opt).ok()) {
    st.counters["chunks"] = cp.split ? cp.plan.num_chunks : 1;
    st.counters["shallow_ring"] = cp.shallow_ring ? 1 : 0;
  }
  st.SetLabel(row);
}

void register_all() {
  auto add = [](Heads h, int batch, int ctx, int ps, DType kvt, const char* row, Variant var) {
    benchmark::RegisterBenchmark(bench_name(h, kvt, ps, batch, ctx, row, var).c_str(), bench_attention, h, batch, ctx,
                                 ps, kvt, row, var)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  for (const Heads& h : kHeads)
    for (DType kvt : {DType::bf16, DType::fp8_e4m3})
      for (int ps : {16, 544})
        for (int batch : kBatches)
          for (int ctx : kContexts)
            for (const char* row :
                 {"attention.mma_split.smem_pipeline", "attention.mma_split", "attention.grouped_split"})
              add(h, batch, ctx, ps, kvt, row, Variant{});
  // The sweeps, for the pipelined row at the longest context: how many chunks small batches take, and
  // how scattered a block's reads are.
  constexpr const char* kSwept = "attention.mma_split.smem_pipeline";
  for (const Heads& h : kHeads)
    for (DType kvt : {DType::bf16, DType::fp8_e4m3}) {
      for (int batch : {1, 8})
        for (int bpc : {1, 2, 4}) add(h, batch, 32768, 16, kvt, kSwept, Variant{bpc, false});
      for (int batch : {1, 32, 128}) add(h, batch, 32768, 16, kvt, kSwept, Variant{0, true});
    }
}

}  // namespace

int main(int argc, char** argv) { return dcukern::bench::run_benchmarks(argc, argv, register_all); }
