#include "bench/shift_quality.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cpu/cpu_backend.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth {

namespace {

constexpr int32_t kBlock = 16;
constexpr int32_t kEntries = 64;  // tokens read with their logits in one step

// One run's KV: a block table over a shared storage, the blocks from a free list.
class Blocks {
  public:
    explicit Blocks(int32_t n) {
        for (int32_t b = n; b-- > 0;) free_.push_back(b);
    }
    Result<void> cover(std::vector<int32_t>& table, int64_t tokens) {
        while (static_cast<int64_t>(table.size()) * kBlock < tokens) {
            if (free_.empty()) return make_error("shift-quality: out of KV blocks");
            table.push_back(free_.back());
            free_.pop_back();
        }
        return {};
    }
    void release(std::vector<int32_t>& table) {
        free_.insert(free_.end(), table.begin(), table.end());
        table.clear();
    }

  private:
    std::vector<int32_t> free_;
};

double log_softmax_at(const float* row, int32_t n, int32_t token) {
    const float mx = *std::max_element(row, row + n);
    double sum = 0;
    for (int32_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(row[i] - mx));
    return static_cast<double>(row[token] - mx) - std::log(sum);
}

class Bench {
  public:
    Bench(const ShiftQualityOptions& o, LlamaModel& model, KvStorage& kv, std::vector<int32_t> text)
        : o_(o), model_(model), kv_(kv), text_(std::move(text)), blocks_(kv.n_blocks()) {}

    Result<ShiftQualityReport> run() {
        const int32_t n_vocab = static_cast<int32_t>(model_.config().n_vocab);
        ShiftQualityReport rep;
        rep.context = o_.context;
        const int max_steps = *std::max_element(o_.after.begin(), o_.after.end());
        int64_t cur = 0;  // stream tokens read so far (both runs' windows end there)
        // The persona: both runs read it once (no logits needed before the first step).
        if (auto r = read(drop_, cur, o_.persona, nullptr); !r) return r.error();
        if (auto r = read(shift_, cur, o_.persona, nullptr); !r) return r.error();
        cur = o_.persona;
        kept_from_ = cur;
        double nll_drop = 0, nll_shift = 0;
        std::vector<float> a, b;
        while (steps_ < max_steps) {
            if (cur + o_.turn + 1 > static_cast<int64_t>(text_.size()))
                return make_error("shift-quality: the text has " + std::to_string(text_.size()) +
                                  " tokens, too few for " + std::to_string(max_steps) +
                                  " steps at this context");
            const bool stepped = window(cur) + o_.turn > o_.context;
            if (stepped) {
                if (auto r = step(cur); !r) return r.error();
                if (o_.progress)
                    o_.progress("step " + std::to_string(steps_) + " at token " +
                                std::to_string(cur));
            }
            if (auto r = read(drop_, cur, o_.turn, &a); !r) return r.error();
            if (auto r = read(shift_, cur, o_.turn, &b); !r) return r.error();
            if (steps_ > 0) {
                for (int32_t i = 0; i < o_.turn; ++i) {
                    const int32_t next = text_[static_cast<std::size_t>(cur + i + 1)];
                    const auto off =
                        static_cast<std::size_t>(i) * static_cast<std::size_t>(n_vocab);
                    nll_drop -= log_softmax_at(a.data() + off, n_vocab, next);
                    nll_shift -= log_softmax_at(b.data() + off, n_vocab, next);
                }
                rep.tokens_scored += o_.turn;
            }
            if (stepped && std::find(o_.after.begin(), o_.after.end(), steps_) != o_.after.end()) {
                rep.points.push_back(compare(a, b, n_vocab));
                rep.points.back().steps = steps_;
            }
            cur += o_.turn;
        }
        rep.steps = steps_;
        rep.tokens_read = cur;
        rep.perplexity_drop = std::exp(nll_drop / static_cast<double>(rep.tokens_scored));
        rep.perplexity_shift = std::exp(nll_shift / static_cast<double>(rep.tokens_scored));
        return rep;
    }

  private:
    struct Run {
        std::vector<int32_t> table;
        int64_t len = 0;  // window tokens in its KV
    };

    int64_t window(int64_t cur) const { return o_.persona + (cur - kept_from_); }

    // The window's token at position p.
    int32_t token_at(int64_t p, int64_t kept_from) const {
        const int64_t s = p < o_.persona ? p : kept_from + (p - o_.persona);
        return text_[static_cast<std::size_t>(s)];
    }

    // Reads the stream's next n tokens (from `cur`) into the run: with logits (every
    // token's row into `logits`), one token per entry of a step; without, in chunks.
    Result<void> read(Run& run, int64_t cur, int32_t n, std::vector<float>* logits) {
        if (auto r = blocks_.cover(run.table, run.len + n); !r) return r;
        if (logits) logits->clear();
        const std::span<const int32_t> tokens(text_.data() + cur, static_cast<std::size_t>(n));
        for (int32_t at = 0; at < n;) {
            std::vector<SequenceStep> steps;
            const int32_t m = std::min(logits ? kEntries : 256, n - at);
            if (logits) {
                for (int32_t i = 0; i < m; ++i) {
                    SequenceStep s;
                    s.tokens = tokens.subspan(static_cast<std::size_t>(at + i), 1);
                    s.start_pos = static_cast<int32_t>(run.len + at + i);
                    s.block_table = run.table;
                    steps.push_back(s);
                }
            } else {
                SequenceStep s;
                s.tokens =
                    tokens.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(m));
                s.start_pos = static_cast<int32_t>(run.len + at);
                s.block_table = run.table;
                s.want_logits = false;
                steps.push_back(s);
            }
            if (auto r = model_.forward(steps, kv_, rows_); !r) return r;
            if (logits) logits->insert(logits->end(), rows_.begin(), rows_.end());
            at += m;
        }
        run.len += n;
        return {};
    }

    // The oldest whole turns leave until the window is at most keep of the context: the
    // drop run computes the new window afresh, the shift run moves its KV.
    Result<void> step(int64_t cur) {
        const auto target = static_cast<int64_t>(o_.keep * o_.context);
        int64_t from = kept_from_;
        while (from < cur && o_.persona + (cur - from) + o_.turn > target) from += o_.turn;
        const int64_t kept = cur - from;
        ++steps_;

        // drop: the persona and the kept tokens, computed again.
        blocks_.release(drop_.table);
        drop_.len = 0;
        std::vector<int32_t> window(text_.begin(), text_.begin() + o_.persona);
        window.insert(window.end(), text_.begin() + from, text_.begin() + cur);
        if (auto r = blocks_.cover(drop_.table, static_cast<int64_t>(window.size())); !r) return r;
        for (int64_t at = 0; at < static_cast<int64_t>(window.size()); at += 256) {
            SequenceStep s;
            const auto m = std::min<int64_t>(256, static_cast<int64_t>(window.size()) - at);
            s.tokens = std::span(window).subspan(static_cast<std::size_t>(at),
                                                 static_cast<std::size_t>(m));
            s.start_pos = static_cast<int32_t>(at);
            s.block_table = drop_.table;
            s.want_logits = false;
            if (auto r = model_.forward(std::span(&s, 1), kv_, rows_); !r) return r;
        }
        drop_.len = static_cast<int64_t>(window.size());

        // shift: the persona's rows in place, the kept rows moved back by what left.
        std::vector<int32_t> table;
        if (auto r = blocks_.cover(table, o_.persona + kept); !r) return r;
        std::vector<int32_t> src, dst, delta;
        const auto slot = [](const std::vector<int32_t>& t, int64_t p) {
            return t[static_cast<std::size_t>(p / kBlock)] * kBlock +
                   static_cast<int32_t>(p % kBlock);
        };
        for (int64_t p = 0; p < o_.persona + kept; ++p) {
            const int64_t old = p < o_.persona ? p : p + (from - kept_from_);
            src.push_back(slot(shift_.table, old));
            dst.push_back(slot(table, p));
            delta.push_back(static_cast<int32_t>(p - old));
        }
        if (auto r = model_.shift_kv(src, dst, delta, kv_); !r) return r;
        blocks_.release(shift_.table);
        shift_.table = std::move(table);
        shift_.len = o_.persona + kept;
        kept_from_ = from;
        return {};
    }

    static ShiftQualityPoint compare(const std::vector<float>& a, const std::vector<float>& b,
                                     int32_t n_vocab) {
        ShiftQualityPoint pt;
        const std::size_t rows = a.size() / static_cast<std::size_t>(n_vocab);
        double sum = 0;
        int agree = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            const float* x = a.data() + r * static_cast<std::size_t>(n_vocab);
            const float* y = b.data() + r * static_cast<std::size_t>(n_vocab);
            double d2 = 0, n2 = 0;
            for (int32_t i = 0; i < n_vocab; ++i) {
                const double d = static_cast<double>(y[i]) - x[i];
                d2 += d * d;
                n2 += static_cast<double>(x[i]) * x[i];
            }
            const double rel = std::sqrt(d2 / std::max(n2, 1e-30));
            sum += rel;
            pt.rel_l2_max = std::max(pt.rel_l2_max, rel);
            agree += std::max_element(x, x + n_vocab) - x == std::max_element(y, y + n_vocab) - y;
        }
        pt.tokens = static_cast<int>(rows);
        pt.rel_l2_mean = rows > 0 ? sum / static_cast<double>(rows) : 0;
        pt.greedy_agreement = rows > 0 ? static_cast<double>(agree) / static_cast<double>(rows) : 0;
        return pt;
    }

    const ShiftQualityOptions& o_;
    LlamaModel& model_;
    KvStorage& kv_;
    std::vector<int32_t> text_;
    Blocks blocks_;
    Run drop_, shift_;
    int64_t kept_from_ = 0;  // the stream index the kept history starts at
    int steps_ = 0;
    std::vector<float> rows_;
};

}  // namespace

Result<ShiftQualityReport> run_shift_quality(const ShiftQualityOptions& o) {
    if (o.turn < 1 || o.persona < 1 || o.context < o.persona + 2 * o.turn || o.after.empty() ||
        !(o.keep > 0 && o.keep < 1))
        return make_error("shift-quality: bad options (context, persona, turn, keep, steps)");
    std::ifstream in(o.text_path, std::ios::binary);
    if (!in) return make_error("shift-quality: cannot read " + o.text_path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto file = gguf::GgufFile::open(o.model_path);
    if (!file) return file.error();
    auto tokenizer = Tokenizer::from_gguf(**file);
    if (!tokenizer) return tokenizer.error();
    std::vector<int32_t> tokens = (*tokenizer)->encode(text, false);
    if ((*tokenizer)->bos() >= 0) tokens.insert(tokens.begin(), (*tokenizer)->bos());
    kernels::CpuBackend backend(o.n_threads);
    auto model = LlamaModel::load(**file, backend);
    if (!model) return model.error();
    (*model)->set_batch_invariant(true);
    if (o.context > (*model)->config().context_length)
        return make_error("shift-quality: the model's context is " +
                          std::to_string((*model)->config().context_length) + " tokens");
    const ModelConfig& c = (*model)->config();
    const int32_t blocks = 6 * ((o.context + kBlock - 1) / kBlock);
    auto kv = KvStorage::create(backend,
                                {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                                 static_cast<int32_t>(c.head_dim), kBlock},
                                blocks);
    if (!kv) return kv.error();
    Bench bench(o, **model, **kv, std::move(tokens));
    auto rep = bench.run();
    if (rep) rep->model = c.name.empty() ? o.model_path : c.name;
    return rep;
}

std::string ShiftQualityReport::table() const {
    std::ostringstream out;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s, context %d: %lld tokens read, %d steps; perplexity after the first step "
                  "(%lld tokens): drop %.4f, shift %.4f (%+.2f %%)\n",
                  model.c_str(), context, static_cast<long long>(tokens_read), steps,
                  static_cast<long long>(tokens_scored), perplexity_drop, perplexity_shift,
                  100.0 * (perplexity_shift / perplexity_drop - 1.0));
    out << line
        << "| after steps | tokens | logits' relative L2 (mean / max) | greedy agreement |\n"
        << "| --- | --- | --- | --- |\n";
    for (const ShiftQualityPoint& p : points) {
        std::snprintf(line, sizeof line, "| %d | %d | %.4f / %.4f | %.1f %% |\n", p.steps, p.tokens,
                      p.rel_l2_mean, p.rel_l2_max, 100.0 * p.greedy_agreement);
        out << line;
    }
    return out.str();
}

}  // namespace hearth
