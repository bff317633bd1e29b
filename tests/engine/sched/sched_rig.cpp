#include "sched_rig.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hearth::test {

namespace {

template <typename T>
T must(Result<T> r, const char* what) {
    if (!r) {
        std::fprintf(stderr, "%s: %s\n", what, r.message().c_str());
        std::abort();
    }
    return std::move(r).value();
}

}  // namespace

std::unique_ptr<Rig> Rig::make(const RigOptions& o) {
    auto rig = std::make_unique<Rig>();
    SyntheticModelSpec spec;
    spec.weight_type = o.weight_type;
    spec.seed = 11;
    spec.architecture = o.architecture;
    if (o.n_embd > 0) spec.n_embd = o.n_embd;
    if (o.n_ff > 0) spec.n_ff = o.n_ff;
    if (o.sliding_window > 0) {
        spec.sliding_window = o.sliding_window;
        spec.swa_period = 2;
    }
    rig->file = must(gguf::GgufFile::parse(must(make_synthetic_model(spec), "model")), "parse");
    rig->tokenizer = must(Tokenizer::from_gguf(*rig->file), "tokenizer");
    rig->backend = o.backend ? o.backend() : std::make_unique<kernels::CpuBackend>(2);
    rig->model = must(LlamaModel::load(*rig->file, *rig->backend), "load");
    rig->model->set_batch_invariant(true);
    const ModelConfig& c = rig->model->config();
    rig->storage =
        must(KvStorage::create(*rig->backend,
                               {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                                static_cast<int32_t>(c.head_dim), o.block_size},
                               o.n_blocks),
             "kv storage");
    kv::KvCacheConfig kc;
    kc.n_blocks = o.n_blocks;
    kc.block_size = o.block_size;
    kc.prefix_caching = o.prefix_caching;
    kc.hash_keys.model_fingerprint = rig->file->fingerprint();
    rig->cache = std::make_unique<kv::KvCacheManager>(kc);
    rig->scheduler = std::make_unique<sched::Scheduler>(*rig->model, *rig->storage, *rig->cache,
                                                        *rig->tokenizer, o.scheduler);
    if (!o.disk_dir.empty()) {
        kv::TierKey::Parts parts;
        parts.model = rig->file->content_fingerprint();
        parts.numerics = rig->backend->numerics() + " batch-invariant";
        parts.n_layers = static_cast<int32_t>(c.n_layer);
        parts.n_kv_heads = static_cast<int32_t>(c.n_head_kv);
        parts.head_dim = static_cast<int32_t>(c.head_dim);
        parts.block_size = o.block_size;
        kv::DiskTierConfig dc;
        dc.dir = o.disk_dir;
        dc.budget_bytes = o.disk_budget_bytes;
        rig->disk = must(kv::DiskTier::open(dc, kv::TierKey::make(parts),
                                            KvStorage::bytes_per_block(rig->storage->shape())),
                         "disk tier");
        rig->scheduler->set_disk_tier(rig->disk.get());
    }
    if (o.host_budget_bytes > 0) {
        rig->host = std::make_unique<kv::HostTier>(o.host_budget_bytes);
        rig->scheduler->set_host_tier(rig->host.get());
    }
    return rig;
}

bool Rig::drain(std::vector<sched::Event>& events, int max_steps) {
    for (int i = 0; i < max_steps && scheduler->has_work(); ++i) {
        if (!scheduler->step(events)) return false;
        if (after_step && !after_step()) return false;
        if (disk && scheduler->waiting_for_loads()) disk->flush();
    }
    return !scheduler->has_work();
}

Workload Workload::random(uint32_t seed, int n_conversations, int n_turns, int n_personas,
                          int32_t vocab) {
    std::mt19937 rng(seed);
    // Ordinary tokens only: the synthetic vocabulary's first three ids are control tokens.
    std::uniform_int_distribution<int32_t> token(3, vocab - 1);
    const auto tokens = [&](int lo, int hi) {
        std::vector<int32_t> t(
            static_cast<std::size_t>(std::uniform_int_distribution<int>(lo, hi)(rng)));
        for (auto& x : t) x = token(rng);
        return t;
    };
    Workload w;
    for (int p = 0; p < n_personas; ++p) w.personas.push_back(tokens(30, 60));
    for (int c = 0; c < n_conversations; ++c) {
        w.persona_of.push_back(c % n_personas);
        std::vector<std::vector<int32_t>> turns;
        for (int t = 0; t < n_turns; ++t) turns.push_back(tokens(4, 24));
        w.user.push_back(std::move(turns));
    }
    return w;
}

bool run_workload(Rig& rig, const Workload& w, std::vector<std::vector<Turn>>& results,
                  std::string& error) {
    const int C = w.n_conversations();
    results.assign(static_cast<std::size_t>(C),
                   std::vector<Turn>(static_cast<std::size_t>(w.n_turns())));
    std::vector<std::vector<int32_t>> history(static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c)
        history[static_cast<std::size_t>(c)] =
            w.personas[static_cast<std::size_t>(w.persona_of[static_cast<std::size_t>(c)])];
    static sched::RequestId next_id = 1;
    for (int t = 0; t < w.n_turns(); ++t) {
        std::map<sched::RequestId, int> conv_of;
        for (int c = 0; c < C; ++c) {
            auto& h = history[static_cast<std::size_t>(c)];
            const auto& u = w.user[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
            h.insert(h.end(), u.begin(), u.end());
            Turn& turn = results[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
            turn.prompt = h;
            sched::Request r;
            r.conversation = c;
            r.prompt = h;
            r.max_tokens = w.reply_tokens;
            r.sampling = w.sampling;
            r.stop_at_end_of_generation = false;
            r.record_logits = true;
            const sched::RequestId id = next_id++;
            if (auto s = rig.scheduler->submit(id, std::move(r)); !s) {
                error = s.message();
                return false;
            }
            conv_of[id] = c;
        }
        std::vector<sched::Event> events;
        if (!rig.drain(events)) {
            error = "the scheduler did not finish the turn";
            return false;
        }
        for (sched::Event& e : events) {
            Turn& turn = results[static_cast<std::size_t>(conv_of.at(e.request))]
                                [static_cast<std::size_t>(t)];
            if (e.kind == sched::EventKind::Error) {
                error = e.error;
                return false;
            }
            if (e.kind == sched::EventKind::Token && e.token >= 0)
                turn.logits.push_back(std::move(e.logits));
            if (e.kind == sched::EventKind::Finished) {
                turn.reply = e.tokens;
                turn.stats = e.stats;
            }
        }
        for (int c = 0; c < C; ++c) {
            auto& h = history[static_cast<std::size_t>(c)];
            const auto& reply =
                results[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)].reply;
            h.insert(h.end(), reply.begin(), reply.end());
        }
    }
    return true;
}

std::string first_turn_difference(const std::vector<std::vector<Turn>>& got,
                                  const std::vector<std::vector<Turn>>& want,
                                  const std::string& what) {
    if (got.size() != want.size()) return what + ": another number of conversations";
    for (std::size_t c = 0; c < got.size(); ++c) {
        if (got[c].size() != want[c].size()) return what + ": another number of turns";
        for (std::size_t t = 0; t < got[c].size(); ++t) {
            const Turn& a = got[c][t];
            const Turn& b = want[c][t];
            const std::string where =
                "conversation " + std::to_string(c) + " turn " + std::to_string(t) + ", " + what;
            if (a.reply != b.reply) return where + ": other reply tokens";
            if (a.logits.size() != b.logits.size() || a.logits.empty() || a.logits.front().empty())
                return where + ": logit rows missing or of another count";
            for (std::size_t i = 0; i < a.logits.size(); ++i)
                if (const std::string d = first_difference(a.logits[i], b.logits[i]); !d.empty())
                    return where + ", token " + std::to_string(i) + ": " + d;
        }
    }
    return {};
}

std::string first_difference(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size())
        return "sizes differ: " + std::to_string(a.size()) + " and " + std::to_string(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::memcmp(&a[i], &b[i], sizeof(float)) == 0) continue;
        uint32_t bits_a = 0, bits_b = 0;
        std::memcpy(&bits_a, &a[i], sizeof bits_a);
        std::memcpy(&bits_b, &b[i], sizeof bits_b);
        char text[160];
        std::snprintf(text, sizeof text, "index %zu: %.9g (0x%08x) and %.9g (0x%08x)", i,
                      static_cast<double>(a[i]), bits_a, static_cast<double>(b[i]), bits_b);
        return text;
    }
    return {};
}

}  // namespace hearth::test
