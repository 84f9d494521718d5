// A program whose device code is compute_75 PTX only (CMake: CUDA_ARCHITECTURES 75-virtual), run on a device
// with tensor cores: the mma kernels of such code are a trap (no mma.sync below sm_80), so the registry must
// leave out the rows that need nv_mma_f16 (DeviceContext::code_target) and fall back to a row that runs,
// with the reference's result. (CUDA only.)
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dcukern/gemv.hpp"
#include "support.hpp"

using namespace dcukern;
using dcukern::test::DeviceBuffer;

TEST_CASE("code built from compute_75 PTX: no mma row is chosen, and the fallback is right") {
  const DeviceContext* ctx = nullptr;
  REQUIRE(current_device_context(&ctx).ok());
  const TargetInfo* table = capabilities::find_target(ctx->target.canonical.c_str());
  REQUIRE(table != nullptr);
  INFO("device " << ctx->target.canonical);
  CHECK_FALSE(has_feature(*ctx->target.info, Feature::nv_mma_f16));
  // bf16, N = 4, M = 300, K = 1000 (with bias): a call gemv.mma takes on a device with tensor cores.
  constexpr int n = 4;
  constexpr int64_t m = 300, k = 1000;
  std::mt19937_64 rng(75);
  const auto x = test::random_halfs(DType::bf16, n * k, rng), w = test::random_halfs(DType::bf16, m * k, rng);
  const auto bias = test::random_halfs(DType::bf16, m, rng);
  DeviceBuffer<uint16_t> dx(x.size()), dw(w.size()), db(bias.size()), dy(n * m);
  dx.upload(x), dw.upload(w), db.upload(bias);
  dy.upload(std::vector<uint16_t>(n * m, 0xFFFF));  // NaN: an unwritten element fails below
  const GemvParams p{{dx.get(), DType::bf16, n, k, k}, {dw.get(), DType::bf16, m, k, k}, {db.get(), DType::bf16, m},
                     {dy.get(), DType::bf16, n, m, m}};
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
  const auto y = dy.download();
  int64_t wrong = 0;
  for (int i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double want = ref::bf16_to_float(bias[j]), scale = std::fabs(want);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double t = double(ref::bf16_to_float(x[i * k + kk])) * ref::bf16_to_float(w[j * k + kk]);
        want += t, scale += std::fabs(t);
      }
      const double got = ref::bf16_to_float(y[i * m + j]);
      if (!(std::fabs(got - want) <= std::ldexp(1.0, -8) * std::fabs(want) + std::ldexp(1.0, -14) * scale + 1e-6))
        ++wrong;
    }
  CHECK(wrong == 0);
}
