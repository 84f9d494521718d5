// Shared pieces of the GDN kernels: the argument blocks, element access for the runtime dtypes, 16-byte
// fragment loads and stores, fp32 math that lowers to instructions on every target (no device library
// needed: gfx11 builds use -nogpulib), the gating and the per-token staging of q and k.
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/gdn/params.hpp"
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
};

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

__device__ __forceinline__ float silu(float x) { return x / (1.0f + device_exp(-x)); }

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
// A scalar whose dtype is known only at run time (gating inputs: read once per token and head).
__device__ __forceinline__ float load_any(const void* p, DType t, int64_t i) {
  if (t == DType::f32) return load_elem<DType::f32>(p, i);
  if (t == DType::bf16) return load_elem<DType::bf16>(p, i);
  return load_elem<DType::f16>(p, i);
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
  for (int vi = 0; vi < N / kPerVec; ++vi) unpack16<DT>(load16(static_cast<const char*>(p) + 16 * vi), out + vi * kPerVec);
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
      else w[i] = uint32_t(from_float<DT>(in[vi * 8 + 2 * i])) | uint32_t(from_float<DT>(in[vi * 8 + 2 * i + 1])) << 16;
    }
    vec16_t v;
    v.x = w[0];
    v.y = w[1];
    v.z = w[2];
    v.w = w[3];
    *reinterpret_cast<vec16_t*>(static_cast<char*>(p) + 16 * vi) = v;
  }
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
// The raw gating inputs of (b, t, hv): in-kernel a, dt_bias, A_log, b; precomputed g, beta (x2, x3
// unused). Loaded on their own so that their latency overlaps that of the other loads.
struct GateIn {
  float x0, x1, x2, x3;
};
__device__ __forceinline__ GateIn load_gate(const GdnArgs& a, int b, int t, int hv) {
  if (a.raw_gating)
    return {load_any(a.a.p, a.ab_dtype, a.a.at(b, t, hv)), a.dt_bias[hv], a.A_log[hv],
            load_any(a.b.p, a.ab_dtype, a.b.at(b, t, hv))};
  return {static_cast<const float*>(a.g.p)[a.g.at(b, t, hv)], static_cast<const float*>(a.beta.p)[a.beta.at(b, t, hv)],
          0.f, 0.f};
}
// decay = exp(g), g = -exp(A_log) * softplus(a + dt_bias) (softplus threshold 20), beta = sigmoid(b); or
// the given g and beta. All in fp32.
__device__ __forceinline__ Gate finish_gate(const GdnArgs& a, const GateIn& in) {
  if (a.raw_gating) {
    const float x = in.x0 + in.x1;
    const float softplus = x > 20.f ? x : device_log(1.f + device_exp(x));
    const float g = -device_exp(in.x2) * softplus;
    return {device_exp(g), 1.f / (1.f + device_exp(-in.x3))};
  }
  return {device_exp(in.x0), in.x1};
}
__device__ __forceinline__ Gate gate(const GdnArgs& a, int b, int t, int hv) { return finish_gate(a, load_gate(a, b, t, hv)); }

// q and k of one token in shared memory, raw, with the factors that normalise and scale them:
// k_i = ks[i] * rk, q_i = qs[i] * rq, kq = sum_i k_i q_i.
struct TokenQK {
  const float* ks;
  const float* qs;
  float rk, rq, kq;
};

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
  kk = warp_sum(kk);
  qq = warp_sum(qq);
  kq = warp_sum(kq);
  const float rk = a.l2norm ? device_rsqrt(kk + 1e-6f) : 1.f;
  const float rq = (a.l2norm ? device_rsqrt(qq + 1e-6f) : 1.f) * a.scale;
  return {buf, buf + a.kdim, rk, rq, kq * rk * rq};
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
// before the barrier: load() into registers (element tid + Threads * n of k and q), publish() to
// shared memory, barrier, factors.
template <DType DT, int K, int Threads>
struct QkRegs {
  static constexpr int kPer = (K + Threads - 1) / Threads;
  float k[kPer], q[kPer];

  __device__ __forceinline__ void load(const GdnArgs& a, int b, int t, int hv) {
    const int h = hv / a.group;
    const int64_t qo = a.q.at(b, t, h), ko = a.k.at(b, t, h);
#pragma unroll
    for (int n = 0; n < kPer; ++n) {
      const int i = int(threadIdx.x) + Threads * n;
      k[n] = i < K ? load_elem<DT>(a.k.p, ko + i) : 0.f;
      q[n] = i < K ? load_elem<DT>(a.q.p, qo + i) : 0.f;
    }
  }
  __device__ __forceinline__ TokenQK publish(const GdnArgs& a, float* buf) const {
#pragma unroll
    for (int n = 0; n < kPer; ++n) {
      const int i = int(threadIdx.x) + Threads * n;
      if (i < K) {
        buf[i] = k[n];
        buf[K + i] = q[n];
      }
    }
    __syncthreads();
    return qk_factors(a, buf);
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
