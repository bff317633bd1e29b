// The compute interface the model runs on. One op set, implemented by the CPU backend
// (kernels/cpu, threaded and vectorised) and the CUDA backend (kernels/cuda); naive
// versions of every op live in kernels/reference for tests.
//
// Memory: every float*/int32_t*/uint16_t* argument of an op points into memory of the
// backend that runs it (host memory for the CPU backend, device memory for CUDA),
// allocated with Backend::alloc. Weights are prepared once with Backend::load_weight
// from the bytes of a GGUF tensor. Ops are issued in order; results are visible to the
// host after synchronize() (download() synchronises). On an asynchronous backend (a GPU's
// stream) the calls return before the work is done, so that the host can prepare the next
// step meanwhile; read_back() then collects a step's results without waiting.
//
// Shapes are written [outer, ..., inner]; the last index is contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_chunks.h"  // kAttentionChunk, chunks_seen: AttentionBatch::chunk_bound
#include "quant/quant_types.h"

namespace hearth::kernels {

// What a device backend throws when the device fails: memory it cannot allocate, a launch
// or a copy that fails. The model turns it into an error result; the CPU backend throws
// only for a weight it cannot use (std::invalid_argument) and for host memory exhaustion.
class BackendError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Backend memory. Owned by a unique_ptr; freed by the backend that allocated it.
class Buffer {
  public:
    virtual ~Buffer() = default;
    virtual void* data() = 0;
    virtual std::size_t bytes() const = 0;
    template <typename T>
    T* as() {
        return static_cast<T*>(data());
    }
};

// A weight matrix W [rows, cols] (GGUF ne = {cols, rows}): each row of `cols` elements
// is stored contiguously in `type`'s block format. A backend may repack it internally.
struct WeightSource {
    std::string name;
    quant::TensorType type;
    int64_t rows = 0;
    int64_t cols = 0;
    // Host bytes (the mapped file). The CPU backend reads them in place instead of
    // copying them, so they must stay valid and unchanged for the Weight's lifetime;
    // device backends copy them during load_weight.
    const void* data = nullptr;
    // The bytes lie in a read-only mapping of a file, which backs them: a backend that
    // keeps a copy of its own (the CPU backend's repacked weights) may drop their pages
    // from the process (they read back from the file if touched again). Never set for
    // other memory, whose dropped pages would read back as zeros.
    bool file_backed = false;
};

class Weight {
  public:
    virtual ~Weight() = default;
    quant::TensorType type() const { return type_; }
    int64_t rows() const { return rows_; }
    int64_t cols() const { return cols_; }

  protected:
    Weight(quant::TensorType type, int64_t rows, int64_t cols)
        : type_(type), rows_(rows), cols_(cols) {}
    quant::TensorType type_;
    int64_t rows_, cols_;
};

struct RopeParams {
    int n_rot = 0;      // rotated dimensions (≤ head_dim, even)
    bool neox = false;  // pairs (i, i + n_rot/2) instead of (2i, 2i+1)
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;              // linear scaling: position · freq_scale
    const float* freq_factors = nullptr;  // [n_rot/2] Llama 3 rope_freqs, or null
    // cos and sin multiplied by this (ggml's mscale: LongRoPE's attention factor, Phi-3
    // 128k); 1 leaves them as they are.
    float attn_factor = 1.0f;
};

// The paged KV cache of one layer, passed to kernels by value (as FlashInfer's
// paged_kv_t). Layout of k and v (fp16 bit patterns):
//   [n_blocks][block_size][n_kv_heads][head_dim]
// Token t of a sequence lives in block block_table[t / block_size] at row
// t % block_size. Block ids never move; the block pool owns the storage.
struct PagedKvLayer {
    uint16_t* k = nullptr;
    uint16_t* v = nullptr;
    int32_t n_blocks = 0;
    int32_t block_size = 0;
    int32_t n_kv_heads = 0;
    int32_t head_dim = 0;
};

// The sequences of one forward step. Query rows of sequence s are
// [q_start[s], q_start[s] + q_len[s]) of the batch; they are the last q_len[s] tokens of
// its kv_len[s] tokens of context (already appended to the cache), so query i (0-based
// within s) sits at position kv_len[s] - q_len[s] + i and attends to context positions
// ≤ its own: the cached prefix unmasked, the new tokens causally.
// block_tables holds each sequence's table at offset block_table_start[s].
struct AttentionBatch {
    int32_t n_seqs = 0;
    const int32_t* q_start = nullptr;            // [n_seqs]
    const int32_t* q_len = nullptr;              // [n_seqs]
    const int32_t* kv_len = nullptr;             // [n_seqs]
    const int32_t* block_table_start = nullptr;  // [n_seqs]
    const int32_t* block_tables = nullptr;       // concatenated tables
    int32_t max_q_len = 0;                       // bounds for launch shapes
    int32_t max_kv_len = 0;
    // Host copies of q_start, q_len and kv_len (the arrays above are device memory on a
    // device backend): what a backend plans a launch from (split sizes, grids) without
    // reading device memory. On the CPU both views are the same host arrays.
    const int32_t* host_q_start = nullptr;  // [n_seqs]
    const int32_t* host_q_len = nullptr;    // [n_seqs]
    const int32_t* host_kv_len = nullptr;   // [n_seqs]
    // false: llama.cpp's orders of summation, bit for bit: a one-token step of a sequence
    // (decode) reduces as ggml_vec_dot_f16, longer steps as its batched product.
    // true: every step in the batched order, so a token's attention output (and so the
    // KV of the layers above) is the same whether it was computed in a prefill chunk or
    // in a decode step: with prefix caching, cached and recomputed KV then agree exactly.
    bool batch_invariant = false;
    // > 0: sliding-window attention (Gemma's local layers): the query at position p sees
    // only positions p - window + 1 .. p, as llama.cpp's mask (it masks p0 when
    // p - p0 >= window). 0: every position up to its own.
    int32_t window = 0;
    // > 0: soft-capped scores (Gemma 2): each score s (after the call's scale, which such
    // models pass as 1, scaling Q instead) → tanh(s · (1/softcap)) · softcap before the
    // softmax, in llama.cpp's float steps. 0: none.
    float softcap = 0.0f;
    // > 0 (a device backend capturing a step graph): every sequence is decode-like and no
    // row sees more than chunk_bound context chunks (chunks_seen, with the window); the
    // launch is sized for that bound instead of for these lengths, so that a replay serves
    // later steps whose contexts grew within it. The results are the same. 0: sized exactly.
    int32_t chunk_bound = 0;
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;  // "cpu (AVX2, 2 threads)", "cuda (NVIDIA H200)"
    // What decides the backend's bits besides the inputs (its kernels' orders of
    // summation): equal strings, equal results. The disk tier keys stored KV on it.
    virtual std::string numerics() const { return name(); }

    // --- memory ---------------------------------------------------------------
    virtual std::unique_ptr<Buffer> alloc(std::size_t bytes) = 0;
    // Working memory every step rewrites whole (a model's activations): like alloc, but a
    // backend may place it for a cheap first touch and touch it now, so that the step that
    // first uses it does not pay for that (the CPU backend asks Linux for transparent huge
    // pages and faults every page in). Not for memory used a piece at a time, such as the
    // KV cache.
    virtual std::unique_ptr<Buffer> alloc_scratch(std::size_t bytes) { return alloc(bytes); }
    // Buffers are host memory that any thread may read and write (the CPU backend): the
    // KV disk tier then reads blocks straight into them, off the engine thread.
    virtual bool host_memory() const { return false; }
    // Makes a buffer's memory resident now, so that no later step pays for first touches
    // (the CPU backend faults every page in; device memory is resident already). For the
    // KV cache, whose blocks are otherwise first touched on the critical path: by the
    // first prompts, and by blocks loaded back from disk after a restart.
    virtual void populate(Buffer& buffer) { (void)buffer; }
    virtual void upload(Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) = 0;
    virtual void download(void* dst, const Buffer& src, std::size_t offset, std::size_t bytes) = 0;
    virtual std::unique_ptr<Weight> load_weight(const WeightSource& source) = 0;
    // Picks, where the backend has several kernels for a product, the fastest on this
    // machine for these weights (the model's matrices, in model order), measuring them
    // or reading an earlier measurement from `choice_file` (written when measured; empty:
    // not kept). Never changes a result. Returns a line per choice for the log; the CPU
    // backend's is kernels/cpu/kernel_tuner.h, the others have nothing to choose.
    virtual std::string choose_kernels(const std::vector<const Weight*>& weights,
                                       const std::string& choice_file) {
        (void)weights;
        (void)choice_file;
        return {};
    }
    virtual void synchronize() = 0;
    // Ops and copies still run after their calls return (a device's stream), until
    // synchronize(). False: each op is done when its call returns (the CPU backend).
    virtual bool asynchronous() const { return false; }
    // Starts copying `bytes` of src (from `offset`) to host memory the backend owns, after
    // the ops issued so far, and returns at once with where they will be: readable once
    // synchronize() has returned, until the next read_back() or op. The results of a step
    // come back this way, so that the host waits only when it needs them. (This default
    // downloads at once; the CPU backend gives the buffer's own memory, CUDA copies into
    // pinned memory on its stream.)
    virtual const void* read_back(const Buffer& src, std::size_t offset, std::size_t bytes) {
        read_back_.resize(bytes);
        download(read_back_.data(), src, offset, bytes);
        return read_back_.data();
    }

    // --- step graphs (CUDA graphs) ---------------------------------------------
    // The ops issued between begin_capture() and end_capture() are recorded instead of run;
    // replay(graph) runs them again, as one launch. The caller keeps every pointer and size
    // given to those ops valid and unchanged for each replay (only the contents of buffers
    // change, e.g. by an upload before the replay), and issues no upload, download or
    // synchronize while capturing. drop_graphs() forgets them all (before any buffer they
    // use is freed). Only where supports_graphs(); the others throw BackendError.
    virtual bool supports_graphs() const { return false; }
    virtual void begin_capture() { throw BackendError(name() + ": no step graphs"); }
    virtual int32_t end_capture() { throw BackendError(name() + ": no step graphs"); }
    virtual void replay(int32_t graph) {
        (void)graph;
        throw BackendError(name() + ": no step graphs");
    }
    virtual void drop_graphs() {}

    // --- ops ------------------------------------------------------------------
    // out[t, :] = dequantised row ids[t] of table.                 out [n, table.cols]
    virtual void embed(const Weight& table, const int32_t* ids, int32_t n, float* out) = 0;

    // out[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) · weight.   x, out [rows, n]; out may be x
    virtual void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                          float* out) = 0;

    // out[t, r] = Σ_c W[r, c] · x[t, c] (+ bias[r]).   x [n_tokens, W.cols], out [n_tokens, W.rows]
    virtual void matmul(const Weight& w, const float* x, int32_t n_tokens, float* out,
                        const float* bias = nullptr) = 0;

    // Rotates the first n_rot dims of each head in place.   x [n_tokens, n_heads, head_dim]
    virtual void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
                      int32_t head_dim, const RopeParams& params) = 0;

    // Writes token t's K and V to cache slot slots[t] (= block · block_size + row).
    // k, v [n_tokens, n_kv_heads, head_dim]
    virtual void kv_append(const PagedKvLayer& cache, const float* k, const float* v,
                           const int32_t* slots, int32_t n_tokens) = 0;

    // Moves KV rows within the paged cache (a context shift: engine/kv/lineage.h). For each
    // i: V[dst_slots[i]] = V[src_slots[i]], and K[dst_slots[i]] = K[src_slots[i]] with the
    // first n_rot dims of each head rotated by the RoPE of deltas[i] positions (rope's
    // pairing, frequencies, factors and linear scale, in fp32 as rope() computes its angles,
    // then rounded to fp16; not its attn_factor, which the stored K carries already; the dims
    // past n_rot are copied). RoPE's angles are linear in the position, so this is K as RoPE
    // at src position + deltas[i] would have rotated it, up to rounding. No slot is both a
    // source and a destination.               src_slots, dst_slots, deltas [n]
    virtual void kv_shift(const PagedKvLayer& cache, const int32_t* src_slots,
                          const int32_t* dst_slots, const int32_t* deltas, int32_t n,
                          const RopeParams& rope) = 0;

    // Grouped-query attention over the paged cache.   q, out [n_tokens, n_heads, head_dim]
    virtual void attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
                           int32_t n_heads, float scale, float* out) = 0;

    // out = silu(gate) · up, elementwise.              [n]; out may be gate
    virtual void swiglu(const float* gate, const float* up, int64_t n, float* out) = 0;

    // out = gelu(gate) · up, elementwise, GELU in its tanh form (Gemma's GeGLU), as
    // ggml's CPU path computes it: gelu of gate rounded to fp16, the result rounded to
    // fp16 (its lookup table); 0 for gate ≤ −10, gate itself for gate ≥ 10.
    //                                                              [n]; out may be gate
    virtual void geglu(const float* gate, const float* up, int64_t n, float* out) = 0;

    // x += y, elementwise.                                         [n]
    virtual void add(float* x, const float* y, int64_t n) = 0;

    // x *= s, elementwise (one float product each, as ggml_scale). [n]
    virtual void scale(float* x, int64_t n, float s) = 0;

    // x = tanh(x · (1/cap)) · cap, elementwise (Gemma 2's logit soft-cap, llama.cpp's
    // float steps: a product, tanhf, a product).                   [n]
    virtual void softcap(float* x, int64_t n, float cap) = 0;

    // Rows of out selected for logits: out[i, :] = x[rows[i], :].   x [*, n], out [count, n]
    virtual void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                             float* out) = 0;

    // Sampling without the vocabulary: the k largest logits of each row, largest first,
    // equal values by lower id (-inf entries are never taken; a row with fewer finite
    // values pads with id -1, value -inf), and per row the index of its first NaN or +inf
    // (-1 when none), so that a broken forward pass is still caught. The host samples
    // from these (Sampler::sample_top) exactly as from the whole row.
    //   logits [rows, n]; ids, values [rows, k]; invalid [rows]; 1 ≤ k ≤ kMaxTopK, k ≤ n
    static constexpr int32_t kMaxTopK = 64;
    virtual void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                       float* values, int32_t* invalid) = 0;

  private:
    std::vector<std::byte> read_back_;  // the default read_back's copy
};

}  // namespace hearth::kernels
