// GDN device tests: the recurrent step and the conv1d update, every row this device can run (rows
// without evidence yet forced, and automatic selection) against the double-precision host reference, over
// every option: both state layouts, f32 / bf16 state, K x V in {128x128, 64x64, 256x256, 128x64, 96x40},
// bf16 / f16 activations, in-kernel or precomputed gating, L2 norm on / off, grouped heads r in {1, 2, 3},
// T in 1..4 with and without token slots, packed (strided) inputs, padded outputs, padding sequences, B = 1.
// Also: a 1000-step fp32 rollout within 1e-5 relative of the double reference; T tokens give the bits of T
// single steps; graph capture + replay gives the bits of eager runs; rejected calls write nothing.
// DCUKERN_TEST_QUICK=1 runs a smaller set for compute-sanitizer.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/gdn_calls.hpp"  // the GDN API, compiled in one unit
#include "dcukern/ref/gdn.hpp"
#include "support.hpp"

using namespace dcukern;
using dcukern::test::DeviceBuffer;

namespace {

using test::device_target;
using test::quick_mode;

// Forces row `id` for the guard's lifetime when it has no device evidence yet (such rows run only when
// forced); a no-op for every other row and for automatic selection (id == nullptr).
template <class Op>
struct ForceExperimental : ScopedForce {
  explicit ForceExperimental(const char* row) : ScopedForce(experimental(row)) {}
  static const char* experimental(const char* row) {
    const auto* r = row ? find_row<Op>(row) : nullptr;
    return r && !r->evidence ? r->id : nullptr;
  }
};

// The rows this device can run, experimental ones (run when forced) included.
template <class Op>
std::vector<const char*> runnable_rows() {
  std::vector<const char*> ids;
  for (const auto& row : Op::rows()) {
    ForceExperimental<Op> force(row.id);
    if (row_unavailable_reason(row, device_target(), Op::compiled_in(row.kernel)).empty()) ids.push_back(row.id);
  }
  return ids;
}

// Host bytes mirrored on the device; elements written / read as any dtype.
struct Blob {
  std::vector<uint8_t> host;
  DeviceBuffer<uint8_t> dev;
  Blob() = default;
  explicit Blob(size_t bytes) : host(bytes, 0), dev(bytes) {}
  void put(DType t, int64_t i, double v) {
    if (t == DType::f32) {
      const float f = static_cast<float>(v);
      std::memcpy(host.data() + 4 * i, &f, 4);
    } else {
      const uint16_t h = ref::from_float(t, static_cast<float>(v));
      std::memcpy(host.data() + 2 * i, &h, 2);
    }
  }
  static double get(const std::vector<uint8_t>& bytes, DType t, int64_t i) {
    if (t == DType::f32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return ref::to_float(t, h);
  }
  void upload() { dev.upload(host); }
  std::vector<uint8_t> download() const { return dev.download(); }
  uint8_t* base(bool device) { return device ? dev.get() : host.data(); }
};

// ---------------------------------------------------------------- recurrent step problems
struct Config {
  GdnStateLayout layout = GdnStateLayout::kv;
  DType state = DType::f32;
  int K = 128, V = 128;
  DType act = DType::bf16;
  int gating = 0;  // 0: raw a, b in the activation dtype; 1: raw a, b in f32; 2: precomputed g, beta
  bool l2norm = true;
  int r = 1, T = 1;
  bool token_slots = false, padded_o = false;
  float scale = 0.f;
  int B = 5, H = 2;
  std::string str() const {
    return std::string(layout_name(layout)) + " state=" + dtype_name(state) + " K=" + std::to_string(K) +
           " V=" + std::to_string(V) + " act=" + dtype_name(act) + " gating=" + std::to_string(gating) +
           " l2norm=" + std::to_string(l2norm) + " r=" + std::to_string(r) + " T=" + std::to_string(T) +
           " token_slots=" + std::to_string(token_slots) + " padded_o=" + std::to_string(padded_o) +
           " scale=" + std::to_string(scale) + " B=" + std::to_string(B);
  }
};

// One problem: a packed projection [steps, B, T, q|k|v|pad] for q, k, v, a gating buffer [steps, B, T,
// 2*HV], the state pool (with slots no sequence uses), slot lists with padding sequences and the output.
struct Problem {
  Config c;
  int HV, steps;
  int64_t row, o_head, slot_stride, num_slots;
  Blob proj, gates, params_f32, pool, out;
  std::vector<int32_t> slots, token_slots;
  DeviceBuffer<int32_t> dslots, dtoken_slots;
  std::vector<uint8_t> pool0;  // the initial pool bytes

  Problem(const Config& cfg, std::mt19937_64& rng, int steps_ = 1) : c(cfg), steps(steps_) {
    HV = c.H * c.r;
    const int HK = c.H * c.K;
    row = 2 * HK + int64_t(HV) * c.V + 8;
    o_head = c.padded_o ? c.V + 8 : c.V;
    const int sb = dtype_bytes(c.state);
    slot_stride = int64_t(HV) * c.K * c.V + 16 / sb;  // a padded slot stride that keeps 16-byte alignment
    num_slots = c.B + (c.token_slots ? int64_t(c.B) * c.T : 0) + 2;
    std::uniform_real_distribution<double> u(-1, 1);
    const double qk_amp = std::sqrt(3.0 / c.K);  // |k| ~ 1 also without L2 norm
    proj = Blob(size_t(steps) * c.B * c.T * row * 2);
    for (int64_t s = 0; s < int64_t(steps) * c.B * c.T; ++s)
      for (int64_t i = 0; i < row; ++i) proj.put(c.act, s * row + i, i < 2 * HK ? qk_amp * u(rng) : u(rng));
    const DType gdt = c.gating == 0 ? c.act : DType::f32;
    gates = Blob(size_t(steps) * c.B * c.T * 2 * HV * 4);
    for (int64_t s = 0; s < int64_t(steps) * c.B * c.T; ++s)
      for (int h = 0; h < HV; ++h) {
        if (c.gating == 2) {  // g in [-1, 0), beta in (0, 1)
          gates.put(DType::f32, s * 2 * HV + h, -0.5 * (u(rng) + 1.0) - 1e-3);
          gates.put(DType::f32, s * 2 * HV + HV + h, 0.5 * (u(rng) + 1.0));
        } else {
          gates.put(gdt, s * 2 * HV + h, u(rng));
          gates.put(gdt, s * 2 * HV + HV + h, 2 * u(rng));
        }
      }
    // A_log = log(U(1, 16)), dt_bias = softplus^-1(dt), dt log-uniform in [1e-3, 1e-1] (Mamba init).
    params_f32 = Blob(2 * HV * 4);
    for (int h = 0; h < HV; ++h) {
      params_f32.put(DType::f32, h, std::log(1.0 + 7.5 * (u(rng) + 1.0)));
      const double dt = std::exp(std::log(1e-3) + (u(rng) + 1.0) / 2 * (std::log(1e-1) - std::log(1e-3)));
      params_f32.put(DType::f32, HV + h, std::log(std::expm1(dt)));
    }
    pool = Blob(size_t(num_slots) * slot_stride * sb);
    for (int64_t i = 0; i < num_slots * slot_stride; ++i) pool.put(c.state, i, 0.5 * u(rng));
    pool0 = pool.host;
    // Sequences use slots in reverse order; sequence 1 is padding (-1), sequence 3 has an out-of-range slot.
    for (int b = 0; b < c.B; ++b) slots.push_back(b == 1 ? -1 : b == 3 ? int32_t(num_slots) : c.B - 1 - b);
    if (c.token_slots)
      for (int b = 0; b < c.B; ++b)
        for (int t = 0; t < c.T; ++t) token_slots.push_back(t == 1 ? -1 : c.B + b * c.T + t);
    dslots = DeviceBuffer<int32_t>(slots.size());
    dslots.upload(slots);
    if (c.token_slots) {
      dtoken_slots = DeviceBuffer<int32_t>(token_slots.size());
      dtoken_slots.upload(token_slots);
    }
    out = Blob(size_t(c.B) * c.T * HV * o_head * 2);
    proj.upload();
    gates.upload();
    params_f32.upload();
    pool.upload();
  }
  void reset_pool() { pool.dev.upload(pool0); }
  void poison_out() { out.dev.fill_bytes(test::kPoisonByte); }

  // Params of `tokens` tokens starting at token t0 of step `step`, on device or host memory.
  GdnParams params(bool device, int step = 0, int t0 = 0, int tokens = -1) {
    GdnParams p;
    p.batch = c.B;
    p.tokens = tokens < 0 ? c.T : tokens;
    p.num_k_heads = c.H;
    p.num_v_heads = HV;
    p.head_k_dim = c.K;
    p.head_v_dim = c.V;
    const int64_t tok = int64_t(step) * c.B * c.T + t0;
    const uint16_t* pr = reinterpret_cast<const uint16_t*>(proj.base(device)) + tok * row;
    p.q = {pr, c.act, c.T * row, row, c.K};
    p.k = {pr + c.H * c.K, c.act, c.T * row, row, c.K};
    p.v = {pr + 2 * c.H * c.K, c.act, c.T * row, row, c.V};
    const int64_t gs = 2 * HV;
    if (c.gating == 2) {
      const float* g = reinterpret_cast<const float*>(gates.base(device)) + tok * gs;
      p.g = {g, DType::f32, c.T * gs, gs, 1};
      p.beta = {g + HV, DType::f32, c.T * gs, gs, 1};
    } else {
      const DType gdt = c.gating == 0 ? c.act : DType::f32;
      const uint8_t* g = gates.base(device) + tok * gs * dtype_bytes(gdt);
      p.a = {g, gdt, c.T * gs, gs, 1};
      p.b = {g + HV * dtype_bytes(gdt), gdt, c.T * gs, gs, 1};
      p.A_log = reinterpret_cast<const float*>(params_f32.base(device));
      p.dt_bias = p.A_log + HV;
    }
    p.l2norm_qk = c.l2norm;
    p.scale = c.scale;
    p.state = {pool.base(device), c.state, c.layout, num_slots, slot_stride};
    p.slots = device ? dslots.get() : slots.data();
    if (c.token_slots) {
      p.token_slots = (device ? dtoken_slots.get() : token_slots.data()) + t0;
      p.token_slots_stride = c.T;
    }
    p.o = {reinterpret_cast<uint16_t*>(out.base(device)) + int64_t(t0) * HV * o_head, c.act,
           int64_t(c.T) * HV * o_head, int64_t(HV) * o_head, o_head};
    return p;
  }
  std::set<int64_t> touched_slots() const {
    std::set<int64_t> s;
    for (int b = 0; b < c.B; ++b) {
      if (!ref::slot_valid(slots[b], num_slots)) continue;
      s.insert(slots[b]);
      if (c.token_slots)
        for (int t = 0; t < c.T; ++t)
          if (ref::slot_valid(token_slots[b * c.T + t], num_slots)) s.insert(token_slots[b * c.T + t]);
    }
    return s;
  }
  std::vector<double> pool_as_double(const std::vector<uint8_t>& bytes) const {
    std::vector<double> d(num_slots * slot_stride);
    for (size_t i = 0; i < d.size(); ++i) d[i] = Blob::get(bytes, c.state, int64_t(i));
    return d;
  }
};

struct Errors {
  int64_t wrong = 0, unwritten = 0, touched = 0;
  double worst = 0;  // error / tolerance
};

// The worst error / tolerance by check, state dtype and tokens a sequence (the bf16 state's per-token term).
void note_worst(const char* check, const Config& c, double fraction) {
  static test::WorstFractions w("gdn");
  w.note(std::string(check) + " state=" + dtype_name(c.state) + " T=" + std::to_string(c.T), fraction, c.str());
}

// Outputs vs reference ([B, T, HV, V] dense); padding sequences must be exact zeros, head padding untouched.
Errors check_outputs(const Problem& pr, const std::vector<uint8_t>& got, const std::vector<double>& want) {
  Errors e;
  const Config& c = pr.c;
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  const double eps = c.act == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -10);
  // A bf16 state is rounded after every token on both sides; where fp32 and double fall on two sides of a
  // rounding boundary the states differ by an ulp, carried into later tokens: allow that per token.
  const double carried = c.state == DType::bf16 ? c.T * std::ldexp(1.0, -9) : 0.0;
  for (int b = 0; b < c.B; ++b)
    for (int t = 0; t < c.T; ++t)
      for (int h = 0; h < pr.HV; ++h)
        for (int j = 0; j < pr.o_head; ++j) {
          const int64_t at = ((int64_t(b) * c.T + t) * pr.HV + h) * pr.o_head + j;
          uint16_t bits;
          std::memcpy(&bits, got.data() + 2 * at, 2);
          if (j >= c.V) {
            e.touched += bits != 0xFFFF;
            continue;
          }
          const double w = want[((size_t(b) * c.T + t) * pr.HV + h) * c.V + j];
          if (!ref::slot_valid(pr.slots[b], pr.num_slots)) {
            e.wrong += bits != 0;
            continue;
          }
          const double g = ref::to_float(c.act, bits);
          if (std::isnan(g)) ++e.unwritten;
          const double tol = eps * std::fabs(w) + (1e-4 + carried) * scale + 1e-6;
          const double err = std::fabs(g - w);
          if (!(err <= tol)) ++e.wrong;
          e.worst = std::max(e.worst, err / tol);
        }
  note_worst("outputs", c, e.worst);
  return e;
}

// Pool vs reference: slots the call touches within tolerance (unless values == false), every other slot
// (and slot padding) bit-equal.
Errors check_pool(const Problem& pr, const std::vector<uint8_t>& got, const std::vector<double>& want,
                  bool values = true) {
  Errors e;
  const auto touched = pr.touched_slots();
  const int64_t head_elems = int64_t(pr.HV) * pr.c.K * pr.c.V;
  double scale = 0;
  for (int64_t s : touched)
    for (int64_t i = 0; i < head_elems; ++i) scale = std::max(scale, std::fabs(want[s * pr.slot_stride + i]));
  const bool f32 = pr.c.state == DType::f32;
  const int sb = dtype_bytes(pr.c.state);
  for (int64_t s = 0; s < pr.num_slots; ++s)
    for (int64_t i = 0; i < pr.slot_stride; ++i) {
      const int64_t at = s * pr.slot_stride + i;
      if (!touched.count(s) || i >= head_elems) {
        e.touched += std::memcmp(got.data() + at * sb, pr.pool0.data() + at * sb, sb) != 0;
        continue;
      }
      if (!values) continue;
      const double g = Blob::get(got, pr.c.state, at), w = want[at];
      // bf16: an ulp of rounding-boundary disagreement per token, carried (see check_outputs).
      const double tol = f32 ? 1e-5 * std::fabs(w) + 1e-5 * scale
                             : std::ldexp(1.0, -7) * std::fabs(w) + pr.c.T * std::ldexp(1.0, -7) * scale;
      const double err = std::fabs(g - w);
      if (!(err <= tol)) ++e.wrong;
      e.worst = std::max(e.worst, err / tol);
    }
  if (values) note_worst("state", pr.c, e.worst);
  return e;
}

void expect_clean(const Errors& e, const char* what) {
  INFO(std::string(what) << ": wrong " << e.wrong << ", unwritten " << e.unwritten << ", touched " << e.touched
                         << ", worst err/tol " << e.worst);
  CHECK(e.wrong == 0);
  CHECK(e.unwritten == 0);
  CHECK(e.touched == 0);
}

// Runs `id` (nullptr: automatic) on the problem; false where the row's contract rejects it.
bool run_gdn(Problem& pr, const char* id, GdnParams p, stream_t stream = nullptr, Explanation* why = nullptr) {
  const capabilities::GdnRow* row = nullptr;
  if (id && !check_gdn_row(p, device_target(), id, &row).ok()) return false;
  const Status s = calls::gdn_recurrent(p, stream, GdnOptions{id, why});
  INFO(s.to_string());
  REQUIRE(s.ok());
  return true;
}

std::vector<Config> option_variants(const Config& base) {
  std::vector<Config> v;
  auto add = [&](DType act, int gating, bool l2, int r, int T, bool ts, bool po, float scale) {
    Config c = base;
    c.act = act, c.gating = gating, c.l2norm = l2, c.r = r, c.T = T;
    c.token_slots = ts, c.padded_o = po, c.scale = scale;
    v.push_back(c);
  };
  add(DType::bf16, 0, true, 1, 1, false, false, 0.f);
  add(DType::f16, 1, false, 2, 3, true, true, 0.3f);
  add(DType::bf16, 2, true, 3, 2, true, false, 0.f);
  if (!quick_mode()) {
    add(DType::f16, 2, false, 3, 1, false, true, 0.f);
    add(DType::bf16, 1, true, 2, 4, true, true, 0.f);
    add(DType::f16, 0, true, 1, 3, false, false, 0.f);  // T > 1 without per-token slots: the final state only
  }
  Config one = v[1];  // B = 1: the rows that take a single sequence only (gdn.tiled.*.c16)
  one.B = 1;
  v.push_back(one);
  return v;
}

}  // namespace

TEST_CASE("gdn: every runnable row matches the reference over every option and both layouts") {
  std::mt19937_64 rng(4242);
  std::vector<std::pair<int, int>> kv_dims = {{128, 128}, {64, 64}, {256, 256}, {128, 64}, {96, 40}};
  if (quick_mode()) kv_dims = {{128, 128}, {256, 256}, {96, 40}};
  int runs = 0;
  std::set<std::string> rows_seen;
  for (GdnStateLayout layout : {GdnStateLayout::kv, GdnStateLayout::vk})
    for (DType state : {DType::f32, DType::bf16})
      for (auto [K, V] : kv_dims) {
        Config base;
        base.layout = layout, base.state = state, base.K = K, base.V = V;
        for (const Config& c : option_variants(base)) {
          Problem pr(c, rng);
          GdnParams hp = pr.params(false);
          std::vector<double> want_pool = pr.pool_as_double(pr.pool0), want_out;
          ref::gdn_recurrent(hp, want_pool, want_out);
          std::vector<const char*> ids = runnable_rows<GdnOp>();
          ids.push_back(nullptr);
          for (const char* id : ids) {
            INFO(c.str() << " row=" << std::string(id ? id : "auto"));
            pr.reset_pool();
            pr.poison_out();
            Explanation why;
            if (!run_gdn(pr, id, pr.params(true), nullptr, id ? nullptr : &why)) continue;
            test::device_synchronize();
            rows_seen.insert(id ? id : why.chosen);
            expect_clean(check_outputs(pr, pr.out.download(), want_out), "outputs");
            expect_clean(check_pool(pr, pr.pool.download(), want_pool), "state pool");
            ++runs;
          }
        }
      }
  MESSAGE(runs << " gdn kernel runs checked; rows exercised: " << rows_seen.size());
  for (const char* id : runnable_rows<GdnOp>()) {
    INFO(std::string(id));
    CHECK(rows_seen.count(id) == 1);
  }
}

TEST_CASE("gdn: a 1000-step fp32 rollout stays within 1e-5 relative of the double-precision reference") {
  std::mt19937_64 rng(1000);
  const int steps = quick_mode() ? 40 : 1000;
  for (GdnStateLayout layout : {GdnStateLayout::kv, GdnStateLayout::vk}) {
    Config c;
    c.layout = layout, c.state = DType::f32, c.K = 128, c.V = 128, c.r = 2, c.B = 3, c.gating = 0, c.l2norm = true;
    Problem pr(c, rng, steps);
    pr.slots = {2, -1, 0};
    pr.dslots.upload(pr.slots);
    std::vector<double> want = pr.pool_as_double(pr.pool0), unused;
    for (int s = 0; s < steps; ++s) ref::gdn_recurrent(pr.params(false, s), want, unused);
    for (const char* id : runnable_rows<GdnOp>()) {
      pr.reset_pool();
      bool ran = true;
      for (int s = 0; s < steps && ran; ++s) ran = run_gdn(pr, id, pr.params(true, s));
      if (!ran) continue;
      test::device_synchronize();
      const std::vector<double> got = pr.pool_as_double(pr.pool.download());
      double worst = 0;
      int over = 0;  // heads above 1e-5 or not a number (std::max would drop a NaN)
      for (int64_t slot : {0, 2})
        for (int h = 0; h < pr.HV; ++h) {
          double num = 0, den = 0;
          const int64_t base = slot * pr.slot_stride + int64_t(h) * c.K * c.V;
          for (int64_t i = 0; i < int64_t(c.K) * c.V; ++i) {
            num += (got[base + i] - want[base + i]) * (got[base + i] - want[base + i]);
            den += want[base + i] * want[base + i];
          }
          const double relative = std::sqrt(num / den);
          over += !(relative <= 1e-5);
          worst = std::max(worst, relative);
        }
      MESSAGE(std::string(layout_name(layout))
              << " row " << std::string(id) << ": " << steps << "-step rollout, worst relative state error " << worst);
      CHECK(over == 0);
      CHECK(worst <= 1e-5);
      expect_clean(check_pool(pr, pr.pool.download(), want, false), "untouched slots");
    }
  }
}

TEST_CASE("gdn: T tokens in one launch give the bits of T single-token launches") {
  std::mt19937_64 rng(77);
  const Config bases[] = {{GdnStateLayout::kv, DType::f32, 128, 128}, {GdnStateLayout::vk, DType::bf16, 128, 128},
                          {GdnStateLayout::kv, DType::bf16, 64, 64},  {GdnStateLayout::vk, DType::f32, 256, 256},
                          {GdnStateLayout::kv, DType::f32, 96, 40}};
  std::vector<Config> cases(std::begin(bases), std::end(bases));
  for (int i = 0; i < 2; ++i) {  // B = 1 (gdn.tiled.*.c16), both layouts
    cases.push_back(bases[i]);
    cases.back().B = 1;
  }
  for (Config c : cases) {
    c.T = 4, c.token_slots = true, c.r = 2, c.gating = 0;
    Problem pr(c, rng);
    for (const char* id : runnable_rows<GdnOp>()) {
      INFO(c.str() << " row=" << std::string(id));
      pr.reset_pool();
      pr.poison_out();
      if (!run_gdn(pr, id, pr.params(true))) continue;
      test::device_synchronize();
      const auto out_t = pr.out.download(), pool_t = pr.pool.download();
      pr.reset_pool();
      pr.poison_out();
      for (int t = 0; t < c.T; ++t) REQUIRE(run_gdn(pr, id, pr.params(true, 0, t, 1)));
      test::device_synchronize();
      CHECK(pr.out.download() == out_t);
      CHECK(pr.pool.download() == pool_t);
    }
  }
}

TEST_CASE("gdn: graph capture and replay give the bits of eager runs") {
  std::mt19937_64 rng(5);
  for (GdnStateLayout layout : {GdnStateLayout::kv, GdnStateLayout::vk}) {
    Config c;
    c.layout = layout, c.state = layout == GdnStateLayout::kv ? DType::f32 : DType::bf16, c.T = 2, c.r = 3;
    c.token_slots = true;
    Problem pr(c, rng);
    for (const char* id : runnable_rows<GdnOp>()) {
      INFO(std::string(layout_name(layout)) << " row=" << std::string(id));
      const capabilities::GdnRow* row = nullptr;
      if (!check_gdn_row(pr.params(true), device_target(), id, &row).ok()) continue;
      pr.reset_pool();
      pr.poison_out();
      for (int rep = 0; rep < 3; ++rep) REQUIRE(run_gdn(pr, id, pr.params(true)));
      test::device_synchronize();
      const auto out_e = pr.out.download(), pool_e = pr.pool.download();

      test::CapturedGraph graph(
          [&](stream_t stream) { return calls::gdn_recurrent(pr.params(true), stream, GdnOptions{id}); });
      pr.reset_pool();
      pr.poison_out();
      test::device_synchronize();
      graph.replay(3);
      CHECK(pr.out.download() == out_e);
      CHECK(pr.pool.download() == pool_e);
    }
  }
}

TEST_CASE("gdn: a rejected call writes nothing") {
  std::mt19937_64 rng(3);
  Config c;
  c.T = 2;
  Problem pr(c, rng);
  std::vector<GdnParams> bad;
  auto make = [&](auto edit) {
    GdnParams p = pr.params(true);
    edit(p);
    bad.push_back(p);
  };
  make([](GdnParams& p) { p.q.data = nullptr; });
  make([](GdnParams& p) { p.v.dtype = DType::f16; });
  make([](GdnParams& p) { p.tokens = 0; });
  make([](GdnParams& p) { p.num_v_heads = 3; });
  make([](GdnParams& p) { p.head_k_dim = 300; });
  make([](GdnParams& p) { p.o.head_stride = 1; });
  make([](GdnParams& p) { p.A_log = nullptr; });
  make([](GdnParams& p) { p.state.slot_stride = 10; });
  make([](GdnParams& p) { p.state.dtype = DType::f16; });
  for (const GdnParams& p : bad) {
    pr.reset_pool();
    pr.poison_out();
    const Status s = calls::gdn_recurrent(p, nullptr);
    INFO(s.to_string());
    CHECK_FALSE(s.ok());
    test::device_synchronize();
    const auto o = pr.out.download();
    CHECK(std::all_of(o.begin(), o.end(), [](uint8_t v) { return v == 0xFF; }));
    CHECK(pr.pool.download() == pr.pool0);
  }
  // A pinned row that cannot take the call: unsupported, nothing launched.
  pr.reset_pool();
  pr.poison_out();
  CHECK(calls::gdn_recurrent(pr.params(true), nullptr, GdnOptions{"gdn.tiled.vk"}).code() == StatusCode::unsupported);
  CHECK(calls::gdn_recurrent(pr.params(true), nullptr, GdnOptions{"gdn.none"}).code() == StatusCode::invalid_argument);
  test::device_synchronize();
  const auto o = pr.out.download();
  CHECK(std::all_of(o.begin(), o.end(), [](uint8_t v) { return v == 0xFF; }));
  CHECK(pr.pool.download() == pr.pool0);
}

// ---------------------------------------------------------------- conv1d update
namespace {

struct ConvProblem {
  DType act, state;
  int B = 6, width;
  int64_t dim, ldx, ldy, num_slots, slot_stride;
  bool bias, silu;
  Blob x, w, b, pool, y;
  std::vector<int32_t> slots;
  DeviceBuffer<int32_t> dslots;
  std::vector<uint8_t> pool0;

  ConvProblem(DType act_, DType state_, int64_t dim_, int width_, bool bias_, bool silu_, bool padded,
              std::mt19937_64& rng, int batch = 6)
      : act(act_), state(state_), B(batch), width(width_), dim(dim_), bias(bias_), silu(silu_) {
    std::uniform_real_distribution<double> u(-1, 1);
    ldx = padded ? dim + 8 : dim;
    ldy = padded ? dim + 16 : dim;
    num_slots = B + 2;
    slot_stride = dim * (width - 1) + (padded ? 16 / dtype_bytes(state) : 0);
    x = Blob(size_t(B) * ldx * 2);
    for (int64_t i = 0; i < B * ldx; ++i) x.put(act, i, 2 * u(rng));
    w = Blob(size_t(dim) * width * 2);
    for (int64_t i = 0; i < dim * width; ++i) w.put(act, i, u(rng));
    b = Blob(size_t(dim) * 2);
    for (int64_t i = 0; i < dim; ++i) b.put(act, i, u(rng));
    pool = Blob(size_t(num_slots) * slot_stride * dtype_bytes(state));
    for (int64_t i = 0; i < num_slots * slot_stride; ++i) pool.put(state, i, 2 * u(rng));
    pool0 = pool.host;
    for (int s = 0; s < B; ++s) slots.push_back(s == 2 ? -5 : s == 4 ? int32_t(num_slots) + 3 : (s * 5) % B);
    dslots = DeviceBuffer<int32_t>(B);
    dslots.upload(slots);
    y = Blob(size_t(B) * ldy * 2);
    x.upload();
    w.upload();
    b.upload();
    pool.upload();
  }
  Conv1dParams params(bool device) {
    Conv1dParams p;
    p.x = {x.base(device), act, B, dim, ldx};
    p.weight = {w.base(device), act, dim, width, width};
    if (bias) p.bias = {b.base(device), act, dim};
    p.state = {pool.base(device), state, num_slots, slot_stride};
    p.slots = device ? dslots.get() : slots.data();
    p.silu = silu;
    p.y = {y.base(device), act, B, dim, ldy};
    return p;
  }
  std::string str() const {
    return std::string(dtype_name(act)) + " state=" + dtype_name(state) + " dim=" + std::to_string(dim) +
           " width=" + std::to_string(width) + " bias=" + std::to_string(bias) + " silu=" + std::to_string(silu) +
           " ldx=" + std::to_string(ldx) + " B=" + std::to_string(B);
  }
};

void check_conv(const ConvProblem& pr, const std::vector<uint8_t>& y, const std::vector<uint8_t>& pool,
                const std::vector<double>& want_y, const std::vector<double>& want_pool) {
  Errors e;
  const double eps = pr.act == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -10);
  for (int b = 0; b < pr.B; ++b)
    for (int64_t c = 0; c < pr.ldy; ++c) {
      uint16_t bits;
      std::memcpy(&bits, y.data() + 2 * (b * pr.ldy + c), 2);
      if (c >= pr.dim) {
        e.touched += bits != 0xFFFF;
        continue;
      }
      if (!ref::slot_valid(pr.slots[b], pr.num_slots)) {
        e.wrong += bits != 0;
        continue;
      }
      const double w = want_y[b * pr.dim + c], g = ref::to_float(pr.act, bits);
      if (std::isnan(g)) ++e.unwritten;
      const double tol = eps * std::fabs(w) + 1e-5;
      if (!(std::fabs(g - w) <= tol)) ++e.wrong;
      e.worst = std::max(e.worst, std::fabs(g - w) / tol);
    }
  expect_clean(e, "conv1d outputs");
  // The state holds exact copies of inputs: every element must equal the reference bit for bit.
  int64_t pool_wrong = 0;
  for (int64_t i = 0; i < pr.num_slots * pr.slot_stride; ++i)
    pool_wrong += Blob::get(pool, pr.state, i) != want_pool[i];
  CHECK(pool_wrong == 0);
}

}  // namespace

TEST_CASE("conv1d: every runnable row matches the reference (widths 2..4, dims up to 16384, padding)") {
  std::mt19937_64 rng(99);
  std::vector<int64_t> dims = {1, 7, 64, 384, 1000, 8192, 16384};
  if (quick_mode()) dims = {7, 64, 384, 1000};
  int runs = 0;
  std::set<std::string> rows_seen;
  int variant = 0;
  for (DType act : {DType::bf16, DType::f16})
    for (bool f32_state : {false, true})
      for (int64_t dim : dims)
        for (int width : {2, 3, 4}) {
          ++variant;
          ConvProblem pr(act, f32_state ? DType::f32 : act, dim, width, variant % 2 == 0, variant % 3 != 0,
                         variant % 4 < 2, rng, variant % 5 == 0 ? 19 : 6);  // 19: blocks of 4 or 8 sequences and a rest
          std::vector<double> want_pool(pr.num_slots * pr.slot_stride), want_y;
          for (size_t i = 0; i < want_pool.size(); ++i) want_pool[i] = Blob::get(pr.pool0, pr.state, int64_t(i));
          ref::conv1d_update(pr.params(false), want_pool, want_y);
          std::vector<const char*> ids = runnable_rows<Conv1dOp>();
          ids.push_back(nullptr);
          for (const char* id : ids) {
            INFO(pr.str() << " row=" << std::string(id ? id : "auto"));
            ForceExperimental<Conv1dOp> force(id);
            const capabilities::Conv1dRow* row = nullptr;
            if (id && !check_conv1d_row(pr.params(true), device_target(), id, &row).ok()) continue;
            pr.pool.dev.upload(pr.pool0);
            pr.y.dev.fill_bytes(test::kPoisonByte);
            Explanation why;
            const Status s = calls::conv1d_update(pr.params(true), nullptr, GdnOptions{id, id ? nullptr : &why});
            INFO(s.to_string());
            REQUIRE(s.ok());
            test::device_synchronize();
            rows_seen.insert(id ? id : why.chosen);
            check_conv(pr, pr.y.download(), pr.pool.download(), want_y, want_pool);
            ++runs;
          }
        }
  MESSAGE(runs << " conv1d kernel runs checked");
  for (const char* id : runnable_rows<Conv1dOp>()) {
    INFO(std::string(id));
    CHECK(rows_seen.count(id) == 1);
  }
}

TEST_CASE("conv1d: in place (y over x, the same view) gives the bits of the out-of-place update") {
  std::mt19937_64 rng(31);
  int runs = 0;
  std::set<std::string> rows_seen;
  for (DType sdt : {DType::bf16, DType::f32})
    for (int64_t dim : {int64_t(7), int64_t(384), int64_t(4096)})
      for (const char* id : runnable_rows<Conv1dOp>()) {
        // Padded rows (x's padding must stay as it is), a padding sequence (its row of x becomes zeros).
        ConvProblem pr(DType::bf16, sdt, dim, 4, true, true, true, rng, 19);
        INFO(pr.str() << " row=" << std::string(id));
        ForceExperimental<Conv1dOp> force(id);
        Conv1dParams in_place = pr.params(true);
        in_place.y = {pr.x.base(true), pr.act, pr.B, pr.dim, pr.ldx};
        const capabilities::Conv1dRow* row = nullptr;
        if (!check_conv1d_row(in_place, device_target(), id, &row).ok()) continue;  // outside its contract
        pr.pool.dev.upload(pr.pool0);
        REQUIRE(calls::conv1d_update(pr.params(true), nullptr, GdnOptions{id}).ok());
        test::device_synchronize();
        const auto y = pr.y.download(), pool = pr.pool.download();
        pr.pool.dev.upload(pr.pool0);
        REQUIRE(calls::conv1d_update(in_place, nullptr, GdnOptions{id}).ok());
        test::device_synchronize();
        const auto x = pr.x.download();
        int64_t wrong = 0;
        for (int b = 0; b < pr.B; ++b)
          for (int64_t c = 0; c < pr.ldx; ++c)
            wrong += c < pr.dim ? std::memcmp(&x[2 * (b * pr.ldx + c)], &y[2 * (b * pr.ldy + c)], 2) != 0
                                : std::memcmp(&x[2 * (b * pr.ldx + c)], &pr.x.host[2 * (b * pr.ldx + c)], 2) != 0;
        CHECK(wrong == 0);
        CHECK(pr.pool.download() == pool);
        rows_seen.insert(id);
        ++runs;
      }
  MESSAGE(runs << " in-place conv1d runs checked");
  for (const char* id : runnable_rows<Conv1dOp>()) {
    INFO(std::string(id));
    CHECK(rows_seen.count(id) == 1);
  }
}

TEST_CASE("conv1d: graph replay gives the bits of eager runs; a rejected call writes nothing") {
  std::mt19937_64 rng(8);
  for (DType sdt : {DType::bf16, DType::f32}) {
    for (const char* id : runnable_rows<Conv1dOp>()) {
      ConvProblem pg(DType::bf16, sdt, 4096, 4, true, true, false, rng);
      INFO(std::string(id) << " state " << std::string(dtype_name(sdt)));
      ForceExperimental<Conv1dOp> force(id);
      const capabilities::Conv1dRow* row = nullptr;
      if (!check_conv1d_row(pg.params(true), device_target(), id, &row).ok()) continue;  // outside its contract
      pg.pool.dev.upload(pg.pool0);
      pg.y.dev.fill_bytes(test::kPoisonByte);
      for (int rep = 0; rep < 3; ++rep) REQUIRE(calls::conv1d_update(pg.params(true), nullptr, GdnOptions{id}).ok());
      test::device_synchronize();
      const auto y_e = pg.y.download(), pool_e = pg.pool.download();
      test::CapturedGraph graph(
          [&](stream_t stream) { return calls::conv1d_update(pg.params(true), stream, GdnOptions{id}); });
      pg.pool.dev.upload(pg.pool0);
      pg.y.dev.fill_bytes(test::kPoisonByte);
      test::device_synchronize();
      graph.replay(3);
      CHECK(pg.y.download() == y_e);
      CHECK(pg.pool.download() == pool_e);
    }
  }
  ConvProblem pr(DType::bf16, DType::bf16, 4096, 4, true, true, false, rng);
  std::vector<Conv1dParams> bad;
  auto make = [&](auto edit) {
    Conv1dParams p = pr.params(true);
    edit(p);
    bad.push_back(p);
  };
  make([](Conv1dParams& p) { p.x.data = nullptr; });
  make([](Conv1dParams& p) { p.weight.cols = 5; });
  make([](Conv1dParams& p) { p.y.dtype = DType::f16; });
  make([](Conv1dParams& p) { p.state.slot_stride = 3; });
  make([](Conv1dParams& p) { p.bias.size = 7; });
  for (const Conv1dParams& p : bad) {
    pr.pool.dev.upload(pr.pool0);
    pr.y.dev.fill_bytes(test::kPoisonByte);
    const Status s = calls::conv1d_update(p, nullptr);
    INFO(s.to_string());
    CHECK_FALSE(s.ok());
    test::device_synchronize();
    const auto y = pr.y.download();
    CHECK(std::all_of(y.begin(), y.end(), [](uint8_t v) { return v == 0xFF; }));
    CHECK(pr.pool.download() == pr.pool0);
  }
  // A padded weight (row stride 5 > width 4) in a buffer of its own: a valid call, but not the vector row's contract.
  DeviceBuffer<uint8_t> padded_weight(size_t(pr.dim) * 5 * dtype_bytes(pr.act));
  Conv1dParams p = pr.params(true);
  p.weight.data = padded_weight.get();
  p.weight.row_stride = 5;
  const capabilities::Conv1dRow* generic = nullptr;
  CHECK(check_conv1d_row(p, device_target(), "conv1d.generic", &generic).ok());
  CHECK(calls::conv1d_update(p, nullptr, GdnOptions{"conv1d.vec8"}).code() == StatusCode::unsupported);
}
