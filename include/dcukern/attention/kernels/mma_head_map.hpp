// Which head elements the tensor-core attention kernel's lanes load and hold. The head dim may be
// permuted freely (a dot product, and the output's element order, are the kernel's to choose) as long
// as q, K and V/O agree; every lane loads whole 8-element vectors. Two maps:
//   strided (kSectors = false): lane (g, c) holds K elements [c D/4, (c+1) D/4) and V elements
//     [g D/8, (g+1) D/8): each lane's vectors are contiguous, so one load instruction of a warp touches
//     every 32-byte sector of a key twice (f16/bf16) or four times (fp8), half or a quarter used each time;
//   sectors (kSectors = true): load instruction i of lane (g, c) reads K elements 32 i + 8 c and V elements
//     64 i + 8 g: the 4 (K) or 8 (V) lanes that share a key read one contiguous 64- or 128-byte run
//     (bf16; half that for fp8), so every sector an instruction touches is fully used.
// Host and device: the host tests check that both are bijections onto [0, kDim).
#pragma once
#include "dcukern/platform/detect.hpp"

namespace dcukern::attn_detail {

template <int kDim, bool kSectors>
struct MmaHeadMap {
  static_assert(kDim % 64 == 0, "head_dim bound must be a multiple of 64");
  static constexpr int kKVecs = kDim / 32;  // 8-element K vectors per lane per key
  static constexpr int kVVecs = kDim / 64;  // 8-element V vectors per lane per key
  static constexpr int kSteps = kDim / 16;  // k-steps of Q K^T = m-tiles of V^T P^T
  // K vector i of lane column c (0..3) starts at element k_base(c) + kKStride * i; V vector i of lane row
  // g (0..7) at v_base(g) + kVStride * i (base + stride, so loads keep a constant offset per vector).
  static constexpr int kKStride = kSectors ? 32 : 8, kVStride = kSectors ? 64 : 8;
  DCUKERN_HD static constexpr int k_base(int c) { return kSectors ? 8 * c : c * (kDim / 4); }
  DCUKERN_HD static constexpr int v_base(int g) { return kSectors ? 8 * g : g * (kDim / 8); }
  DCUKERN_HD static constexpr int k_elem(int c, int i) { return k_base(c) + kKStride * i; }
  DCUKERN_HD static constexpr int v_elem(int g, int i) { return v_base(g) + kVStride * i; }
  // q element of k-step s, lane column c, word r (0, 1), half e (0, 1): quad s % 2 of K vector s / 2.
  DCUKERN_HD static constexpr int q_elem(int c, int s, int r, int e) {
    return kSectors ? 32 * (s / 2) + 8 * c + 4 * (s % 2) + 2 * r + e : c * (kDim / 4) + 4 * s + 2 * r + e;
  }
  // Output element of m-tile u, lane row g, accumulator column j (0, 1): elements 2u, 2u + 1 of the lane's
  // V vectors taken in order.
  DCUKERN_HD static constexpr int o_elem(int g, int u, int j) {
    return kSectors ? 64 * (u / 4) + 8 * g + 2 * (u % 4) + j : g * (kDim / 8) + 2 * u + j;
  }
};

}  // namespace dcukern::attn_detail
