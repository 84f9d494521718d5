// A random paged-KV attention problem on the host (shared by the host reference tests and the device
// tests): pages scattered through the pool in random order, block-table entries past a sequence's pages
// poisoned (a kernel that reads them fails under compute-sanitizer), NHD or HND pool layout.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "dcukern/attention/params.hpp"
#include "dcukern/ref/attention.hpp"

namespace dcukern::test {

struct AttnConfig {
  int T = 1, hq = 8, hkv = 2, D = 64, page_size = 16;
  DType qt = DType::bf16, kvt = DType::bf16;
  bool head_major = false;  // [pages, Hkv, page_size, D] instead of [pages, page_size, Hkv, D]
  std::vector<int32_t> ctx = {5, 40};
  float scale = 0.f, soft_cap = 0.f;
  int window_left = -1;
  bool alibi = false, sinks = false, lse = true;
  float k_scale = 1.f, v_scale = 1.f;  // fp8 only
  int extra_pages = 3;
  // Per sequence, a position (seen by every query token) whose key dominates every query head's softmax
  // (-1: none; empty: no needles): q's elements in [0.5, 1) and the needle's key elements at kNeedleKey
  // (fp8: the largest e4m3 value), so its logit exceeds every other's (at head_dim 128 by at least 68) and
  // o is its value row. A row that reads a wrong page, skips a chunk or drops the last partial page misses it by the
  // value's whole size; random keys alone average such an error away.
  std::vector<int32_t> needle_at;
};
constexpr float kNeedleKey = 16.f;

struct AttnHostProblem {
  AttnConfig c;
  int B = 0, max_pages = 1;
  int64_t num_pages = 0, pool_elems = 0;
  std::vector<uint16_t> q;
  std::vector<uint8_t> k, v;  // raw pool bytes (2 per element for f16/bf16, 1 for fp8)
  std::vector<int32_t> table, ctx;
  std::vector<float> alibi, sinks;

  AttnHostProblem(const AttnConfig& cfg, std::mt19937_64& rng) : c(cfg) {
    B = static_cast<int>(c.ctx.size());
    ctx = c.ctx;
    std::vector<int> pages_of(B);
    for (int b = 0; b < B; ++b) {
      pages_of[b] = (ctx[b] + c.page_size - 1) / c.page_size;
      max_pages = std::max(max_pages, pages_of[b]);
      num_pages += pages_of[b];
    }
    num_pages += c.extra_pages;
    std::vector<int32_t> perm(num_pages);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    table.assign(size_t(B) * max_pages, 0x7fffffff);
    size_t next = 0;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < pages_of[b]; ++i) table[size_t(b) * max_pages + i] = perm[next++];
    pool_elems = num_pages * c.page_size * c.hkv * c.D;
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    q.resize(size_t(B) * c.T * c.hq * c.D);
    for (auto& e : q) e = ref::from_float(c.qt, u(rng));
    const int eb = dtype_bytes(c.kvt);
    k.resize(size_t(pool_elems) * eb);
    v.resize(size_t(pool_elems) * eb);
    for (int64_t i = 0; i < pool_elems; ++i) {
      const float kf = 2.f * u(rng), vf = u(rng);
      if (c.kvt == DType::fp8_e4m3) {
        k[i] = ref::float_to_fp8_e4m3(kf * 8.f);
        v[i] = ref::float_to_fp8_e4m3(vf * 8.f);
      } else {
        const uint16_t kh = ref::from_float(c.kvt, kf), vh = ref::from_float(c.kvt, vf);
        std::memcpy(&k[i * 2], &kh, 2);
        std::memcpy(&v[i * 2], &vh, 2);
      }
    }
    place_needles(rng);
    if (c.alibi) {
      alibi.resize(c.hq);
      for (int h = 0; h < c.hq; ++h) alibi[h] = std::pow(2.f, -8.f * (h + 1) / c.hq);
    }
    if (c.sinks) {
      sinks.resize(c.hq);
      for (auto& s : sinks) s = 2.f * u(rng);
    }
  }

  // Pool element index of sequence b's key or value element d at position pos, KV head h.
  int64_t pool_index(int b, int pos, int h, int d) const {
    const int64_t page = table[size_t(b) * max_pages + pos / c.page_size], slot = pos % c.page_size;
    const int64_t in_page = c.head_major ? (int64_t(h) * c.page_size + slot) * c.D : (slot * c.hkv + h) * c.D;
    return page * c.page_size * c.hkv * c.D + in_page + d;
  }
  void place_needles(std::mt19937_64& rng) {
    if (c.needle_at.empty()) return;
    std::uniform_real_distribution<float> half(0.5f, 1.f);
    const uint8_t fp8_largest = ref::float_to_fp8_e4m3(448.f);
    const uint16_t key = c.kvt == DType::fp8_e4m3 ? 0 : ref::from_float(c.kvt, kNeedleKey);
    const size_t q_elems = size_t(c.T) * c.hq * c.D;  // a sequence's
    for (int b = 0; b < B; ++b) {
      const int pos = c.needle_at.at(size_t(b));
      if (pos < 0) continue;
      for (size_t i = 0; i < q_elems; ++i) q[size_t(b) * q_elems + i] = ref::from_float(c.qt, half(rng));
      for (int h = 0; h < c.hkv; ++h)
        for (int d = 0; d < c.D; ++d) {
          const int64_t i = pool_index(b, pos, h, d);
          if (c.kvt == DType::fp8_e4m3) k[size_t(i)] = fp8_largest;
          else std::memcpy(&k[size_t(i) * 2], &key, 2);
        }
    }
  }

  // The params over the given buffers (host or device), q/o dense [B, T, Hq, D].
  AttentionParams params(const void* qp, void* op, const void* kp, const void* vp, const int32_t* tp,
                         const int32_t* cp, float* lsep, const float* alibip, const float* sinkp) const {
    AttentionParams p;
    p.batch = B, p.q_tokens = c.T, p.num_q_heads = c.hq, p.num_kv_heads = c.hkv, p.head_dim = c.D;
    const int64_t hs = c.D, ts = int64_t(c.hq) * c.D, bs = int64_t(c.T) * ts;
    p.q = {qp, c.qt, bs, ts, hs};
    p.o = {op, c.qt, bs, ts, hs};
    p.kv.k = kp, p.kv.v = vp, p.kv.dtype = c.kvt, p.kv.num_pages = num_pages, p.kv.page_size = c.page_size;
    p.kv.page_stride = int64_t(c.page_size) * c.hkv * c.D;
    if (c.head_major) p.kv.head_stride = int64_t(c.page_size) * c.D, p.kv.token_stride = c.D;
    else p.kv.head_stride = c.D, p.kv.token_stride = int64_t(c.hkv) * c.D;
    if (c.kvt == DType::fp8_e4m3) p.kv.k_scale = c.k_scale, p.kv.v_scale = c.v_scale;
    p.block_table = tp, p.max_pages = max_pages, p.block_table_stride = max_pages;
    p.context_lens = cp;
    p.lse = c.lse ? lsep : nullptr;
    p.scale = c.scale, p.soft_cap = c.soft_cap, p.window_left = c.window_left;
    p.alibi_slopes = c.alibi ? alibip : nullptr;
    p.sinks = c.sinks ? sinkp : nullptr;
    return p;
  }
  // Params over the host arrays (o and lse are unused by the reference).
  AttentionParams host_params() const {
    return params(q.data(), reinterpret_cast<void*>(0x100), k.data(), v.data(), table.data(), ctx.data(), nullptr,
                  alibi.data(), sinks.data());
  }
  size_t out_elems() const { return q.size(); }
  size_t rows() const { return size_t(B) * c.T * c.hq; }
};

}  // namespace dcukern::test
