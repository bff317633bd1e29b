// Speculative decoding (SpeculationConfig, sched/scheduler.h) on synthetic models: with
// drafts that hit, miss and run past the reply, greedy and seeded sampling give the same
// tokens and the same logits, bit for bit, as plain decoding, across block sizes, weight
// types, step budgets (chunking), batch company, preemption under memory pressure,
// overlapped steps and prefix caching on and off. Blocks that carry a hash (shared, or
// stored below) never change under drafts; the cache's audit is clean after rejections;
// drafts stop where decoding stops (a stop string, the context's end, max_tokens).
#include <QTest>

#include <algorithm>
#include <memory>

#include <cstdlib>
#include "sched_rig.h"
#include "spec/drafter.h"
#if defined(HEARTH_WITH_CUDA)
#include <cstring>

#include "cuda/cuda_backend.h"
#include "cuda/host_twin_backend.h"
#endif

using namespace hearth;
using namespace hearth::test;
using quant::TensorType;

Q_DECLARE_METATYPE(hearth::quant::TensorType)

namespace {

constexpr uint32_t kSeed = 20261207;

// Knows the reference run's sequences (prompt + reply of every turn) and proposes their
// continuation, with the token at every position p ≡ 0 (mod wrong_every) replaced (a
// miss there), and padding past the reference's end (drafts the scheduler must cut at
// max_tokens or throw away).
class OracleDrafter final : public spec::Drafter {
  public:
    OracleDrafter(std::shared_ptr<const std::vector<std::vector<int32_t>>> refs, int wrong_every)
        : refs_(std::move(refs)), wrong_every_(wrong_every) {}
    void propose(std::span<const int32_t> tokens, int32_t max_tokens,
                 std::vector<int32_t>& out) override {
        out.clear();
        for (const auto& r : *refs_) {
            if (r.size() <= tokens.size() || !std::equal(tokens.begin(), tokens.end(), r.begin()))
                continue;
            for (std::size_t p = tokens.size(); static_cast<int32_t>(out.size()) < max_tokens;
                 ++p) {
                int32_t t = p < r.size() ? r[p] : 3 + static_cast<int32_t>(p % 5);
                if (wrong_every_ > 0 && p % static_cast<std::size_t>(wrong_every_) == 0)
                    t = t == 3 ? 4 : 3;
                out.push_back(t);
            }
            return;
        }
    }

  private:
    std::shared_ptr<const std::vector<std::vector<int32_t>>> refs_;
    int wrong_every_;
};

uint64_t fnv(std::span<const std::byte> bytes) {
    uint64_t h = 1469598103934665603ull;
    for (std::byte b : bytes) h = (h ^ static_cast<uint8_t>(b)) * 1099511628211ull;
    return h;
}

// After every step: a block that carries a hash holds the same bytes as when it got it
// (shared blocks and blocks written below are never touched by drafts).
struct HashedBlocksUnchanged {
    std::map<kv::BlockId, std::pair<kv::BlockHash, uint64_t>> seen;
    std::string error;
    int64_t checked = 0;

    bool operator()(const Rig& rig) {
        const kv::BlockPool& pool = rig.cache->pool();
        std::vector<std::byte> bytes(rig.storage->block_bytes());
        for (kv::BlockId id = 0; id < pool.n_blocks(); ++id) {
            const kv::KvBlock& b = pool.block(id);
            if (!b.hash) {
                seen.erase(id);
                continue;
            }
            rig.storage->read_block(id, bytes);
            const uint64_t sum = fnv(bytes);
            auto [it, fresh] = seen.try_emplace(id, *b.hash, sum);
            if (fresh || !(it->second.first == *b.hash)) {
                it->second = {*b.hash, sum};
                continue;
            }
            ++checked;
            if (it->second.second != sum) {
                error = "block " + std::to_string(id) + " changed while it carried a hash";
                return false;
            }
        }
        return true;
    }
};

// The backend a row runs on: "cpu", or "cuda": the CUDA kernels' host twins, or the device
// with HEARTH_SPEC_DEVICE=cuda (the GPU bundle's tst_speculation_cuda). Empty: skip (why).
std::function<std::unique_ptr<kernels::Backend>()> backend_for(const QString& name,
                                                               std::string& skip) {
    if (name == "cpu") return {};
#if defined(HEARTH_WITH_CUDA)
    const char* device = std::getenv("HEARTH_SPEC_DEVICE");
    if (device && std::strcmp(device, "cuda") == 0) {
        std::string why;
        if (!kernels::CudaBackend::create(0, &why)) {
            skip = "no CUDA device: " + why;
            return {};
        }
        return [] {
            std::string e;
            return std::unique_ptr<kernels::Backend>(kernels::CudaBackend::create(0, &e));
        };
    }
    return [] { return kernels::make_cuda_host_twin_backend(); };
#else
    skip = "a build without CUDA";
    return {};
#endif
}

std::vector<std::vector<int32_t>> sequences(const std::vector<std::vector<Turn>>& runs) {
    std::vector<std::vector<int32_t>> out;
    for (const auto& conv : runs)
        for (const Turn& t : conv) {
            std::vector<int32_t> s = t.prompt;
            s.insert(s.end(), t.reply.begin(), t.reply.end());
            out.push_back(std::move(s));
        }
    return out;
}

}  // namespace

class TestSpeculation : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { qInfo("workload seed %u", kSeed); }

    void speculationEqualsPlain_data() {
        QTest::addColumn<TensorType>("type");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<int>("nBlocks");
        QTest::addColumn<int>("maxRunning");
        QTest::addColumn<int>("batchTokens");
        QTest::addColumn<bool>("caching");
        QTest::addColumn<bool>("overlap");
        QTest::addColumn<bool>("sampled");
        QTest::addColumn<int>("wrongEvery");  // oracle drafts; 0: the n-gram drafter
        QTest::addColumn<bool>("pressure");
        QTest::addColumn<QString>("backend");
        QTest::newRow("F32 bs16 greedy") << TensorType::F32 << 16 << 512 << 8 << 64 << true << false
                                         << false << 5 << false << QString("cpu");
        QTest::newRow("F32 bs1 greedy") << TensorType::F32 << 1 << 4096 << 8 << 64 << true << false
                                        << false << 3 << false << QString("cpu");
        QTest::newRow("F32 bs16 sampled alone, caching off")
            << TensorType::F32 << 16 << 512 << 1 << 64 << false << false << true << 4 << false
            << QString("cpu");
        QTest::newRow("Q8_0 bs7 sampled") << TensorType::Q8_0 << 7 << 512 << 8 << 64 << true
                                          << false << true << 5 << false << QString("cpu");
        QTest::newRow("Q4_1 bs16 greedy, 8-token steps")
            << TensorType::Q4_1 << 16 << 512 << 8 << 8 << true << false << false << 6 << false
            << QString("cpu");
        QTest::newRow("F32 bs3 sampled pressure") << TensorType::F32 << 3 << 110 << 8 << 64 << true
                                                  << false << true << 5 << true << QString("cpu");
        QTest::newRow("F32 bs16 greedy overlapped")
            << TensorType::F32 << 16 << 512 << 8 << 64 << true << true << false << 5 << false
            << QString("cpu");
        QTest::newRow("F32 bs16 sampled, n-gram drafts")
            << TensorType::F32 << 16 << 512 << 8 << 64 << true << false << true << 0 << false
            << QString("cpu");
        // Through the CUDA kernels (host twins here; the device in the GPU bundle).
        QTest::newRow("cuda-q8_0-sampled") << TensorType::Q8_0 << 16 << 512 << 8 << 64 << true
                                           << false << true << 5 << false << QString("cuda");
        QTest::newRow("cuda-f16-ngram") << TensorType::F16 << 16 << 512 << 8 << 64 << true << false
                                        << false << 0 << false << QString("cuda");
    }
    void speculationEqualsPlain() {
        QFETCH(TensorType, type);
        QFETCH(int, blockSize);
        QFETCH(int, nBlocks);
        QFETCH(int, maxRunning);
        QFETCH(int, batchTokens);
        QFETCH(bool, caching);
        QFETCH(bool, overlap);
        QFETCH(bool, sampled);
        QFETCH(int, wrongEvery);
        QFETCH(bool, pressure);
        QFETCH(QString, backend);
        std::string skip;
        const auto make_backend = backend_for(backend, skip);
        if (!skip.empty()) {
            if (std::getenv("HEARTH_REQUIRE_GPU") && backend == "cuda") QFAIL(skip.c_str());
            QSKIP(skip.c_str());
        }
        Workload w = Workload::random(kSeed, 6, 3, 2, synthetic_vocab_size());
        w.reply_tokens = 40;
        if (sampled) {
            w.sampling.temperature = 0.9f;
            w.sampling.top_k = 20;
            w.sampling.seed = 99;
        }

        RigOptions off;
        off.weight_type = type;
        off.prefix_caching = false;
        off.scheduler.max_running = 1;
        off.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
        off.backend = make_backend;
        auto ref = Rig::make(off);
        std::vector<std::vector<Turn>> expected, got;
        std::string error;
        QVERIFY2(run_workload(*ref, w, expected, error), error.c_str());
        QCOMPARE(ref->scheduler->stats().tokens_drafted, int64_t{0});

        RigOptions on = off;
        on.block_size = blockSize;
        on.n_blocks = nBlocks;
        on.prefix_caching = caching;
        on.scheduler.max_running = maxRunning;
        on.scheduler.max_batch_tokens = batchTokens;
        on.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Ngram;
        on.scheduler.speculation.max_step_tokens = 64;
        if (overlap) on.scheduler.overlap = sched::SchedulerConfig::Overlap::On;
        if (wrongEvery > 0) {
            auto refs =
                std::make_shared<const std::vector<std::vector<int32_t>>>(sequences(expected));
            on.scheduler.speculation.make_drafter = [refs, wrongEvery] {
                return std::make_unique<OracleDrafter>(refs, wrongEvery);
            };
        }
        auto rig = Rig::make(on);
        HashedBlocksUnchanged unchanged;
        rig->after_step = [&] { return unchanged(*rig); };
        QVERIFY2(run_workload(*rig, w, got, error),
                 (error + (unchanged.error.empty() ? "" : ": " + unchanged.error)).c_str());

        const std::string diff = first_turn_difference(got, expected, "speculation on vs off");
        QVERIFY2(diff.empty(), diff.c_str());
        for (int c = 0; c < w.n_conversations(); ++c)
            for (int t = 0; t < w.n_turns(); ++t) {
                QVERIFY(got[c][t].stats.draft_accepted <= got[c][t].stats.draft_tokens);
                QCOMPARE(got[c][t].stats.generated_tokens, expected[c][t].stats.generated_tokens);
            }
        const sched::SchedulerStats ss = rig->scheduler->stats();
        qInfo(
            "drafted %lld, accepted %lld; steps %lld against %lld plain; preemptions %lld; "
            "hashed blocks checked %lld times",
            static_cast<long long>(ss.tokens_drafted), static_cast<long long>(ss.tokens_accepted),
            static_cast<long long>(ss.steps), static_cast<long long>(ref->scheduler->stats().steps),
            static_cast<long long>(ss.preemptions), static_cast<long long>(unchanged.checked));
        if (wrongEvery > 0) {  // the oracle hits and misses
            QVERIFY(ss.tokens_accepted > 0);
            QVERIFY(ss.tokens_drafted > ss.tokens_accepted);
        }
        if (pressure) QVERIFY2(ss.preemptions > 0, "the pressure case should preempt");
        if (caching) QVERIFY(unchanged.checked > 0);
        QVERIFY(rig->cache->pool().check_consistency());
        const auto audit = rig->cache->audit();
        QVERIFY2(audit, audit ? "" : audit.message().c_str());
    }

    // Drafts end where decoding ends: a stop string inside a draft, max_tokens inside a
    // draft, a reply that runs to the context's last position. The same text, the same
    // stop reason as plain decoding.
    void draftsStopWhereDecodingStops() {
        RigOptions off;
        off.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
        auto ref = Rig::make(off);
        const int32_t ctx = static_cast<int32_t>(ref->model->config().context_length);
        Workload w = Workload::random(kSeed + 1, 1, 1, 1, synthetic_vocab_size());
        std::vector<int32_t> prompt = w.personas[0];
        prompt.insert(prompt.end(), w.user[0][0].begin(), w.user[0][0].end());

        // The plain reply, and a stop string taken from its middle.
        // Sampled: the same text as plain sampling is asked of drafts too.
        SamplingParams sampling;
        sampling.temperature = 1.0f;
        sampling.top_k = 0;
        sampling.seed = 5;
        std::vector<sched::Event> events;
        sched::Request first = greedy(1, prompt, 30);
        first.sampling = sampling;
        QVERIFY(ref->scheduler->submit(1, std::move(first)));
        QVERIFY(ref->drain(events));
        const sched::Event& plain = events.back();
        QCOMPARE(plain.kind, sched::EventKind::Finished);
        // (Three tokens' text from the reply's middle: where plain decoding first meets it
        // is for the plain run to say; a random model's text repeats.)
        std::string stop;
        for (std::size_t i = 8; i < 11 && i < plain.tokens.size(); ++i)
            stop += ref->tokenizer->token_to_piece(plain.tokens[i], false);
        QVERIFY(!stop.empty());

        // A prompt that leaves 9 positions of the context.
        std::vector<int32_t> near_end = prompt;
        while (static_cast<int32_t>(near_end.size()) < ctx - 9)
            near_end.insert(near_end.end(), prompt.begin(), prompt.end());
        near_end.resize(static_cast<std::size_t>(ctx - 9));

        struct Case {
            const char* name;
            std::vector<int32_t> prompt;
            int32_t max_tokens;
            std::vector<std::string> stops;
        };
        const std::vector<Case> cases = {
            {"stop string", prompt, 30, {stop}},
            {"max_tokens", prompt, 11, {}},
            {"context end", near_end, 100, {}},
        };
        for (const Case& c : cases) {
            std::vector<sched::Event> want, have;
            auto plain_rig = Rig::make(off);
            RigOptions on = off;
            on.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Ngram;
            // Drafts that are always right and run on past every end.
            auto refs = std::make_shared<std::vector<std::vector<int32_t>>>();
            on.scheduler.speculation.make_drafter = [refs] {
                return std::make_unique<OracleDrafter>(refs, 0);
            };
            auto spec_rig = Rig::make(on);
            const auto request = [&] {
                sched::Request r = greedy(1, c.prompt, c.max_tokens);
                r.sampling = sampling;
                r.stop_strings = c.stops;
                return r;
            };
            QVERIFY(plain_rig->scheduler->submit(1, request()));
            QVERIFY(plain_rig->drain(want));
            const sched::Event& a = want.back();
            QCOMPARE(a.kind, sched::EventKind::Finished);
            QVERIFY(a.tokens.size() >= 3);
            std::vector<int32_t> full = c.prompt;
            full.insert(full.end(), a.tokens.begin(), a.tokens.end());
            refs->push_back(full);
            QVERIFY(spec_rig->scheduler->submit(1, request()));
            QVERIFY(spec_rig->drain(have));
            const sched::Event& b = have.back();
            QCOMPARE(b.kind, sched::EventKind::Finished);
            QCOMPARE(b.tokens, a.tokens);
            QCOMPARE(b.text, a.text);
            QCOMPARE(b.stop, a.stop);
            qInfo("%s: %zu tokens, %d drafted, %d accepted, stop %d", c.name, b.tokens.size(),
                  b.stats.draft_tokens, b.stats.draft_accepted, static_cast<int>(b.stop));
            QVERIFY(b.stats.draft_accepted > 0);
            QVERIFY(spec_rig->scheduler->stats().steps < plain_rig->scheduler->stats().steps);
            const auto audit = spec_rig->cache->audit();
            QVERIFY2(audit, audit ? "" : audit.message().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestSpeculation)
#include "tst_speculation.moc"
