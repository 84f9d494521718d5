// Workspace of the split sampling rows (sampling.split, sampling.split.vec): its size for a call, and its
// layout. Plain C++ (host and device). The caller allocates sampling_workspace_bytes() once for the
// largest B and V it will use and zeroes it once (sampling_workspace_init); every call then leaves its
// counters zero again (each row's last block zeroes the row's ticket, the last row the rows-finished
// count), so a call of up to kSyncRows rows needs no memset of its own (larger ones zero their counters
// first), whatever the shapes of the calls before it, and a captured graph replays correctly. Calls that
// may run at the same time (on different streams) must not share a workspace: their counters would mix.
//
// Regions (tiles = ceil(V / split_tile(items)) per row; the sizes count the most tiles, of 16 items, and
// the lists of the largest layout):
//   sync[-1].scanned     rows finished (the last one advances the device offset and zeroes it)
//   sync[r].scanned      the ticket counter of row r's tiles (zeroed by the row's last block)
//   threshold[r]         the value bin the row's tiles list from (written by the threshold kernel each
//                        call; kNoThreshold: no threshold, also for rows whose tiles take their own cuts)
//   header[r][tile]      one tile's largest sort key (rows without a cut) or its cut and its count of
//                        elements at or above it, and flags
//   list[r][tile][..]    the sort keys of the tile's elements in value bins >= its cut
//                        (split_list_cap(items) at most, unordered)
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/detect.hpp"

namespace dcukern::sampling_detail {

constexpr int kSplitThreads = 512;  // = kThreads of the kernels
// The threshold kernel's block (sampling_threshold_kernel): kThresholdThreadsWide threads while every row's
// block has an SM of its own (batch <= compute units), where its latency is the row's and twice the
// threads halve each thread's share of the sample; kThresholdThreads for larger batches, where the
// blocks share the SMs and the wide block's extra per-wave steps cost throughput.
constexpr int kThresholdThreads = 512, kThresholdThreadsWide = 1024;
DCUKERN_HD constexpr int threshold_threads(int64_t batch, int compute_units) {
  return batch <= compute_units ? kThresholdThreadsWide : kThresholdThreads;
}
constexpr int kWindow = 1024;       // value bins the threshold kernel counts below its sample's maximum (8 octaves)
constexpr int kSplitCap = 2048;     // candidates per row (= kCap of the kernels)
constexpr int kListCap = 256;       // sort keys a tile of up to 32 elements a thread may list (split_list_cap)
constexpr uint32_t kNoThreshold = 0xFFFFFFFFu;

struct SplitSync {
  uint32_t scanned, pad;
};
struct SplitHeader {
  uint64_t max_key;  // rows without a cut: the tile's largest sort key
  uint32_t count;    // rows with one (a threshold, or the tile's own): the tile's elements in value bins >=
                     // it (its list holds the first split_list_cap(items) of them)
  uint16_t cut;      // that value bin
  uint16_t flags;    // kHeaderNaN: the tile holds a NaN
};
constexpr uint16_t kHeaderNaN = 1u;

struct SplitWorkspace {
  SplitSync* sync;  // sync[-1].scanned: rows finished
  uint32_t* threshold;
  SplitHeader* header;
  uint64_t* list;
  int tiles;
  int items;     // elements per thread of a tile (split_layout)
  int rows;      // B
  bool advance;     // the last row to finish adds 1 to *offset_ptr
  bool thresholds;  // the threshold kernel ran (split_thresholds): else no row has a threshold
};

// Batches of kSplitLargeBatch rows or more fill the device with tiles; smaller ones are bound by the
// latency of a row's chain of blocks.
constexpr int64_t kSplitLargeBatch = 64;
// Elements per thread (split_items), one tile in registers: 16, or from kSplitPairsBatch rows more, so that a row pays
// the tiles' fixed costs (barriers, ticket, merge) less often per element: fp32 32 below kSplitLargeBatch
// rows (whose 2 blocks per SM leave the registers for 32 floats), fp16 32 (widened to floats), bf16 64
// (packed pairs: 32 words, a 64 KiB tile, with 2 blocks per SM at every batch). Measured on the H200:
// bf16 B = 32, 32 against 16 elements 1.09-1.19x faster, then 64 against 32 (with list caps of 256 and
// 512) 0.92-0.96x the time for k = 20, 128 and 512 rows (against 32 elements with 3 blocks per SM)
// 0.93-0.97x; fp32 B = 32, 32 against 16 1.03-1.10x faster. At B = 32 the 64-element bf16 tiles make V
// = 151936 and 248320 160 and 256 blocks, one round of the 264 that 2 blocks per SM hold (32: 320, 512).
constexpr int64_t kSplitPairsBatch = 32;
// Sort keys one tile may list: kListCap for up to 32 elements a thread, twice that for 64. A threshold
// aiming at about 1400 candidates for k = 1000 (up to the row's cap of 2048) leaves about 310 (up to 450)
// a 64-element tile at V = 151936, where 256 overflowed (the row gathered from the logits again: B = 32
// 1.47x the time). Measured on the H200 against caps in proportion to the tile (256 / 512 / 1024 for 16 /
// 32 / 64 elements): 0.97-0.99x the time at B = 32, 0.99x at 128 and 512.
DCUKERN_HD constexpr int split_list_cap(int items) { return items <= 32 ? kListCap : 2 * kListCap; }
// Rows whose tiles run as one thread-block cluster (sampling_split_kernel's kCluster): tiles of 64 elements
// a thread (bf16: split_items), 2 to kSplitClusterMax of them (V from 32769 up). The tiles
// then hand their results to the row's first block through its shared memory: no header, list, ticket or
// gather through L2 (on the H200 the last block's merge and gather took 2.9 us of a B = 32 row's chain).
// The launch takes it only where the device has clusters and every row's cluster is resident at once
// (sampling/launch.hpp). Measured on the H200 (graph replay, top-k + top-p): bf16 V = 151936 B = 32
// 0.82-0.85x the time; where the clusters did not all fit (V = 248320 at B = 32, B >= 128) 1.05-1.38x,
// hence the residency test.
constexpr int kSplitClusterMax = 8;  // the portable cluster size
DCUKERN_HD constexpr bool split_clustered(int items, int tiles) {
  return items == 64 && tiles >= 2 && tiles <= kSplitClusterMax;
}
// The scalar-load row (sampling.split: rows that 16-byte loads do not fit) keeps 16 elements a thread and
// 2 blocks per SM at every batch: one kernel instance a dtype instead of three (its larger batches are
// not measured).
constexpr int kScalarSplitItems = 16;
DCUKERN_HD constexpr int64_t split_tile(int items) { return int64_t(kSplitThreads) * items; }
DCUKERN_HD constexpr int split_tiles(int64_t vocab, int items = 16) {
  return int((vocab + split_tile(items) - 1) / split_tile(items));
}
// fp32 rows of kSplitPairsBatch to kSplitLargeBatch rows take kSplitWideItems elements a thread where that,
// and not 32, puts the batch's tiles in one round of the 2-blocks-per-SM kernel on `resident_pairs` compute
// units (CUDA's; 0 elsewhere: never): at V = 151936 and B = 32, 8 tiles a row (256 blocks) instead of 10
// (320 for the H200's 264 places, where the rows whose tiles wait for the second round end about 4 us after
// the others: capabilities/evidence/sampling-sm_90-trace.json).
constexpr int kSplitWideItems = 40;
constexpr int kSplitWideBlocksPerSm = 2;  // the instance launch_kernels takes for them (DCUKERN_CUDA_MIN_BLOCKS)
DCUKERN_HD constexpr bool split_wide_f32(int64_t batch, int64_t vocab, int resident_pairs) {
  const int64_t places = kSplitWideBlocksPerSm * int64_t(resident_pairs);
  return batch * split_tiles(vocab, kSplitWideItems) <= places && batch * split_tiles(vocab, 32) > places;
}
// Below kSplitPairsBatch rows the tiles keep 16 elements a thread (more blocks a row), except bf16 rows
// that run as clusters (split_clustered, on a device with clusters: `clusters`): there the tiles hand over
// through shared memory and fewer, larger tiles shorten the row's chain. Measured on the H200 (top-k +
// top-p, B = 1, 64 against 16 elements): V = 151936 0.89-0.90x the time, V = 248320 0.68-0.86x.
DCUKERN_HD constexpr int split_items(int64_t batch, int64_t vocab, DType logits, bool clusters,
                                     int resident_pairs = 0) {
  if (batch < kSplitPairsBatch)
    return logits == DType::bf16 && clusters && split_clustered(64, split_tiles(vocab, 64)) ? 64 : 16;
  if (logits == DType::bf16) return 64;
  if (logits == DType::f16) return 32;
  if (batch >= kSplitLargeBatch) return 16;
  return split_wide_f32(batch, vocab, resident_pairs) ? kSplitWideItems : 32;
}

// Fast rows of small top_k in batches below kSplitLargeBatch skip the threshold kernel's estimate: each
// tile takes its own cut, at or below the bin of its k-th largest element, so the tiles' lists together
// hold the row's top k (about k per tile). For k <= kListCap / 2 with k * tiles <= kLocalListBudget,
// where those lists stay well under kSplitCap (a row whose lists overflow it falls back, as a misled
// threshold does). Measured on the H200 (top-k + top-p, k = 20 / 50): B = 1 0.75-0.83x the time, B = 32
// 0.91-0.99x; B = 128 / 512 1.17-1.35x (there the tiles' own steps cost more than the threshold kernel).
constexpr int kLocalListBudget = 1024;
static_assert(kLocalListBudget <= kSplitCap / 2, "lists of about k entries a tile stay under the cap");
DCUKERN_HD constexpr bool split_local_top_k(int64_t batch, int32_t top_k, int tiles) {
  // (32-bit product, both factors bounded first: a 64-bit one compiles for GFX11.0 to a v_mad_u64_u32 that
  // overlaps its source, which the ISA audit rejects)
  return batch < kSplitLargeBatch && top_k <= kListCap / 2 && tiles <= kLocalListBudget &&
         (top_k <= 0 || top_k * tiles <= kLocalListBudget);
}
// Whether a call needs the threshold kernel: not when top_k is one value for the batch (top_k_per_row:
// a device array) that split_local_top_k admits, since every row then either takes its tiles' own cuts
// or has no fast path.
DCUKERN_HD constexpr bool split_thresholds(int64_t batch, bool top_k_per_row, int32_t top_k, int tiles) {
  return top_k_per_row || !split_local_top_k(batch, top_k, tiles);
}

// The threshold kernel's sample: the first kSampleRunBytes of every kSampleStrideBytes of a row (an
// eighth; runs long enough for whole DRAM bursts and coalesced 16-byte loads).
constexpr int kSampleRunBytes = 256, kSampleStrideBytes = 2048;

// m: the count of sampled elements the threshold must reach for a row with top_k = k (aiming at T row
// elements at or above it: 4k up to k = 128, then sqrt(kSplitCap * k); m = max(16, T / 8)).
DCUKERN_HD inline uint32_t sample_target(int32_t k) {
  const float t = k <= 128 ? 4.0f * float(k) : sqrtf(float(kSplitCap) * float(k));
  const uint32_t m = uint32_t(ceilf(t * float(kSampleRunBytes) / float(kSampleStrideBytes)));
  return m > 16u ? m : 16u;
}

DCUKERN_HD constexpr size_t split_align(size_t n) { return (n + 255) & ~size_t(255); }

// Bytes of each region, in layout order.
// The counters take room for kSyncRows rows whatever the call's B, so that the other regions of a call
// of any shape never overlap the counters of a call of up to kSyncRows rows: those calls find them zero
// and leave them zero (no memset). Larger batches zero their larger counter region at the start of the
// call (split rows' launch), since other shapes' regions may overlap it.
constexpr int64_t kSyncRows = 1024;
DCUKERN_HD constexpr size_t split_sync_bytes(int64_t b) {
  return split_align(size_t((b > kSyncRows ? b : kSyncRows) + 1) * sizeof(SplitSync));
}
DCUKERN_HD constexpr size_t split_threshold_bytes(int64_t b) { return split_align(size_t(b) * sizeof(uint32_t)); }
DCUKERN_HD constexpr size_t split_header_bytes(int64_t b, int64_t v) {
  return split_align(size_t(b) * split_tiles(v) * sizeof(SplitHeader));
}
// The lists of the largest layout over the tile sizes (split_items).
DCUKERN_HD constexpr size_t split_list_keys(int64_t v, int items) {
  return size_t(split_tiles(v, items)) * size_t(split_list_cap(items));
}
DCUKERN_HD constexpr size_t split_list_bytes(int64_t b, int64_t v) {
  const int tile_items[] = {16, 32, kSplitWideItems, 64};  // every size split_items and kScalarSplitItems give
  size_t most = 0;
  for (const int items : tile_items) {
    const size_t keys = split_list_keys(v, items);
    most = keys > most ? keys : most;
  }
  return split_align(size_t(b) * most * sizeof(uint64_t));
}

DCUKERN_HD constexpr size_t split_workspace_bytes(int64_t b, int64_t v) {
  return split_sync_bytes(b) + split_threshold_bytes(b) + split_header_bytes(b, v) + split_list_bytes(b, v);
}

// The regions of a call with logits of dtype `logits` (inside the regions sized for 16-item tiles);
// vectorised: the call takes sampling.split.vec; clusters: the device has clusters (DeviceFacts::clusters);
// resident_pairs: split_items' (the compute units where the kernel holds 2 blocks an SM, else 0).
inline SplitWorkspace split_layout(void* base, int64_t b, int64_t v, DType logits, bool vectorised, bool clusters,
                                   int resident_pairs = 0) {
  char* p = static_cast<char*>(base);
  SplitWorkspace w;
  w.sync = reinterpret_cast<SplitSync*>(p) + 1;
  p += split_sync_bytes(b);
  w.threshold = reinterpret_cast<uint32_t*>(p);
  p += split_threshold_bytes(b);
  w.header = reinterpret_cast<SplitHeader*>(p);
  p += split_header_bytes(b, v);
  w.list = reinterpret_cast<uint64_t*>(p);
  w.items = vectorised ? split_items(b, v, logits, clusters, resident_pairs) : kScalarSplitItems;
  w.tiles = split_tiles(v, w.items);
  w.rows = int(b);
  w.advance = false;
  w.thresholds = true;
  return w;
}

}  // namespace dcukern::sampling_detail
