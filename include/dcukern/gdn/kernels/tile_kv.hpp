// Tile policy of gdn.tiled.kv (Cols = 32) and gdn.tiled.kv.c16 (Cols = 16): the [K, V] state layout (rows
// i = key index, contiguous along V). A 16-byte vector holds kVecElems consecutive columns of one row.
// Thread t owns column chunk t % kColChunks of rows t / kColChunks + kRowGroups * r. The products with
// the raw k and q are summed over K (rows) first across the lanes of a wave that share a column chunk
// (shuffles, valid for wave32 and wave64), then across waves in shared memory; threads j < Cols then
// form u_j and o_j and publish u through shared memory (two barriers per token). At 33354f0 every thread
// formed u for its own columns instead (one barrier, more shared-memory reads): on the H200 about one
// point of read bandwidth below this structure (74.7-77.6 % against 75.9-78.9 % at B >= 128).
#pragma once
#include "dcukern/gdn/kernels/common.hpp"

namespace dcukern::gdn_detail {

constexpr int kTiledThreads = 128;

template <int Cols, int K, DType SDT>
struct KvTile {
  static constexpr int kCols = Cols;
  static constexpr int kK = K;
  static constexpr DType kState = SDT;
  static constexpr int kVecElems = 16 / kElemBytes<SDT>;
  static constexpr int kColChunks = Cols / kVecElems;
  static constexpr int kRowGroups = kTiledThreads / kColChunks;
  static constexpr int kVecs = K / kRowGroups;
  static constexpr int kWaves = kTiledThreads / 32;  // room for wave32
  // The inputs and the state tile are prefetched into L2 before a dependent launch's wait
  // (recurrent_tiled.hpp). H200, B = 1 to 512: 1.02-1.25x faster.
  static constexpr bool kPrefetchInputs = true;
  static_assert(kColChunks >= 1 && kColChunks <= 32 && K % kRowGroups == 0, "tile shape");

  struct Shared {
    float red[kWaves][2][Cols];  // per-wave partial sums of S^T k and S^T q
    float u[Cols];
  };

  __device__ static int row(int tid, int r) { return tid / kColChunks + kRowGroups * r; }
  __device__ static int col(int tid) { return (tid % kColChunks) * kVecElems; }
  // Element offset of vector r of thread tid in a head's state, for the block starting at column j0.
  __device__ static int64_t offset(int tid, int r, int j0, int vdim) {
    return int64_t(row(tid, r)) * vdim + j0 + col(tid);
  }

  // The block's tile into L2 (a hint): each thread's vectors. (Measured on the H200 against one bulk
  // prefetch a row, prefetch_l2_bulk: 1.01-1.09x faster at every B.)
  __device__ static void prefetch_state(const char* head, int tid, int j0, int vdim) {
#pragma unroll
    for (int r = 0; r < kVecs; ++r) prefetch_l2(head + offset(tid, r, j0, vdim) * kElemBytes<SDT>);
  }

  // v of the block's columns as loaded: thread j < Cols holds v_j.
  template <DType DT>
  struct VRegs {
    ElemBits<DT> vj;
  };
  template <DType DT>
  __device__ static VRegs<DT> load_v(const void* v, int64_t v_at) {
    const int tid = threadIdx.x;
    return {tid < Cols ? load_bits<DT>(v, v_at + tid) : ElemBits<DT>{}};
  }

  template <DType DT>
  __device__ static void step(float (&s)[kVecs][kVecElems], const TokenQK& tk, const Gate& gt, const VRegs<DT>& vr,
                              void* o, int64_t o_at, Shared& sh) {
    const int tid = threadIdx.x, lane = lane_id(), wave = tid / kWarpSize;
    // Raw products: the norms and the decay are scalars, applied after the sums.
    float pk[kVecElems] = {}, pq[kVecElems] = {};
#pragma unroll
    for (int r = 0; r < kVecs; ++r) {
      const float kr = tk.ks[row(tid, r)], qr = tk.qs[row(tid, r)];
#pragma unroll
      for (int c = 0; c < kVecElems; ++c) {
        pk[c] = fmaf(s[r][c], kr, pk[c]);
        pq[c] = fmaf(s[r][c], qr, pq[c]);
      }
    }
    // Lanes kColChunks apart own the same columns.
#pragma unroll
    for (int m = kColChunks; m < kWarpSize; m *= 2)
#pragma unroll
      for (int c = 0; c < kVecElems; ++c) {
        pk[c] += shfl_xor(pk[c], m);
        pq[c] += shfl_xor(pq[c], m);
      }
    if (lane < kColChunks) {
#pragma unroll
      for (int c = 0; c < kVecElems; ++c) {
        sh.red[wave][0][col(tid) + c] = pk[c];
        sh.red[wave][1][col(tid) + c] = pq[c];
      }
    }
    __syncthreads();
    if (tid < Cols) {
      float dk = 0.f, dq = 0.f;
      for (int w = 0; w < kTiledThreads / kWarpSize; ++w) {
        dk += sh.red[w][0][tid];
        dq += sh.red[w][1][tid];
      }
      const float u = gt.beta * (bits_to_float<DT>(vr.vj) - gt.decay * tk.rk * dk);
      store_elem<DT>(o, o_at + tid, fmaf(u, tk.kq, gt.decay * tk.rq * dq));
      sh.u[tid] = u;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kVecs; ++r) {
      const float kr = tk.ks[row(tid, r)] * tk.rk;
#pragma unroll
      for (int c = 0; c < kVecElems; ++c) s[r][c] = round_to<SDT>(fmaf(kr, sh.u[col(tid) + c], s[r][c] * gt.decay));
    }
  }
};

}  // namespace dcukern::gdn_detail
