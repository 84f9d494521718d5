// Sampling device tests at the edges of the contract, against the host reference (ref/sampling.hpp): greedy =
// argmax (lowest index on ties; -0 and +0 tie); invalid rows flagged; k > V; V of odd sizes up to 262144,
// B = 1024, -inf entries, per-row device parameters; same seed -> same bits; offsets -> independent streams;
// graph replay advances the device offset and matches eager calls; a rejected call writes nothing.
#include "sampling_check.hpp"

using namespace dcukern;
using namespace dcukern::test::sampling_check;
using dcukern::test::DeviceBuffer;

TEST_CASE("greedy is the argmax with the lowest index; top_k = 1 too; invalid rows are flagged, also under top_k") {
  // Shapes: one partial tile with scalar loads; whole tiles with 16-byte loads (bf16 as packed pairs),
  // at B = 8, 32 and 64 (larger tiles from B = 32: split_items).
  struct Shape {
    int64_t v, pad, b;
  };
  for (const Shape sh : {Shape{5000, 3, 8}, Shape{40000, 0, 8}, Shape{40000, 0, 32}, Shape{40000, 0, 64}}) {
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const int64_t v = sh.v, b = sh.b;
      std::vector<float> l(v);
      for (int64_t i = 0; i < v; ++i) l[i] = float(i % 97) * 0.01f;  // maximum 0.96 at 96, 193, ...
      Batch lb(dt, l, b, sh.pad);
      const float inf = std::numeric_limits<float>::infinity();
      lb.set(1, 4000, std::nanf(""));                      // row 1: NaN -> invalid
      lb.set(2, 0, -inf, v);                               // row 2: all -inf -> invalid
      lb.set(3, 4321, inf);                                // row 3: +inf wins
      lb.set(4, v - 5, std::nanf(""));                     // row 4: a NaN near the row's end -> invalid
      lb.set(5, v - 1, inf);                               // row 5: +inf as the row's last element wins
      DeviceBuffer<int32_t> tok(b);
      DeviceBuffer<uint8_t> valid(b);
      Workspace ws(workspace_bytes(lb));
      // Row 0's 20 largest, the lowest index first among equal values (mode 4 draws among them).
      std::vector<int64_t> top20(v);
      for (int64_t i = 0; i < v; ++i) top20[i] = i;
      std::stable_sort(top20.begin(), top20.end(), [&](int64_t x, int64_t y) { return lb.row[x] > lb.row[y]; });
      top20.resize(20);
      // Modes 0-3: greedy (temperature 0, then top_k 1), automatic row then the split row; mode 4: top_k
      // 20 on the split row (its fast path: threshold, lists, the draw); modes 5-7: modes 2-4 on the
      // stream row, where the shape allows it; modes 0 and 5 (no filter, temperature 1) on the unfiltered
      // row, modes 0 and 6 (top_p 0.9 alone) on the top-p row, modes 0 and 7 (min_p 0.1 alone) on the min-p
      // row, where the shape allows them.
      for (int m = 0; m < 14; ++m) {
        const char* row = m < 2    ? kAutoRow
                          : m < 5  ? split_row(lb)
                          : m < 8  ? stream_row(lb)
                          : m < 10 ? vector_row(lb, "sampling.unfiltered.vec")
                          : m < 12 ? vector_row(lb, "sampling.top_p.vec")
                                   : vector_row(lb, "sampling.min_p.vec");
        if (!row && m >= 5) continue;
        const int mode = m < 5 ? m : m < 8 ? m - 3 : m % 2 == 0 ? 0 : m == 9 ? 5 : m == 11 ? 6 : 7;
        ref::SamplingRowParams rp;
        rp.temperature = mode % 2 == 0 && mode < 4 ? 0.0 : 1.0;
        rp.top_k = mode == 4 ? 20 : mode == 1 || mode == 3 ? 1 : 0;
        rp.top_p = mode == 6 ? 0.9 : 1.0;
        rp.min_p = mode == 7 ? 0.1 : 0.0;
        SamplingParams p = make_params(lb, tok.get(), rp);
        p.valid = valid.get();
        tok.fill_bytes(0x7f);
        REQUIRE(ws.sample(p, nullptr, row).ok());
        test::device_synchronize();
        const auto t = tok.download();
        const auto ok = valid.download();
        INFO(std::string(dtype_name(dt)) << " V " << v << " B " << b << " mode " << mode << " row "
             << std::string(row ? row : "auto"));
        int64_t want = 0;
        for (int64_t i = 0; i < v; ++i)
          if (lb.row[i] > lb.row[want]) want = i;
        // Row 0 and every row after 5 (copies of row 0; their tiles share blocks and SMs with the others).
        int64_t wrong_rows = 0;
        for (int64_t r = 0; r < b; ++r) {
          if (r >= 1 && r <= 5) continue;
          const int32_t got = t[size_t(r)];
          const bool right = mode < 4    ? got == want
                             : mode == 4 ? std::find(top20.begin(), top20.end(), int64_t(got)) != top20.end()
                                         : got >= 0 && got < v;
          wrong_rows += !right || ok[size_t(r)] != 1;
        }
        CHECK(wrong_rows == 0);
        CHECK(t[1] == kSamplingInvalidToken);
        CHECK(ok[1] == 0);
        CHECK(t[2] == kSamplingInvalidToken);
        CHECK(ok[2] == 0);
        CHECK(t[3] == 4321);
        CHECK(ok[3] == 1);
        CHECK(t[4] == kSamplingInvalidToken);
        CHECK(ok[4] == 0);
        CHECK(t[5] == v - 1);
        CHECK(ok[5] == 1);
      }
    }
  }
}

TEST_CASE("-0 and +0 are equal logits: they tie and the lower index comes first") {
  for (int64_t v : {4096, 4099}) {
    std::vector<float> l(v, -1.0f);
    l[7] = -0.0f;
    l[11] = 0.0f;
    l[20] = -0.0f;
    l[30] = 0.0f;
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const int64_t b = quick_mode() ? 16 : 64;
      Batch lb(dt, l, b);
      DeviceBuffer<int32_t> tok(b);
      Workspace ws(workspace_bytes(lb));
      for (const char* row : {kAutoRow, split_row(lb), stream_row(lb)})
        for (int32_t k : {0, 2, 3}) {  // 0: greedy
          ref::SamplingRowParams rp;
          rp.temperature = k == 0 ? 0.0 : 1.0;
          rp.top_k = k;
          const ref::FilteredDistribution want = ref::filtered_distribution(lb.row, rp);
          std::vector<int64_t> seen(v, 0);
          for (int call = 0; call < (k == 0 ? 1 : 20); ++call) {
            SamplingParams p = make_params(lb, tok.get(), rp);
            p.offset = uint64_t(call);
            REQUIRE(ws.sample(p, nullptr, row).ok());
            test::device_synchronize();
            for (int32_t t : tok.download()) {
              REQUIRE((t >= 0 && t < v));
              ++seen[t];
            }
          }
          INFO(std::string(dtype_name(dt)) << " V=" << v << " k=" << k << " row " << std::string(row ? row : "auto"));
          for (int64_t i = 0; i < v; ++i)
            if (seen[i] != 0) CHECK(want.prob_of(i) > 0.0);
          for (int64_t t : want.tokens) CHECK(seen[t] > 0);  // k = 2, 3: 1280 (quick: 320) draws, 2-3 tokens
        }
    }
  }
}

TEST_CASE("k > V, odd V up to 262144, B = 1024, -inf entries, per-row device parameters") {
  const std::vector<int64_t> vs = quick_mode() ? std::vector<int64_t>{1, 2, 7, 4099}
                                               : std::vector<int64_t>{1, 2, 7, 4099, 65537, 262144};
  for (int64_t v : vs) {
    // V = 4099 in 48 rows: its rows of k = 3 and 40 take their tiles' own cuts while the threshold kernel
    // runs for the others (per-row k).
    const int64_t b = quick_mode() ? 16 : v >= 65537 ? 1024 : v == 4099 ? 48 : 256;
    std::mt19937_64 rng(v);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    std::vector<float> l(v);
    for (auto& x : l) x = nd(rng);
    for (int64_t i = 1; i < v; i += 3) l[i] = -std::numeric_limits<float>::infinity();
    const Batch lb(DType::f32, l, b, v % 2);
    // Per-row parameters: k cycles through {0, 1, 3, V + 3, 40}, p through {1, 0.9, 0.5}, T {0.5, 1, 2}.
    std::vector<int32_t> ks(b);
    std::vector<float> ps(b), ts(b), mps(b);
    for (int64_t r = 0; r < b; ++r) {
      const int32_t kk[] = {0, 1, 3, int32_t(v + 3), 40};
      ks[r] = kk[r % 5];
      ps[r] = r % 3 == 0 ? 1.0f : r % 3 == 1 ? 0.9f : 0.5f;
      ts[r] = r % 4 == 0 ? 0.5f : r % 4 == 1 ? 1.0f : 2.0f;
      mps[r] = r % 7 == 0 ? 0.1f : 0.0f;
    }
    DeviceBuffer<int32_t> dk(b), tok(b);
    DeviceBuffer<float> dp(b), dt(b), dmp(b);
    DeviceBuffer<uint8_t> valid(b);
    dk.upload(ks);
    dp.upload(ps);
    dt.upload(ts);
    dmp.upload(mps);
    SamplingParams p = make_params(lb, tok.get(), ref::SamplingRowParams{});
    p.top_k.device = dk.get();
    p.top_p.device = dp.get();
    p.temperature.device = dt.get();
    p.min_p.device = dmp.get();
    p.valid = valid.get();
    int64_t outside = 0, invalid = 0;
    std::vector<ref::FilteredDistribution> refs(105);
    Workspace ws(workspace_bytes(lb));
    for (int call = 0; call < (quick_mode() ? 2 : 8); ++call) {
      p.offset = call;
      const char* row = call % 3 == 1 ? split_row(lb) : call % 3 == 2 ? stream_row(lb) : kAutoRow;
      REQUIRE(ws.sample(p, nullptr, call % 3 == 2 && !row ? split_row(lb) : row).ok());
      test::device_synchronize();
      const auto t = tok.download();
      const auto ok = valid.download();
      for (int64_t r = 0; r < b; ++r) {
        ref::SamplingRowParams rp;
        rp.top_k = ks[r];
        rp.top_p = ps[r];
        rp.temperature = ts[r];
        rp.min_p = mps[r];
        // The reference sorts the row: check the first 105 rows (every k, p, min-p combination).
        if (r >= 105) {
          if (ok[r] != 1) ++invalid;
          continue;
        }
        auto& d = refs[r];
        if (d.tokens.empty()) d = loosened_distribution(lb.row, rp);
        if (d.prob_of(t[r]) == 0.0) ++outside;
        if (ok[r] != 1) ++invalid;
      }
    }
    INFO("V=" << v);
    CHECK(outside == 0);
    CHECK(invalid == 0);
  }
}

TEST_CASE("same seed and offset give the same bits; other offsets give independent streams") {
  ref::SamplingRowParams rp;
  rp.top_k = 500;
  rp.top_p = 0.99;
  for (const char* row :
       {"sampling.block", "sampling.block.vec", "sampling.split", "sampling.split.vec", "sampling.stream.vec"})
    check_seed_streams(row, rp, quick_mode() ? 256 : 1024);
}

// One shape's graph test (below): `rows` in turn (nullptr: automatic selection), each with the call's
// parameters rp and, where per_row_k, again with per-row top_k.
namespace {

void check_graph_replay(int64_t v, int64_t b, const ref::SamplingRowParams& rp, std::vector<const char*> rows,
                        bool per_row_k) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> l(v);
  for (auto& x : l) x = nd(rng);
  const Batch lb(DType::bf16, l, b);
  DeviceBuffer<int32_t> tok(b), eager(b);
  DeviceBuffer<uint64_t> seed(1), offset(1);
  seed.upload({1234});
  offset.upload({77});
  SamplingParams p = make_params(lb, tok.get(), rp);
  p.seed_ptr = seed.get();
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  Workspace ws(workspace_bytes(lb));
  // Per-row top_k in a second round: the split rows then finish some rows in their first pass (k = 100)
  // and the others (k = 0: top-p alone) in the second; the offset still advances once per call.
  std::vector<int32_t> ks(b);
  for (int64_t r = 0; r < b; ++r) ks[r] = r % 3 ? 100 : 0;
  DeviceBuffer<int32_t> dk(b);
  dk.upload(ks);
  const int n_rows = int(rows.size());
  for (int round = 0; round < (per_row_k ? 2 : 1) * n_rows; ++round) {
    const char* row = rows[round % n_rows];
    p.top_k.device = round >= n_rows ? dk.get() : nullptr;
    INFO(std::string(row ? row : "auto") << (p.top_k.device ? " per-row top_k" : ""));
    offset.upload({77});
    test::CapturedGraph graph([&](stream_t stream) { return ws.sample(p, stream, row); });
    std::vector<std::vector<int32_t>> replays;
    for (int rep = 0; rep < 3; ++rep) {
      graph.replay();
      replays.push_back(tok.download());
    }
    CHECK(offset.download()[0] == 80);
    CHECK(ws.counters_zero(b));  // every call leaves the workspace ready for the next
    CHECK(replays[0] != replays[1]);
    for (int rep = 0; rep < 3; ++rep) {  // replay r used offset 77 + r, seed 1234
      SamplingParams q = make_params(lb, eager.get(), rp);
      q.top_k.device = p.top_k.device;
      q.seed = 1234;
      q.offset = 77 + rep;
      REQUIRE(ws.sample(q, nullptr, row).ok());
      test::device_synchronize();
      CHECK(eager.download() == replays[rep]);
    }
  }
}

}  // namespace

TEST_CASE("graph capture and replay advance the device offset and match eager calls") {
  // A row of one tile (B = 64), and bf16 V = 151936 at B = 32: 5 tiles of 64 elements a thread, a cluster
  // a row where the device has clusters (split_clustered), whose first call in a process may be captured.
  // The automatic, split and stream rows (the stream row where the shape allows it), top-k 100 and top-p 0.9,
  // then per-row top_k; the unfiltered row without a filter; the top-p row with top-p alone; the min-p row
  // with min-p alone.
  ref::SamplingRowParams rp;
  rp.top_k = 100;
  rp.top_p = 0.9;
  SUBCASE("V = 4099, B = 64") { check_graph_replay(4099, 64, rp, {kAutoRow, "sampling.split"}, true); }
  SUBCASE("V = 4096, B = 64: the stream row too") {
    check_graph_replay(4096, 64, rp, {kAutoRow, "sampling.split.vec", "sampling.stream.vec"}, true);
  }
  SUBCASE("V = 151936, B = 32") { check_graph_replay(151936, 32, rp, {kAutoRow, "sampling.split.vec"}, true); }
  SUBCASE("V = 151936, B = 32, no filter: the unfiltered row") {
    check_graph_replay(151936, 32, ref::SamplingRowParams{}, {"sampling.unfiltered.vec"}, false);
  }
  SUBCASE("V = 151936, B = 32, top_p 0.9 alone: the top-p row") {
    ref::SamplingRowParams top_p;
    top_p.top_p = 0.9;
    check_graph_replay(151936, 32, top_p, {"sampling.top_p.vec"}, false);
  }
  SUBCASE("V = 151936, B = 32, min_p 0.05 alone: the min-p row") {
    ref::SamplingRowParams min_p;
    min_p.min_p = 0.05;
    check_graph_replay(151936, 32, min_p, {"sampling.min_p.vec"}, false);
  }
}

TEST_CASE("a rejected call writes nothing") {
  const Batch lb(DType::f32, std::vector<float>(64, 0.0f), 4);
  DeviceBuffer<int32_t> tok(4);
  DeviceBuffer<uint64_t> offset(1);
  offset.upload({5});
  std::vector<SamplingParams> bad;
  ref::SamplingRowParams rp;
  SamplingParams p = make_params(lb, tok.get(), rp);
  p.top_p.value = 0.0f;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);
  p.tokens.size = 3;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);
  p.temperature.value = -1.0f;
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);  // validity flags inside the tokens
  p.valid = reinterpret_cast<uint8_t*>(tok.get()) + 4;
  bad.push_back(p);
  for (const SamplingParams& q : bad) {
    tok.fill_bytes(0xFF);
    CHECK(calls::sample(q, nullptr).code() == StatusCode::invalid_argument);
    test::device_synchronize();
    const auto t = tok.download();
    CHECK(std::all_of(t.begin(), t.end(), [](int32_t x) { return x == -1; }));
  }
  CHECK(offset.download()[0] == 5);
  // The split rows: no workspace -> unsupported when pinned; too small -> invalid; nothing written.
  p = make_params(lb, tok.get(), rp);
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  Overrides::instance().force("sampling.split.vec");
  CHECK(calls::sample(p, nullptr, SamplingOptions{"sampling.split.vec"}).code() == StatusCode::unsupported);
  Overrides::instance().unforce("sampling.split.vec");
  Workspace small(workspace_bytes(lb) - 256);
  tok.fill_bytes(0xFF);
  CHECK(small.sample(p, nullptr, "sampling.split.vec").code() == StatusCode::invalid_argument);
  CHECK(small.sample(p, nullptr, "sampling.stream.vec").code() == StatusCode::unsupported);  // B below its range
  {
    const ScopedForce forced("sampling.split.vec");  // a workspace of the size the call needs, over the tokens
    CHECK(calls::sample(p, tok.get(), workspace_bytes(lb), stream_t{}, SamplingOptions{"sampling.split.vec"})
              .code() == StatusCode::invalid_argument);
  }
  test::device_synchronize();
  const auto t = tok.download();
  CHECK(std::all_of(t.begin(), t.end(), [](int32_t x) { return x == -1; }));
  CHECK(offset.download()[0] == 5);
  // The stream row at a batch in its range: a workspace too small -> invalid, nothing written.
  const Batch rows(DType::f32, std::vector<float>(64, 0.0f), capabilities::sampling_rows::kStreamBatchMin);
  DeviceBuffer<int32_t> rows_tok(rows.b);
  rows_tok.fill_bytes(0xFF);
  SamplingParams q = make_params(rows, rows_tok.get(), rp);
  q.offset_ptr = offset.get();
  q.advance_offset = true;
  Workspace rows_small(workspace_bytes(rows) - 256);
  CHECK(rows_small.sample(q, nullptr, "sampling.stream.vec").code() == StatusCode::invalid_argument);
  test::device_synchronize();
  const auto rt = rows_tok.download();
  CHECK(std::all_of(rt.begin(), rt.end(), [](int32_t x) { return x == -1; }));
  CHECK(offset.download()[0] == 5);
  // The unfiltered row pinned for a call with a filter: unsupported, nothing written.
  p = make_params(lb, tok.get(), rp);
  p.top_p.value = 0.9f;
  Workspace ws(workspace_bytes(lb));
  tok.fill_bytes(0xFF);
  CHECK(ws.sample(p, nullptr, "sampling.unfiltered.vec").code() == StatusCode::unsupported);
  test::device_synchronize();
  const auto ut = tok.download();
  CHECK(std::all_of(ut.begin(), ut.end(), [](int32_t x) { return x == -1; }));
  // The top-p row pinned for a call with top_k or min_p, the min-p row for one with top_k or top_p:
  // unsupported, nothing written.
  for (const char* id : {"sampling.top_p.vec", "sampling.min_p.vec"})
    for (int filter = 0; filter < 2; ++filter) {
      const bool top_p_row = std::string(id) == "sampling.top_p.vec";
      p = make_params(lb, tok.get(), rp);
      (top_p_row ? p.top_p.value : p.min_p.value) = top_p_row ? 0.9f : 0.1f;  // the row's own filter
      if (filter == 0) p.top_k.value = 20;
      else (top_p_row ? p.min_p.value : p.top_p.value) = top_p_row ? 0.1f : 0.9f;
      tok.fill_bytes(0xFF);
      INFO(std::string(id) << " filter " << filter);
      CHECK(ws.sample(p, nullptr, id).code() == StatusCode::unsupported);
      test::device_synchronize();
      const auto pt = tok.download();
      CHECK(std::all_of(pt.begin(), pt.end(), [](int32_t x) { return x == -1; }));
    }
  p = make_params(lb, tok.get(), rp);
  p.logits.data = static_cast<const char*>(p.logits.data) + 4;
  p.logits.cols = 63;
  CHECK(calls::sample(p, nullptr, SamplingOptions{"sampling.block.vec"}).code() == StatusCode::unsupported);
}
