// Gemma 3 on a real model, Gemma 3 270M Q4_K_M (scripts/fetch-model --model gemma3-270m),
// against llama.cpp (goldens recorded by scripts/goldens/gemma3.py with llama-cpp-python,
// AVX2 build, on the same files). Two CTest entries run this suite:
//  - tst_gemma3_golden_f32 (HEARTH_GEMMA3_VARIANT=f32): the model dequantised to F32 by
//    llama-quantize (scripts/quant-models --gemma3; every weight the Q4_K_M file's value),
//    where Hearth's arithmetic is llama.cpp's: logits at the last prompt position within
//    relative L2 1e-3, the prompt in one step and in chunks of 7 (the paged cache across
//    steps); greedy continuations of 32 tokens equal llama.cpp's up to a near tie (kTie),
//    through Generator and through the engine (batch 512 and 8, prefix caching off and on).
//  - tst_gemma3_golden: the Q4_K_M file as people download it. Its logits cannot be held
//    to 1e-3: activations are rounded to 8 bits before every quantised product, llama.cpp
//    sums its Q4_K, Q5_0, Q6_K and Q8_0 products in orders Hearth's kernels do not follow
//    (repacked layouts, tinyBLAS), and its own flash-attention and one-token-per-step paths
//    are 1.8-3.3 % (relative L2) from its default one on these prompts (the goldens record
//    it). So: logits within kOtherOrderL2, llama.cpp's tokens by teacher forcing wherever
//    its best leads by kMargin, and the engine's tokens (every batch size, cache on and
//    off) equal to Hearth's own Generator's (batch invariance, an exact prefix cache).
// Both: the file is the one the goldens were recorded on and a Gemma 3 model (architecture,
// SentencePiece vocabulary of 262,144 tokens, no chat template of its own, tensor types),
// and 11 chat prompts built by PromptBuilder with Gemma 3's chat template (the last one
// longer than the 512-token sliding window)
// (tests/data/chat/templates/google-gemma-3-it.jinja) equal, id for id, the template's text
// as llama.cpp renders and tokenizes it.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "chat/prompt_builder.h"
#include "cpu/cpu_backend.h"
#include "engine.h"
#include "generation/generator.h"
#include "gguf/gguf_file.h"
#include "greedy_goldens.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "quant/fp16.h"
#include "quant/quant_types.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

using hearth::test::compare_greedy;
using hearth::test::Continuation;
using hearth::test::ints;
using hearth::test::kTie;

namespace {

constexpr double kMaxRelL2 = 1e-3;
// Q4_K_M: 3 times llama.cpp's own largest spread on these prompts (3.3 %, see above), far
// below what an unpacking, scale or architecture error gives (tens of per cent and up).
// Seen: 1.7 % and 2.9 %.
constexpr double kOtherOrderL2 = 0.1;
// Q4_K_M, teacher forcing: where llama.cpp's best token leads its second by this much,
// Hearth's best is the same token (tst_quant_golden's margin).
constexpr double kMargin = 1.0;

bool f32_variant() {
    return qEnvironmentVariable("HEARTH_GEMMA3_VARIANT") == QLatin1String("f32");
}

int32_t argmax(const std::vector<float>& x) {
    int32_t best = 0;
    for (int32_t i = 1; i < static_cast<int32_t>(x.size()); ++i)
        if (x[static_cast<size_t>(i)] > x[static_cast<size_t>(best)]) best = i;
    return best;
}

chat::Role role_of(const QString& name) {
    if (name == "system") return chat::Role::System;
    if (name == "assistant") return chat::Role::Assistant;
    return chat::Role::User;
}

}  // namespace

class TestGemma3Golden : public QObject {
    Q_OBJECT

    QString path_;
    std::unique_ptr<gguf::GgufFile> file_;
    std::unique_ptr<kernels::Backend> backend_;
    std::unique_ptr<LlamaModel> model_;
    std::unique_ptr<Tokenizer> tokenizer_;
    QJsonObject root_;
    QJsonArray prompts_;
    std::string template_text_;
    std::vector<uint16_t> golden_logits_;
    int n_vocab_ = 0;
    std::vector<int> logits_prompts_;  // the prompts whose logits the .f16 file holds, in order
    bool f32_ = f32_variant();
    std::map<int, std::vector<int32_t>> own_greedy_;  // Hearth's Generator, by prompt

    void rows(int n) {
        QTest::addColumn<int>("index");
        for (int i = 0; i < n; ++i) QTest::newRow(qPrintable(QString::number(i))) << i;
    }

    // Hearth's own greedy continuation of prompt `index` (Generator: one prefill, then
    // one token per step).
    std::vector<int32_t> own_greedy(int index) {
        if (const auto it = own_greedy_.find(index); it != own_greedy_.end()) return it->second;
        const QJsonObject p = prompts_[index].toObject();
        Generator gen(*model_, *tokenizer_);
        GenerationRequest req;
        req.prompt = ints(p["prompt_ids"].toArray());
        req.sampling = SamplingParams::greedy();
        req.max_tokens = static_cast<int32_t>(p["greedy"].toArray().size());
        req.stop_at_end_of_generation = false;
        auto result = gen.generate(req);
        if (!result) qFatal("generate: %s", result.message().c_str());
        return own_greedy_[index] = result->tokens;
    }

    // Against row `row` of the logits file (the prompt logits_prompts_[row]).
    double rel_l2(const std::vector<float>& logits, int row) const {
        const uint16_t* g =
            golden_logits_.data() + static_cast<size_t>(row) * static_cast<size_t>(n_vocab_);
        double diff = 0, ref = 0;
        for (int i = 0; i < n_vocab_; ++i) {
            const double r = quant::fp16_to_f32(g[i]);
            const double d = logits[static_cast<size_t>(i)] - r;
            diff += d * d;
            ref += r * r;
        }
        return std::sqrt(diff / ref);
    }

    // Q4_K_M: along llama.cpp's greedy tokens, Hearth's best token is llama.cpp's wherever
    // llama.cpp's leads by kMargin.
    void teacher_forced(int index) {
        const QJsonObject p = prompts_[index].toObject();
        const auto expected = ints(p["greedy"].toArray());
        const QJsonArray gaps = p["top2_gap"].toArray();
        Generator gen(*model_, *tokenizer_);
        int checked = 0, same = 0;
        QString failure;
        auto r = gen.forced_logits(ints(p["prompt_ids"].toArray()), expected,
                                   [&](size_t i, const std::vector<float>& logits) {
                                       const int32_t best = argmax(logits);
                                       same += best == expected[i] ? 1 : 0;
                                       if (gaps[static_cast<qsizetype>(i)].toDouble() < kMargin)
                                           return;
                                       ++checked;
                                       if (best != expected[i] && failure.isEmpty())
                                           failure =
                                               QString(
                                                   "step %1: Hearth %2, llama.cpp %3 "
                                                   "(leading by %4)")
                                                   .arg(i)
                                                   .arg(best)
                                                   .arg(expected[i])
                                                   .arg(gaps[static_cast<qsizetype>(i)].toDouble());
                                   });
        QVERIFY2(r, r ? "" : r.message().c_str());
        qInfo("prompt %d: best token equal at %d/%zu steps; %d steps lead by %.1f or more", index,
              same, expected.size(), checked, kMargin);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

  private slots:
    void initTestCase() {
        const QString name = f32_ ? "gemma3-f32" : "gemma3";
        if (f32_) {
            path_ = QStringLiteral(HEARTH_QUANT_MODELS_DIR "/gemma3-270m-F32.gguf");
            if (!QFile::exists(path_)) {
                if (test::in_ci()) QFAIL("missing in CI: run scripts/quant-models --gemma3");
                QSKIP("Gemma 3 270M F32 not made: run scripts/quant-models --gemma3");
            }
        } else {
            HEARTH_REQUIRE_GEMMA3_MODEL(path);
            path_ = path;
        }
        const QString dir = test::source_dir() + "/tests/data/";
        QFile json(dir + "inference/" + name + "-goldens.json");
        QVERIFY(json.open(QIODevice::ReadOnly));
        root_ = QJsonDocument::fromJson(json.readAll()).object();
        prompts_ = root_["prompts"].toArray();
        QVERIFY(prompts_.size() >= 11);
        n_vocab_ = root_["n_vocab"].toInt();
        QFile bin(dir + "inference/" + root_["logits_file"].toString());
        QVERIFY(bin.open(QIODevice::ReadOnly));
        const QByteArray raw = bin.readAll();
        for (const auto& i : root_["logits_prompts"].toArray()) {
            QVERIFY(i.toInt() >= 0 && i.toInt() < prompts_.size());
            logits_prompts_.push_back(i.toInt());
        }
        // Two short prompts; on F32 also the one past the sliding window.
        QCOMPARE(logits_prompts_.size(), size_t(f32_ ? 3 : 2));
        if (f32_)
            QVERIFY(
                ints(prompts_[logits_prompts_.back()].toObject()["prompt_ids"].toArray()).size() >
                512);
        QCOMPARE(raw.size(), static_cast<qsizetype>(logits_prompts_.size()) * n_vocab_ * 2);
        golden_logits_.resize(static_cast<size_t>(raw.size() / 2));
        std::memcpy(golden_logits_.data(), raw.constData(), static_cast<size_t>(raw.size()));
        QFile tmpl(dir + "chat/templates/google-gemma-3-it.jinja");
        QVERIFY(tmpl.open(QIODevice::ReadOnly));
        template_text_ = tmpl.readAll().toStdString();

        auto f = gguf::GgufFile::open(path_.toStdString());
        QVERIFY2(f, f ? "" : f.message().c_str());
        file_ = std::move(f).value();
        backend_ = std::make_unique<kernels::CpuBackend>(0);
        auto m = LlamaModel::load(*file_, *backend_);
        QVERIFY2(m, m ? "" : m.message().c_str());
        model_ = std::move(m).value();
        auto t = Tokenizer::from_gguf(*file_);
        QVERIFY2(t, t ? "" : t.message().c_str());
        tokenizer_ = std::move(t).value();
    }

    // The file is the one llama.cpp ran, and what it says it is.
    void fileIsGemma3() {
        QCOMPARE(hearth::test::sha256_of_file(path_), root_["model_sha256"].toString());
        QCOMPARE(file_->get_string("general.architecture").value_or(""), "gemma3");
        QCOMPARE(file_->get_string("tokenizer.ggml.model").value_or(""), "llama");
        QVERIFY(!file_->get_string("tokenizer.chat_template"));
        // No template, but Gemma's turn markers in the vocabulary: Hearth speaks Gemma
        // (llama.cpp falls back to ChatML, whose markers are not tokens here).
        QCOMPARE(chat::ChatTemplate::from_gguf(*file_).family(), chat::TemplateFamily::Gemma);
        QCOMPARE(tokenizer_->kind(), TokenizerKind::SentencePiece);
        QCOMPARE(tokenizer_->vocab_size(), 262144);
        QCOMPARE(n_vocab_, 262144);
        const ModelConfig& c = model_->config();
        QCOMPARE(c.architecture, std::string("gemma3"));
        QCOMPARE(static_cast<int>(c.n_vocab), 262144);
        QCOMPARE(static_cast<int>(c.n_layer), 18);
        QCOMPARE(static_cast<int>(c.n_embd), 640);
        QCOMPARE(static_cast<int>(c.n_head), 4);
        QCOMPARE(static_cast<int>(c.n_head_kv), 1);
        QCOMPARE(static_cast<int>(c.head_dim), 256);
        QCOMPARE(static_cast<int>(c.sliding_window), 512);
        int local = 0;
        for (int64_t l = 0; l < c.n_layer; ++l) local += c.is_swa(l) ? 1 : 0;
        QCOMPARE(local, 15);  // every 6th layer is global
        std::map<std::string, int> types;
        for (const auto& t : file_->tensors())
            ++types[std::string(quant::type_name(static_cast<uint32_t>(t.type)))];
        QString histogram;
        for (const auto& [name, n] : types) histogram += QString(" %1:%2").arg(name.c_str()).arg(n);
        qInfo("tensor types:%s", qPrintable(histogram));
        const std::map<std::string, int> want =
            f32_ ? std::map<std::string, int>{{"F32", 236}}
                 : std::map<std::string, int>{
                       {"F32", 109}, {"Q4_K", 27}, {"Q5_0", 81}, {"Q6_K", 9}, {"Q8_0", 10}};
        QCOMPARE(types, want);
    }

    // PromptBuilder with Gemma 3's template gives llama.cpp's ids for the rendered text.
    void promptsMatchTheTemplate() {
        const chat::ChatTemplate tmpl = chat::ChatTemplate::from_template_text(template_text_);
        QCOMPARE(tmpl.family(), chat::TemplateFamily::Gemma);
        const chat::PromptBuilder builder(*tokenizer_, tmpl);
        for (qsizetype i = 0; i < prompts_.size(); ++i) {
            const QJsonObject p = prompts_[i].toObject();
            std::vector<chat::Message> messages;
            for (const auto& m : p["messages"].toArray())
                messages.push_back({role_of(m.toArray()[0].toString()),
                                    m.toArray()[1].toString().toStdString(), std::nullopt});
            auto prompt = builder.build(messages);
            QVERIFY2(prompt, prompt ? "" : prompt.message().c_str());
            const std::vector<int32_t> want = ints(p["prompt_ids"].toArray());
            QVERIFY2(prompt->ids == want,
                     qPrintable(QString("prompt %1: Hearth's ids differ from llama.cpp's for %2")
                                    .arg(i)
                                    .arg(p["text"].toString())));
        }
    }

    void lastLogits_data() { rows(static_cast<int>(logits_prompts_.size())); }
    void lastLogits() {
        QFETCH(int, index);  // the row of the logits file
        const int row = index;
        const int prompt = logits_prompts_[static_cast<size_t>(row)];
        const std::vector<int32_t> ids = ints(prompts_[prompt].toObject()["prompt_ids"].toArray());
        const ModelConfig& c = model_->config();
        // Enough 16-token blocks for the prompt (the long one needs 41), at least 16, and
        // a count 5 does not divide, so that i · 5 mod n visits every block once.
        auto n_blocks = std::max<size_t>(16, (ids.size() + 15) / 16);
        if (n_blocks % 5 == 0) ++n_blocks;
        std::vector<int32_t> table(n_blocks);
        for (size_t i = 0; i < table.size(); ++i)
            table[i] = static_cast<int32_t>((i * 5) % table.size());  // not contiguous
        for (int32_t chunk : {static_cast<int32_t>(ids.size()), 7}) {
            auto kv = KvStorage::create(
                *backend_,
                {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                 static_cast<int32_t>(c.head_dim), 16},
                static_cast<int32_t>(n_blocks));
            QVERIFY(kv);
            std::vector<float> logits;
            for (int32_t done = 0; done < static_cast<int32_t>(ids.size()); done += chunk) {
                const int32_t n = std::min<int32_t>(chunk, static_cast<int32_t>(ids.size()) - done);
                SequenceStep s;
                s.tokens =
                    std::span(ids).subspan(static_cast<size_t>(done), static_cast<size_t>(n));
                s.start_pos = done;
                s.block_table = table;
                QVERIFY(model_->forward(std::span(&s, 1), **kv, logits));
            }
            QCOMPARE(logits.size(), static_cast<size_t>(n_vocab_));
            const double rel = rel_l2(logits, row);
            qInfo("prompt %d (%zu tokens), chunks of %d: relative L2 error %.2e, argmax %d", prompt,
                  ids.size(), chunk, rel, argmax(logits));
            const double bound = f32_ ? kMaxRelL2 : kOtherOrderL2;
            QVERIFY2(rel < bound,
                     qPrintable(QString("relative L2 error %1 (bound %2)").arg(rel).arg(bound)));
        }
    }

    // F32: Hearth's free-running greedy tokens are llama.cpp's (up to a near tie). Q4_K_M:
    // teacher_forced().
    void greedyContinuation_data() { rows(static_cast<int>(prompts_.size())); }
    void greedyContinuation() {
        QFETCH(int, index);
        if (!f32_) return teacher_forced(index);
        const QJsonObject p = prompts_[index].toObject();
        const auto expected = ints(p["greedy"].toArray());
        const std::vector<int32_t> got = own_greedy(index);
        const Continuation cmp = compare_greedy(got, expected, p["top2_gap"].toArray());
        qInfo("prompt %d: %d/%zu greedy tokens match%s", index, cmp.matched, expected.size(),
              cmp.tie ? " (then a near tie)" : "");
        QVERIFY2(cmp.all(expected.size()),
                 qPrintable(QString("prompt %1: greedy differs at token %2 (llama.cpp %3, Hearth "
                                    "%4, llama.cpp's top-2 gap %5)")
                                .arg(index)
                                .arg(cmp.matched)
                                .arg(expected[static_cast<size_t>(cmp.matched)])
                                .arg(got[static_cast<size_t>(cmp.matched)])
                                .arg(p["top2_gap"].toArray()[cmp.matched].toDouble())));
    }

    // The engine: batch-invariant numerics, the scheduler, sampling on the backend; the
    // prompt in one step (batch 512) or in chunks (batch 8); prefix caching off and on
    // (on: every prompt twice, the second time from the first's blocks; the prompts with
    // the system message share its blocks). Its tokens equal Generator's, and on F32
    // llama.cpp's.
    void engine_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<bool>("cache");
        QTest::newRow("batch 512, cache off") << 512 << false;
        QTest::newRow("batch 512, cache on") << 512 << true;
        QTest::newRow("batch 8, cache off") << 8 << false;
        QTest::newRow("batch 8, cache on") << 8 << true;
    }
    void engine() {
        QFETCH(int, batch);
        QFETCH(bool, cache);
        EngineConfig config;
        config.model_path = path_.toStdString();
        config.device = "cpu";
        config.n_threads = 0;
        config.kv_mb = 64;
        config.kv_disk_mb = 0;
        config.prefix_caching = cache;
        config.scheduler.max_batch_tokens = batch;
        auto engine = Engine::create(config);
        QVERIFY2(engine, engine ? "" : engine.message().c_str());
        std::vector<std::vector<int32_t>> first;
        int64_t cached = 0;
        for (int round = 0; round < (cache ? 2 : 1); ++round) {
            for (qsizetype i = 0; i < prompts_.size(); ++i) {
                const QJsonObject p = prompts_[i].toObject();
                sched::Request r;
                r.conversation = static_cast<kv::SeqId>(1 + i + 100 * round);
                r.prompt = ints(p["prompt_ids"].toArray());
                r.max_tokens = static_cast<int32_t>(p["greedy"].toArray().size());
                r.stop_at_end_of_generation = false;
                r.park_at_end = false;
                const sched::Event last = (*engine)->submit(r)->wait();
                QVERIFY2(last.kind == sched::EventKind::Finished, last.error.c_str());
                cached += last.stats.prompt_tokens_cached;
                if (round == 1) {
                    // Every full block but the one holding the last prompt token.
                    const auto n = static_cast<int32_t>(r.prompt.size());
                    QVERIFY(last.stats.prompt_tokens_cached >= (n - 1) / 16 * 16);
                    QCOMPARE(last.tokens, first[static_cast<size_t>(i)]);
                    continue;
                }
                QCOMPARE(last.tokens, own_greedy(static_cast<int>(i)));
                if (f32_) {
                    const Continuation cmp = compare_greedy(
                        last.tokens, ints(p["greedy"].toArray()), p["top2_gap"].toArray());
                    QVERIFY2(cmp.all(last.tokens.size()),
                             qPrintable(QString("prompt %1: greedy differs at token %2 of %3")
                                            .arg(i)
                                            .arg(cmp.matched)
                                            .arg(last.tokens.size())));
                }
                first.push_back(last.tokens);
            }
        }
        qInfo("prompt tokens served from the cache: %lld", static_cast<long long>(cached));
        if (cache) QVERIFY(cached > 0);
    }
};

QTEST_GUILESS_MAIN(TestGemma3Golden)
#include "tst_gemma3_golden.moc"
