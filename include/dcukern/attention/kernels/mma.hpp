// attention_mma_kernel — paged decode attention on NVIDIA tensor cores (mma.sync m16n8k16, sm_80+) for a
// tile of up to 8 query rows sharing one KV head. Unsplit, or one KV chunk per block for split-KV.
// Contract: the grouped rows' (head_dim a multiple of 8 and <= kDim, pools and strides aligned to 8
// elements; the elements past head_dim of a kDim build are not read); Feature::nv_mma_f16.
// Work split: block = (query tile, KV head, chunk, sequence) (query_tile.hpp); its 4 teams of warps take
// turns over groups of 16 keys (a team is one warp, or two that split the head dim: kMmaHeadSplit). Per
// group a warp computes S = Q K^T (M = 16 query rows, of which the tile's <= 8 are real; N = the 16 keys
// as two 8-key tiles; K = head_dim or the warp's half) and then O^T += V^T P^T (M = 16 head
// elements per tile, N = 8 query rows, K = the 16 keys), so the probabilities go from S's accumulator
// straight into P^T's fragment. The head dim is permuted (a dot product and the output's element order
// are ours to choose) so that every fragment is filled from whole 16-byte loads: lane (g, c) reads
// 8-element vectors of keys g and g+8 for K, and of keys 2c, 2c+1, 2c+8, 2c+9 for V, at the elements
// MmaHeadMap names (kMmaSectorMap picks its variant per instantiation, as measured). MMA inputs are bf16
// for bf16 KV, else f16 (fp8 e4m3 decodes exactly to f16, times 2^-8 where the decode is the bit trick of
// kv_vec.hpp, undone on S and on the output); q enters as a hi + lo pair of that type so the logits keep
// fp32-like precision, the lo part in the A operand's rows 8..15 (a tile of <= 8 query rows leaves them
// free), so one MMA per k-step and key tile takes both; P is rounded to the MMA type and o is normalised
// by the sum of the rounded values, so P's rounding cancels in o; the LSE comes from the unrounded sum.
// (Measured and dropped: scale on S in fp32, 4-30% slower.)
// Softmax state is online per team of warps (base 2); the 4 teams' states merge in team order (finish_tile).
// Before its dependent-launch wait a block asks L2 for the lines its prologue reads (prefetch_prologue_lines);
// the prologue then issues the context length, the first groups' block-table entries and the tile's q (staged
// in shared memory) before it waits for any, and the pipelined variants start their ring's copies before
// they convert q; after issuing a group's loads, a warp reads the block-table entries of its next group
// (the pipelined variants: of the group after that, a whole group of math before their use), so they
// land during the math. (Measured on the H200 and dropped: the next group's K/V in registers, 231
// registers; L2 prefetches of the next 1-4 groups; 3- or 4-blocks-per-SM register bounds; two groups per
// step for fp8: slower in most cases, capabilities/evidence/.)
// Variants (MmaVariant): standard, smem_pipeline (K/V through a shared-memory ring) and
// smem_pipeline_shallow (its 3-stage ring), at the enum (mma_variant.hpp, with the instantiations' constants);
// the fragment helpers: mma_fragments.hpp.
#pragma once
#include "dcukern/attention/kernels/kv_vec.hpp"
#include "dcukern/attention/kernels/mma_fragments.hpp"
#include "dcukern/attention/kernels/mma_head_map.hpp"
#include "dcukern/attention/kernels/mma_kv_ring.hpp"
#include "dcukern/attention/kernels/mma_variant.hpp"
#include "dcukern/attention/kernels/query_tile.hpp"
#include "dcukern/platform/async_copy.hpp"
#include "dcukern/platform/mma.hpp"

namespace dcukern::attn_detail {

// What finish_group asks its group's source for (attention_mma_kernel).
enum class Fetch : uint8_t { k_vec, v_all, v_vec };

template <DType KVT, int kDim, MmaVariant kVariant = MmaVariant::standard>
__global__ void __launch_bounds__((kMmaThreads<KVT, kDim, kVariant>),
                                  DCUKERN_CUDA_MIN_BLOCKS((kMmaMinBlocks<KVT, kDim, kVariant>)))
    attention_mma_kernel(AttnArgs a) {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16 && DCUKERN_PLATFORM_CUDA
  constexpr DType MT = KVT == DType::bf16 ? DType::bf16 : DType::f16;
  constexpr bool kFp8 = KVT == DType::fp8_e4m3;
  constexpr bool kPipeline = kVariant != MmaVariant::standard;
  constexpr int kThreads = kMmaThreads<KVT, kDim, kVariant>, kSplit = kMmaHeadSplit<KVT, kDim, kVariant>;
  constexpr int kWarps = kThreads / 32, kTeams = kWarps / kSplit;
  constexpr int kWarpDim = kDim / kSplit;  // head elements a warp holds
  using Map = MmaHeadMap<kWarpDim, kPipeline || kMmaSectorMap<KVT, kDim>>;
  constexpr int kSteps = Map::kSteps, kKVecs = Map::kKVecs, kVVecs = Map::kVVecs;
  __shared__ __align__(16) float s_acc_own[kPipeline ? 1 : kTeams][kMmaTile][kDim];  // (16 bytes: finish_tile)
  // The pipeline's rings, then its s_acc. 128-byte aligned: a ring at a 16-byte but not 128-byte aligned
  // offset (the static arrays' size decides it) ran 1.13-1.24x slower on the H200.
  extern __shared__ __align__(128) unsigned char s_dynamic[];
  using Acc = float[kTeams][kMmaTile][kDim];
  Acc& s_acc = [&]() -> Acc& {
    if constexpr (kPipeline) return *reinterpret_cast<Acc*>(s_dynamic);
    else return s_acc_own;
  }();
  __shared__ float s_m[kMmaTile][kTeams], s_l[kMmaTile][kTeams], s_le[kMmaTile][kTeams];
  __shared__ uint4 s_q[kSplit][kSteps][32];
  // A team's halves of S, double-buffered by group parity: [team][parity][warp of the team][lane][key].
  __shared__ float s_s[kSplit > 1 ? kTeams : 1][2][kSplit][32][4];

  using Ring = MmaRing<KVT, kDim, kVariant>;  // (the pipeline's)
  // Warps take groups of 16 keys in turn. (Measured and dropped: two groups per warp step for fp8, as many
  // bytes in flight as bf16's one, 165-234 registers: 0.99-1.50x the time where B x context >= 128K.)
  constexpr int64_t kStride = 16 * kTeams;
  constexpr int kFirstGroups = kPipeline ? Ring::kStages : 1;  // a warp's groups the prologue reads entries of
  // Trace points (platform/trace.hpp; empty unless DCUKERN_TRACE): 0 entry, 1 released, 2 the loop's
  // start, 3 its end (the pipeline), 4 exit; 5 the first ring stages issued (the pipeline), 6 finish_tile's start.
  DCUKERN_TRACE_BLOCK(TraceKind::attention_mma);
  // The block's coordinates and tile rows come from the arguments alone: worked out before the wait, while
  // the kernel before this one (a dependent launch) may still run.
  const TileBlock tb = tile_block(a);
  QueryTile<kMmaTile> qt(a, tb, QueryTile<kMmaTile>::RowsOnly{});  // key ranges: set_keys below
  // The prologue's lines into L2 while the kernel before still runs: the table entries of the first groups
  // (the ring's stages) and q.
  prefetch_prologue_lines<kMmaTile, kThreads>(a, tb, qt, kFirstGroups * kStride);
  grid_dependency_wait();  // a dependent launch (attention/launch.hpp): the kernel before may write q, tables, KV
  DCUKERN_TRACE_STAMP(1);
  // Split calls let the merge (a dependent launch) start; it waits for this kernel's end. Unsplit calls let
  // the next kernel launch only once every block is past its keys (below): from their start its blocks
  // would take SMs from this call's one wave (1-2 % slower on the H200:
  // capabilities/evidence/attention-sm_90-091deab.json, tried_and_dropped).
  if (a.part_o) grid_dependents_launch();
  // (Unsigned index arithmetic: the compiler then knows the results' ranges, e.g. that q row i / kDim below
  // is a compile-time constant, where signed % and / leave it a runtime value with sign fix-ups.)
  const int lane = static_cast<int>(threadIdx.x % 32u), warp = static_cast<int>(threadIdx.x / 32u);
  const int team = warp / kSplit, half = warp % kSplit;  // the team's warps share key groups
  const int g = lane / 4, c = lane % 4;
  // Lane i: the block-table entry of key base + i % 16 (0 past the table), and the pool offset of that key
  // from its entry (-1 past the block's keys).
  const int32_t* table_row = a.block_table + tb.b * a.bt_stride;
  const int64_t head_offset = int64_t(tb.hk) * a.head_stride;  // (kv_page_offset's head term, once per block)
  auto table_entry = [&](int64_t base) -> int32_t {
    const int64_t mine = base + (lane & 15);
    return mine < a.capacity ? table_row[page_slot(a, static_cast<int>(mine)).entry] : 0;
  };
  auto key_offset_from = [&](int64_t base, int32_t entry) -> int64_t {
    const int64_t mine = base + (lane & 15);
    if (mine >= qt.blk_hi) return -1;
    return int64_t(entry) * a.page_stride + int64_t(page_slot(a, static_cast<int>(mine)).in_page) * a.token_stride +
           head_offset;
  };
  auto key_offset = [&](int64_t base) -> int64_t { return key_offset_from(base, table_entry(base)); };

  // The prologue's reads all go out before any is waited for (one memory latency, not four): the context
  // length, the block-table entries of the warp's first groups (as many as the ring has stages) counted
  // from the chunk's first position (the block's first key unless a sliding window cuts the chunk; they
  // are read again then), and the tile's q.
  const int64_t context_len = a.context_lens[tb.b];
  const int64_t first = QueryTile<kMmaTile>::first_key(a, tb) + 16 * team;
  int32_t first_entries[kFirstGroups];
#pragma unroll
  for (int st = 0; st < kFirstGroups; ++st) first_entries[st] = table_entry(first + kStride * st);

  // Pool offsets of the warp's first groups (from the entries read above where they are the right ones;
  // after qt.set_keys).
  auto first_offset = [&](int st) -> int64_t {
    const int64_t base = qt.blk_lo + 16 * team + kStride * st;
    return qt.blk_lo + 16 * team == first ? key_offset_from(base, first_entries[st]) : key_offset(base);
  };

  // The pipeline's ring (unused by the standard variant).
  constexpr int kElemBytes = kFp8 ? 1 : 2;
  unsigned char* ring = s_dynamic + warp * Ring::kStages * Ring::kStageBytes;
  const int first_elem = kWarpDim * half;  // the warp's head elements: [first_elem, first_elem + kWarpDim)
  // Copies a group's K and V rows into stage `st` in pieces of kPiece chunks (kPiece * kChunkBytes bytes):
  // lane i of `offs` holds the pool offset of the group's key i % 16; rows past the block's keys and
  // chunks past head_dim are zero-filled. A lane copies the same chunks of rows r0 + j * kRowStep, so its
  // pool addresses differ by those rows' offsets only and, the ring's layout being linear (mma_kv_ring.hpp),
  // its ring offsets by compile-time XORs.
  auto copy_pieces = [&](auto piece, int st, int64_t offs) {
    constexpr int kPiece = decltype(piece)::value, kPieces = Ring::kChunks / kPiece, kRowStep = 32 / kPieces;
    constexpr int kBytes = kPiece * Ring::kChunkBytes;
    const int r0 = lane / kPieces, ch = lane % kPieces * kPiece;
    const bool chunk_real = first_elem + 8 * ch < a.head_dim;
    const uint8_t* k_src = static_cast<const uint8_t*>(a.k) + (first_elem + 8 * ch) * kElemBytes;
    const uint8_t* v_src = static_cast<const uint8_t*>(a.v) + (first_elem + 8 * ch) * kElemBytes;
    unsigned char* stage = ring + st * Ring::kStageBytes;
    const int k_own = Ring::k_offset(0, r0, ch), v_own = Ring::v_offset(0, r0, ch);
#pragma unroll
    for (int j = 0; j < 16 / kRowStep; ++j) {
      const int64_t off = __shfl_sync(0xffffffffu, offs, r0 + j * kRowStep);
      const bool real = off >= 0 && chunk_real;
      const int64_t byte = real ? off * kElemBytes : 0;
      const int n = real ? kBytes : 0;
      const int k_step = Ring::k_offset(0, j * kRowStep, 0);
      const int v_step = Ring::v_offset(0, j * kRowStep, 0) ^ Ring::kMatrixBytes;
      cp_async_zfill<kBytes>(stage + (k_own ^ k_step), k_src + byte, n);
      cp_async_zfill<kBytes>(stage + (v_own ^ v_step), v_src + byte, n);
    }
  };
  // fp8 rows go in 16-byte pieces (two chunks; the ring keeps chunk pairs together) where every row
  // start is 16-byte aligned and head_dim a multiple of 16 (a.kv_rows_16b), else 8-byte ones: half the
  // copy instructions per byte, which fp8's instruction-bound loop feels.
  auto copy_group = [&](int st, int64_t offs) {
    if constexpr (kFp8) {
      if (a.kv_rows_16b) return copy_pieces(std::integral_constant<int, 2>{}, st, offs);
    }
    copy_pieces(std::integral_constant<int, 1>{}, st, offs);
  };
  int64_t ahead = 0;  // the pipeline: the first group not yet copied

  // q rows of the tile, prescaled, in fp32 through shared memory, a slice of kWarpDim elements per warp of
  // a team (slice h: head elements [kWarpDim h, kWarpDim (h + 1))): s_acc, free until the epilogue, or in the
  // pipeline warp h's last ring stage, which the main loop fills only after the barriers below (its first
  // kStages - 1 stages are filling by then: the copies go out as soon as the key range is known, so the
  // KV stream starts one memory latency into the block, not after the q prologue's work).
  using QSlice = float[kMmaTile][kWarpDim];
  static_assert(!kPipeline || sizeof(QSlice) <= Ring::kStageBytes, "a slice of the q rows fits a ring stage");
  auto q_slice = [&](int h) -> QSlice& {
    if constexpr (kPipeline)
      return *reinterpret_cast<QSlice*>(s_dynamic + (h * Ring::kStages + Ring::kStages - 1) * Ring::kStageBytes);
    else return *reinterpret_cast<QSlice*>(&s_acc[0][0][0] + h * kMmaTile * kWarpDim);
  };
  {
    // Element i = tid + j * kThreads (tid < kThreads, a power of two: the OR below is that sum, and i's
    // row is a compile-time constant where kDim >= kThreads). Every load is issued before any
    // value is converted.
    static_assert((kThreads & (kThreads - 1)) == 0, "block size a power of two");
    constexpr int kPer = kMmaTile * kDim / kThreads;
    const int tid = static_cast<int>(threadIdx.x % unsigned(kThreads));
    uint16_t x[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = tid | j * kThreads, qg = i / kDim, d = i % kDim;
      int t, h;
      qt.token_head(qg, t, h);
      x[j] = qg < qt.rows && d < a.head_dim ? tile_q_bits(a, tb.b, t, h, d) : uint16_t(0);
    }
    qt.set_keys(a, tb, context_len);
    if constexpr (kPipeline) {  // the first kStages - 1 groups into the ring
      ahead = qt.blk_lo + 16 * team;
#pragma unroll
      for (int st = 0; st < Ring::kStages - 1; ++st) {
        if (ahead < qt.blk_hi) copy_group(st, first_offset(st));
        cp_async_commit();
        ahead += kStride;
      }
      DCUKERN_TRACE_STAMP(5);
    }
    const float qs = q_prescale(a, kFp8 ? a.k_scale : 1.f);  // kFp8Rescale goes on S (f16 q keeps its range)
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = tid | j * kThreads;
      const int d = i % kDim;
      q_slice(kSplit > 1 ? d / kWarpDim : 0)[i / kDim][kSplit > 1 ? d % kWarpDim : d] = q_value(a, x[j]) * qs;
    }
  }
  const TileRow row = qt.row(g);  // this lane's query row (rows >= qt.rows have an empty range)
  __syncthreads();
  // Q fragments (row g: hi; row g + 8: lo), in shared memory (read once per k-step; registers go to
  // the K/V loads in flight): k-step s, lane (g, c) holds elements Map::q_elem(c, s, r, e) (words r = 0,
  // 1; halves e) as the A operand's words {hi r0, lo r0, hi r1, lo r1}.
  for (int i = static_cast<int>(threadIdx.x); i < kSplit * kSteps * 32; i += kThreads) {
    // h: the half of the head dim the fragment is for. (The kSplit == 1 forms are the same values, written
    // as the one-warp kernels had them: their code stays what was measured.)
    const int h = kSplit > 1 ? i / (kSteps * 32) : 0, s = kSplit > 1 ? i / 32 % kSteps : i / 32;
    const int qg = (i % 32) / 4, qc = i % 4;
    uint32_t w[4];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      uint16_t hi[2], lo[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float x = q_slice(h)[qg][Map::q_elem(qc, s, r, e)];
        hi[e] = to_mma<MT>(x);
        lo[e] = to_mma<MT>(x - from_mma<MT>(hi[e]));
      }
      w[r] = pack2(hi[0], hi[1]);
      w[2 + r] = pack2(lo[0], lo[1]);
    }
    s_q[h][s][i % 32] = make_uint4(w[0], w[2], w[1], w[3]);  // the A operand's order: (g, hi), (g + 8, lo), ...
  }
  __syncthreads();  // s_q complete; s_qf free again
  DCUKERN_TRACE_STAMP(2);

  // O^T accumulators: m-tile u holds d = Map::o_elem(g, u, 0) ([0], [1]) and Map::o_elem(g, u, 1) ([2], [3])
  // of query rows 2c ([0], [2]) and 2c + 1 ([1], [3]).
  float o[kSteps][4];
#pragma unroll
  for (int u = 0; u < kSteps; ++u) o[u][0] = o[u][1] = o[u][2] = o[u][3] = 0.f;
  // Row g: running max (base 2), this lane's share of the sum of the rounded P (normalises o) and of the
  // exact one (the LSE).
  float m = neg_inf(), l = 0.f, le = 0.f;

  // A group: 16 keys from `base`. Lane i holds the pool offset of key base + i % 16 (-1 past the block's
  // keys); every lane takes the offsets of its keys from those lanes (K: keys g and g + 8; V: keys 2c,
  // 2c + 1, 2c + 8, 2c + 9, v_key(0..3)).
  struct Group {
    int64_t base, my_off;
    KvVec<KVT> k[2][kKVecs], v[4][kVVecs];
  };
  auto v_key = [&](int r) { return 2 * c + (r & 1) + 8 * (r >> 1); };
  // A team's warps add their halves of S (each lane's hi and lo rows summed first): both get the same
  // bits (the sum is commutative), so both run the same softmax. One barrier of the team's threads a
  // group; the parity's buffer is free again once the partner has passed the next group's barrier.
  int parity = 0;
  auto sum_team_halves = [&](float (&sc)[2][4]) {
    float part[4];
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) part[2 * t + e] = sc[t][e] + sc[t][2 + e];
    float(&mine)[4] = s_s[team][parity][half][lane];
    float(&other)[4] = s_s[team][parity][half ^ 1][lane];
#pragma unroll
    for (int j = 0; j < 4; ++j) mine[j] = part[j];
    named_barrier(1 + team, 32 * kSplit);
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) sc[t][e] = part[2 * t + e] + other[2 * t + e], sc[t][2 + e] = 0.f;
    parity ^= 1;
  };
  auto load_v = [&](Group& gr) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t off = __shfl_sync(0xffffffffu, gr.my_off, v_key(r));
#pragma unroll
      for (int i = 0; i < kVVecs; ++i) {
        if (off >= 0 && Map::v_base(g) + Map::kVStride * i < a.head_dim)
          gr.v[r][i].load(a.v, off + Map::v_base(g) + Map::kVStride * i);
        else gr.v[r][i].zero();
      }
    }
  };
  // Issues the group's loads: K, and V too up to head_dim 128 (at 256 V waits for S: K's registers).
  auto start_group = [&](Group& gr, int64_t base, int64_t my_off) {
    gr.base = base;
    gr.my_off = my_off;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int64_t off = __shfl_sync(0xffffffffu, gr.my_off, 8 * t + g);
#pragma unroll
      for (int i = 0; i < kKVecs; ++i) {
        if (off >= 0 && Map::k_base(c) + Map::kKStride * i < a.head_dim)
          gr.k[t][i].load(a.k, off + Map::k_base(c) + Map::kKStride * i);
        else gr.k[t][i].zero();
      }
    }
    if constexpr (kWarpDim <= 128) load_v(gr);
  };
  // S, the online softmax and O^T += V^T P^T for one group. fetch(gr, part, i) brings the parts of the
  // group that are not in registers yet, just before their use: K vector i (both keys) before the two
  // k-steps that read it, all of V after S (K's registers are free then), V vector i (the 4 keys) before
  // the 4 m-tiles that read it. The register path fetches V late above head_dim 128; the ring fetches
  // per vector above head_dim 128 (8 or 16 registers live instead of 64).
  auto finish_group = [&](Group& gr, auto&& fetch) {
    // S = Q K^T for the two 8-key tiles; this lane gets row g, keys 8t + 2c + {0, 1}: the A operand's rows
    // g hold q's hi part and rows g + 8 its lo part, so the lane's two accumulator rows sum to the dot.
    float sc[2][4] = {};
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (s % 2 == 0) fetch(gr, Fetch::k_vec, s / 2);
      const uint4 qf = s_q[half][s][lane];
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        uint32_t b0, b1;
        quad_of_key(gr.k[t][s / 2], s % 2, b0, b1);
        mma_16816<MT>(sc[t], qf.x, qf.y, qf.z, qf.w, b0, b1);  // rows g: q's hi; rows g + 8: its lo
      }
    }
    if constexpr (kSplit > 1) sum_team_halves(sc);
    if constexpr (kWarpDim > 128) fetch(gr, Fetch::v_all, 0);
    // Online softmax for row g over the 16 keys (the 4 lanes of a row share max and rescale). The soft
    // cap is one warp-uniform branch over the group's 4 logits (not one per logit: the math on either
    // side of it schedules as one block).
    float x[2][2], mx = m;
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float hi_lo = sc[t][e] + sc[t][2 + e];
        x[t][e] = kFp8 ? hi_lo * kFp8Rescale : hi_lo;
      }
    if (a.soft_cap > 0.f)
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) x[t][e] = capped_logit(a, x[t][e]);
    // ALiBi and the row's key range (placed_logit's), with the keys counted from the group's first: the
    // range clamped to [0, 16] once, then 32-bit compares per logit.
    if (a.alibi) {
      const float from_pos = static_cast<float>(gr.base - row.pos);
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) x[t][e] += row.alibi * (from_pos + static_cast<float>(8 * t + 2 * c + e));
    }
    auto clamp_to_group = [](int64_t k) { return k < 0 ? 0 : k > 16 ? 16 : static_cast<int>(k); };
    const int lo = clamp_to_group(row.lo - gr.base), hi = clamp_to_group(row.hi - gr.base);
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = 8 * t + 2 * c + e;
        x[t][e] = key >= lo && key < hi ? x[t][e] : neg_inf();
        mx = x[t][e] > mx ? x[t][e] : mx;
      }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float ref = mx > neg_inf() ? mx : 0.f;
    const float corr = device_exp2_ftz(m - ref);  // (weights relative to the row's max: fastmath.hpp)
    // O^T needs rescaling only where a row's max moved up from a finite value (o is zero until a row has
    // a key): a warp-uniform test, so most groups after a row's first few skip the multiplies. (Measured
    // on the H200 against rescaling every group: 0.97-1.07x the time, page size 16 grid.)
    const bool rescale = __any_sync(0xffffffffu, m > neg_inf() && mx > m);
    m = mx;
    l *= corr, le *= corr;
    uint32_t pb[2];
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      uint16_t p[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float pe = device_exp2_ftz(x[t][e] - ref);
        p[e] = to_mma<MT>(pe);
        l += from_mma<MT>(p[e]);
        le += pe;
      }
      pb[t] = pack2(p[0], p[1]);
    }
    // O^T rows of query rows 2c and 2c + 1 rescale by those rows' factors (held by lanes 8c and 8c + 4).
    if (rescale) {
      const float corr0 = __shfl_sync(0xffffffffu, corr, 8 * c), corr1 = __shfl_sync(0xffffffffu, corr, 8 * c + 4);
#pragma unroll
      for (int u = 0; u < kSteps; ++u) {
        o[u][0] *= corr0, o[u][2] *= corr0;
        o[u][1] *= corr1, o[u][3] *= corr1;
      }
    }
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      const int e = (2 * u) % 8, i = (2 * u) / 8;
      if (e == 0) fetch(gr, Fetch::v_vec, i);
      uint32_t a0, a1, a2, a3;
      pairs_across_keys(gr.v[0][i], gr.v[1][i], e, a0, a1);
      pairs_across_keys(gr.v[2][i], gr.v[3][i], e, a2, a3);
      mma_16816<MT>(o[u], a0, a1, a2, a3, pb[0], pb[1]);
    }
  };

  // The warp's groups (64-bit positions: no wrap near 2^31).
  if constexpr (kPipeline) {
    // The lane's fragment vectors of the group in stage `st` (the same elements start_group and load_v
    // load): K's (keys g and g + 8, chunks c + 4 i), and V's (keys v_key(r) = 2 c ^ ((r & 1) + 8 (r >> 1)),
    // chunks g + 8 i), each the lane's offset XOR a compile-time one.
    const int k_lane = Ring::k_offset(0, g, Map::k_elem(c, 0) / 8);
    const int v_lane = Ring::v_offset(0, 2 * c, Map::v_elem(g, 0) / 8);
    auto read_k = [&](Group& gr, int st, int i) {
      const unsigned char* stage = ring + st * Ring::kStageBytes;
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const int other = Ring::k_offset(0, 8 * t, Map::k_elem(0, i) / 8);
        gr.k[t][i].load_shared(stage + (k_lane ^ other));
      }
    };
    auto read_v = [&](Group& gr, int st, int i) {
      const unsigned char* stage = ring + st * Ring::kStageBytes;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int other = Ring::v_offset(0, (r & 1) + 8 * (r >> 1), Map::v_elem(0, i) / 8) ^ Ring::kMatrixBytes;
        gr.v[r][i].load_shared(stage + (v_lane ^ other));
      }
    };
    // Groups kStages - 1 ahead of the one being computed are in flight; each iteration refills the stage
    // the previous one read.
    int64_t next_off = first_offset(Ring::kStages - 1);
    int32_t after_entries = table_entry(ahead + kStride);
    int st = 0;
    int64_t base = qt.blk_lo + 16 * team;  // (after the loop: the team's first position past the block)
    for (; base < qt.blk_hi; base += kStride) {
      __syncwarp();  // the lanes' reads of the stage refilled now are done
      if (ahead < qt.blk_hi) copy_group(st == 0 ? Ring::kStages - 1 : st - 1, next_off);
      cp_async_commit();
      ahead += kStride;
      next_off = key_offset_from(ahead, after_entries);
      after_entries = table_entry(ahead + kStride);
      cp_async_wait<Ring::kStages - 1>();
      __syncwarp();  // the group's copies by every lane are visible
      Group cur;
      cur.base = base, cur.my_off = -1;  // (the ring's groups need no offsets)
      if constexpr (kWarpDim <= 128) {  // the whole group at once (as measured at 1a943c1)
#pragma unroll
        for (int i = 0; i < kKVecs; ++i) read_k(cur, st, i);
#pragma unroll
        for (int i = 0; i < kVVecs; ++i) read_v(cur, st, i);
      }
      finish_group(cur, [&](Group& gr, Fetch part, int i) {
        if constexpr (kWarpDim > 128) {
          if (part == Fetch::k_vec) read_k(gr, st, i);
          if (part == Fetch::v_vec) read_v(gr, st, i);
        }
      });
      st = st + 1 == Ring::kStages ? 0 : st + 1;
    }
    // A team with one group fewer than team 0 passes its barrier once more, so that every warp has passed
    // as many barriers at the block's next one. The hardware needs nothing here (each team's barrier is its
    // own), but compute-sanitizer racecheck otherwise reports the epilogue's shared memory as racing, as it
    // does for a small kernel with that barrier pattern and no race
    // (capabilities/evidence/attention-sm_90-racecheck-barriers.json).
    // (Team 0 ran one group more where its group at the same step still starts inside the block.)
    if constexpr (kSplit > 1)
      if (base - 16 * team < qt.blk_hi) named_barrier(1 + team, 32 * kSplit);
    cp_async_wait<0>();
    __syncthreads();  // every warp is done with its ring: s_acc takes the space
    DCUKERN_TRACE_STAMP(3);
    // Unsplit calls let the next kernel launch once every block is past its keys: its blocks take the SMs
    // that the first finished blocks leave and wait for this kernel's end (a block's epilogue is about
    // 2 us on the H200), instead of launching after it.
    if (!a.part_o) grid_dependents_launch();
  } else {
    int64_t next_off = first_offset(0);
    for (int64_t base = qt.blk_lo + 16 * team; base < qt.blk_hi; base += kStride) {
      Group cur;
      start_group(cur, base, next_off);
      next_off = key_offset(base + kStride);
      finish_group(cur, [&](Group& gr, Fetch part, int) {
        if (part == Fetch::v_all) load_v(gr);
      });
    }
  }

  // Row sums over the row's 4 lanes; per-warp states to shared memory.
#pragma unroll
  for (int lanes = 1; lanes <= 2; lanes *= 2) {
    l += __shfl_xor_sync(0xffffffffu, l, lanes);
    le += __shfl_xor_sync(0xffffffffu, le, lanes);
  }
  if (c == 0 && half == 0) s_m[g][team] = m, s_l[g][team] = l, s_le[g][team] = le;  // (the team's are equal)
#pragma unroll
  for (int u = 0; u < kSteps; ++u) {
    const int d = kWarpDim * half + Map::o_elem(g, u, 0);
    s_acc[team][2 * c][d] = o[u][0];
    s_acc[team][2 * c + 1][d] = o[u][1];
    s_acc[team][2 * c][d + 1] = o[u][2];
    s_acc[team][2 * c + 1][d + 1] = o[u][3];
  }
  __syncthreads();
  DCUKERN_TRACE_STAMP(6);
  finish_tile<kMmaTile, kTeams, kDim, kThreads>(a, tb, qt, s_acc, s_m, s_l, s_le, kFp8 ? a.v_scale * kFp8Rescale : 1.f);
  DCUKERN_TRACE_BLOCK_END(4);
#else
  unreachable_on_this_target();
#endif
}

}  // namespace dcukern::attn_detail
