// Non-owning views of the tensors an op reads and writes. Rows are contiguous (unit column stride);
// row_stride is in elements and may exceed cols (padded weights, packed projections). A writable view
// converts to the read-only one of the same memory, as T* converts to const T* (an in-place call passes one
// view as both).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "dcukern/core/dtype.hpp"

namespace dcukern {

// The conversions below are templates over their target type: declared as a conversion to the read-only type,
// the read-only instantiation would declare a conversion to itself (a compiler warning).
namespace view_detail {
template <class Ptr>
inline constexpr bool kWritable = std::is_same_v<Ptr, void*>;
}  // namespace view_detail

template <class Ptr>
struct BasicMatrix {
  Ptr data = nullptr;
  DType dtype = DType::f16;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;  // elements between consecutive rows
  template <class To,
            std::enable_if_t<view_detail::kWritable<Ptr> && std::is_same_v<To, BasicMatrix<const void*>>, int> = 0>
  operator To() const { return {data, dtype, rows, cols, row_stride}; }
};
using ConstMatrix = BasicMatrix<const void*>;
using Matrix = BasicMatrix<void*>;

template <class Ptr>
struct BasicVector {
  Ptr data = nullptr;  // nullptr where the op allows an absent vector (e.g. no bias)
  DType dtype = DType::f16;
  int64_t size = 0;
  template <class To,
            std::enable_if_t<view_detail::kWritable<Ptr> && std::is_same_v<To, BasicVector<const void*>>, int> = 0>
  operator To() const { return {data, dtype, size}; }
};
using ConstVector = BasicVector<const void*>;
using Vector = BasicVector<void*>;

// A strided [batch, tokens, heads, dim] tensor whose last dim is contiguous (q, k, v, o of decode
// attention and linear attention). Strides in elements: a packed projection output is described by its
// strides, without a copy.
template <class Ptr>
struct BasicHeadsTensor {
  Ptr data = nullptr;
  DType dtype = DType::bf16;
  int64_t batch_stride = 0, token_stride = 0, head_stride = 0;
  template <class To,
            std::enable_if_t<view_detail::kWritable<Ptr> && std::is_same_v<To, BasicHeadsTensor<const void*>>, int> = 0>
  operator To() const { return {data, dtype, batch_stride, token_stride, head_stride}; }
};
using ConstHeadsTensor = BasicHeadsTensor<const void*>;
using HeadsTensor = BasicHeadsTensor<void*>;

// What is wrong with the strides of a [batch, tokens, heads, dim] tensor, or nullptr: no stride negative,
// heads (of more than one) not overlapping, and a written tensor nesting so that no two of its elements
// share an address: tokens (of more than one) past a token's heads, sequences (of more than one) past a
// sequence's tokens. A dim of extent 1 may take any non-negative stride.
template <class Ptr>
inline const char* heads_strides_problem(const BasicHeadsTensor<Ptr>& t, int64_t batch, int tokens, int heads,
                                         int dim, bool written) {
  if (t.batch_stride < 0 || t.token_stride < 0 || t.head_stride < 0) return "negative stride";
  if (heads > 1 && t.head_stride < dim) return "head stride below the head size (heads overlap)";
  if (written) {
    const int64_t token_extent = int64_t(heads - 1) * t.head_stride + dim;
    if (tokens > 1 && t.token_stride < token_extent) return "token stride below heads * head stride (tokens overlap)";
    const int64_t sequence_extent = int64_t(tokens - 1) * t.token_stride + token_extent;
    if (batch > 1 && t.batch_stride < sequence_extent)
      return "batch stride below the extent of one sequence (sequences overlap)";
  }
  return nullptr;
}

// Byte alignment of an address: the largest power of two (up to 256) that divides it.
inline int address_alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  int align = 1;
  while (align < 256 && (a % (2u * align)) == 0) align *= 2;
  return align;
}

// One pointer of a call, by name, with the size of the elements it is read or written in.
struct ElementPointer {
  const char* name;
  const void* data;
  int bytes;
};
// The name of the first pointer not aligned to its element size, or nullptr (null pointers pass). Every
// kernel, the generic rows included, accesses whole elements: a misaligned one faults on the device, and
// the fault poisons the context, so validation rejects the call instead.
inline const char* first_misaligned(std::initializer_list<ElementPointer> pointers) {
  for (const ElementPointer& e : pointers)
    if (reinterpret_cast<uintptr_t>(e.data) % static_cast<uintptr_t>(e.bytes) != 0) return e.name;
  return nullptr;
}

}  // namespace dcukern
