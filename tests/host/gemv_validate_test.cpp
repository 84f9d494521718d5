#include <doctest/doctest.h>

#include <string>

#include "dcukern/gemv/params.hpp"
#include "misaligned.hpp"

using namespace dcukern;

namespace {
// Never read (misaligned.hpp).
uint16_t *const x = fake_view<uint16_t>(1), *const w = fake_view<uint16_t>(2), *const y = fake_view<uint16_t>(3),
               *const b = fake_view<uint16_t>(4);

GemvParams valid(int n = 4, int64_t m = 32, int64_t k = 64) {
  GemvParams p;
  p.x = {x, DType::f16, n, k, k};
  p.w = {w, DType::f16, m, k, k};
  p.y = {y, DType::f16, n, m, m};
  return p;
}
Status check(const GemvParams& p) {
  GemvCall c;
  return validate_gemv(p, &c);
}
void expect(const GemvParams& p, StatusCode code, const char* fragment) {
  const Status s = check(p);
  INFO(s.to_string());
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("a valid call passes and its facts are derived") {
  GemvParams p = valid();
  p.bias = {b, DType::f16, 32};
  GemvCall c;
  REQUIRE(validate_gemv(p, &c).ok());
  CHECK(c.n == 4);
  CHECK(c.m == 32);
  CHECK(c.k == 64);
  CHECK(c.has_bias);
  CHECK(c.min_align >= 16);
}

TEST_CASE("every invalid input gets a readable error") {
  GemvParams p = valid();
  p.x.data = nullptr;
  expect(p, StatusCode::invalid_argument, "null pointer for x");
  p = valid(); p.w.data = nullptr;
  expect(p, StatusCode::invalid_argument, "null pointer for w");
  p = valid(); p.y.data = nullptr;
  expect(p, StatusCode::invalid_argument, "null pointer for y");

  p = valid(); p.x.dtype = p.w.dtype = p.y.dtype = DType::f32;
  expect(p, StatusCode::unsupported, "dtype f32");
  p = valid(); p.w.dtype = DType::bf16;
  expect(p, StatusCode::invalid_argument, "dtype mismatch");
  p = valid(); p.bias = {b, DType::bf16, 32};
  expect(p, StatusCode::invalid_argument, "bias bf16");

  p = valid(17, 32, 64);
  expect(p, StatusCode::invalid_argument, "N = 17 out of range");
  p = valid(0, 32, 64);
  expect(p, StatusCode::invalid_argument, "N = 0 out of range");
  p = valid(); p.x.cols = 0; p.w.cols = 0;
  expect(p, StatusCode::invalid_argument, "empty K or M");

  p = valid(); p.w.cols = 63;
  expect(p, StatusCode::invalid_argument, "K mismatch");
  p = valid(); p.y.cols = 31;
  expect(p, StatusCode::invalid_argument, "y is [4, 31], expected [4, 32]");
  p = valid(); p.y.rows = 3;
  expect(p, StatusCode::invalid_argument, "expected [4, 32]");
  p = valid(); p.bias = {b, DType::f16, 31};
  expect(p, StatusCode::invalid_argument, "bias has 31 elements");

  p = valid(); p.x.row_stride = 63;
  expect(p, StatusCode::invalid_argument, "row stride below row width");
  p = valid(); p.w.row_stride = 10;
  expect(p, StatusCode::invalid_argument, "row stride below row width");
  p = valid(); p.y.row_stride = 31;
  expect(p, StatusCode::invalid_argument, "row stride below row width");
  // Pointers not aligned to their 2-byte elements (the generic row accepts any whole-element alignment).
  p = valid(); p.w.data = moved_by_bytes(w, 1);
  expect(p, StatusCode::invalid_argument, "w is not aligned to its element size");
  p = valid(); p.bias = {moved_by_bytes(b, 3), DType::f16, 32};
  expect(p, StatusCode::invalid_argument, "bias is not aligned");
  p = valid(); p.y.data = moved_by_bytes(y, 2);
  CHECK(check(p).ok());
  // y overlapping x, W or the bias (valid(): x [4, 64], W [32, 64], y [4, 32]; padded rows count as spanned).
  p = valid(); p.y.data = x + 3 * 64 + 63; expect(p, StatusCode::invalid_argument, "y overlaps x");
  p = valid(); p.y.data = x + 4 * 64; CHECK(check(p).ok());
  p = valid(); p.y.data = w; expect(p, StatusCode::invalid_argument, "y overlaps w");
  p = valid(); p.w.row_stride = 100; p.y.data = w + 31 * 100 + 63;
  expect(p, StatusCode::invalid_argument, "y overlaps w");
  p = valid(); p.bias = {y + 4 * 32 - 1, DType::f16, 32}; expect(p, StatusCode::invalid_argument, "y overlaps bias");
  p = valid(); p.x.data = w + 10;  // inputs may share memory
  CHECK(check(p).ok());
}

TEST_CASE("contracts reject what their kernels cannot do, with a reason") {
  GemvContract c{dtypes(DType::f16), 1, 1, 8, 16};
  GemvCall call{DType::f16, 1, 64, 64, false, 64, 64, 64, 16};
  CHECK(c.check(call) == nullptr);
  GemvCall bad = call; bad.dtype = DType::bf16;
  CHECK(std::string(c.check(bad)).find("dtype") != std::string::npos);
  bad = call; bad.n = 2;
  CHECK(std::string(c.check(bad)).find("N outside") != std::string::npos);
  bad = call; bad.k = 60;
  CHECK(std::string(c.check(bad)).find("multiple") != std::string::npos);
  bad = call; bad.ldw = 68;
  CHECK(std::string(c.check(bad)).find("multiple") != std::string::npos);
  bad = call; bad.min_align = 2;
  CHECK(std::string(c.check(bad)).find("aligned") != std::string::npos);
  GemvContract tuned = c; tuned.m_exact = 64; tuned.k_exact = 64; tuned.bias_rule = -1;
  CHECK(tuned.check(call) == nullptr);
  bad = call; bad.m = 65;
  CHECK(tuned.check(bad) != nullptr);
  bad = call; bad.has_bias = true;
  CHECK(tuned.check(bad) != nullptr);
}
