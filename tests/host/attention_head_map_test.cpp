// The tensor-core attention kernel's head-element maps (attention/kernels/mma_head_map.hpp): K and V
// loads each cover [0, head_dim) exactly once, q's fragment elements are the K elements the same lane
// loads, the output's elements are the V elements the same lane loads, and the sector variant's lanes
// that share a key read one contiguous run per load.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "dcukern/attention/kernels/mma_head_map.hpp"

using dcukern::attn_detail::MmaHeadMap;

namespace {

template <int kDim, bool kSectors>
void check_map() {
  using Map = MmaHeadMap<kDim, kSectors>;
  INFO("kDim " << kDim << (kSectors ? " sectors" : " strided"));
  std::vector<int> k_hits(kDim, 0), v_hits(kDim, 0);
  for (int c = 0; c < 4; ++c) {
    std::set<int> k_lane, q_lane;
    for (int i = 0; i < Map::kKVecs; ++i)
      for (int j = 0; j < 8; ++j) ++k_hits[Map::k_elem(c, i) + j], k_lane.insert(Map::k_elem(c, i) + j);
    for (int s = 0; s < Map::kSteps; ++s)
      for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 2; ++e) {
          // k-step s multiplies quad s % 2 of K vector s / 2 (words r: elements 2r, 2r + 1)
          CHECK(Map::q_elem(c, s, r, e) == Map::k_elem(c, s / 2) + 4 * (s % 2) + 2 * r + e);
          q_lane.insert(Map::q_elem(c, s, r, e));
        }
    CHECK(q_lane == k_lane);
    CHECK(q_lane.size() == size_t(Map::kSteps) * 4);
  }
  for (int g = 0; g < 8; ++g) {
    std::set<int> v_lane, o_lane;
    for (int i = 0; i < Map::kVVecs; ++i)
      for (int j = 0; j < 8; ++j) ++v_hits[Map::v_elem(g, i) + j], v_lane.insert(Map::v_elem(g, i) + j);
    for (int u = 0; u < Map::kSteps; ++u)
      for (int j = 0; j < 2; ++j) {
        // m-tile u's rows g and g + 8 are elements 2u % 8 and 2u % 8 + 1 of V vector 2u / 8
        CHECK(Map::o_elem(g, u, j) == Map::v_elem(g, 2 * u / 8) + 2 * u % 8 + j);
        o_lane.insert(Map::o_elem(g, u, j));
      }
    CHECK(o_lane == v_lane);
    CHECK(o_lane.size() == size_t(Map::kSteps) * 2);
  }
  CHECK(std::all_of(k_hits.begin(), k_hits.end(), [](int n) { return n == 1; }));
  CHECK(std::all_of(v_hits.begin(), v_hits.end(), [](int n) { return n == 1; }));
  if (kSectors) {
    for (int i = 0; i < Map::kKVecs; ++i)
      for (int c = 0; c + 1 < 4; ++c) CHECK(Map::k_elem(c + 1, i) == Map::k_elem(c, i) + 8);
    for (int i = 0; i < Map::kVVecs; ++i)
      for (int g = 0; g + 1 < 8; ++g) CHECK(Map::v_elem(g + 1, i) == Map::v_elem(g, i) + 8);
  }
}

}  // namespace

TEST_CASE("attention mma head maps: bijections, q matches K and o matches V per lane, sector runs") {
  check_map<64, false>();
  check_map<128, false>();
  check_map<256, false>();
  check_map<64, true>();
  check_map<128, true>();
  check_map<256, true>();
}
