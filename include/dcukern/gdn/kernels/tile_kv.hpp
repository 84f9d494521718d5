// Tile policy of gdn.tiled.kv: the [K, V] state layout (rows i = key index, contiguous along V).
// A 16-byte fragment holds kFragElems consecutive columns of one row. Thread t owns column chunk
// t % kColChunks of rows t / kColChunks + kRowGroups * r. The reduction over K (rows) runs first across
// the lanes of a wave that share a column chunk (shuffles, valid for wave32 and wave64), then across
// waves in shared memory; threads j < 32 then form u_j and o_j and publish u through shared memory.
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

constexpr int kTiledThreads = 128;
constexpr int kTileCols = 32;  // state columns j per block

template <int K, DType SDT>
struct KvTile {
  static constexpr int kFragElems = 16 / kElemBytes<SDT>;
  static constexpr int kColChunks = kTileCols / kFragElems;
  static constexpr int kRowGroups = kTiledThreads / kColChunks;
  static constexpr int kFrags = K / kRowGroups;
  static_assert(kColChunks <= 32 && K % kRowGroups == 0, "tile shape");

  struct Shared {
    float red[kTiledThreads / 32][2][kTileCols];  // per-wave partial sums (room for wave32)
    float u[kTileCols];
  };

  __device__ static int row(int tid, int r) { return tid / kColChunks + kRowGroups * r; }
  __device__ static int col(int tid) { return (tid % kColChunks) * kFragElems; }
  // Element offset of fragment r of thread tid in a head's state, for the block starting at column j0.
  __device__ static int64_t offset(int tid, int r, int j0, int vdim) {
    return int64_t(row(tid, r)) * vdim + j0 + col(tid);
  }

  template <DType DT>
  __device__ static void step(float (&s)[kFrags][kFragElems], const TokenQK& tk, const Gate& gt, const void* v,
                              int64_t v_at, void* o, int64_t o_at, Shared& sh) {
    const int tid = threadIdx.x, lane = lane_id(), wave = tid / kWarpSize;
    float pk[kFragElems] = {}, pq[kFragElems] = {};
#pragma unroll
    for (int r = 0; r < kFrags; ++r) {
      const float kr = tk.ks[row(tid, r)] * tk.rk, qr = tk.qs[row(tid, r)] * tk.rq;
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) {
        s[r][c] *= gt.decay;
        pk[c] = fmaf(s[r][c], kr, pk[c]);
        pq[c] = fmaf(s[r][c], qr, pq[c]);
      }
    }
    // Lanes kColChunks apart own the same columns.
#pragma unroll
    for (int m = kColChunks; m < kWarpSize; m *= 2)
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) {
        pk[c] += shfl_xor(pk[c], m);
        pq[c] += shfl_xor(pq[c], m);
      }
    if (lane < kColChunks) {
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) {
        sh.red[wave][0][col(tid) + c] = pk[c];
        sh.red[wave][1][col(tid) + c] = pq[c];
      }
    }
    __syncthreads();
    if (tid < kTileCols) {
      float dk = 0.f, dq = 0.f;
      for (int w = 0; w < kTiledThreads / kWarpSize; ++w) {
        dk += sh.red[w][0][tid];
        dq += sh.red[w][1][tid];
      }
      const float u = gt.beta * (load_elem<DT>(v, v_at + tid) - dk);
      store_elem<DT>(o, o_at + tid, fmaf(u, tk.kq, dq));
      sh.u[tid] = u;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kFrags; ++r) {
      const float kr = tk.ks[row(tid, r)] * tk.rk;
#pragma unroll
      for (int c = 0; c < kFragElems; ++c) s[r][c] = round_to<SDT>(fmaf(kr, sh.u[col(tid) + c], s[r][c]));
    }
  }
};

}  // namespace dcukern::gdn_detail
