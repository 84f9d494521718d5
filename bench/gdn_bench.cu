// Gated-delta-net decode benchmark on the Qwen3-Next / Qwen3.5 shapes (issue 4): the recurrent step at B in {1, 8, 32,
// 128, 256, 512}, H = 16, HV in {32, 48}, K = V = 128, fp32 state, in-kernel gating and L2 norm (one kernel for the
// whole step), for automatic selection (both layouts) and the generic row; and the conv1d update at B in {1, 32, 256},
// 8192 channels, width 4. Every row that is not chosen automatically is also run pinned (experimental rows, which have
// no evidence yet, forced). Five read-modify-write ceilings (16-byte vectors read and written back in place, the
// state's traffic without its math: a grid-stride loop of one vector a thread, one of four as a dependent launch, and
// 16 KiB tiles launched plainly, as dependent launches, and as dependent launches that prefetch their tile into L2
// before the wait) over each cell's state bytes (B x HV / 16 MiB at B >= 32), and over smaller ones, show what the
// traffic pattern allows at that size. With DCUKERN_BENCH_GDN_SWEEP set in the environment, the recurrent step also
// runs at every even B from 20 to 44 (time against batch around B = 32). State pools rotate through > 4x L2 (HBM-cold);
// time from graph replay. Counters: us per step, GB/s of state bytes read + written (conv1d: every byte moved), %
// of the read bandwidth measured here.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/gdn_calls.hpp"  // the GDN API, compiled in one unit
#if DCUKERN_TRACE  // a traced build: the kernels in this unit, whose trace buffer (one a unit) write_trace reads
#include "common/gdn_calls.cu"
#endif
#include "dcukern/platform/dependent_launch.hpp"  // the read-modify-write kernels
#include "dcukern/platform/numeric.hpp"
#include "harness.hpp"

using namespace dcukern;
using namespace dcukern::bench;

namespace {

constexpr int kBatches[] = {1, 8, 32, 128, 256, 512};
constexpr int kValueHeads[] = {32, 48};
constexpr int kKeyHeads = 16, kHeadDim = 128;

// Deterministic pseudo-random values in [lo, hi) as f32, bf16 or f16.
__global__ void fill_kernel(void* p, int64_t n, uint32_t seed, DType t, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float f = lo + (hi - lo) * float(h & 0xffffff) / float(1 << 24);
    if (t == DType::f32) static_cast<float*>(p)[i] = f;
    else static_cast<uint16_t*>(p)[i] = t == DType::bf16 ? float_to_bf16(f) : float_to_f16(f);
  }
}
void* alloc_filled(int64_t n, DType t, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  void* p;
  device_alloc(&p, std::max<int64_t>(n, 1) * dtype_bytes(t));
  fill_kernel<<<1024, 256>>>(p, n, seed, t, lo, hi);
  return p;
}
int32_t* identity_slots(int n) {
  std::vector<int32_t> h(n);
  for (int i = 0; i < n; ++i) h[i] = i;
  int32_t* d;
  device_alloc(&d, n * sizeof(int32_t));
  BENCH_RT(runtime_copy_to_device(d, h.data(), n * sizeof(int32_t)));
  return d;
}

// One recurrent-step problem's rotated buffer sets (one pool per copy; inputs per copy too).
struct GdnBuffers {
  int batch, hv, copies;
  GdnStateLayout layout;
  int64_t row, pool_elems;
  std::vector<void*> proj, ab, pool, out;
  float* A_log;
  float* dt_bias;
  int32_t* slots;
  GdnBuffers(int b, int hv_, GdnStateLayout l) : batch(b), hv(hv_), layout(l) {
    row = 2 * kKeyHeads * kHeadDim + int64_t(hv) * kHeadDim;
    pool_elems = int64_t(batch) * hv * kHeadDim * kHeadDim;
    copies = rotation_copies(size_t(pool_elems) * 4);
    for (int c = 0; c < copies; ++c) {
      proj.push_back(alloc_filled(batch * row, DType::bf16, 11u + c));
      ab.push_back(alloc_filled(batch * 2 * hv, DType::bf16, 23u + c));
      pool.push_back(alloc_filled(pool_elems, DType::f32, 37u + c, -0.1f, 0.1f));
      out.push_back(alloc_filled(int64_t(batch) * hv * kHeadDim, DType::bf16, 5u));
    }
    A_log = static_cast<float*>(alloc_filled(hv, DType::f32, 3u, 0.f, 2.7f));
    dt_bias = static_cast<float*>(alloc_filled(hv, DType::f32, 4u, -6.f, -2.f));
    slots = identity_slots(batch);
    BENCH_RT(runtime_synchronize());
  }
  ~GdnBuffers() {
    for (auto* v : {&proj, &ab, &pool, &out})
      for (void* p : *v) (void)runtime_free(p);
    (void)runtime_free(A_log);
    (void)runtime_free(dt_bias);
    (void)runtime_free(slots);
  }
  GdnParams params(int c) const {
    GdnParams p;
    p.batch = batch;
    p.tokens = 1;
    p.num_k_heads = kKeyHeads;
    p.num_v_heads = hv;
    p.head_k_dim = p.head_v_dim = kHeadDim;
    const auto* pr = static_cast<const uint16_t*>(proj[c]);
    p.q = {pr, DType::bf16, row, row, kHeadDim};
    p.k = {pr + kKeyHeads * kHeadDim, DType::bf16, row, row, kHeadDim};
    p.v = {pr + 2 * kKeyHeads * kHeadDim, DType::bf16, row, row, kHeadDim};
    const auto* g = static_cast<const uint16_t*>(ab[c]);
    p.a = {g, DType::bf16, 2 * hv, 2 * hv, 1};
    p.b = {g + hv, DType::bf16, 2 * hv, 2 * hv, 1};
    p.A_log = A_log;
    p.dt_bias = dt_bias;
    p.l2norm_qk = true;
    p.state = {pool[c], DType::f32, layout, batch, int64_t(hv) * kHeadDim * kHeadDim};
    p.slots = slots;
    p.o = {out[c], DType::bf16, int64_t(hv) * kHeadDim, int64_t(hv) * kHeadDim, kHeadDim};
    return p;
  }
  double state_bytes() const { return 2.0 * double(pool_elems) * 4; }
};

void report(benchmark::State& st, double us, double bytes) {
  st.SetIterationTime(us * 1e-6);
  const double gbs = bytes / us / 1e3;
  st.counters["us"] = us;
  st.counters["GBps"] = gbs;
  st.counters["read_bw_GBps"] = read_bandwidth_gbs();
  st.counters["pct_read_bw"] = 100.0 * gbs / read_bandwidth_gbs();
}

// row == nullptr: automatic selection.
void bench_gdn(benchmark::State& st, int batch, int hv, GdnStateLayout layout, const char* row) {
  GdnBuffers b(batch, hv, layout);
  Explanation why;
  if (Status e = calls::gdn_recurrent(b.params(0), nullptr, GdnOptions{row, &why}); !e.ok()) {
    st.SkipWithError(e.to_string().c_str());
    return;
  }
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t s, int c) {
      if (Status e = calls::gdn_recurrent(b.params(c), s, GdnOptions{row}); !e.ok()) fail(e.to_string().c_str());
    });
  report(st, us, b.state_bytes());
  st.SetLabel(row ? row : why.chosen);
}

struct ConvBuffers {
  int batch, copies;
  int64_t dim;
  int width;
  DType state_dtype;
  std::vector<void*> x, y, pool;
  void *w, *bias;
  int32_t* slots;
  ConvBuffers(int b, int64_t d, int wd, DType sdt) : batch(b), dim(d), width(wd), state_dtype(sdt) {
    const int64_t pool_elems = int64_t(batch) * dim * (width - 1);
    copies = rotation_copies(size_t(pool_elems) * dtype_bytes(sdt) + size_t(batch) * dim * 4);
    for (int c = 0; c < copies; ++c) {
      x.push_back(alloc_filled(batch * dim, DType::bf16, 7u + c));
      y.push_back(alloc_filled(batch * dim, DType::bf16, 8u));
      pool.push_back(alloc_filled(pool_elems, sdt, 9u + c));
    }
    w = alloc_filled(dim * width, DType::bf16, 1u);
    bias = alloc_filled(dim, DType::bf16, 2u);
    slots = identity_slots(batch);
    BENCH_RT(runtime_synchronize());
  }
  ~ConvBuffers() {
    for (auto* v : {&x, &y, &pool})
      for (void* p : *v) (void)runtime_free(p);
    (void)runtime_free(w);
    (void)runtime_free(bias);
    (void)runtime_free(slots);
  }
  Conv1dParams params(int c) const {
    Conv1dParams p;
    p.x = {x[c], DType::bf16, batch, dim, dim};
    p.weight = {w, DType::bf16, dim, width, width};
    p.bias = {bias, DType::bf16, dim};
    p.state = {pool[c], state_dtype, batch, dim * (width - 1)};
    p.slots = slots;
    p.y = {y[c], DType::bf16, batch, dim, dim};
    return p;
  }
  double bytes() const {
    return double(batch) * dim * (2.0 * (width - 1) * dtype_bytes(state_dtype) + 4.0) + double(dim) * (width + 1) * 2 +
           batch * 4.0;
  }
};

// Forces a row without device evidence (an experimental one) for the guard's lifetime.
struct ForceExperimental {
  const char* id = nullptr;
  explicit ForceExperimental(const char* row) {
    const auto* r = row ? find_conv1d_row(row) : nullptr;
    if (r && !r->evidence) Overrides::instance().force(id = r->id);
  }
  ~ForceExperimental() {
    if (id) Overrides::instance().unforce(id);
  }
};

void bench_conv(benchmark::State& st, int batch, int64_t dim, int width, DType sdt, const char* row) {
  ConvBuffers b(batch, dim, width, sdt);
  ForceExperimental force(row);
  Explanation why;
  if (Status e = calls::conv1d_update(b.params(0), nullptr, GdnOptions{row, &why}); !e.ok()) {
    st.SkipWithError(e.to_string().c_str());
    return;
  }
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t s, int c) {
      if (Status e = calls::conv1d_update(b.params(c), s, GdnOptions{row}); !e.ok()) fail(e.to_string().c_str());
    });
  report(st, us, b.bytes());
  st.SetLabel(row ? row : why.chosen);
}

// Read-modify-write ceilings: every 16-byte vector of a buffer read, incremented and written back in place,
// by kernels of a few shapes. The fastest of them at a size is what that traffic allows there.
constexpr int kRmwThreads = 256;

// A grid-stride loop, one vector a thread in flight, 16 blocks per SM.
__global__ void __launch_bounds__(kRmwThreads) rmw_kernel(vec16_t* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    vec16_t v = p[i];
    v.x += 1u;
    p[i] = v;
  }
}

// A grid-stride loop over groups of kRmwUnroll vectors a thread (all loaded before the first store), 8
// blocks per SM, as a programmatic dependent launch that waits for the kernel before first thing and then
// lets the next one launch.
constexpr int kRmwUnroll = 4;
__global__ void __launch_bounds__(kRmwThreads) rmw_unrolled_kernel(vec16_t* p, int64_t n) {
  begin_dependent_kernel();
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += kRmwUnroll * stride) {
    vec16_t v[kRmwUnroll];
#pragma unroll
    for (int u = 0; u < kRmwUnroll; ++u)
      if (i + u * stride < n) v[u] = p[i + u * stride];
#pragma unroll
    for (int u = 0; u < kRmwUnroll; ++u) {
      v[u].x += 1u;
      if (i + u * stride < n) p[i + u * stride] = v[u];
    }
  }
}

// Tiles, the GDN step's shape: each block reads its contiguous tile of kRmwTileVecs vectors a thread into
// registers (every load in flight before the first store), then writes it back. kDependent: a dependent
// launch as above (the step's begin_dependent_kernel); kPrefetch: thread 0 first asks for the whole tile
// into L2 with one bulk prefetch, before the wait (the [V,K] step's prefetch).
constexpr int kRmwTileVecs = 4;  // 16 KiB a block: one 32-row tile of a 128x128 f32 state
template <bool kDependent, bool kPrefetch>
__global__ void __launch_bounds__(kRmwThreads) rmw_tile_kernel(vec16_t* p, int64_t n) {
  constexpr int64_t kTile = int64_t(kRmwThreads) * kRmwTileVecs;
  const int64_t base = int64_t(blockIdx.x) * kTile;
  if (kPrefetch && threadIdx.x == 0) prefetch_l2_bulk(p + base, uint32_t((n - base < kTile ? n - base : kTile) * 16));
  if (kDependent) begin_dependent_kernel();
  vec16_t v[kRmwTileVecs];
#pragma unroll
  for (int u = 0; u < kRmwTileVecs; ++u) {
    const int64_t i = base + u * kRmwThreads + threadIdx.x;
    if (i < n) v[u] = p[i];
  }
#pragma unroll
  for (int u = 0; u < kRmwTileVecs; ++u) {
    const int64_t i = base + u * kRmwThreads + threadIdx.x;
    v[u].x += 1u;
    if (i < n) p[i] = v[u];
  }
}

enum class RmwShape { stride, unrolled_dependent, tiles, tiles_dependent, tiles_dependent_prefetch };
template <RmwShape kShape>
void bench_rmw(benchmark::State& st, int64_t bytes) {
  const int copies = rotation_copies(size_t(bytes));
  std::vector<void*> bufs(copies);
  for (void*& b : bufs) device_alloc(&b, bytes);
  const int64_t n = bytes / 16, sms = device_info().sms;
  const int64_t vectors = (n + kRmwThreads - 1) / kRmwThreads, tiles = (vectors + kRmwTileVecs - 1) / kRmwTileVecs;
  int device = 0;
  BENCH_RT(runtime_get_device(&device));
  auto launch = [&](auto kernel, int64_t blocks, bool dependent, stream_t s, void* buf) {
    BENCH_RT(launch_dependent(dependent, device, kernel, dim3(unsigned(blocks)), dim3(kRmwThreads), 0, s,
                              static_cast<vec16_t*>(buf), n));
  };
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(copies, [&](stream_t s, int c) {
      switch (kShape) {
        case RmwShape::stride: return launch(rmw_kernel, std::min(vectors, 16 * sms), false, s, bufs[c]);
        case RmwShape::unrolled_dependent:
          return launch(rmw_unrolled_kernel, std::min(vectors, 8 * sms), true, s, bufs[c]);
        case RmwShape::tiles: return launch(rmw_tile_kernel<false, false>, tiles, false, s, bufs[c]);
        case RmwShape::tiles_dependent: return launch(rmw_tile_kernel<true, false>, tiles, true, s, bufs[c]);
        case RmwShape::tiles_dependent_prefetch: return launch(rmw_tile_kernel<true, true>, tiles, true, s, bufs[c]);
      }
    });
  report(st, us, 2.0 * double(bytes));
  for (void* b : bufs) (void)runtime_free(b);
}

void register_all() {
  auto add = [](const std::string& name, auto fn, auto... args) {
    benchmark::RegisterBenchmark(name.c_str(), fn, args...)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  // The step under automatic selection, both layouts: <prefix>/HV<hv>/B<batch>/{kv,vk}/auto.
  auto add_auto = [&](const char* prefix, int batch, int hv) {
    const std::string base = std::string(prefix) + "/HV" + std::to_string(hv) + "/B" + std::to_string(batch) + "/";
    add(base + "kv/auto", bench_gdn, batch, hv, GdnStateLayout::kv, static_cast<const char*>(nullptr));
    add(base + "vk/auto", bench_gdn, batch, hv, GdnStateLayout::vk, static_cast<const char*>(nullptr));
    return base;
  };
  for (int hv : kValueHeads)
    for (int batch : kBatches) {
      const std::string base = add_auto("gdn", batch, hv);
      add(base + "kv/gdn.tiled.kv.c16", bench_gdn, batch, hv, GdnStateLayout::kv, "gdn.tiled.kv.c16");
      add(base + "vk/gdn.tiled.vk.c16", bench_gdn, batch, hv, GdnStateLayout::vk, "gdn.tiled.vk.c16");
      add(base + "kv/gdn.generic", bench_gdn, batch, hv, GdnStateLayout::kv, "gdn.generic");
    }
  if (std::getenv("DCUKERN_BENCH_GDN_SWEEP"))
    for (int hv : kValueHeads)
      for (int batch = 20; batch <= 44; batch += 2) add_auto("sweep", batch, hv);
  for (int64_t mb : {16, 32, 48, 64, 96, 128, 256, 384, 512, 768, 1024, 1536}) {
    const std::string size = "/MB" + std::to_string(mb);
    add("ceiling/rmw" + size, bench_rmw<RmwShape::stride>, mb << 20);
    add("ceiling/rmw_unrolled_dependent" + size, bench_rmw<RmwShape::unrolled_dependent>, mb << 20);
    add("ceiling/rmw_tiles" + size, bench_rmw<RmwShape::tiles>, mb << 20);
    add("ceiling/rmw_tiles_dependent" + size, bench_rmw<RmwShape::tiles_dependent>, mb << 20);
    add("ceiling/rmw_tiles_dependent_prefetch" + size, bench_rmw<RmwShape::tiles_dependent_prefetch>, mb << 20);
  }
  for (int batch : {1, 32, 256}) {
    const std::string base = "conv1d/B" + std::to_string(batch) + "/dim8192/w4/";
    add(base + "bf16state/auto", bench_conv, batch, int64_t(8192), 4, DType::bf16, static_cast<const char*>(nullptr));
    add(base + "bf16state/conv1d.lanes", bench_conv, batch, int64_t(8192), 4, DType::bf16, "conv1d.lanes");
    add(base + "f32state/conv1d.lanes", bench_conv, batch, int64_t(8192), 4, DType::f32, "conv1d.lanes");
    add(base + "bf16state/conv1d.vec8", bench_conv, batch, int64_t(8192), 4, DType::bf16, "conv1d.vec8");
    add(base + "bf16state/conv1d.generic", bench_conv, batch, int64_t(8192), 4, DType::bf16, "conv1d.generic");
    add(base + "f32state/auto", bench_conv, batch, int64_t(8192), 4, DType::f32, static_cast<const char*>(nullptr));
    add(base + "bf16state/conv1d.vec8.staged", bench_conv, batch, int64_t(8192), 4, DType::bf16, "conv1d.vec8.staged");
    add(base + "f32state/conv1d.vec8.staged", bench_conv, batch, int64_t(8192), 4, DType::f32, "conv1d.vec8.staged");
  }
}

}  // namespace

int main(int argc, char** argv) { return dcukern::bench::run_benchmarks(argc, argv, register_all); }
