// The opt-in table check on the device (debug): validate_attention_tables' checks (params.hpp) where the
// tables live, in device memory, without a host synchronisation (capturable in a graph):
//   uint64_t* result;                                        // one word of device memory
//   dcukern::attention_check_tables(p, result, stream);     // every context length and used table entry
//   ... copy *result to the host (word) when convenient ...
//   dcukern::Status s = dcukern::attention_table_verdict(p, word);  // success, or the first bad entry
// The result word (attention_table_verdict, params.hpp, reads it) is the first bad entry in (sequence, slot)
// order: (b << 32) for context_lens[b] outside 0..max_pages*page_size, (b << 32) | (i + 1) for
// block_table[b, i] outside 0..num_pages-1 with i among the pages context_lens[b] uses (a sequence with a
// bad length has its entries unchecked); kAttnTablesOk when every entry is good.
// attention_check_tables_kernel: thread j of the grid-stride loop takes slot j % (max_pages + 1) of sequence
// j / (max_pages + 1) (slot 0 its length, slot i + 1 its entry i); bad slots meet in one 64-bit atomicMin.
#pragma once
#include <algorithm>
#include <cstdint>

#include "dcukern/attention/params.hpp"
#include "dcukern/platform/runtime.hpp"

namespace dcukern {

namespace attn_detail {
constexpr int kTableCheckThreads = 256;
constexpr int64_t kTableCheckMaxBlocks = 4096;

template <int kThreads>  // (a template: one definition in every translation unit that includes this header)
__global__ void __launch_bounds__(kThreads)
    attention_check_tables_kernel(const int32_t* table, int64_t table_stride, const int32_t* lens, int batch,
                                  int max_pages, int page_size, int64_t num_pages, unsigned long long* result) {
  const int64_t slots = int64_t(max_pages) + 1, total = int64_t(batch) * slots;
  const int64_t capacity = int64_t(max_pages) * page_size;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < total; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = j / slots, slot = j % slots;
    const int64_t len = lens[b];
    const bool len_ok = len >= 0 && len <= capacity;
    bool bad = !len_ok && slot == 0;
    if (len_ok && slot > 0 && slot - 1 < (len + page_size - 1) / page_size) {
      const int32_t page = table[b * table_stride + slot - 1];
      bad = page < 0 || page >= num_pages;
    }
    if (bad) atomicMin(result, static_cast<unsigned long long>(uint64_t(b) << 32 | uint64_t(slot)));
  }
}
}  // namespace attn_detail

// Checks p's context_lens and block_table (device memory) on `stream`; the verdict lands in *result (device
// memory, 8-byte aligned) when the stream gets there. Errors: p itself invalid (validate_attention), or
// no result word; nothing is launched then. After a launch error the word is not a verdict (it may
// already read as ok).
inline Status attention_check_tables(const AttentionParams& p, uint64_t* result, stream_t stream) {
  AttentionCall call;
  if (Status s = validate_attention(p, &call); !s.ok()) return s;
  if (!result || reinterpret_cast<uintptr_t>(result) % 8)
    return Status::invalid("attention: the table check needs an 8-byte aligned result word");
  if (Status s = runtime_status(runtime_memset_async(result, 0xFF, sizeof(uint64_t), stream), "attention table check");
      !s.ok())
    return s;
  const int64_t total = int64_t(p.batch) * (int64_t(p.max_pages) + 1);
  const int64_t wanted = (total + attn_detail::kTableCheckThreads - 1) / attn_detail::kTableCheckThreads;
  const auto blocks = static_cast<unsigned>(std::min(wanted, attn_detail::kTableCheckMaxBlocks));
  constexpr int kThreads = attn_detail::kTableCheckThreads;
  const runtime_error_t e =
      launch_plain(&attn_detail::attention_check_tables_kernel<kThreads>, dim3(blocks), dim3(kThreads), 0, stream,
                   p.block_table, p.block_table_stride, p.context_lens, p.batch, p.max_pages, p.kv.page_size,
                   p.kv.num_pages, reinterpret_cast<unsigned long long*>(result));
  return runtime_status(e, "attention table check launch");
}

}  // namespace dcukern
