// The GEMV API in a few lines: y = x · Wᵀ + bias for 4 tokens of bf16 activations, the row dcukern
// chose for this device and why the rows before it were passed over.
#include <cstdio>
#include <vector>

#include "dcukern/gemv.hpp"
#include "dcukern/ref/gemv.hpp"

int main() {
  using namespace dcukern;
  constexpr int n = 4;
  constexpr int64_t m = 4096, k = 4096;
  std::vector<uint16_t> x(n * k), w(m * k), bias(m);
  for (size_t i = 0; i < x.size(); ++i) x[i] = ref::from_float(DType::bf16, float(i % 7) / 7 - 0.5f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = ref::from_float(DType::bf16, float(i % 13) / 13 - 0.5f);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = ref::from_float(DType::bf16, 0.25f);

  void *dx, *dw, *db, *dy;
  if (runtime_malloc(&dx, x.size() * 2) != kRuntimeSuccess || runtime_malloc(&dw, w.size() * 2) != kRuntimeSuccess ||
      runtime_malloc(&db, bias.size() * 2) != kRuntimeSuccess || runtime_malloc(&dy, n * m * 2) != kRuntimeSuccess) {
    std::printf("no usable GPU\n");
    return 77;
  }
  (void)runtime_copy_to_device(dx, x.data(), x.size() * 2);
  (void)runtime_copy_to_device(dw, w.data(), w.size() * 2);
  (void)runtime_copy_to_device(db, bias.data(), bias.size() * 2);

  GemvParams p;
  p.x = {dx, DType::bf16, n, k, k};   // [N, K], row stride K
  p.w = {dw, DType::bf16, m, k, k};   // [M, K]
  p.bias = {db, DType::bf16, m};      // optional: leave data null for no bias
  p.y = {dy, DType::bf16, n, m, m};   // [N, M]

  Explanation why;
  const Status s = gemv(p, /*stream=*/nullptr, GemvOptions{nullptr, &why});
  std::printf("%s\n%s\n", s.to_string().c_str(), why.to_string().c_str());
  (void)runtime_synchronize();

  std::vector<uint16_t> y(n * m);
  (void)runtime_copy_to_host(y.data(), dy, y.size() * 2);
  std::printf("y[0][0] = %g\n", ref::to_float(DType::bf16, y[0]));
  for (void* ptr : {dx, dw, db, dy}) (void)runtime_free(ptr);
  return s.ok() ? 0 : 1;
}
