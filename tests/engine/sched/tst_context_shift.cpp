// Context shifts and lineages in the scheduler (kv/lineage.h, sched/scheduler_shift.cpp), on
// synthetic models: a turn that drops old history moves the kept history's KV instead of
// computing it; the moved K equals what RoPE at the new position gives (layer 0, where K
// depends on the token and position alone) within the kernel's bound, and V there is
// bit-equal; the source's blocks (shared with other conversations, the disk tier) are
// never written; shifted KV is found only in its lineage, in memory and on disk; a source
// the cache does not hold is computed in the plain chain; a chat that drops in steps gives
// the same tokens and logits with caching on as off; and the cache audit stays clean
// through shifts under eviction and preemption.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <random>

#include "chat/turn_planner.h"
#include "kv/lineage.h"
#include "quant/fp16.h"
#include "sched_rig.h"
#if defined(HEARTH_WITH_CUDA)
#include <cstdlib>
#include <cstring>

#include "cuda/cuda_backend.h"
#include "cuda/host_twin_backend.h"
#endif

using namespace hearth;
using namespace hearth::test;

namespace {

constexpr uint32_t kSeed = 20261206;

std::vector<int32_t> random_tokens(std::mt19937& rng, int n) {
    std::uniform_int_distribution<int32_t> d(3, synthetic_vocab_size() - 1);
    std::vector<int32_t> v(static_cast<std::size_t>(n));
    for (int32_t& t : v) t = d(rng);
    return v;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Runs one request to its end; its Finished (or Error) event.
sched::Event run(Rig& rig, sched::RequestId id, sched::Request r) {
    if (auto ok = rig.scheduler->submit(id, std::move(r)); !ok)
        qFatal("submit: %s", ok.message().c_str());
    std::vector<sched::Event> events;
    if (!rig.drain(events)) qFatal("drain failed");
    for (auto& e : events)
        if (e.request == id &&
            (e.kind == sched::EventKind::Finished || e.kind == sched::EventKind::Error))
            return e;
    qFatal("request %lld did not end", static_cast<long long>(id));
}

// A conversation's turn before a drop and the turn that shifts: the persona (P tokens),
// history, a reply; then the persona, the history after `drop` tokens, the reply and a new
// message, with the shift that moves the kept part.
struct ShiftCase {
    std::vector<int32_t> persona, first_prompt, source, prompt;
    int32_t keep_from = 0;
    kv::Lineage lineage;
    kv::KvShift shift;
};

ShiftCase make_case(Rig& rig, std::mt19937& rng, kv::SeqId conv, int persona_len, int history,
                    int drop) {
    ShiftCase c;
    c.persona = random_tokens(rng, persona_len);
    c.first_prompt = cat(c.persona, random_tokens(rng, history));
    sched::Event first = run(rig, conv * 10, greedy(conv, c.first_prompt, 8));
    if (first.kind != sched::EventKind::Finished) qFatal("first turn: %s", first.error.c_str());
    c.source = cat(c.first_prompt, first.tokens);
    c.keep_from = persona_len + drop;
    c.prompt = c.persona;
    c.prompt.insert(c.prompt.end(), c.source.begin() + c.keep_from, c.source.end());
    c.prompt = cat(c.prompt, random_tokens(rng, 20));
    c.lineage = {persona_len,
                 kv::shift_salt({}, persona_len,
                                std::span(c.source).first(static_cast<std::size_t>(c.keep_from)))};
    c.shift.source = c.source;
    c.shift.ranges = {
        {0, 0, persona_len},
        {c.keep_from, persona_len, static_cast<int32_t>(c.source.size()) - c.keep_from}};
    return c;
}

sched::Request shifted(kv::SeqId conv, const ShiftCase& c, int32_t max_tokens = 4) {
    sched::Request r = greedy(conv, c.prompt, max_tokens);
    r.lineage = c.lineage;
    r.shift = c.shift;
    return r;
}

// One layer's K and V rows (fp16 bits) of positions [0, n) of a sequence with this table.
struct Rows {
    std::vector<uint16_t> k, v;
};
Rows layer_rows(const KvStorage& kv, std::span<const kv::BlockId> table, int32_t layer, int32_t n) {
    const KvShape& s = kv.shape();
    const std::size_t row = static_cast<std::size_t>(s.n_kv_heads * s.head_dim);
    const std::size_t block_rows = row * static_cast<std::size_t>(s.block_size);
    std::vector<std::byte> bytes(kv.block_bytes());
    Rows out;
    for (int32_t p = 0; p < n; ++p) {
        const auto b = table[static_cast<std::size_t>(p / s.block_size)];
        kv.read_block(b, bytes);
        // read_block: per layer, its K block then its V block.
        const auto* words = reinterpret_cast<const uint16_t*>(bytes.data());
        const std::size_t at = static_cast<std::size_t>(layer) * 2 * block_rows +
                               static_cast<std::size_t>(p % s.block_size) * row;
        out.k.insert(out.k.end(), words + at, words + at + row);
        out.v.insert(out.v.end(), words + at + block_rows, words + at + block_rows + row);
    }
    return out;
}

}  // namespace

class TestContextShift : public QObject {
    Q_OBJECT

    // The kept history is moved, not computed: exactly the rows the source holds from the
    // first position the new prompt lacks; the new message and the last token are computed.
    // Layer 0's moved K equals RoPE at the new position within the kernel's bound
    // (tst_cpu_elementwise kvShift: 2^-10 · r + 4e-7 · |delta| · r, here with the float
    // angles of both positions too), its V bit for bit.
    void check_shift(const RigOptions& o) {
        const int blockSize = o.block_size;
        auto rig = Rig::make(o);
        std::mt19937 rng(kSeed);
        const int P = 40, history = 300, drop = 150;
        const ShiftCase c = make_case(*rig, rng, 1, P, history, drop);
        const sched::Event e = run(*rig, 2, shifted(1, c));
        QCOMPARE(static_cast<int>(e.kind), static_cast<int>(sched::EventKind::Finished));
        // The source's rows held: the first turn's prompt and all but its last reply token.
        const int32_t held = static_cast<int32_t>(c.source.size()) - 1;
        const int32_t cached = P / blockSize * blockSize;  // the persona's whole blocks
        const int32_t moved_to = P + (held - c.keep_from);
        QCOMPARE(e.stats.prompt_tokens_cached, cached);
        QCOMPARE(e.stats.prompt_tokens_shifted, moved_to - cached);
        QCOMPARE(e.stats.prompt_tokens_computed, static_cast<int32_t>(c.prompt.size()) - moved_to);
        QVERIFY(rig->cache->audit().ok());
        QCOMPARE(rig->cache->stats().prompt_tokens_shifted, int64_t{moved_to - cached});

        // Layer 0 against a fresh computation of the new prompt.
        auto fresh = Rig::make(o);
        std::vector<kv::BlockId> table;
        const int32_t n = moved_to;
        for (int32_t b = 0; b * blockSize < static_cast<int32_t>(c.prompt.size()); ++b)
            table.push_back(b);
        SequenceStep step;
        step.tokens = c.prompt;
        step.block_table = table;
        std::vector<float> logits;
        QVERIFY(fresh->model->forward(std::span(&step, 1), *fresh->storage, logits).ok());
        const Rows want = layer_rows(*fresh->storage, table, 0, n);
        const auto got_blocks = rig->cache->longest_cached_prefix(c.prompt, c.lineage).blocks;
        QVERIFY(static_cast<int32_t>(got_blocks.size()) * blockSize >= n - blockSize);
        const int32_t checked = static_cast<int32_t>(got_blocks.size()) * blockSize;
        const Rows got = layer_rows(*rig->storage, got_blocks, 0, std::min(n, checked));
        const ModelConfig& mc = rig->model->config();
        const auto row = static_cast<std::size_t>(mc.n_head_kv * mc.head_dim);
        const int half = static_cast<int>(mc.n_rot / 2);
        const bool neox = mc.rope_style == RopeStyle::Neox;
        double worst = 0;
        for (int32_t p = 0; p < std::min(n, checked); ++p) {
            const int32_t old = p < P ? p : p - P + c.keep_from;
            const double bound_scale = 0x1p-9 + 4e-7 * (old + p + std::abs(old - p));
            for (std::size_t e2 = 0; e2 < row; ++e2) {
                const std::size_t at = static_cast<std::size_t>(p) * row + e2;
                QCOMPARE(got.v[at], want.v[at]);
                const int d = static_cast<int>(e2 % static_cast<std::size_t>(mc.head_dim));
                const std::size_t head = e2 - static_cast<std::size_t>(d);
                double r = std::abs(quant::fp16_to_f32(want.k[at]));
                if (d < 2 * half) {
                    const int pair = neox ? (d < half ? d + half : d - half) : d ^ 1;
                    const double a = quant::fp16_to_f32(want.k[at]);
                    const double b =
                        quant::fp16_to_f32(want.k[static_cast<std::size_t>(p) * row + head +
                                                  static_cast<std::size_t>(pair)]);
                    r = std::sqrt(a * a + b * b);
                }
                const double err =
                    std::abs(quant::fp16_to_f32(got.k[at]) - quant::fp16_to_f32(want.k[at]));
                worst = std::max(worst, err / (r + 1e-12));
                QVERIFY2(err <= bound_scale * r + 1e-6,
                         qPrintable(QString("position %1 element %2: %3 vs %4")
                                        .arg(p)
                                        .arg(e2)
                                        .arg(quant::fp16_to_f32(got.k[at]))
                                        .arg(quant::fp16_to_f32(want.k[at]))));
            }
        }
        qInfo("layer 0: moved K within %.2e of the pair norm of K computed at the new position",
              worst);
    }

  private slots:
    void initTestCase() { qInfo("seed %u", kSeed); }

    void shiftMovesTheKeptHistory_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<int>("window");
        QTest::newRow("llama bs16") << "llama" << 16 << 0;
        QTest::newRow("llama bs7") << "llama" << 7 << 0;
        QTest::newRow("qwen3 (neox) bs16") << "qwen3" << 16 << 0;
        QTest::newRow("gemma3 (local layers) bs16") << "gemma3" << 16 << 64;
    }
    void shiftMovesTheKeptHistory() {
        QFETCH(QString, arch);
        QFETCH(int, blockSize);
        QFETCH(int, window);
        RigOptions o;
        o.architecture = arch.toStdString();
        o.sliding_window = window;
        o.block_size = blockSize;
        check_shift(o);
    }

#if defined(HEARTH_WITH_CUDA)
    // The same through the CUDA kernels: their host twins here (and in CI), the device
    // with HEARTH_SHIFT_DEVICE=cuda (the GPU bundle's tst_context_shift_cuda).
    void shiftOnTheCudaBackend() {
        RigOptions o;
        o.architecture = "qwen3";
        const char* device = std::getenv("HEARTH_SHIFT_DEVICE");
        if (device && std::strcmp(device, "cuda") == 0) {
            std::string why;
            if (!kernels::CudaBackend::create(0, &why)) {
                if (std::getenv("HEARTH_REQUIRE_GPU")) QFAIL(why.c_str());
                QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + why)));
            }
            o.backend = [] {
                std::string e;
                return std::unique_ptr<kernels::Backend>(kernels::CudaBackend::create(0, &e));
            };
        } else {
            o.backend = [] { return kernels::make_cuda_host_twin_backend(); };
        }
        check_shift(o);
    }
#endif

    // The source's blocks are read, never written; the shifted blocks are found only under
    // their lineage: a plain request for the same tokens finds the persona alone, a request
    // under the lineage finds them all.
    void shiftedKvStaysInItsLineage() {
        RigOptions o;
        auto rig = Rig::make(o);
        std::mt19937 rng(kSeed + 1);
        const ShiftCase c = make_case(*rig, rng, 1, 40, 300, 150);
        const auto source_blocks = rig->cache->longest_cached_prefix(c.source).blocks;
        QVERIFY(source_blocks.size() >= 18);
        std::vector<std::vector<std::byte>> before;
        for (kv::BlockId b : source_blocks) {
            before.emplace_back(rig->storage->block_bytes());
            rig->storage->read_block(b, before.back());
        }
        QCOMPARE(static_cast<int>(run(*rig, 2, shifted(1, c)).kind),
                 static_cast<int>(sched::EventKind::Finished));
        for (std::size_t i = 0; i < source_blocks.size(); ++i) {
            std::vector<std::byte> after(rig->storage->block_bytes());
            rig->storage->read_block(source_blocks[i], after);
            QVERIFY2(after == before[i], qPrintable(QString("source block %1 changed").arg(i)));
        }
        const int32_t whole = (static_cast<int32_t>(c.prompt.size()) - 1) / 16 * 16;
        QCOMPARE(rig->cache->longest_cached_prefix(c.prompt).n_tokens, 32);
        QCOMPARE(rig->cache->longest_cached_prefix(c.prompt, c.lineage).n_tokens, whole);

        // A plain request (another conversation) computes what is not the persona...
        const sched::Event plain = run(*rig, 3, greedy(2, c.prompt, 2));
        QCOMPARE(plain.stats.prompt_tokens_cached, 32);
        QCOMPARE(plain.stats.prompt_tokens_shifted, 0);
        // ...and a request under the lineage (a third conversation) now finds both chains
        // whole: the plain one wins the tie, its KV being exact.
        sched::Request again = greedy(3, c.prompt, 2);
        again.lineage = c.lineage;
        const sched::Event in_lineage = run(*rig, 4, std::move(again));
        QCOMPARE(in_lineage.stats.prompt_tokens_cached, whole);
        QVERIFY(rig->cache->audit().ok());
    }

    // On disk too: after a restart, the plain prompt loads the persona's blocks only, the
    // lineage's request loads the shifted history.
    void diskTierKeepsLineagesApart() {
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        std::mt19937 rng(kSeed + 2);
        ShiftCase c;
        {
            auto rig = Rig::make(o);
            c = make_case(*rig, rng, 1, 40, 300, 150);
            QCOMPARE(static_cast<int>(run(*rig, 2, shifted(1, c)).kind),
                     static_cast<int>(sched::EventKind::Finished));
            rig->disk->flush();
        }
        {
            auto rig = Rig::make(o);
            const sched::Event plain = run(*rig, 1, greedy(7, c.prompt, 1));
            QCOMPARE(plain.stats.prompt_tokens_loaded, 32);
        }
        {
            auto rig = Rig::make(o);
            sched::Request r = greedy(8, c.prompt, 1);
            r.lineage = c.lineage;
            const sched::Event lineage = run(*rig, 1, std::move(r));
            QVERIFY2(
                lineage.stats.prompt_tokens_loaded >= static_cast<int32_t>(c.prompt.size()) - 40,
                qPrintable(QString::number(lineage.stats.prompt_tokens_loaded)));
            QCOMPARE(lineage.stats.prompt_tokens_shifted, 0);
        }
    }

    // A source the cache does not hold: nothing is moved, and the computed history is in the
    // plain chain (where a fresh computation belongs).
    void unheldSourceIsComputedInThePlainChain() {
        RigOptions o;
        auto rig = Rig::make(o);
        std::mt19937 rng(kSeed + 3);
        const ShiftCase c = make_case(*rig, rng, 1, 40, 300, 150);
        auto other = Rig::make(o);  // never saw the first turn
        const sched::Event e = run(*other, 1, shifted(1, c));
        QCOMPARE(e.stats.prompt_tokens_shifted, 0);
        QCOMPARE(e.stats.prompt_tokens_computed, static_cast<int32_t>(c.prompt.size()));
        const int32_t whole = (static_cast<int32_t>(c.prompt.size()) - 1) / 16 * 16;
        QCOMPARE(other->cache->longest_cached_prefix(c.prompt).n_tokens, whole);
        QVERIFY(other->cache->audit().ok());
    }

    // Many conversations shifting at once in a cache too small for all of them: shifts,
    // evictions and preemptions, with the audit checked after every step and nothing failed.
    void auditStaysCleanUnderPressure() {
        RigOptions o;
        o.n_blocks = 84;
        o.block_size = 8;
        o.scheduler.max_running = 6;
        o.scheduler.max_batch_tokens = 64;
        auto rig = Rig::make(o);
        std::mt19937 rng(kSeed + 4);
        std::vector<ShiftCase> cases;
        for (int c = 0; c < 8; ++c) cases.push_back(make_case(*rig, rng, c + 1, 24, 200, 90));
        for (int c = 0; c < 8; ++c)
            QVERIFY(rig->scheduler->submit(100 + c, shifted(c + 1, cases[c], 16)).ok());
        std::vector<sched::Event> events;
        int finished = 0, shifted_tokens = 0;
        for (int step = 0; step < 100000 && rig->scheduler->has_work(); ++step) {
            QVERIFY(rig->scheduler->step(events).ok());
            auto audit = rig->cache->audit();
            QVERIFY2(audit.ok(), audit.ok() ? "" : audit.message().c_str());
        }
        for (const auto& e : events) {
            QVERIFY2(e.kind != sched::EventKind::Error, e.error.c_str());
            if (e.kind == sched::EventKind::Finished) {
                ++finished;
                shifted_tokens += e.stats.prompt_tokens_shifted;
            }
        }
        QCOMPARE(finished, 8);
        QVERIFY(shifted_tokens > 0);
        QVERIFY(rig->scheduler->stats().preemptions > 0);
        QVERIFY(rig->cache->stats().evictions > 0);
        qInfo("%d tokens moved, %lld preemptions, %lld evictions", shifted_tokens,
              static_cast<long long>(rig->scheduler->stats().preemptions),
              static_cast<long long>(rig->cache->stats().evictions));
    }

    // A chat planned by chat::plan_turn with DropInSteps across several steps: caching on
    // gives the same replies and logits as caching off, bit for bit; and between steps a
    // turn computes only its new message.
    void dropInStepsCacheOnEqualsOff() {
        RigOptions off;
        off.prefix_caching = false;
        off.scheduler.max_running = 1;
        RigOptions on;
        auto a = Rig::make(off), b = Rig::make(on);
        const chat::PromptBuilder builder(*b->tokenizer, chat::ChatTemplate::from_gguf(*b->file));
        std::mt19937 rng(kSeed + 5);
        chat::TurnInput turn;
        turn.system_prompt = "You are a synthetic test persona with a few words.";
        turn.max_tokens = 12;
        const int32_t context = 420;
        int steps = 0, appended_turns = 0;
        for (int t = 0; t < 24; ++t) {
            std::string text;
            for (int w = 0; w < 30; ++w) text += static_cast<char>('a' + rng() % 26);
            turn.messages.push_back(
                {chat::Role::User, text, builder.encode_content(chat::Role::User, text)});
            auto planned = chat::plan_turn(builder, context, turn);
            QVERIFY2(planned.ok(), planned.ok() ? "" : planned.message().c_str());
            if (planned->dropped_now > 0) ++steps;
            std::vector<std::vector<float>> logits[2];
            std::vector<int32_t> reply[2];
            int i = 0;
            for (Rig* rig : {a.get(), b.get()}) {
                sched::Request r = greedy(1, planned->prompt, planned->max_tokens);
                r.record_logits = true;
                QVERIFY(rig->scheduler->submit(1000 * t + i, std::move(r)).ok());
                std::vector<sched::Event> events;
                QVERIFY(rig->drain(events));
                for (const auto& e : events) {
                    if (e.kind == sched::EventKind::Token) logits[i].push_back(e.logits);
                    if (e.kind == sched::EventKind::Finished) {
                        reply[i] = e.tokens;
                        if (i == 1 && planned->dropped_now == 0 && t > 0) {
                            // Only the new message's segment and the generation prompt.
                            QVERIFY2(e.stats.prompt_tokens_computed <= 60,
                                     qPrintable(QString("turn %1 computed %2")
                                                    .arg(t)
                                                    .arg(e.stats.prompt_tokens_computed)));
                            ++appended_turns;
                        }
                    }
                }
                ++i;
            }
            QCOMPARE(reply[1], reply[0]);
            QCOMPARE(logits[1].size(), logits[0].size());
            for (std::size_t k = 0; k < logits[0].size(); ++k)
                QVERIFY2(first_difference(logits[1][k], logits[0][k]).empty(),
                         qPrintable(QString("turn %1 token %2: %3")
                                        .arg(t)
                                        .arg(k)
                                        .arg(QString::fromStdString(
                                            first_difference(logits[1][k], logits[0][k])))));
            turn.messages.push_back(
                {chat::Role::Assistant, b->tokenizer->decode(reply[1], false), reply[1]});
        }
        QVERIFY2(steps >= 2, qPrintable(QString::number(steps)));
        QVERIFY(appended_turns >= 15);
        QVERIFY(b->cache->audit().ok());
    }
};

QTEST_GUILESS_MAIN(TestContextShift)
#include "tst_context_shift.moc"
