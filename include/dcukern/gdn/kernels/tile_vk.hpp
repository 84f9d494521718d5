// Tile policy of gdn.tiled.vk: the [V, K] state layout (rows j = value index, contiguous along K).
// A fragment holds kFragElems = max(16 bytes, K / 32) consecutive key positions of one state row, so
// kKeyChunks = K / kFragElems <= 32 lanes cover a row: thread t owns key chunk t % kKeyChunks of rows
// j = t / kKeyChunks + kRowGroups * r. The reduction over K stays inside those kKeyChunks consecutive
// lanes (xor shuffles below 32: the same on wave32 and wave64), every lane of the segment gets u_j, and
// the step needs no barrier beyond the staging of q and k.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"
#include "dcukern/gdn/kernels/tile_kv.hpp"

namespace dcukern::gdn_detail {

template <int K, DType SDT>
struct VkTile {
  static constexpr int kFragElems = (16 / kElemBytes<SDT>) > K / 32 ? 16 / kElemBytes<SDT> : K / 32;
  static constexpr int kKeyChunks = K / kFragElems;
  static constexpr int kRowGroups = kTiledThreads / kKeyChunks;
  static constexpr int kFrags = kTileCols / kRowGroups;
  static_assert(kKeyChunks <= 32 && kTileCols % kRowGroups == 0, "tile shape");

  struct Shared {};

  __device__ static int row(int tid, int r) { return tid / kKeyChunks + kRowGroups * r; }
  __device__ static int key(int tid) { return (tid % kKeyChunks) * kFragElems; }
  __device__ static int64_t offset(int tid, int r, int j0, int /*vdim*/) {
    return int64_t(j0 + row(tid, r)) * K + key(tid);
  }

  template <DType DT>
  __device__ static void step(float (&s)[kFrags][kFragElems], const TokenQK& tk, const Gate& gt, const void* v,
                              int64_t v_at, void* o, int64_t o_at, Shared&) {
    const int tid = threadIdx.x;
    float kc[kFragElems], qc[kFragElems];
#pragma unroll
    for (int c = 0; c < kFragElems; ++c) {
      kc[c] = tk.ks[key(tid) + c] * tk.rk;
      qc[c] = tk.qs[key(tid) + c] * tk.rq;
    }
    float dk[kFrags], dq[kFrags];
#pragma unroll
    for (int r = 0; r < kFrags; ++r) {
      dk[r] = dq[r] = 0.f;
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) {
        s[r][c] *= gt.decay;
        dk[r] = fmaf(s[r][c], kc[c], dk[r]);
        dq[r] = fmaf(s[r][c], qc[c], dq[r]);
      }
    }
#pragma unroll
    for (int m = 1; m < kKeyChunks; m *= 2)
#pragma unroll
      for (int r = 0; r < kFrags; ++r) {
        dk[r] += shfl_xor(dk[r], m);
        dq[r] += shfl_xor(dq[r], m);
      }
#pragma unroll
    for (int r = 0; r < kFrags; ++r) {
      const int j = row(tid, r);
      const float u = gt.beta * (load_elem<DT>(v, v_at + j) - dk[r]);
      if (tid % kKeyChunks == 0) store_elem<DT>(o, o_at + j, fmaf(u, tk.kq, dq[r]));
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) s[r][c] = round_to<SDT>(fmaf(kc[c], u, s[r][c]));
    }
  }
};

}  // namespace dcukern::gdn_detail
