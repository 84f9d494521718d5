// A program whose device code is compute_75 PTX only (CMake: CUDA_ARCHITECTURES 75-virtual), run on a device
// with tensor cores: the mma kernels of such code are a trap (no mma.sync below sm_80), so the registry must
// leave out the rows that need nv_mma_f16 (DeviceContext::code_target) and fall back to a row that runs,
// with the reference's result. (CUDA only.)
#include <random>
#include <string>

#include "gemv_check.hpp"

using namespace dcukern;

TEST_CASE("code built from compute_75 PTX: no mma row is chosen, and the fallback is right") {
  const DeviceContext* ctx = nullptr;
  REQUIRE(current_device_context(&ctx).ok());
  const TargetInfo* table = capabilities::find_target(ctx->target.canonical.c_str());
  REQUIRE(table != nullptr);
  INFO("device " << ctx->target.canonical);
  CHECK_FALSE(has_feature(*ctx->target.info, Feature::nv_mma_f16));
  // bf16, N = 4, M = 300, K = 1000 (with bias): a call gemv.mma takes on a device with tensor cores.
  constexpr int n = 4;
  std::mt19937_64 rng(75);
  test::gemv_check::Problem pr(DType::bf16, 300, 1000, test::gemv_check::Layout::dense, rng);
  pr.dy.fill_bytes(test::kPoisonByte);  // NaN: an unwritten element fails below
  const GemvParams p = pr.params(n, true);
  Explanation why;
  const Status s = gemv(p, nullptr, {nullptr, &why});
  INFO(why.to_string());
  REQUIRE(s.ok());
  REQUIRE(why.chosen != nullptr);
  CHECK(std::string(why.chosen) != "gemv.mma");
  if (has_feature(*table, Feature::nv_mma_f16)) {  // the device has tensor cores: the row was left out for its code
    bool mma_left_out = false;
    for (const Rejection& r : why.rejected) mma_left_out |= std::string(r.row_id) == "gemv.mma";
    CHECK(mma_left_out);
  }
  test::device_synchronize();
  test::gemv_check::expect_matches(pr, n, true, pr.dy.download(), test::gemv_check::reference(pr, n));
}
