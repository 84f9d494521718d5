// Shared pieces of the GDN kernels: the argument blocks, element access for the runtime dtypes, 16-byte
// fragment loads and stores, fp32 math that lowers to instructions on every target (no device library
// needed where a target's device libraries are missing), the gating and the per-token staging of q and k.
#pragma once
#include <cstdint>
#include <type_traits>

#include "dcukern/core/dtype.hpp"
#include "dcukern/core/fast_divide.hpp"
#include "dcukern/gdn/params.hpp"
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/platform/fastmath.hpp"
#include "dcukern/platform/isa.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/vec.hpp"
#include "dcukern/platform/warp.hpp"

namespace dcukern::gdn_detail {

// Element size of a dtype as a compile-time constant usable in device code.
template <DType DT>
inline constexpr int kElemBytes = dtype_bytes(DT);

// A strided [batch, tokens, heads, dim] tensor in kernel arguments (strides in elements).
struct Strided {
  const void* p;
  int64_t bs, ts, hs;
  __device__ __forceinline__ int64_t at(int b, int t, int h) const { return b * bs + t * ts + h * hs; }
};

struct GdnArgs {
  Strided q, k, v, a, b, g, beta;
  DType ab_dtype;
  const float* A_log;
  const float* dt_bias;
  bool raw_gating, l2norm, kv_layout;
  float scale;
  void* state;
  int64_t num_slots, slot_stride;
  const int32_t* slots;
  const int32_t* token_slots;
  int64_t token_slots_stride;
  void* o;
  int64_t o_bs, o_ts, o_hs;
  int batch, tokens, hk, hv, kdim, vdim, group;  // group = HV / H
  FastDivide hv_div, group_div;  // by hv and by group
  FastDivide col_div;            // by the column blocks per head (tiled kernels; set at their launch)
};

// n / f.divisor for 0 <= n < 2^31 without an integer division.
__device__ __forceinline__ uint32_t divide(uint32_t n, const FastDivide& f) {
  return fast_divide_with(n, f, __umulhi(n, f.multiplier));
}

struct Conv1dArgs {
  const void* x;
  const void* w;
  const void* bias;  // nullptr: none
  void* state;
  void* y;
  const int32_t* slots;
  int64_t ldx, ldw, ldy, num_slots, slot_stride, dim;
  int batch, width;
  bool silu;
};

// x * sigmoid(x) from exp2 and the hardware reciprocal: a few ulp, well inside the 16-bit outputs' rounding.
__device__ __forceinline__ float silu(float x) { return x * device_fast_rcp(1.0f + device_exp2(-1.44269504f * x)); }

// ---- element access ----
template <DType DT>
__device__ __forceinline__ float load_elem(const void* p, int64_t i) {
  if constexpr (DT == DType::f32) return static_cast<const float*>(p)[i];
  else return to_float<DT>(static_cast<const uint16_t*>(p)[i]);
}
template <DType DT>
__device__ __forceinline__ void store_elem(void* p, int64_t i, float v) {
  if constexpr (DT == DType::f32) static_cast<float*>(p)[i] = v;
  else static_cast<uint16_t*>(p)[i] = from_float<DT>(v);
}
// An element of DT as loaded, before conversion (the float itself, or the 16 bits): inputs are kept in
// this form until the state loads are issued, so that no instruction waits on them earlier.
template <DType DT>
using ElemBits = std::conditional_t<DT == DType::f32, float, uint16_t>;
template <DType DT>
__device__ __forceinline__ ElemBits<DT> load_bits(const void* p, int64_t i) {
  return static_cast<const ElemBits<DT>*>(p)[i];
}
template <DType DT>
__device__ __forceinline__ float bits_to_float(ElemBits<DT> v) {
  if constexpr (DT == DType::f32) return v;
  else return to_float<DT>(v);
}
// The same for a scalar whose dtype is known only at run time (gating inputs: read once per token and
// head): the f32 word, or the 16 bits zero-extended.
__device__ __forceinline__ uint32_t load_any_bits(const void* p, DType t, int64_t i) {
  return t == DType::f32 ? static_cast<const uint32_t*>(p)[i] : uint32_t(static_cast<const uint16_t*>(p)[i]);
}
__device__ __forceinline__ float any_bits_to_float(uint32_t v, DType t) {
  if (t == DType::f32) return __uint_as_float(v);
  if (t == DType::bf16) return to_float<DType::bf16>(uint16_t(v));
  return to_float<DType::f16>(uint16_t(v));
}
// The value a state element holds once stored in dtype SDT (bf16 state is rounded after every token).
template <DType SDT>
__device__ __forceinline__ float round_to(float v) {
  if constexpr (SDT == DType::f32) return v;
  else return to_float<SDT>(from_float<SDT>(v));
}

// The 16 / bytes elements of dtype DT in one 16-byte vector, as fp32.
template <DType DT>
__device__ __forceinline__ void unpack16(const vec16_t& w, float* out) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (DT == DType::f32) out[i] = __uint_as_float(vec16_word(w, i));
    else unpack2<DT>(vec16_word(w, i), out[2 * i], out[2 * i + 1]);
  }
}

// N elements of dtype DT, N * bytes a multiple of 16 and p 16-byte aligned, as fp32 (16-byte accesses).
template <DType DT, int N>
__device__ __forceinline__ void load_elems(const void* p, float (&out)[N]) {
  constexpr int kPerVec = 16 / kElemBytes<DT>;
  static_assert(N % kPerVec == 0, "whole 16-byte vectors only");
#pragma unroll
  for (int vi = 0; vi < N / kPerVec; ++vi)
    unpack16<DT>(load16(static_cast<const char*>(p) + 16 * vi), out + vi * kPerVec);
}
template <DType DT, int N>
__device__ __forceinline__ void store_elems(void* p, const float (&in)[N]) {
  constexpr int kPerVec = 16 / kElemBytes<DT>;
  static_assert(N % kPerVec == 0, "whole 16-byte vectors only");
#pragma unroll
  for (int vi = 0; vi < N / kPerVec; ++vi) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (DT == DType::f32) w[i] = __float_as_uint(in[vi * 4 + i]);
      else w[i] = pack2<DT>(in[vi * 8 + 2 * i], in[vi * 8 + 2 * i + 1]);
    }
    vec16_t v;
    v.x = w[0];
    v.y = w[1];
    v.z = w[2];
    v.w = w[3];
    *reinterpret_cast<vec16_t*>(static_cast<char*>(p) + 16 * vi) = v;
  }
}

// Four elements of dtype DT as one vector: 8 bytes (16-bit dtypes) or 16 bytes (f32).
template <DType DT>
using Vec4 = std::conditional_t<kElemBytes<DT> == 4, vec16_t, vec8_t>;

template <DType DT>
__device__ __forceinline__ void unpack4(const Vec4<DT>& v, float* out) {
  if constexpr (DT == DType::f32) {
    out[0] = __uint_as_float(v.x);
    out[1] = __uint_as_float(v.y);
    out[2] = __uint_as_float(v.z);
    out[3] = __uint_as_float(v.w);
  } else {
    unpack2<DT>(v.x, out[0], out[1]);
    unpack2<DT>(v.y, out[2], out[3]);
  }
}
// Element e of an array of Vec4<DT> as its raw bits (zero-extended for 16-bit dtypes); e a constant after
// unrolling, so this is a register pick.
template <DType DT>
__device__ __forceinline__ uint32_t vec4_bits(const Vec4<DT>* v, int e) {
  if constexpr (kElemBytes<DT> == 4) {
    return vec16_word(v[e / 4], e % 4);
  } else {
    const uint32_t w = (e % 4) < 2 ? v[e / 4].x : v[e / 4].y;
    return e % 2 ? w >> 16 : w & 0xffffu;
  }
}
// Four elements' raw bits (as vec4_bits gives them) as one Vec4<DT>.
template <DType DT>
__device__ __forceinline__ Vec4<DT> vec4_from_bits(const uint32_t* bits) {
  Vec4<DT> v;
  if constexpr (kElemBytes<DT> == 4) {
    v.x = bits[0];
    v.y = bits[1];
    v.z = bits[2];
    v.w = bits[3];
  } else {
    v.x = bits[0] | bits[1] << 16;
    v.y = bits[2] | bits[3] << 16;
  }
  return v;
}
template <DType DT>
__device__ __forceinline__ Vec4<DT> vec4_zero() {
  Vec4<DT> v;
  v.x = v.y = 0u;
  if constexpr (kElemBytes<DT> == 4) v.z = v.w = 0u;
  return v;
}
template <DType DT>
__device__ __forceinline__ Vec4<DT> pack4(const float* in) {
  Vec4<DT> v;
  if constexpr (DT == DType::f32) {
    v.x = __float_as_uint(in[0]);
    v.y = __float_as_uint(in[1]);
    v.z = __float_as_uint(in[2]);
    v.w = __float_as_uint(in[3]);
  } else {
    v.x = pack2<DT>(in[0], in[1]);
    v.y = pack2<DT>(in[2], in[3]);
  }
  return v;
}

// ---- per (sequence, token, value head) ----
__device__ __forceinline__ bool slot_valid(int64_t slot, int64_t num_slots) { return slot >= 0 && slot < num_slots; }

// Pool address of one value head's state in `slot` (64-bit offsets).
template <DType SDT>
__device__ __forceinline__ char* head_state(const GdnArgs& a, int64_t slot, int hv) {
  const int64_t elem = slot * a.slot_stride + int64_t(hv) * a.kdim * a.vdim;
  return static_cast<char*>(a.state) + elem * kElemBytes<SDT>;
}
// Pool address of the state written after token t, or nullptr when none is asked for.
template <DType SDT>
__device__ __forceinline__ char* token_state(const GdnArgs& a, int b, int t, int hv) {
  if (!a.token_slots) return nullptr;
  const int64_t slot = a.token_slots[b * a.token_slots_stride + t];
  return slot_valid(slot, a.num_slots) ? head_state<SDT>(a, slot, hv) : nullptr;
}

struct Gate {
  float decay, beta;
};
// The gating inputs of (b, t, hv) as loaded (see ElemBits): in-kernel a, dt_bias, A_log, b (a and b in
// ab_dtype, the others f32 words); or precomputed g, beta (f32 words; x2, x3 unused).
struct GateIn {
  uint32_t x0, x1, x2, x3;
};
__device__ __forceinline__ GateIn load_gate(const GdnArgs& a, int b, int t, int hv) {
  if (a.raw_gating)
    return {load_any_bits(a.a.p, a.ab_dtype, a.a.at(b, t, hv)), __float_as_uint(a.dt_bias[hv]),
            __float_as_uint(a.A_log[hv]), load_any_bits(a.b.p, a.ab_dtype, a.b.at(b, t, hv))};
  return {__float_as_uint(static_cast<const float*>(a.g.p)[a.g.at(b, t, hv)]),
          __float_as_uint(static_cast<const float*>(a.beta.p)[a.beta.at(b, t, hv)]), 0u, 0u};
}
// decay = exp(g), g = -exp(A_log) * softplus(a + dt_bias) (softplus threshold 20), beta = sigmoid(b); or
// the given g and beta. All in fp32.
__device__ __forceinline__ Gate finish_gate(const GdnArgs& a, const GateIn& in) {
  if (a.raw_gating) {
    const float x = any_bits_to_float(in.x0, a.ab_dtype) + __uint_as_float(in.x1);
    const float softplus = x > 20.f ? x : device_log(1.f + device_exp(x));
    const float g = -device_exp(__uint_as_float(in.x2)) * softplus;
    return {device_exp(g), 1.f / (1.f + device_exp(-any_bits_to_float(in.x3, a.ab_dtype)))};
  }
  return {device_exp(__uint_as_float(in.x0)), __uint_as_float(in.x1)};
}
__device__ __forceinline__ Gate gate(const GdnArgs& a, int b, int t, int hv) {
  return finish_gate(a, load_gate(a, b, t, hv));
}

// q and k of one token in shared memory, raw, with the factors that normalise and scale them:
// k_i = ks[i] * rk, q_i = qs[i] * rq, kq = sum_i k_i q_i.
struct TokenQK {
  const float* ks;
  const float* qs;
  float rk, rq, kq;
};

// The factors from the sums kk = sum k_i^2, qq = sum q_i^2, kq = sum k_i q_i of a token staged in buf.
__device__ __forceinline__ TokenQK qk_from_sums(const GdnArgs& a, const float* buf, float kk, float qq, float kq) {
  const float rk = a.l2norm ? device_rsqrt(kk + 1e-6f) : 1.f;
  const float rq = (a.l2norm ? device_rsqrt(qq + 1e-6f) : 1.f) * a.scale;
  return {buf, buf + a.kdim, rk, rq, kq * rk * rq};
}

// The norms and k.q of a token staged in buf[0..K) (k) and buf[K..2K) (q), computed by every wave
// from shared memory (no barrier of its own).
__device__ __forceinline__ TokenQK qk_factors(const GdnArgs& a, const float* buf) {
  float kk = 0.f, qq = 0.f, kq = 0.f;
  for (int i = lane_id(); i < a.kdim; i += kWarpSize) {
    const float kv = buf[i], qv = buf[a.kdim + i];
    kk = fmaf(kv, kv, kk);
    qq = fmaf(qv, qv, qq);
    kq = fmaf(kv, qv, kq);
  }
  return qk_from_sums(a, buf, warp_sum(kk), warp_sum(qq), warp_sum(kq));
}

// Block-wide: stage q and k of (b, t, key head) into buf[0..K) and buf[K..2K), then every wave
// computes the norms and k.q from shared memory (no second barrier). All threads must call it.
template <DType DT>
__device__ __forceinline__ TokenQK stage_qk(const GdnArgs& a, int b, int t, int hv, float* buf) {
  const int h = hv / a.group;
  const int64_t qo = a.q.at(b, t, h), ko = a.k.at(b, t, h);
  for (int i = threadIdx.x; i < a.kdim; i += blockDim.x) {
    buf[i] = load_elem<DT>(a.k.p, ko + i);
    buf[a.kdim + i] = load_elem<DT>(a.q.p, qo + i);
  }
  __syncthreads();
  return qk_factors(a, buf);
}

// The same in two halves for a compile-time K and block size, so that the loads can be issued long
// before the barrier: load() into registers (element tid + Threads * n of k and q, unconverted); then
// publish(): q and k to shared memory with each wave's sums of their squares and products (shuffles,
// before the barrier), one barrier, and every thread adds the kWaves sums (no pass over q and k after the
// barrier: this is on the B = 1 step's critical path). buf holds kStageFloats.
template <DType DT, int K, int Threads>
struct QkRegs {
  static constexpr int kPer = (K + Threads - 1) / Threads;
  static constexpr int kWaves = Threads / kWarpSize;
  static constexpr int kStageFloats = 2 * K + 3 * kWaves;
  ElemBits<DT> k[kPer], q[kPer];  // as loaded; converted in publish()

  __device__ __forceinline__ void load(const GdnArgs& a, int b, int t, int hv) {
    const int h = int(divide(uint32_t(hv), a.group_div));
    const int64_t qo = a.q.at(b, t, h), ko = a.k.at(b, t, h);
#pragma unroll
    for (int n = 0; n < kPer; ++n) {
      const int i = int(threadIdx.x) + Threads * n;
      k[n] = i < K ? load_bits<DT>(a.k.p, ko + i) : ElemBits<DT>{};
      q[n] = i < K ? load_bits<DT>(a.q.p, qo + i) : ElemBits<DT>{};
    }
  }
  // The lines load() reads, into L2 (prefetch_l2).
  __device__ __forceinline__ static void prefetch(const GdnArgs& a, int b, int t, int hv) {
    const int h = int(divide(uint32_t(hv), a.group_div));
    for (int i = int(threadIdx.x); i < K; i += Threads) {
      prefetch_l2(static_cast<const ElemBits<DT>*>(a.k.p) + a.k.at(b, t, h) + i);
      prefetch_l2(static_cast<const ElemBits<DT>*>(a.q.p) + a.q.at(b, t, h) + i);
    }
  }
  __device__ __forceinline__ TokenQK publish(const GdnArgs& a, float* buf) const {
    float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
    for (int n = 0; n < kPer; ++n) {
      const int i = int(threadIdx.x) + Threads * n;
      if (i < K) {
        const float kv = bits_to_float<DT>(k[n]), qv = bits_to_float<DT>(q[n]);
        buf[i] = kv;
        buf[K + i] = qv;
        kk = fmaf(kv, kv, kk);
        qq = fmaf(qv, qv, qq);
        kq = fmaf(kv, qv, kq);
      }
    }
#pragma unroll
    for (int mask = kWarpSize / 2; mask > 0; mask /= 2) {  // the three sums' shuffles interleaved
      kk += shfl_xor(kk, mask);
      qq += shfl_xor(qq, mask);
      kq += shfl_xor(kq, mask);
    }
    float* const sums = buf + 2 * K;  // [kk, qq, kq][wave]
    if (lane_id() == 0) {
      const int wave = int(threadIdx.x) / kWarpSize;
      sums[wave] = kk;
      sums[kWaves + wave] = qq;
      sums[2 * kWaves + wave] = kq;
    }
    __syncthreads();
    kk = qq = kq = 0.f;
#pragma unroll
    for (int w = 0; w < kWaves; ++w) {
      kk += sums[w];
      qq += sums[kWaves + w];
      kq += sums[2 * kWaves + w];
    }
    return qk_from_sums(a, buf, kk, qq, kq);
  }
};

// Zero outputs of a padding sequence: columns [j0, j0 + n) of every token for one value head.
template <DType DT>
__device__ __forceinline__ void zero_outputs(const GdnArgs& a, int b, int hv, int j0, int n) {
  for (int idx = threadIdx.x; idx < a.tokens * n; idx += blockDim.x) {
    const int t = idx / n, j = j0 + idx % n;
    store_elem<DT>(a.o, b * a.o_bs + t * a.o_ts + hv * a.o_hs + j, 0.f);
  }
}

}  // namespace dcukern::gdn_detail
