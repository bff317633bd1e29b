// Grouped-query attention over the paged fp16 KV cache (backend.h: PagedKvLayer,
// AttentionBatch). Work is split into tiles of (sequence, KV head, query block, context
// split): each tile loads every K/V row of its context range once and uses it for all of
// its query vectors (query positions × the n_heads / n_kv_heads heads sharing that KV
// head). Decode (one query per sequence) splits long contexts into several ranges so that
// all threads have work: the splits' scores are computed in parallel and kept, then per
// tile the softmax runs over all of them as one row and P · V over the splits in order.
// The numerics are llama.cpp's default CPU attention (attention_fns.h), bit for bit.
#pragma once

#include <memory>
#include <vector>

#include "backend.h"
#include "cpu/aligned_buffer.h"
#include "cpu/cpu_features.h"
#include "cpu/thread_pool.h"

namespace hearth::kernels::cpu {

class Attention {
  public:
    Attention();
    ~Attention();
    // q, out [n_tokens, n_heads, head_dim]. n_heads must be a multiple of cache.n_kv_heads.
    void run(ThreadPool& pool, SimdLevel level, const float* q, const PagedKvLayer& cache,
             const AttentionBatch& batch, int32_t n_heads, float scale, float* out);

  private:
    struct Item {
        int32_t seq, kv_head, i0, nq;  // queries [i0, i0 + nq) of the sequence
        int32_t c0, c1;                // context range
        int32_t partial;               // slot in partials_, or −1: write the output directly
        std::size_t s_offset;          // a split's scores in partials_ (after the slots)
    };
    struct Merge {
        int32_t first, count;  // items_[first, first + count) are the splits of one tile
    };
    struct ThreadScratch;
    std::vector<Item> items_;
    std::vector<Merge> merges_;
    std::vector<std::unique_ptr<ThreadScratch>> thread_scratch_;  // one per pool thread
    AlignedBuffer partials_;  // per slot maxima and lanes, then the splits' scores
};

}  // namespace hearth::kernels::cpu
