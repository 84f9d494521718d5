// Aliasing checks of the validators: the bytes a view spans, and the first written view of a call that
// shares a byte with another of its views. Kernels read their inputs while they write their outputs, in
// no order a caller could rely on, so an output overlapping anything else of the call gives undefined
// results; validation rejects it instead (nothing written).
// Spans are compared, not element sets: two views interleaved in one buffer without sharing an element
// (q and o as different heads of one packed tensor) count as overlapping too. Outputs need buffers of
// their own; an op that allows in-place use leaves its input out of the list when the views are identical.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "dcukern/core/tensor.hpp"

namespace dcukern {

struct ByteSpan {
  uintptr_t begin = 0, end = 0;  // [begin, end); empty when begin == end
};

struct StridedDim {
  int64_t count, stride;  // elements
};

// The span of a view of `contiguous` elements repeated over `dims` (non-negative strides, as the
// validators check first); empty when data is null or any extent is below 1.
inline ByteSpan strided_span(const void* data, int element_bytes, int64_t contiguous,
                             std::initializer_list<StridedDim> dims = {}) {
  if (!data || contiguous < 1) return {};
  int64_t last = contiguous;  // one past the furthest element
  for (const StridedDim& d : dims) {
    if (d.count < 1) return {};
    last += (d.count - 1) * d.stride;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  return {begin, begin + static_cast<uintptr_t>(last) * static_cast<uintptr_t>(element_bytes)};
}

template <class Ptr>
inline ByteSpan span_of(const BasicMatrix<Ptr>& m) {
  return strided_span(m.data, dtype_bytes(m.dtype), m.cols, {{m.rows, m.row_stride}});
}
template <class Ptr>
inline ByteSpan span_of(const BasicVector<Ptr>& v) {
  return strided_span(v.data, dtype_bytes(v.dtype), v.size);
}
template <class Ptr>
inline ByteSpan span_of(const BasicHeadsTensor<Ptr>& t, int64_t batch, int tokens, int heads, int dim) {
  return strided_span(t.data, dtype_bytes(t.dtype), dim,
                      {{batch, t.batch_stride}, {tokens, t.token_stride}, {heads, t.head_stride}});
}
template <class T>
inline ByteSpan array_span(const T* data, int64_t count) {
  return strided_span(data, int(sizeof(T)), count);
}

struct NamedSpan {
  const char* name;
  ByteSpan span;
  bool written = false;
};

inline bool spans_overlap(ByteSpan a, ByteSpan b) { return a.begin < b.end && b.begin < a.end; }

// The name of the first span of [first, last) that shares a byte with `span`, or nullptr. Empty spans
// (absent optional views) overlap nothing.
inline const char* first_overlapping(ByteSpan span, const NamedSpan* first, const NamedSpan* last) {
  for (const NamedSpan* s = first; s != last; ++s)
    if (spans_overlap(span, s->span)) return s->name;
  return nullptr;
}

// "o overlaps q" for the first written span of [first, last) that shares a byte with another span of the
// list (in list order), or an empty string.
inline std::string first_overlap(const NamedSpan* first, const NamedSpan* last) {
  for (const NamedSpan* w = first; w != last; ++w) {
    if (!w->written) continue;
    const char* other = first_overlapping(w->span, first, w);
    if (!other) other = first_overlapping(w->span, w + 1, last);
    if (other) return std::string(w->name) + " overlaps " + other;
  }
  return {};
}
inline std::string first_overlap(std::initializer_list<NamedSpan> spans) {
  return first_overlap(spans.begin(), spans.end());
}
template <size_t N>
inline std::string first_overlap(const std::array<NamedSpan, N>& spans) {
  return first_overlap(spans.data(), spans.data() + N);
}
template <size_t N>
inline const char* first_overlapping(ByteSpan span, const std::array<NamedSpan, N>& spans) {
  return first_overlapping(span, spans.data(), spans.data() + N);
}

// Whether two matrices are one view (an in-place call's input and output): same base, row stride and dtype.
template <class A, class B>
constexpr bool same_view(const BasicMatrix<A>& a, const BasicMatrix<B>& b) {
  return a.data == b.data && a.row_stride == b.row_stride && a.dtype == b.dtype;
}

}  // namespace dcukern
