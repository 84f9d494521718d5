// KV read-pattern benchmark: how fast a paged KV pool can be read in a given access pattern, with no
// attention math, against the read bandwidth measured in the same run. It separates what the memory
// system gives for a layout, a run length and a number of bytes from what a kernel makes of it: the
// attention kernels read one KV head's row of each token (head_dim x dtype bytes: 128 bytes for fp8 at
// head_dim 128, Hkv rows apart in the [num_pages, page_size, Hkv, D] pool), where a block that took
// several heads would read runs of heads x row bytes.
// Pools as attention_bench's: heads (Hq/Hkv/D) 32/8/128 and 24/4/256, bf16 and fp8 e4m3, page size 16,
// pages scattered through the pool, rotated through > 4x L2 (HBM-cold), time from graph replay; a
// sequence's K and V pages are one table row of twice the context's pages (the bytes of an attention call).
// Patterns: "nhd/heads<n>": [num_pages, page_size, Hkv, D], a block reads n consecutive KV heads of each
// token (n = 1: the attention kernels' pattern); "hnd/heads1": [num_pages, Hkv, page_size, D], a block
// reads its head's page_size x D run of each page; "nhd/heads1/ring" (CUDA, rows up to 256 bytes): the
// attention kernels' pattern through their copy engine (kv_ring_read_kernel: cp.async into per-warp rings,
// 4 warps a block), "ring_spin256" with a dependent chain of 256 FMAs a group standing in for the math,
// "ring8w_spin256" the same with 8 warps a block sharing the block's 96 KiB (3 stages of 128-byte rows);
// "ring_bulk" and "ring_bulk_spin256" (sm_90): the 4-warp ring filled by bulk copies, one row a lane.
// Work split: block = (sequence, head group, chunk of >= 16 pages), one wave (the chunk count fills the
// resident blocks where the pages allow, so no tail of a second wave), 8 warps taking the chunk's pages in
// turn; a warp reads a page's runs as 16-byte pieces, 8 loads a lane in flight (from several pages where a
// page has fewer for it), the block-table entries read a batch of pages ahead; each block writes the sum of
// the words it read, and the run checks their total against the pool's (every byte read once). Counters:
// us, GB/s of KV bytes read, % of the measured read bandwidth, run bytes.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "dcukern/core/dtype.hpp"
#include "harness.hpp"
#include "dcukern/platform/async_copy.hpp"

using namespace dcukern;
using namespace dcukern::bench;

namespace {

constexpr int kPageSize = 16;
constexpr int kThreads = 256, kWarps = kThreads / 32, kInFlight = 8, kMinChunkPages = 2 * kWarps;

struct ReadArgs {
  const uint8_t* pool;
  const int32_t* table;  // [B, pages_per_seq]
  int64_t page_stride;   // bytes
  int64_t run_stride;    // bytes between a page's runs (the token stride where a page has page_size runs)
  int64_t group_offset;  // bytes from one head group's first run to the next group's
  int pages_per_seq, head_groups, chunk_pages, chunks;
  uint32_t* sums;  // [grid]: the sum of the words each block read
};

// A block's share of the pool: its sequence's table row, head group and chunk of pages [first, last).
struct BlockPages {
  const int32_t* row;
  int group, first, last;
  // Where the block's run(s) of the page with table entry e start (entry < 0: a page past the chunk).
  __device__ const uint8_t* page(const ReadArgs& a, int32_t e) const {
    return a.pool + int64_t(e < 0 ? 0 : e) * a.page_stride + group * a.group_offset;
  }
};
__device__ __forceinline__ BlockPages block_pages(const ReadArgs& a) {
  const int group = static_cast<int>(blockIdx.x % unsigned(a.head_groups));
  const int rest = static_cast<int>(blockIdx.x / unsigned(a.head_groups));
  const int chunk = rest % a.chunks, b = rest / a.chunks;
  const int first = chunk * a.chunk_pages;
  return {a.table + int64_t(b) * a.pages_per_seq, group, first, min(a.pages_per_seq, first + a.chunk_pages)};
}
// The block's sum of the words its threads read, for the run's check.
template <int kBlockThreads>
__device__ __forceinline__ void write_block_sum(const ReadArgs& a, uint32_t acc) {
  __shared__ typename BlockReduce<uint32_t, kBlockThreads>::storage_type storage;
  const uint32_t total = BlockReduce<uint32_t, kBlockThreads>::sum(acc, storage);
  if (threadIdx.x == 0) a.sums[blockIdx.x] = total;
}

// kRunBytes: bytes of one run (heads x row, or page_size x row for hnd), kRuns: runs a page (page_size, or
// 1 for hnd). A lane's loads of kPages pages go out together where one page gives it fewer than kInFlight.
template <int kRunBytes, int kRuns>
__global__ void __launch_bounds__(kThreads) kv_read_kernel(ReadArgs a, int /*spin: the ring kernel's*/) {
  constexpr int kPieces = kRunBytes / 16;             // 16-byte pieces a run
  constexpr int kPerLane = kRuns * kPieces / 32;      // a lane's pieces of a page
  static_assert(kRuns * kPieces % 32 == 0, "a page's pieces fill whole warps");
  constexpr int kBatch = kPerLane < kInFlight ? kPerLane : kInFlight;  // a lane's loads of a page a batch
  constexpr int kPages = kInFlight / kBatch;                            // pages a batch
  const BlockPages bp = block_pages(a);
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  uint32_t acc = 0;
  int32_t entry[kPages];  // the batch's pages' entries, read a batch ahead
  auto read_entries = [&](int p, int32_t (&e)[kPages]) {
#pragma unroll
    for (int j = 0; j < kPages; ++j) e[j] = p + j < bp.last ? bp.row[p + j] : -1;
  };
  int p = bp.first + warp * kPages;
  read_entries(p, entry);
  for (; p < bp.last; p += kWarps * kPages) {
    int32_t next[kPages];
    read_entries(p + kWarps * kPages, next);
    for (int q0 = 0; q0 < kPerLane; q0 += kBatch) {
      vec16_t v[kPages][kBatch];
#pragma unroll
      for (int j = 0; j < kPages; ++j) {
        const uint8_t* page = bp.page(a, entry[j]);
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int q = lane + 32 * (q0 + u);
          v[j][u] = entry[j] >= 0 ? load_stream16(page + int64_t(q / kPieces) * a.run_stride + (q % kPieces) * 16)
                                  : vec16_zero();
        }
      }
#pragma unroll
      for (int j = 0; j < kPages; ++j)
#pragma unroll
        for (int u = 0; u < kBatch; ++u) acc += v[j][u].x + v[j][u].y + v[j][u].z + v[j][u].w;
    }
#pragma unroll
    for (int j = 0; j < kPages; ++j) entry[j] = next[j];
  }
  write_block_sum<kThreads>(a, acc);
}

// The attention kernels' copy engine alone (CUDA, sm_80+: cp.async): kRingWarps warps a block sharing 96 KiB
// of shared memory as one ring a warp (4 warps: 24 KiB each, as attention_mma_kernel's pipelined variants;
// a stage holds a group, a K page and a V page of the warp's head: 6 stages of 128-byte rows, 3 of 256-byte
// ones or with 8 warps), filled kStages - 1 groups ahead by 16-byte cp.async copies, the next group's
// block-table entries read one group ahead; a lane waits for its oldest group, reads back the bytes it
// copied, and runs `spin` dependent FMAs (0, or a stand-in for a group's math). kBulk (sm_90): the same ring
// filled by bulk copies (cp.async.bulk, one row a lane, completion counted in bytes on one mbarrier a
// stage) instead of 16-byte copies: one instruction a row.
constexpr int kRingBlockBytes = 96 * 1024, kRingSpin = 256, kRingMaxStages = 6;
constexpr int kRingMaxRowBytes = 256;  // (rows of 512 bytes: attention splits those heads over two warps)

#if DCUKERN_DEVICE_HAS_NV_MMA_F16
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif
// Bulk copies (sm_90 device passes; empty elsewhere, never launched there: the bench registers them on sm_90).
__device__ __forceinline__ void bulk_barrier_init(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
__device__ __forceinline__ void bulk_expect(uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
#endif
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // (the lanes' earlier reads of the stage)
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(dst)),
               "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(shared_address(bar))
               : "memory");
#endif
}
__device__ __forceinline__ void bulk_wait(uint64_t* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra WAIT;\n}" ::"r"(
          shared_address(bar)),
      "r"(parity)
      : "memory");
#endif
}

template <int kRowBytes, int kRingWarps, bool kBulk = false>
__global__ void __launch_bounds__(32 * kRingWarps) kv_ring_read_kernel(ReadArgs a, int spin) {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  constexpr int kRingThreads = 32 * kRingWarps, kRingWarpBytes = kRingBlockBytes / kRingWarps;
  constexpr int kPageBytes = kPageSize * kRowBytes;  // one head's rows of a page
  constexpr int kStageBytes = 2 * kPageBytes;        // a group: two pages
  constexpr int kStages =
      kRingWarpBytes / kStageBytes < kRingMaxStages ? kRingWarpBytes / kStageBytes : kRingMaxStages;
  constexpr int kPieces = kRowBytes / 16, kPerLane = kStageBytes / 16 / 32;
  static_assert(kStages >= 2 && kStageBytes % 512 == 0, "a ring of whole-warp stages");
  static_assert(!kBulk || 2 * kPageSize == 32, "bulk: one row a lane");
  extern __shared__ __align__(128) unsigned char s_ring[];
  __shared__ uint64_t s_bars[kBulk ? kRingWarps : 1][kRingMaxStages];
  const BlockPages bp = block_pages(a);
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int groups = (bp.last - bp.first + 1) / 2;
  unsigned char* ring = s_ring + warp * kStages * kStageBytes;
  uint64_t* bars = s_bars[kBulk ? warp : 0];
  if constexpr (kBulk) {
    if (lane == 0)
      for (int st = 0; st < kStages; ++st) bulk_barrier_init(&bars[st]);
    __syncwarp();
  }
  auto entries = [&](int i, int32_t (&e)[2]) {  // the warp's group i: its two pages' entries (-1: none)
    const int p = bp.first + 2 * (warp + kRingWarps * i);
    e[0] = p < bp.last ? bp.row[p] : -1;
    e[1] = p + 1 < bp.last ? bp.row[p + 1] : -1;
  };
  // Row r of the page with entry e, the head group's run.
  auto row_src = [&](int32_t e, int r) { return bp.page(a, e) + r * a.run_stride; };
  auto issue = [&](int st, const int32_t (&e)[2]) {
    if constexpr (kBulk) {  // lane l: row l % 16 of page l / 16 (a group's pages are both in the chunk)
      if (lane == 0) bulk_expect(&bars[st], unsigned(kStageBytes));
      __syncwarp();
      bulk_copy(ring + st * kStageBytes + lane * kRowBytes, row_src(e[lane / kPageSize], lane % kPageSize),
                kRowBytes, &bars[st]);
    } else {
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) {
        const int q = lane + 32 * u, j = q / (kPageSize * kPieces), r = q / kPieces % kPageSize;
        cp_async_zfill<16>(ring + st * kStageBytes + q * 16, row_src(e[j], r) + (q % kPieces) * 16,
                           e[j] < 0 ? 0 : 16);
      }
      cp_async_commit();
    }
  };
  const int mine = (groups - warp + kRingWarps - 1) / kRingWarps;  // the warp's groups
  int32_t e[2], next[2];
  for (int i = 0; i < kStages - 1; ++i) {
    entries(i, e);
    if (i < mine) issue(i, e);
    else if constexpr (!kBulk) cp_async_commit();
  }
  entries(kStages - 1, next);
  uint32_t acc = 0;
  for (int i = 0; i < mine; ++i) {
    const int st = i % kStages, fill = (i + kStages - 1) % kStages;
    __syncwarp();
    if (i + kStages - 1 < mine) issue(fill, next);
    else if constexpr (!kBulk) cp_async_commit();
    entries(i + kStages, next);
    if constexpr (kBulk) bulk_wait(&bars[st], unsigned(i / kStages) & 1u);
    else cp_async_wait<kStages - 1>();
    __syncwarp();
    // The bytes this lane copied: its row (bulk) or its pieces.
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int at = kBulk ? lane * kRowBytes + 16 * u : (lane + 32 * u) * 16;
      const vec16_t v = *reinterpret_cast<const vec16_t*>(ring + st * kStageBytes + at);
      acc += v.x + v.y + v.z + v.w;
    }
    float x = static_cast<float>(acc & 0xffu);
    for (int k = 0; k < spin; ++k) x = fmaf(x, 1.0000001f, 1.f);
    if (x == -1.f) acc ^= 1u;  // (never: keeps the chain)
  }
  if constexpr (!kBulk) cp_async_wait<0>();
  write_block_sum<kRingThreads>(a, acc);
#endif
}

struct Heads {
  int hq, hkv, d;
};
enum class Layout { nhd, hnd };

struct Pattern {
  Layout layout;
  int heads;      // KV heads a block reads of each token (nhd); 1 for hnd
  int spin = -1;  // >= 0: the copy engine's ring (kv_ring_read_kernel, nhd/heads1) with that many FMAs a group
  int ring_warps = 4;  // the ring kernel's warps a block (its 96 KiB shared among them)
  bool bulk = false;   // the ring filled by bulk copies (sm_90)
};

void bench_read(benchmark::State& st, Heads h, DType kvt, int batch, int ctx, Pattern pat) {
  const int elem = dtype_bytes(kvt);
  const int row_bytes = h.d * elem;
  const int pages_per_seq = 2 * ((ctx + kPageSize - 1) / kPageSize);  // K's and V's
  const int64_t num_pages = int64_t(batch) * pages_per_seq;
  const int64_t page_bytes = int64_t(kPageSize) * h.hkv * row_bytes;
  const int64_t pool_bytes = num_pages * page_bytes;
  const int copies = rotation_copies(size_t(pool_bytes));
  std::vector<uint8_t*> pools(copies);
  for (auto& p : pools) {
    device_alloc(&p, pool_bytes);
    BENCH_RT(runtime_memset_async(p, 0x11, pool_bytes, nullptr));
  }
  std::vector<int32_t> perm(num_pages);  // the block table: pages scattered through the pool
  for (int64_t i = 0; i < num_pages; ++i) perm[i] = static_cast<int32_t>(i);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
  int32_t* table;
  uint32_t* sums;
  device_alloc(&table, num_pages * 4);
  BENCH_RT(runtime_copy_to_device(table, perm.data(), num_pages * 4));

  ReadArgs a{};
  a.table = table;
  a.page_stride = page_bytes;
  a.pages_per_seq = pages_per_seq;
  a.head_groups = h.hkv / pat.heads;
  const bool hnd = pat.layout == Layout::hnd;
  const int run_bytes = hnd ? kPageSize * row_bytes : pat.heads * row_bytes;
  a.run_stride = hnd ? 0 : int64_t(h.hkv) * row_bytes;
  a.group_offset = run_bytes;
  const bool ring = pat.spin >= 0;
  const int threads = ring ? 32 * pat.ring_warps : kThreads, shared = ring ? kRingBlockBytes : 0;
  auto with_kernel = [&](auto&& f) {
    if (ring) {
      switch (run_bytes) {
        case 128:
          return pat.bulk ? f(kv_ring_read_kernel<128, 4, true>)
                 : pat.ring_warps == 8 ? f(kv_ring_read_kernel<128, 8>)
                                       : f(kv_ring_read_kernel<128, 4>);
        case 256:  // (8 warps: 12 KiB a warp holds one 8 KiB stage)
          return pat.bulk ? f(kv_ring_read_kernel<256, 4, true>) : f(kv_ring_read_kernel<256, 4>);
      }
    } else if (hnd) {
      switch (run_bytes) {
        case 2048: return f(kv_read_kernel<2048, 1>);
        case 4096: return f(kv_read_kernel<4096, 1>);
        case 8192: return f(kv_read_kernel<8192, 1>);
      }
    } else {
      switch (run_bytes) {
        case 128: return f(kv_read_kernel<128, kPageSize>);
        case 256: return f(kv_read_kernel<256, kPageSize>);
        case 512: return f(kv_read_kernel<512, kPageSize>);
        case 1024: return f(kv_read_kernel<1024, kPageSize>);
        case 2048: return f(kv_read_kernel<2048, kPageSize>);
      }
    }
    fail("kv_read_bench: no kernel for this run length");
  };
  // Chunks: as many as fill the resident blocks once, of at least kMinChunkPages pages (every warp has two),
  // an even count (the ring's groups are page pairs).
  int resident = 0;
  with_kernel([&](auto kernel) {
    const void* k = reinterpret_cast<const void*>(kernel);
    if (shared) BENCH_RT(runtime_allow_dynamic_shared(k, shared));
    BENCH_RT(runtime_resident_blocks(&resident, k, threads, shared));
  });
  const int64_t units = int64_t(batch) * a.head_groups;
  const int64_t wanted = std::max<int64_t>(1, int64_t(std::max(resident, 1)) * device_info().sms / units);
  a.chunk_pages = static_cast<int>(std::max<int64_t>(kMinChunkPages, (pages_per_seq + wanted - 1) / wanted));
  a.chunk_pages += a.chunk_pages % 2;
  a.chunks = (pages_per_seq + a.chunk_pages - 1) / a.chunk_pages;
  const int64_t grid = units * a.chunks;
  device_alloc(&sums, grid * 4);
  a.sums = sums;

  double us = 0;
  for (auto _ : st)
    us = graph_time_us(copies, [&](stream_t s, int c) {
      ReadArgs x = a;
      x.pool = pools[c];
      with_kernel([&](auto kernel) { kernel<<<grid, threads, shared, s>>>(x, pat.spin); });
    });
  // Every word of the pool is 0x11111111: the blocks' sums add up to that times the pool's words (mod 2^32).
  std::vector<uint32_t> block_sums(grid);
  BENCH_RT(runtime_copy_to_host(block_sums.data(), sums, grid * 4));
  uint32_t read_sum = 0;
  for (uint32_t x : block_sums) read_sum += x;
  if (read_sum != uint32_t(pool_bytes / 4) * 0x11111111u)
    st.SkipWithError("kv_read: the blocks did not read every word once");
  st.SetIterationTime(us * 1e-6);
  const double gbs = double(pool_bytes) / us / 1e3;
  st.counters["us"] = us;
  st.counters["GBps"] = gbs;
  st.counters["read_bw_GBps"] = read_bandwidth_gbs();
  st.counters["pct_read_bw"] = 100.0 * gbs / read_bandwidth_gbs();
  st.counters["run_bytes"] = run_bytes;
  for (auto* p : pools) (void)runtime_free(p);
  (void)runtime_free(table);
  (void)runtime_free(sums);
}

void register_all() {
  constexpr Heads kHeads[] = {{32, 8, 128}, {24, 4, 256}};
  struct Shape {
    int batch, ctx;
  };
  constexpr Shape kShapes[] = {{1, 32768}, {32, 4096}, {32, 32768}, {128, 32768}};
  for (const Heads& h : kHeads)
    for (DType kvt : {DType::bf16, DType::fp8_e4m3})
      for (const Shape& s : kShapes) {
        std::vector<Pattern> pats = {{Layout::nhd, 1}, {Layout::nhd, 2}, {Layout::hnd, 1}};
#if DCUKERN_PLATFORM_CUDA
        if (h.d * dtype_bytes(kvt) <= kRingMaxRowBytes) {
          pats.push_back({Layout::nhd, 1, 0});
          pats.push_back({Layout::nhd, 1, kRingSpin});
          if (h.d * dtype_bytes(kvt) == 128) pats.push_back({Layout::nhd, 1, kRingSpin, 8});
          if (device_info().sm_major >= 9) {
            pats.push_back({Layout::nhd, 1, 0, 4, true});
            pats.push_back({Layout::nhd, 1, kRingSpin, 4, true});
          }
        }
#endif
        for (const Pattern& p : pats) {
          const std::string name = "kv_read/" + std::to_string(h.hq) + "x" + std::to_string(h.hkv) + "x" +
                                   std::to_string(h.d) + "/" + dtype_name(kvt) + "/ps16/B" + std::to_string(s.batch) +
                                   "/ctx" + std::to_string(s.ctx) + "/" + (p.layout == Layout::nhd ? "nhd" : "hnd") +
                                   "/heads" + std::to_string(p.heads) +
                                   (p.spin < 0 ? "" : p.bulk ? "/ring_bulk" : p.ring_warps == 8 ? "/ring8w" : "/ring") +
                                   (p.spin > 0 ? "_spin" + std::to_string(p.spin) : "");
          benchmark::RegisterBenchmark(name.c_str(), bench_read, h, kvt, s.batch, s.ctx, p)
              ->UseManualTime()
              ->Iterations(1)
              ->Unit(benchmark::kMicrosecond);
        }
      }
}

}  // namespace

int main(int argc, char** argv) { return dcukern::bench::run_benchmarks(argc, argv, register_all); }
