// Attention validation: every invalid input gets a readable error naming the problem; the split-KV plan
// and its workspace bound; row selection by target, workspace, contract and overrides.
#include <doctest/doctest.h>

#include <string>

#include "capabilities/targets.hpp"
#include "dcukern/attention/call_plan.hpp"
#include "dcukern/attention/select.hpp"
#include "misaligned.hpp"

using namespace dcukern;

namespace {
constexpr int B = 2, T = 1, HQ = 8, HKV = 2, D = 128, PS = 16, NP = 6, MP = 3;
// Never read (misaligned.hpp); the tables are, by validate_attention_tables.
uint16_t* const q = fake_view<uint16_t>(1);
uint16_t* const o = fake_view<uint16_t>(2);
uint16_t* const kpool = fake_view<uint16_t>(3);
uint16_t* const vpool = fake_view<uint16_t>(4);
float* const lse = fake_view<float>(5);
int32_t table[B * MP] = {0, 1, 2, 3, 4, 5};
int32_t ctx[B] = {40, 7};

AttentionParams valid() {
  AttentionParams p;
  p.batch = B, p.q_tokens = T, p.num_q_heads = HQ, p.num_kv_heads = HKV, p.head_dim = D;
  p.q = {q, DType::bf16, int64_t(T) * HQ * D, int64_t(HQ) * D, D};
  p.o = {o, DType::bf16, int64_t(T) * HQ * D, int64_t(HQ) * D, D};
  p.kv = {kpool, vpool, DType::bf16, NP, PS, int64_t(PS) * HKV * D, int64_t(HKV) * D, D};
  p.block_table = table, p.max_pages = MP, p.block_table_stride = MP;
  p.context_lens = ctx;
  p.lse = lse;
  return p;
}
void expect(const AttentionParams& p, StatusCode code, const char* fragment) {
  AttentionCall c;
  const Status s = validate_attention(p, &c);
  INFO(s.to_string() << "  (expected: " << fragment << ")");
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("attention: a valid call passes, in both pool layouts") {
  AttentionCall c;
  CHECK(validate_attention(valid(), &c).ok());
  CHECK(c.group == 4);
  CHECK(c.max_context == MP * PS);
  AttentionParams p = valid();  // head-major [pages, Hkv, page_size, D]
  p.kv.page_stride = int64_t(HKV) * PS * D, p.kv.head_stride = int64_t(PS) * D, p.kv.token_stride = D;
  CHECK(validate_attention(p, &c).ok());
  p.kv.dtype = DType::fp8_e4m3, p.kv.k_scale = 0.5f, p.kv.v_scale = 2.f;
  CHECK(validate_attention(p, &c).ok());
  p = valid();
  p.kv.page_size = 544, p.kv.page_stride = 544LL * HKV * D;  // non power of two
  CHECK(validate_attention(p, &c).ok());
  p = valid();
  p.q_tokens = 8, p.batch = 1;
  p.q.batch_stride = p.o.batch_stride = 8LL * HQ * D;
  CHECK(validate_attention(p, &c).ok());
}

TEST_CASE("attention: every invalid input is rejected with a readable message") {
  AttentionParams p;
  p = valid(); p.q.data = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for q");
  p = valid(); p.o.data = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for o");
  p = valid(); p.kv.k = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for k pool");
  p = valid(); p.kv.v = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for v pool");
  p = valid(); p.block_table = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for block_table");
  p = valid(); p.context_lens = nullptr; expect(p, StatusCode::invalid_argument, "null pointer for context_lens");
  p = valid(); p.batch = 0; expect(p, StatusCode::invalid_argument, "batch = 0");
  p = valid(); p.q_tokens = 9; expect(p, StatusCode::invalid_argument, "q_tokens = 9");
  p = valid(); p.num_q_heads = 2 * kAttnMaxHeads; p.num_kv_heads = 1;
  expect(p, StatusCode::invalid_argument, "query heads = 131072 above 65536");
  p = valid(); p.q_tokens = 0; expect(p, StatusCode::invalid_argument, "q_tokens = 0");
  // B * T * Hq query rows above 2^31 - 1 (the grids count them): rejected here, not only at launch, so the
  // workspace query and the plan refuse the call too. 2^31 - 1 rows exactly pass this check.
  p = valid(); p.batch = 1 << 28, p.q_tokens = 8, p.num_q_heads = p.num_kv_heads = 1;
  expect(p, StatusCode::unsupported, "query heads = 2147483648 above 2^31 - 1 query rows");
  CHECK(attention_workspace_bytes(p, 132) == 0);
  p.batch = (1 << 28) - 1, p.q_tokens = 8;
  AttentionCall rows_ok;
  CHECK(validate_attention(p, &rows_ok).message().find("query rows") == std::string::npos);
  p = valid(); p.num_q_heads = 7; expect(p, StatusCode::invalid_argument, "multiple of KV heads");
  p = valid(); p.num_kv_heads = 0; expect(p, StatusCode::invalid_argument, "multiple of KV heads");
  p = valid(); p.num_q_heads = 1; expect(p, StatusCode::invalid_argument, "multiple of KV heads");
  p = valid(); p.head_dim = 512; expect(p, StatusCode::unsupported, "head_dim 512");
  p = valid(); p.head_dim = 0; expect(p, StatusCode::unsupported, "head_dim 0");
  p = valid(); p.q.dtype = DType::f32; expect(p, StatusCode::unsupported, "q dtype f32");
  p = valid(); p.o.dtype = DType::f16; expect(p, StatusCode::invalid_argument, "dtype mismatch");
  p = valid(); p.kv.dtype = DType::f32; expect(p, StatusCode::unsupported, "KV dtype f32");
  p = valid(); p.kv.dtype = DType::fp8_e4m3; p.kv.k_scale = 0.f; expect(p, StatusCode::invalid_argument, "k_scale");
  p = valid(); p.kv.dtype = DType::fp8_e4m3; p.kv.v_scale = std::nanf("");
  expect(p, StatusCode::invalid_argument, "v_scale");
  p = valid(); p.kv.page_size = 0; expect(p, StatusCode::invalid_argument, "page_size = 0");
  p = valid(); p.kv.num_pages = 0; expect(p, StatusCode::invalid_argument, "0 pages");
  p = valid(); p.max_pages = 0; expect(p, StatusCode::invalid_argument, "max_pages = 0");
  p = valid(); p.block_table_stride = 2; expect(p, StatusCode::invalid_argument, "block_table row stride 2");
  p = valid(); p.max_pages = 1 << 20; p.block_table_stride = 1 << 20; p.kv.page_size = 4096;
  p.kv.page_stride = 4096LL * HKV * D; expect(p, StatusCode::invalid_argument, "exceeds 2^31");
  p = valid(); p.max_context_len = MP * PS + 1; expect(p, StatusCode::invalid_argument, "max_context_len");
  p = valid(); p.max_context_len = -1; expect(p, StatusCode::invalid_argument, "max_context_len");
  p = valid(); p.kv.token_stride = D - 1; expect(p, StatusCode::invalid_argument, "pool strides overlap");
  p = valid(); p.kv.page_stride = int64_t(PS) * HKV * D - 1;
  expect(p, StatusCode::invalid_argument, "pool strides overlap");
  p = valid(); p.kv.head_stride = -D; expect(p, StatusCode::invalid_argument, "negative pool stride");
  p = valid(); p.q.head_stride = D - 1; expect(p, StatusCode::invalid_argument, "q: head stride below the head size");
  p = valid(); p.q.batch_stride = -1; expect(p, StatusCode::invalid_argument, "q: negative stride");
  p = valid(); p.o.batch_stride = D; expect(p, StatusCode::invalid_argument, "o: batch stride");
  p = valid(); p.q_tokens = 2; p.o.token_stride = D; expect(p, StatusCode::invalid_argument, "o: token stride");
  // Outputs overlapping any other view, by a single element or in full.
  AttentionCall c;
  constexpr int64_t kOut = int64_t(B) * T * HQ * D, kPool = int64_t(NP) * PS * HKV * D;
  p = valid(); p.o.data = q; expect(p, StatusCode::invalid_argument, "o overlaps q");
  p = valid(); p.o.data = q + kOut - 1; expect(p, StatusCode::invalid_argument, "o overlaps q");
  p = valid(); p.o.data = q + kOut; CHECK(validate_attention(p, &c).ok());
  p = valid(); p.o.data = vpool + kPool - 1; expect(p, StatusCode::invalid_argument, "o overlaps v pool");
  p = valid(); p.o.data = kpool + D; expect(p, StatusCode::invalid_argument, "o overlaps k pool");
  p = valid(); p.lse = reinterpret_cast<float*>(o) + 8; expect(p, StatusCode::invalid_argument, "o overlaps lse");
  p = valid(); p.lse = reinterpret_cast<float*>(table);
  expect(p, StatusCode::invalid_argument, "lse overlaps block_table");
  p = valid(); p.lse = reinterpret_cast<float*>(ctx);
  expect(p, StatusCode::invalid_argument, "lse overlaps context_lens");
  p = valid(); p.sinks = lse + B * T * HQ - 1; expect(p, StatusCode::invalid_argument, "lse overlaps sinks");
  p = valid(); p.sinks = lse + B * T * HQ; CHECK(validate_attention(p, &c).ok());
  // Reads may share memory: K and V as halves of one interleaved pool.
  p = valid(); p.kv.v = kpool + D; p.kv.head_stride = 2 * D, p.kv.token_stride = 2 * HKV * D;
  p.kv.page_stride = int64_t(PS) * 2 * HKV * D; CHECK(validate_attention(p, &c).ok());
  p = valid(); p.scale = -1.f; expect(p, StatusCode::invalid_argument, "scale");
  p = valid(); p.scale = INFINITY; expect(p, StatusCode::invalid_argument, "scale");
  p = valid(); p.soft_cap = -2.f; expect(p, StatusCode::invalid_argument, "soft_cap");
  p = valid(); p.window_left = -2; expect(p, StatusCode::invalid_argument, "window_left = -2");
  // Pointers not aligned to their elements.
  p = valid(); p.q.data = moved_by_bytes(q, 1); expect(p, StatusCode::invalid_argument, "q is not aligned");
  p = valid(); p.lse = moved_by_bytes(lse, 2); expect(p, StatusCode::invalid_argument, "lse is not aligned");
  p = valid(); p.context_lens = moved_by_bytes(ctx, 1);
  expect(p, StatusCode::invalid_argument, "context_lens is not aligned");
  p = valid(); p.kv.dtype = DType::fp8_e4m3, p.kv.k = moved_by_bytes(kpool, 1);  // fp8: any byte
  AttentionCall fp8_call;
  CHECK(validate_attention(p, &fp8_call).ok());
}

TEST_CASE("attention: split-KV plan and workspace bound") {
  AttentionCall c;
  AttentionParams p = valid();
  REQUIRE(validate_attention(p, &c).ok());
  AttentionPlan plan;
  // Enough rows to fill 4 CUs x 4 blocks (B*T*Hq = 16): one chunk.
  REQUIRE(plan_attention(c, 4, {}, &plan).ok());
  CHECK(plan.num_chunks == 1);
  CHECK(plan.rows == 16);
  // One long sequence on 132 CUs: split, chunks >= kAttnMinChunk, covering the bound.
  c.batch = 1, c.num_q_heads = 8, c.max_context = 32768;
  REQUIRE(plan_attention(c, 132, {}, &plan).ok());
  CHECK(plan.num_chunks > 1);
  CHECK(plan.chunk_size >= kAttnMinChunk);
  CHECK(plan.chunk_size * plan.num_chunks >= 32768);
  CHECK(plan.chunk_size * (plan.num_chunks - 1) < 32768);
  // Fixed chunk size: the partition depends only on the chunk size and the bound.
  AttentionPlanOptions fixed;
  fixed.fixed_chunk_size = 1000;
  REQUIRE(plan_attention(c, 132, fixed, &plan).ok());
  CHECK(plan.chunk_size == 1000);
  CHECK(plan.num_chunks == 33);
  CHECK(attention_plan_workspace_bytes(plan, 128) == size_t(8) * 33 * 129 * 4);
  c.num_q_heads = 1 << 20, c.batch = 1 << 10;
  fixed.fixed_chunk_size = 1;
  CHECK(plan_attention(c, 132, fixed, &plan).code() == StatusCode::unsupported);
  fixed.fixed_chunk_size = -3;
  CHECK(plan_attention(c, 132, fixed, &plan).code() == StatusCode::invalid_argument);
  {  // Any chunk size above the context is one chunk (no overflow at the largest).
    AttentionCall one = c;
    one.batch = 1, one.num_q_heads = 8, one.max_context = 32768;
    fixed.fixed_chunk_size = INT64_MAX;
    REQUIRE(plan_attention(one, 132, fixed, &plan).ok());
    CHECK(plan.num_chunks == 1);
    CHECK(plan.chunk_size == INT64_MAX);
  }
  {  // At most kAttnMaxChunks chunks a row, however few the rows.
    AttentionCall one = c;
    one.batch = 1, one.num_q_heads = one.num_kv_heads, one.group = 1, one.max_context = kAttnMaxChunks;
    fixed.fixed_chunk_size = 1;
    CHECK(plan_attention(one, 132, fixed, &plan).ok());
    one.max_context = kAttnMaxChunks + 1;
    const Status s = plan_attention(one, 132, fixed, &plan);
    CHECK(s.code() == StatusCode::unsupported);
    CHECK(s.message().find("chunks a row") != std::string::npos);
  }
  // blocks_per_cu: more blocks aimed at, more chunks (never below kAttnMinChunk positions); < 0 rejected.
  {
    AttentionCall one = c;
    one.batch = 1, one.num_q_heads = 8, one.max_context = 1 << 20;
    AttentionPlan base, dense;
    AttentionPlanOptions more;
    more.blocks_per_cu = 16;
    REQUIRE(plan_attention(one, 132, {}, &base).ok());
    REQUIRE(plan_attention(one, 132, more, &dense).ok());
    CHECK(dense.num_chunks > base.num_chunks);
    CHECK(dense.chunk_size >= kAttnMinChunk);
    more.blocks_per_cu = -1;
    CHECK(plan_attention(one, 132, more, &dense).code() == StatusCode::invalid_argument);
  }
  // The grouped kernels cap the query tile at 4 rows above head_dim 128; the tensor-core kernels never.
  CHECK(attention_kernel_max_tile(AttentionKernel::grouped_split, 256) == 4);
  CHECK(attention_kernel_max_tile(AttentionKernel::grouped, 129) == 4);
  CHECK(attention_kernel_max_tile(AttentionKernel::grouped_split, 128) == 8);
  CHECK(attention_kernel_max_tile(AttentionKernel::mma_split, 256) == 8);
  // Each row's default block target stays within the one the workspace query assumes, so the default
  // workspace bounds every row's automatic plan.
  for (const auto& row : AttentionOp::rows())
    for (bool fp8 : {false, true})
      for (int d : {64, 96, 128, 200, 256}) {
        const AttentionBlockTarget t = attention_kernel_block_target(row.kernel, fp8, d);
        CHECK(t.blocks_per_cu >= 1);
        CHECK(t.blocks_per_cu <= kAttnBlocksPerCu);
        CHECK(t.one_wave == attention_kernel_is_pipeline(row.kernel));
      }
  CHECK(attention_kernel_block_target(AttentionKernel::mma_split_pipeline, false, 256).blocks_per_cu == 1);
  CHECK(attention_kernel_block_target(AttentionKernel::mma_split_pipeline, true, 256).blocks_per_cu == 2);
  CHECK(attention_kernel_block_target(AttentionKernel::mma_split_pipeline, false, 128).blocks_per_cu == 2);
  CHECK(attention_kernel_block_target(AttentionKernel::mma_split_pipeline, true, 128).blocks_per_cu == 2);
  CHECK(attention_kernel_block_target(AttentionKernel::mma_split, false, 128).blocks_per_cu == kAttnBlocksPerCu);
  // The shallow ring: fp8 at head_dim 65..128, pipelined row only, from two unsplit blocks per compute unit.
  constexpr AttentionKernel kPipe = AttentionKernel::mma_split_pipeline;
  CHECK(attention_shallow_ring(kPipe, true, 128, 64 * 8, 132));   // B = 64, 8 KV heads
  CHECK(attention_shallow_ring(kPipe, true, 72, 264, 132));
  CHECK_FALSE(attention_shallow_ring(kPipe, true, 128, 32 * 8, 132));  // B = 32: 256 < 264
  CHECK_FALSE(attention_shallow_ring(kPipe, false, 128, 1024, 132));   // bf16
  CHECK_FALSE(attention_shallow_ring(kPipe, true, 64, 1024, 132));
  CHECK_FALSE(attention_shallow_ring(kPipe, true, 256, 1024, 132));
  CHECK_FALSE(attention_shallow_ring(AttentionKernel::mma_split, true, 128, 1024, 132));
  // Above head_dim 128: fp8 where a block has at most kShallowWideMaxKeys keys.
  CHECK(attention_wide_shallow_ring(kPipe, true, 256, 128));
  CHECK(attention_wide_shallow_ring(kPipe, true, 136, kShallowWideMaxKeys));
  CHECK_FALSE(attention_wide_shallow_ring(kPipe, true, 256, kShallowWideMaxKeys + 1));
  CHECK_FALSE(attention_wide_shallow_ring(kPipe, true, 128, 128));   // the 128 bound: attention_shallow_ring
  CHECK_FALSE(attention_wide_shallow_ring(kPipe, false, 256, 128));  // bf16
  CHECK_FALSE(attention_wide_shallow_ring(AttentionKernel::mma_split, true, 256, 128));
  // The sliced merge: fewer rows than compute units, kSlicedMergeChunks chunks or more, 32-lane waves.
  CHECK(attention_sliced_merge(32, 32, 132, 32));  // B = 1, 32 query heads, context 32768
  CHECK(attention_sliced_merge(131, kSlicedMergeChunks, 132, 32));
  CHECK_FALSE(attention_sliced_merge(132, 32, 132, 32));  // as many rows as compute units
  CHECK_FALSE(attention_sliced_merge(32, kSlicedMergeChunks - 1, 132, 32));
  CHECK_FALSE(attention_sliced_merge(32, 32, 120, 64));  // wave64: the two merges would add in other orders
  // The merge lets the next kernel launch early where all its blocks fit at once (kMergeResidentBlocks a CU).
  CHECK(attention_merge_starts_next(32 * 4, 132));  // B = 1, 32 query rows, the sliced merge of head_dim 128
  CHECK(attention_merge_starts_next(int64_t(kMergeResidentBlocks) * 132, 132));
  CHECK_FALSE(attention_merge_starts_next(int64_t(kMergeResidentBlocks) * 132 + 1, 132));
  CHECK_FALSE(attention_merge_starts_next(64 * 32, 132));  // B = 64, 32 query heads: the row merge's 2048 blocks
  {
    // One long sequence, 8 KV heads of 4 query rows (8 blocks per chunk) on 132 CUs: one_wave never
    // launches more blocks than the target, nor fewer than half of it; otherwise the count rounds up.
    AttentionCall one = c;
    one.batch = 1, one.num_kv_heads = 8, one.num_q_heads = 32, one.group = 4, one.q_tokens = 1;
    one.max_context = 32768;
    for (int bpc : {1, 2, 4}) {
      AttentionPlanOptions o;
      o.blocks_per_cu = bpc;
      AttentionPlan down, up;
      REQUIRE(plan_attention(one, 132, o, &down, 8, true).ok());
      REQUIRE(plan_attention(one, 132, o, &up, 8, false).ok());
      CHECK(int64_t(down.num_chunks) * 8 <= int64_t(bpc) * 132);
      CHECK(int64_t(down.num_chunks) * 8 > int64_t(bpc) * 132 / 2);
      CHECK(up.num_chunks >= down.num_chunks);
    }
    // Whole 16-key groups (kAttnFineChunkGranule) fill every CU in one wave where 64-key chunks leave some
    // idle: 4 KV heads (4 blocks a chunk), 1 block a CU: 33 chunks of 1008 keys (132 blocks) against 32 of
    // 1024. The default workspace query (64-key chunks, 4 blocks a CU, rounded up) bounds such plans.
    {
      AttentionCall wide = one;
      wide.num_kv_heads = 4, wide.num_q_heads = 16;
      AttentionPlanOptions o;
      o.blocks_per_cu = 1;
      AttentionPlan fine, coarse;
      REQUIRE(plan_attention(wide, 132, o, &fine, 8, true, kAttnFineChunkGranule).ok());
      REQUIRE(plan_attention(wide, 132, o, &coarse, 8, true).ok());
      CHECK(fine.num_chunks == 33);
      CHECK(fine.chunk_size == 1008);
      CHECK(coarse.num_chunks == 32);
      CHECK(coarse.chunk_size == 1024);
      for (int heads : {1, 2, 4, 8, 64})
        for (int64_t context : {int64_t(1), int64_t(700), int64_t(4096), int64_t(32768), int64_t(100003),
                                int64_t(1) << 20}) {
          AttentionCall call = one;
          call.num_kv_heads = heads, call.num_q_heads = 4 * heads, call.max_context = context;
          AttentionPlan f, ws;
          REQUIRE(plan_attention(call, 132, o, &f, 8, true, kAttnFineChunkGranule).ok());
          REQUIRE(plan_attention(call, 132, {}, &ws).ok());
          CHECK(f.num_chunks <= ws.num_chunks);
          CHECK(f.chunk_size % kAttnFineChunkGranule == 0);
        }
    }
    // 8 sequences (64 blocks per chunk), 2 blocks per CU: 4 chunks (256 blocks) in one wave, 5 rounded up.
    one.batch = 8;
    AttentionPlanOptions o;
    o.blocks_per_cu = 2;
    AttentionPlan down, up;
    REQUIRE(plan_attention(one, 132, o, &down, 8, true).ok());
    REQUIRE(plan_attention(one, 132, o, &up, 8, false).ok());
    CHECK(down.num_chunks == 4);
    CHECK(up.num_chunks == 5);
  }
  // A row's smaller query-tile cap (attention_kernel_max_tile) never needs more chunks, so the default
  // workspace query bounds it: over batches, GQA groups, token counts, contexts and plan options.
  for (int batch : {1, 3, 64})
    for (int group : {1, 4, 5, 6, 8, 16})
      for (int tokens : {1, 3, 8})
        for (int64_t context : {1, 700, 32768, 1 << 20})
          for (int option = 0; option < 3; ++option) {
            AttentionCall call = c;
            call.batch = batch, call.num_kv_heads = 2, call.num_q_heads = 2 * group, call.group = group;
            call.q_tokens = tokens, call.max_context = context;
            AttentionPlanOptions o;
            o.force_split = option == 1;
            o.blocks_per_cu = option == 2 ? 64 : 0;
            AttentionPlan by8, by4;
            REQUIRE(plan_attention(call, 132, o, &by8).ok());
            REQUIRE(plan_attention(call, 132, o, &by4, 4).ok());
            CHECK(by4.num_chunks <= by8.num_chunks);
          }
  // force_split splits a short context too.
  c.batch = 64, c.num_q_heads = 32, c.max_context = 100;
  AttentionPlanOptions force;
  force.force_split = true;
  REQUIRE(plan_attention(c, 132, force, &plan).ok());
  CHECK(plan.num_chunks == 2);
  // The public query: the plan's bytes, 0 for an invalid call; independent of context_lens values.
  const size_t bytes = attention_workspace_bytes(p, 132);
  CHECK(bytes > 0);
  ctx[0] = 1;
  CHECK(attention_workspace_bytes(p, 132) == bytes);
  ctx[0] = 40;
  p.batch = 0;
  CHECK(attention_workspace_bytes(p, 132) == 0);
}

namespace {
// An override for one scope (undone even when a REQUIRE ends the test case early).
struct ScopedOverride {
  const char* id;
  bool force;
  ScopedOverride(const char* row, bool forced) : id(row), force(forced) {
    force ? Overrides::instance().force(id) : Overrides::instance().disable(id);
  }
  ~ScopedOverride() { force ? Overrides::instance().unforce(id) : Overrides::instance().enable(id); }
};
std::string chosen(const AttentionParams& p, bool workspace, const char* target) {
  const capabilities::AttentionRow* row = nullptr;
  AttentionCall c;
  Explanation why;
  const Status s = select_attention(p, workspace, *capabilities::find_target(target), nullptr, &row, &c, &why);
  INFO(why.to_string());
  REQUIRE(s.ok());
  return row->id;
}
}  // namespace

TEST_CASE("attention: selection by target, workspace, contract and overrides") {
  for (const auto& row : AttentionOp::rows()) {
    CHECK(row.evidence != nullptr);  // every row has device evidence
    CHECK(row.isa_needs == attention_kernel_isa(row.kernel));
    CHECK(row.kernel_symbol != nullptr);
    CHECK(!row.contract.describe().empty());
  }
  // Tensor-core rows on NVIDIA (the pipelined one, tuned for sm_90, there), the grouped rows elsewhere;
  // the split rows only with a workspace.
  CHECK(chosen(valid(), true, "sm_90") == "attention.mma_split.smem_pipeline");
  CHECK(chosen(valid(), true, "sm_80") == "attention.mma_split");
  CHECK(chosen(valid(), false, "sm_90") == "attention.mma");
  for (const char* t : {"gfx906", "gfx90a", "gfx1100", "gfx936"}) {
    CHECK(chosen(valid(), true, t) == "attention.grouped_split");
    CHECK(chosen(valid(), false, t) == "attention.grouped");
  }
  // A head_dim that is not a multiple of 8 leaves the 16-byte-load rows: the per-row rows take it.
  AttentionParams odd = valid();
  odd.head_dim = 100;
  CHECK(chosen(odd, true, "sm_90") == "attention.split_kv");
  CHECK(chosen(odd, false, "gfx90a") == "attention.row");
  {
    // The pipelined row is tuned for sm_90 (its ring needs sm_90's shared memory): forced or not, it takes
    // every head_dim there, and elsewhere the next row takes the call; forcing never opens an ISA need.
    ScopedOverride force("attention.mma_split.smem_pipeline", true);
    CHECK(chosen(valid(), true, "sm_90") == "attention.mma_split.smem_pipeline");
    AttentionParams wide = valid();
    wide.head_dim = 256;
    wide.q = {q, DType::bf16, int64_t(T) * HQ * 256, int64_t(HQ) * 256, 256};
    wide.o = {o, DType::bf16, int64_t(T) * HQ * 256, int64_t(HQ) * 256, 256};
    wide.kv = {kpool, vpool, DType::bf16, NP / 2, PS, int64_t(PS) * HKV * 256, int64_t(HKV) * 256, 256};
    CHECK(chosen(wide, true, "sm_90") == "attention.mma_split.smem_pipeline");
    CHECK(chosen(valid(), true, "sm_80") == "attention.mma_split");
    CHECK(chosen(valid(), true, "sm_89") == "attention.mma_split");
    CHECK(chosen(valid(), true, "gfx90a") == "attention.grouped_split");
  }
  // A disabled row is passed over (the next row in table order takes the call).
  {
    ScopedOverride disable_pipeline("attention.mma_split.smem_pipeline", false);
    CHECK(chosen(valid(), true, "sm_90") == "attention.mma_split");
    ScopedOverride disable("attention.mma_split", false);
    CHECK(chosen(valid(), true, "sm_90") == "attention.mma");
  }

  const TargetInfo& t = *capabilities::find_target("sm_90");
  const capabilities::AttentionRow* row = nullptr;
  AttentionCall c;
  // Pinned: the split row's contract rejects a call without a workspace, naming it.
  Status s = select_attention(valid(), false, t, "attention.split_kv", &row, &c);
  CHECK(s.message().find("workspace") != std::string::npos);
  CHECK(select_attention(valid(), false, t, "attention.row", &row, &c).ok());
  // The tensor-core rows are never taken where the ISA lacks mma.sync, even pinned.
  CHECK(!select_attention(valid(), true, *capabilities::find_target("gfx90a"), "attention.mma_split", &row, &c).ok());
  // Validation comes first: an invalid call never reaches selection.
  AttentionParams bad = valid();
  bad.head_dim = 300;
  CHECK(select_attention(bad, false, t, "attention.row", &row, &c).code() == StatusCode::unsupported);
  CHECK(select_attention(valid(), false, t, "attention.nope", &row, &c).code() == StatusCode::invalid_argument);
}

TEST_CASE("attention: the opt-in table check reports the first bad entry") {
  const AttentionParams p = valid();
  CHECK(validate_attention_tables(p, table, ctx).ok());
  int32_t bad_lens[B] = {40, 49};
  Status s = validate_attention_tables(p, table, bad_lens);
  CHECK(s.message().find("context_lens[1] = 49") != std::string::npos);
  int32_t bad_table[B * MP] = {0, 1, 2, 3, 6, 5};  // sequence 1 uses only page 0 of its row: entry 4 unused
  CHECK(validate_attention_tables(p, bad_table, ctx).ok());
  bad_table[3] = -1;
  s = validate_attention_tables(p, bad_table, ctx);
  CHECK(s.message().find("block_table[1, 0] = -1") != std::string::npos);
  bad_table[3] = 3, bad_table[2] = 6;
  s = validate_attention_tables(p, bad_table, ctx);
  CHECK(s.message().find("block_table[0, 2] = 6") != std::string::npos);
}

TEST_CASE("attention: the device table check's word reads as the first bad entry (attention_table_verdict)") {
  const AttentionParams p = valid();
  CHECK(attention_table_verdict(p, kAttnTablesOk).ok());
  Status s = attention_table_verdict(p, uint64_t(1) << 32);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(s.message().find("context_lens[1] out of range") != std::string::npos);
  s = attention_table_verdict(p, uint64_t(0) << 32 | 3);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(s.message().find("block_table[0, 2] outside the pool") != std::string::npos);
}

TEST_CASE("attention call plan: the pipelined row's ring depth and its plan (sm_90's residency, 132 CUs)") {
  constexpr AttentionKernel kPipe = AttentionKernel::mma_split_pipeline;
  // Resident blocks an SM as the H200 reports them: 2 for the 6-stage ring, 1 at head_dim 256 with f16 / bf16
  // KV (8-warp blocks, 192 KiB of ring); the shallow ring 4 at head_dim 128, 2 at 256 (8-warp blocks).
  auto call_of = [](int hq, int hkv, int d, DType kv, int batch, int64_t context) {
    AttentionCall c{};
    c.q_dtype = DType::bf16, c.kv_dtype = kv, c.head_dim = d, c.group = hq / hkv, c.q_tokens = 1, c.page_size = 16;
    c.batch = batch, c.num_q_heads = hq, c.num_kv_heads = hkv, c.max_context = context, c.has_workspace = true;
    return c;
  };
  auto plan_of = [](const AttentionCall& c, int64_t fixed_chunk = 0, int blocks_per_cu = 0) {
    AttentionPlanOptions opt;
    opt.fixed_chunk_size = fixed_chunk;
    opt.blocks_per_cu = blocks_per_cu;
    auto resident = [&](bool shallow) {
      if (shallow) return c.head_dim <= 128 ? 4 : 2;
      return c.head_dim > 128 && c.kv_dtype != DType::fp8_e4m3 ? 1 : 2;
    };
    AttentionCallPlan cp;
    REQUIRE(plan_attention_call(kPipe, true, c, 132, opt, resident, &cp).ok());
    return cp;
  };
  const DType fp8 = DType::fp8_e4m3;
  // fp8 at head_dim 256 (24/4/256, one 8-row tile a KV head): the shallow ring where a block has <= 256 keys.
  AttentionCallPlan cp = plan_of(call_of(24, 4, 256, fp8, 1, 512));  // 4 chunks of 128
  CHECK(cp.shallow_ring);
  CHECK(cp.split);
  CHECK(cp.plan.chunk_size == 128);
  cp = plan_of(call_of(24, 4, 256, fp8, 32, 512));  // 2 chunks of 256
  CHECK(cp.shallow_ring);
  CHECK(cp.plan.num_chunks == 2);
  cp = plan_of(call_of(24, 4, 256, fp8, 1, 32768));  // 64 chunks of 512
  CHECK_FALSE(cp.shallow_ring);
  CHECK(cp.plan.chunk_size == 512);
  cp = plan_of(call_of(24, 4, 256, fp8, 64, 512));  // unsplit, 512 keys a block
  CHECK_FALSE(cp.shallow_ring);
  CHECK_FALSE(cp.split);
  CHECK_FALSE(plan_of(call_of(24, 4, 256, DType::bf16, 1, 512)).shallow_ring);
  // A fixed chunk size alone decides at head_dim 256, whatever the batch and context.
  for (int batch : {1, 64})
    for (int64_t context : {int64_t(300), int64_t(32768)}) {
      CHECK(plan_of(call_of(24, 4, 256, fp8, batch, context), 256).shallow_ring);
      CHECK_FALSE(plan_of(call_of(24, 4, 256, fp8, batch, context), 1024).shallow_ring);
    }
  // fp8 at head_dim 128 (32/8/128): the shallow ring from two unsplit blocks a CU, its plan aimed at its
  // residency of 4 (B = 33: 264 blocks a chunk, 2 chunks; B = 64: 512 blocks, unsplit).
  cp = plan_of(call_of(32, 8, 128, fp8, 33, 4096));
  CHECK(cp.shallow_ring);
  CHECK(cp.plan.num_chunks == 2);
  cp = plan_of(call_of(32, 8, 128, fp8, 64, 4096));
  CHECK(cp.shallow_ring);
  CHECK_FALSE(cp.split);
  // bf16 at head_dim 256: one block a CU, so 16-key chunk sizes: 33 chunks of 1008 at B = 1, context
  // 32768; an explicit block target keeps the 64-key ones.
  CHECK(plan_of(call_of(24, 4, 256, DType::bf16, 1, 32768)).plan.num_chunks == 33);
  CHECK(plan_of(call_of(24, 4, 256, DType::bf16, 1, 32768)).plan.chunk_size == 1008);
  CHECK(plan_of(call_of(24, 4, 256, DType::bf16, 1, 32768), 0, 1).plan.chunk_size == 1024);
  CHECK(plan_of(call_of(32, 8, 128, DType::bf16, 1, 32768)).plan.chunk_size == 1024);  // two blocks a CU
  cp = plan_of(call_of(32, 8, 128, fp8, 8, 32768));  // 64 blocks a chunk: 4 chunks on the 6-stage ring
  CHECK_FALSE(cp.shallow_ring);
  CHECK(cp.plan.num_chunks == 4);
  // Rows without a workspace: one chunk, no merge.
  AttentionCallPlan none;
  auto no_resident = [](bool) { return 0; };
  REQUIRE(plan_attention_call(AttentionKernel::mma, false, call_of(32, 8, 128, fp8, 1, 32768), 132, {}, no_resident,
                              &none)
              .ok());
  CHECK(none.plan.num_chunks == 1);
  CHECK_FALSE(none.split);
  CHECK_FALSE(none.shallow_ring);
}
