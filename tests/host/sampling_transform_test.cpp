// The row transforms on the host: the reference (order, ties, temperature, invalid rows) and argument
// validation / row selection of the op.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "dcukern/ref/sampling_transforms.hpp"
#include "dcukern/registry/resolve.hpp"
#include "dcukern/sampling/transform_select.hpp"
#include "misaligned.hpp"

using namespace dcukern;

// Writable views convert to read-only ones (as T* to const T*), never the other way.
static_assert(std::is_convertible_v<Matrix, ConstMatrix> && !std::is_convertible_v<ConstMatrix, Matrix>);
static_assert(std::is_convertible_v<Vector, ConstVector> && !std::is_convertible_v<ConstVector, Vector>);
static_assert(std::is_convertible_v<HeadsTensor, ConstHeadsTensor> &&
              !std::is_convertible_v<ConstHeadsTensor, HeadsTensor>);

TEST_CASE("transform reference: softmax with temperature, greedy one-hot, invalid rows") {
  const std::vector<float> l = {0.0f, std::log(2.0f), std::log(4.0f), std::log(4.0f)};
  auto r = ref::ref_softmax(l, 1.0);
  REQUIRE(r.valid);
  CHECK(r.out[0] == doctest::Approx(1.0 / 11));
  CHECK(r.out[2] == doctest::Approx(4.0 / 11));
  r = ref::ref_softmax(l, 0.5);  // weights 1, 4, 16, 16
  CHECK(r.out[3] == doctest::Approx(16.0 / 37));
  r = ref::ref_softmax(l, 0.0);  // one-hot at the lowest-index maximum
  CHECK(r.out == std::vector<double>{0, 0, 1, 0});
  CHECK_FALSE(ref::ref_softmax({0.0f, std::nanf("")}, 1.0).valid);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_FALSE(ref::ref_softmax({-inf, -inf}, 1.0).valid);
}

TEST_CASE("transform reference: top-k mask keeps the k largest (lowest index on ties), k = 0 or >= V copies") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> l = {1, 3, 3, 2, 3};
  auto r = ref::ref_top_k_mask_logits(l, 2);
  CHECK(r.out == std::vector<double>{-inf, 3, 3, -inf, -inf});
  CHECK(ref::ref_top_k_mask_logits(l, 0).out == std::vector<double>{1, 3, 3, 2, 3});
  CHECK(ref::ref_top_k_mask_logits(l, 9).out == std::vector<double>{1, 3, 3, 2, 3});
  r = ref::ref_top_k_mask_logits({std::nanf(""), 1.0f}, 1);
  CHECK_FALSE(r.valid);
  CHECK(r.out[1] == -inf);
}

TEST_CASE("transform reference: renorm of probabilities by top-k and top-p") {
  const std::vector<float> p = {0.1f, 0.4f, 0.2f, 0.3f};
  auto r = ref::ref_top_k_renorm_probs(p, 2);
  CHECK(r.out[1] == doctest::Approx(0.4 / 0.7));
  CHECK(r.out[3] == doctest::Approx(0.3 / 0.7));
  CHECK(r.out[0] == 0.0);
  r = ref::ref_top_p_renorm_probs(p, 0.75);  // 0.4 + 0.3 = 0.7 < 0.75: + 0.2
  CHECK(r.out[2] == doctest::Approx(0.2 / 0.9));
  CHECK(r.out[0] == 0.0);
  CHECK(r.top_p_margin == doctest::Approx(0.05));
  r = ref::ref_top_p_renorm_probs(p, 1.0);
  CHECK(r.out[0] == doctest::Approx(0.1));
  CHECK_FALSE(ref::ref_top_p_renorm_probs({0.0f, 0.0f}, 0.5).valid);
  CHECK_FALSE(ref::ref_top_k_renorm_probs({0.5f, -0.1f}, 1).valid);
}

namespace {
// Never read (misaligned.hpp).
float* const in_buf = fake_view<float>(1);
float* const out_buf = fake_view<float>(2);
RowTransformParams tparams(DType in = DType::f32, DType out = DType::f32) {
  RowTransformParams p;
  p.in = {in_buf, in, 4, 1024, 1024};
  p.out = {out_buf, out, 4, 1024, 1024};
  return p;
}
void expect(RowTransform t, const RowTransformParams& p, StatusCode code, const char* fragment) {
  SamplingCall c;
  const Status s = validate_row_transform(t, p, &c);
  INFO(s.to_string());
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("transform validation: every invalid input gets a readable error naming the transform") {
  SamplingCall c;
  CHECK(validate_row_transform(RowTransform::softmax, tparams(DType::bf16), &c).ok());
  CHECK(validate_row_transform(RowTransform::top_k_mask_logits, tparams(DType::f16, DType::f16), &c).ok());
  expect(RowTransform::top_k_mask_logits, tparams(DType::f16, DType::f32), StatusCode::unsupported,
         "top_k_mask_logits");
  expect(RowTransform::top_p_renorm_probs, tparams(DType::bf16), StatusCode::unsupported, "renorm f32");
  RowTransformParams p = tparams();
  p.in.data = nullptr;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "null pointer for the input");
  p = tparams(); p.out.data = nullptr;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "null pointer for the output");
  p = tparams(); p.out.cols = 1000;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "expected 4 x 1024");
  p = tparams(); p.in.row_stride = 10;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "row stride");
  p = tparams(); p.temperature.value = -1.0f;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "temperature");
  p = tparams(); p.temperature.value = INFINITY;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "temperature");
  p = tparams(); p.in.data = moved_by_bytes(in_buf, 2);
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "the input is not aligned to its element size");
  // In place: the same view only (a bf16 row read while its f32 output overwrites it would race).
  p = tparams(); p.out.data = in_buf;
  CHECK(validate_row_transform(RowTransform::softmax, p, &c).ok());
  p.in = p.out;  // one writable view as both: it converts to the read-only view of the same memory
  CHECK(p.in.data == in_buf);
  CHECK(validate_row_transform(RowTransform::softmax, p, &c).ok());
  p = tparams(DType::bf16); p.out.data = in_buf;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument,
         "the output overlaps the input (in place: the views must be identical)");
  p = tparams(); p.out.data = in_buf + 1024;  // a row behind: rows read while others are written
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "the output overlaps the input");
  p = tparams(); p.out.data = in_buf + 4 * 1024;
  CHECK(validate_row_transform(RowTransform::softmax, p, &c).ok());
  p = tparams(); p.valid = reinterpret_cast<uint8_t*>(out_buf) + 100;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "the output overlaps valid");
  p = tparams(); p.out.data = in_buf; p.valid = reinterpret_cast<uint8_t*>(in_buf);  // in place, valid inside
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "the output overlaps valid");
  p = tparams(); p.top_k.device = reinterpret_cast<const int32_t*>(out_buf) + 4 * 1024 - 1;
  expect(RowTransform::top_k_mask_logits, p, StatusCode::invalid_argument, "the output overlaps top_k");
  p = tparams(); p.top_k.value = -1;
  expect(RowTransform::top_k_renorm_probs, p, StatusCode::invalid_argument, "top_k");
  p = tparams(); p.top_p.value = 0.0f;
  expect(RowTransform::top_p_renorm_probs, p, StatusCode::invalid_argument, "top_p");
  p = tparams(); p.in.rows = 0;
  expect(RowTransform::softmax, p, StatusCode::invalid_argument, "batch B = 0");
}

TEST_CASE("transform rows: vector row for aligned rows, scalar otherwise") {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::TransformRow* row = nullptr;
  for (const auto& r : TransformOp::rows()) CHECK(has_all(r.isa_needs, transform_kernel_isa(r.kernel)));
  REQUIRE(select_row_transform(RowTransform::softmax, tparams(), t, nullptr, &row).ok());
  CHECK(std::string(row->id) == "sampling.transform.block.vec");
  RowTransformParams p = tparams();
  p.in.data = reinterpret_cast<const char*>(in_buf) + 4;
  REQUIRE(select_row_transform(RowTransform::softmax, p, t, nullptr, &row).ok());
  CHECK(std::string(row->id) == "sampling.transform.block");
}
