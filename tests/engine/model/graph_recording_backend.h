// Step graphs on the host, for tests: a Backend that forwards every op to another one and,
// between begin_capture() and end_capture(), records the ops instead of running them;
// replay() runs the recording again with the same arguments, as a CUDA graph does. Around
// the CUDA kernels' host twins, a model's captured decode steps then run through the
// kernels' code with what a graph would freeze: pointers, sizes and launch shapes from the
// capture (the attention's planning arrays are copied then, and a bounded launch is planned
// from them), contents from the replay. Uploads, downloads, read-backs and synchronize() throw
// while capturing, as on the device.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "forwarding_backend.h"

namespace hearth::test {

class GraphRecordingBackend final : public ForwardingBackend {
  public:
    using ForwardingBackend::ForwardingBackend;

    std::string name() const override { return inner_.name() + " + recorded graphs"; }
    void upload(kernels::Buffer& dst, std::size_t offset, const void* src,
                std::size_t bytes) override {
        refuse_while_capturing("upload");
        inner_.upload(dst, offset, src, bytes);
    }
    void download(void* dst, const kernels::Buffer& src, std::size_t offset,
                  std::size_t bytes) override {
        refuse_while_capturing("download");
        inner_.download(dst, src, offset, bytes);
    }
    void synchronize() override {
        refuse_while_capturing("synchronize");
        inner_.synchronize();
    }
    const void* read_back(const kernels::Buffer& src, std::size_t offset,
                          std::size_t bytes) override {
        refuse_while_capturing("read_back");
        return inner_.read_back(src, offset, bytes);
    }

    bool supports_graphs() const override { return true; }
    void begin_capture() override {
        if (capturing_) throw kernels::BackendError("recorder: already capturing");
        capturing_ = true;
        recording_.clear();
    }
    int32_t end_capture() override {
        if (!capturing_) throw kernels::BackendError("recorder: not capturing");
        capturing_ = false;
        graphs_.push_back(std::move(recording_));
        recording_.clear();
        ++captures_;
        return static_cast<int32_t>(graphs_.size() - 1);
    }
    void replay(int32_t graph) override {
        if (graph < 0 || graph >= static_cast<int32_t>(graphs_.size()))
            throw kernels::BackendError("recorder: no graph " + std::to_string(graph));
        const auto& ops = graphs_[static_cast<std::size_t>(graph)];
        if (replays_ == fail_replay_) {  // half of it runs, then the launch fails
            for (std::size_t i = 0; i < ops.size() / 2; ++i) ops[i]();
            fail_replay_ = -1;
            throw kernels::BackendError("recorder: a replay failed (injected)");
        }
        for (const auto& op : ops) op();
        ++replays_;
    }
    void drop_graphs() override {
        capturing_ = false;
        recording_.clear();
        graphs_.clear();
    }
    // The next capture fails at its n-th op (0-based), as a launch or an allocation that
    // fails inside a CUDA capture does: the op throws and the capture is left open.
    void fail_next_capture_at(int op) { fail_at_ = op; }
    // The replay that would be the n-th to succeed (0-based) runs half of its ops and fails.
    void fail_replay(int n) { fail_replay_ = n; }
    int captures() const { return captures_; }
    int replays() const { return replays_; }
    // The largest chunk_bound a captured attention launch was sized for, among those with
    // this sliding window (0: the global layers); 0 if none.
    int32_t captured_bound(int32_t window) const {
        const auto it = bounds_.find(window);
        return it == bounds_.end() ? 0 : it->second;
    }

    void embed(const kernels::Weight& table, const int32_t* ids, int32_t n, float* out) override {
        run([=, this, &table] { inner_.embed(table, ids, n, out); });
    }
    void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps,
                  float* out) override {
        run([=, this] { inner_.rms_norm(x, weight, rows, n, eps, out); });
    }
    void matmul(const kernels::Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        run([=, this, &w] { inner_.matmul(w, x, n_tokens, out, bias); });
    }
    void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads,
              int32_t head_dim, const kernels::RopeParams& params) override {
        run([=, this] { inner_.rope(x, positions, n_tokens, n_heads, head_dim, params); });
    }
    void kv_append(const kernels::PagedKvLayer& cache, const float* k, const float* v,
                   const int32_t* slot_ids, int32_t n_tokens) override {
        run([=, this] { inner_.kv_append(cache, k, v, slot_ids, n_tokens); });
    }
    void kv_shift(const kernels::PagedKvLayer& cache, const int32_t* src, const int32_t* dst,
                  const int32_t* deltas, int32_t n, const kernels::RopeParams& rope) override {
        run([=, this] { inner_.kv_shift(cache, src, dst, deltas, n, rope); });
    }
    void attention(const float* q, const kernels::PagedKvLayer& cache,
                   const kernels::AttentionBatch& batch, int32_t n_heads, float scale,
                   float* out) override {
        if (!capturing_) return inner_.attention(q, cache, batch, n_heads, scale, out);
        int32_t& bound = bounds_[batch.window];
        bound = std::max(bound, batch.chunk_bound);
        // The host arrays as they were at the capture: a graph's launch shape is frozen.
        const auto n = static_cast<std::size_t>(batch.n_seqs);
        auto frozen = std::make_shared<std::vector<int32_t>>();
        for (const int32_t* a : {batch.host_q_start, batch.host_q_len, batch.host_kv_len})
            frozen->insert(frozen->end(), a, a + n);
        recording_.push_back([=, this] {
            kernels::AttentionBatch b = batch;
            b.host_q_start = frozen->data();
            b.host_q_len = frozen->data() + n;
            b.host_kv_len = frozen->data() + 2 * n;
            inner_.attention(q, cache, b, n_heads, scale, out);
        });
    }
    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        run([=, this] { inner_.swiglu(gate, up, n, out); });
    }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        run([=, this] { inner_.geglu(gate, up, n, out); });
    }
    void add(float* x, const float* y, int64_t n) override {
        run([=, this] { inner_.add(x, y, n); });
    }
    void scale(float* x, int64_t n, float s) override {
        run([=, this] { inner_.scale(x, n, s); });
    }
    void softcap(float* x, int64_t n, float cap) override {
        run([=, this] { inner_.softcap(x, n, cap); });
    }
    void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n,
                     float* out) override {
        run([=, this] { inner_.gather_rows(x, rows, count, n, out); });
    }
    void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
               int32_t* invalid) override {
        run([=, this] { inner_.top_k(logits, rows, n, k, ids, values, invalid); });
    }

  private:
    void run(std::function<void()> op) {
        if (!capturing_) return op();
        if (fail_at_ >= 0 && static_cast<int>(recording_.size()) == fail_at_) {
            fail_at_ = -1;
            throw kernels::BackendError("recorder: an op failed while capturing (injected)");
        }
        recording_.push_back(std::move(op));
    }
    void refuse_while_capturing(const char* what) const {
        if (capturing_)
            throw kernels::BackendError(std::string("recorder: ") + what + " while capturing");
    }

    bool capturing_ = false;
    std::vector<std::function<void()>> recording_;
    std::vector<std::vector<std::function<void()>>> graphs_;
    std::map<int32_t, int32_t> bounds_;  // captured_bound
    int captures_ = 0;
    int replays_ = 0;
    int fail_at_ = -1;
    int fail_replay_ = -1;
};

}  // namespace hearth::test
