// Tile policy of gdn.tiled.vk (Cols = 32) and gdn.tiled.vk.c16 (Cols = 16): the [V, K] state layout
// (rows j = value index, contiguous along K). kKeyLanes (<= 16) consecutive lanes share a state row, each
// holding kSegs 16-byte vectors of it: vector g of lane l covers keys (g * kKeyLanes + l) * kVecElems
// onwards, so that one wave instruction reads whole 256-byte runs. Thread t owns rows
// j = t / kKeyLanes + kRowGroups * r. The sums over K stay inside those lanes (xor shuffles below 16:
// the same on wave32 and wave64), every lane of the segment gets u_j, and the step needs no barrier
// beyond the staging of q and k.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"
#include "dcukern/gdn/kernels/tile_kv.hpp"

namespace dcukern::gdn_detail {

template <int Cols, int K, DType SDT>
struct VkTile {
  static constexpr int kCols = Cols;
  static constexpr int kK = K;
  static constexpr DType kState = SDT;
  static constexpr int kVecElems = 16 / kElemBytes<SDT>;
  static constexpr int kRowVecs = K / kVecElems;
  static constexpr int kKeyLanes = kRowVecs < 16 ? kRowVecs : 16;
  static constexpr int kSegs = kRowVecs / kKeyLanes;
  static constexpr int kRowGroups = kTiledThreads / kKeyLanes;
  static constexpr int kRows = Cols / kRowGroups;
  static constexpr int kVecs = kRows * kSegs;
  static_assert(kRows >= 1 && Cols % kRowGroups == 0 && kRowVecs % kKeyLanes == 0, "tile shape");
  // The state tile is prefetched into L2 before a dependent launch's wait (recurrent_tiled.hpp), and the
  // inputs too by the 16-row tiles: the 32-row tiles spilled 20 bytes under their 80-register cap with
  // the inputs' prefetch code.
  static constexpr bool kPrefetchInputs = Cols < 32;

  struct Shared {};

  // The block's tile into L2 (a hint): its Cols rows of K elements lie together, one bulk prefetch.
  __device__ static void prefetch_state(const char* head, int tid, int j0, int /*vdim*/) {
    if (tid == 0) prefetch_l2_bulk(head + int64_t(j0) * K * kElemBytes<SDT>, Cols * K * kElemBytes<SDT>);
  }

  __device__ static int row(int tid, int r) { return tid / kKeyLanes + kRowGroups * r; }
  __device__ static int key(int tid, int g) { return (g * kKeyLanes + tid % kKeyLanes) * kVecElems; }
  // Vector v = r * kSegs + g: segment g of row r.
  __device__ static int64_t offset(int tid, int v, int j0, int /*vdim*/) {
    return int64_t(j0 + row(tid, v / kSegs)) * K + key(tid, v % kSegs);
  }

  // v of the thread's state rows, as loaded.
  template <DType DT>
  struct VRegs {
    ElemBits<DT> v[kRows];
  };
  template <DType DT>
  __device__ static VRegs<DT> load_v(const void* v, int64_t v_at) {
    VRegs<DT> r;
#pragma unroll
    for (int i = 0; i < kRows; ++i) r.v[i] = load_bits<DT>(v, v_at + row(threadIdx.x, i));
    return r;
  }

  template <DType DT>
  __device__ static void step(float (&s)[kVecs][kVecElems], const TokenQK& tk, const Gate& gt, const VRegs<DT>& vr,
                              void* o, int64_t o_at, Shared&) {
    const int tid = threadIdx.x;
    float kc[kSegs][kVecElems], qc[kSegs][kVecElems];
#pragma unroll
    for (int g = 0; g < kSegs; ++g)
#pragma unroll
      for (int c = 0; c < kVecElems; ++c) {
        kc[g][c] = tk.ks[key(tid, g) + c];
        qc[g][c] = tk.qs[key(tid, g) + c];
      }
    // Raw products: the norms and the decay are scalars, applied after the sums.
    float dk[kRows], dq[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      dk[r] = dq[r] = 0.f;
#pragma unroll
      for (int g = 0; g < kSegs; ++g)
#pragma unroll
        for (int c = 0; c < kVecElems; ++c) {
          dk[r] = fmaf(s[r * kSegs + g][c], kc[g][c], dk[r]);
          dq[r] = fmaf(s[r * kSegs + g][c], qc[g][c], dq[r]);
        }
    }
#pragma unroll
    for (int m = 1; m < kKeyLanes; m *= 2)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        dk[r] += shfl_xor(dk[r], m);
        dq[r] += shfl_xor(dq[r], m);
      }
    const float fk = gt.decay * tk.rk, fq = gt.decay * tk.rq;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int j = row(tid, r);
      const float u = gt.beta * (bits_to_float<DT>(vr.v[r]) - fk * dk[r]);
      if (tid % kKeyLanes == 0) store_elem<DT>(o, o_at + j, fmaf(u, tk.kq, fq * dq[r]));
      const float ur = u * tk.rk;  // S += (rk k_raw) u^T
#pragma unroll
      for (int g = 0; g < kSegs; ++g)
#pragma unroll
        for (int c = 0; c < kVecElems; ++c)
          s[r * kSegs + g][c] = round_to<SDT>(fmaf(kc[g][c], ur, s[r * kSegs + g][c] * gt.decay));
    }
  }
};

}  // namespace dcukern::gdn_detail
