// Every weight type on a real model against llama.cpp: the default model re-quantised by
// llama.cpp's own llama-quantize to each of the 15 types (scripts/quant-models, run by
// the quant_models fixture), with llama.cpp's logits and greedy tokens on each file
// recorded by scripts/goldens/quant_types.py (tests/data/inference/quant-types.json).
// Per type:
// - the file has the recorded SHA-256 (the very bytes llama.cpp ran);
// - logits at the last prompt position of 2 prompts (a chat and a raw one): within relative L2 1e-3
// of llama.cpp's
//   where Hearth follows llama.cpp's arithmetic (kSameArithmetic), else within
//   kOtherOrderL2 (see there why no tighter bound means anything on this model);
// - teacher forcing on 10 prompts × 32 of llama.cpp's greedy tokens: Hearth's best token is
//   llama.cpp's at every step where llama.cpp's leads by kMargin;
// - same arithmetic: free-running greedy continuations equal llama.cpp's up to a near tie.
// The kernels' exactness against naive references is tst_cpu_ops' and tst_dequant's job;
// this checks that every type's file loads, decodes and runs end to end as llama.cpp's.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include <cmath>
#include <fstream>

#include "common/sha256.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_features.h"
#include "generation/generator.h"
#include "gguf/gguf_file.h"
#include "greedy_goldens.h"
#include "model/llama_model.h"
#include "quant/fp16.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

using hearth::test::ints;
using hearth::test::kTie;

namespace {

// The types whose kernels reproduce llama.cpp's AVX2 arithmetic on these files (its
// vec_dot kernels for Q4_1 and Q5_1; F32). llama.cpp runs the others through kernels
// with summation orders of their own: llamafile's tinyBLAS in prompt processing (F16,
// BF16, Q4_0, Q5_0, Q8_0, IQ4_NL), the repacked 8×8 layouts (Q4_0, Q4_K, IQ4_NL), and
// vec_dot orders Hearth's tiles do not follow (the K-quants, IQ4_XS).
const QSet<QString> kSameArithmetic = {"F32", "Q4_1", "Q5_1"};

// A step where llama.cpp's two best logits are closer than this may go either way under
// float rounding alone (same arithmetic: only the goldens' fp16 storage).

// Another summation order. This 30-layer model amplifies rounding: llama.cpp against
// itself on these very files (its flash-attention path against its default one, the same
// weights and kernels otherwise) moves the last logits of these 2 prompts by 1e-3 to 5e-3
// relative L2 for F32/F16, and by 2 % to 36 % for the quantised types (Q6_K on the raw
// prompt 36 %, Q2_K 23 %, Q5_K 21 %, Q4_0 18 %; scripts/goldens/README.md). So the logits
// are held to 40 %, which any unpacking or scale error exceeds many times over, and the
// tokens by teacher forcing: wherever llama.cpp's best token leads its second by kMargin,
// Hearth's best is the same token. Seen so far: differences at leads up to 0.56 (Q6_K),
// out of 320 steps per type of which 56-72 % lead by 1 or more.
constexpr double kOtherOrderL2 = 0.4;
constexpr double kMargin = 1.0;

std::string file_sha256(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    Sha256 h;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    return h.finish_hex();
}

QString models_dir() {
    const QString env = qEnvironmentVariable("HEARTH_QUANT_MODELS");
    return env.isEmpty() ? QStringLiteral(HEARTH_QUANT_MODELS_DIR) : env;
}

}  // namespace

class TestQuantGolden : public QObject {
    Q_OBJECT

    QJsonObject root_;
    QJsonArray prompts_;
    std::vector<uint16_t> golden_logits_;
    int n_vocab_ = 0;
    int logits_prompts_ = 0;

  private slots:
    void initTestCase() {
        QFile json(test::source_dir() + "/tests/data/inference/quant-types.json");
        QVERIFY(json.open(QIODevice::ReadOnly));
        root_ = QJsonDocument::fromJson(json.readAll()).object();
        prompts_ = root_["prompts"].toArray();
        n_vocab_ = root_["n_vocab"].toInt();
        logits_prompts_ = root_["logits_prompts"].toInt();
        QVERIFY(prompts_.size() >= 10);
        QCOMPARE(root_["types"].toArray().size(), 15);
        QFile bin(test::source_dir() + "/tests/data/inference/" + root_["logits_file"].toString());
        QVERIFY(bin.open(QIODevice::ReadOnly));
        const QByteArray raw = bin.readAll();
        QCOMPARE(raw.size(), qsizetype{15} * logits_prompts_ * n_vocab_ * 2);
        golden_logits_.resize(static_cast<size_t>(raw.size() / 2));
        std::memcpy(golden_logits_.data(), raw.constData(), static_cast<size_t>(raw.size()));
    }

    void type_data() {
        QTest::addColumn<int>("index");
        const QJsonArray types = root_["types"].toArray();
        for (int i = 0; i < types.size(); ++i)
            QTest::newRow(qPrintable(types[i].toObject()["type"].toString())) << i;
    }
    void type() {
        QFETCH(int, index);
        const QJsonObject t = root_["types"].toArray()[index].toObject();
        const QString path = models_dir() + "/" + t["file"].toString();
        if (!QFile::exists(path)) {
            const QString why = path + " is missing: run scripts/quant-models";
            if (test::in_ci()) QFAIL(qPrintable(why));
            QSKIP(qPrintable(why));
        }
        QCOMPARE(QString::fromStdString(file_sha256(path)), t["sha256"].toString());

        auto f = gguf::GgufFile::open(path.toStdString());
        QVERIFY2(f, f ? "" : f.message().c_str());
        kernels::CpuBackend backend(0);
        auto m = LlamaModel::load(**f, backend);
        QVERIFY2(m, m ? "" : m.message().c_str());
        auto tok = Tokenizer::from_gguf(**f);
        QVERIFY2(tok, tok ? "" : tok.message().c_str());
        QCOMPARE(static_cast<int>((*m)->config().n_vocab), n_vocab_);

        const QJsonArray results = t["results"].toArray();
        QCOMPARE(results.size(), prompts_.size());
        const QString name = t["type"].toString();
        // Where Hearth follows llama.cpp's arithmetic, the AVX2 kernels (and the AVX-512
        // level, same bits): llama.cpp's bits, to the goldens' fp16 storage.
        const bool same_arithmetic = kernels::cpu::cpu_has_avx2() && kSameArithmetic.contains(name);
        const double l2_bound = same_arithmetic ? 1e-3 : kOtherOrderL2;
        double worst = 0;
        int forced_checked = 0, forced_steps = 0, free_matched = 0, free_total = 0;
        for (int p = 0; p < prompts_.size(); ++p) {
            const auto ids = ints(prompts_[p].toObject()["prompt_ids"].toArray());
            Generator gen(**m, **tok);
            if (p < logits_prompts_) {
                auto logits = gen.last_logits(ids);
                QVERIFY2(logits, logits ? "" : logits.message().c_str());
                const uint16_t* g =
                    golden_logits_.data() + (static_cast<size_t>(index) * logits_prompts_ + p) *
                                                static_cast<size_t>(n_vocab_);
                double diff = 0, ref = 0;
                for (int i = 0; i < n_vocab_; ++i) {
                    const double r = quant::fp16_to_f32(g[i]);
                    const double d = (*logits)[static_cast<size_t>(i)] - r;
                    diff += d * d;
                    ref += r * r;
                }
                const double rel = std::sqrt(diff / ref);
                worst = std::max(worst, rel);
                QVERIFY2(rel < l2_bound, qPrintable(QString("prompt %1: relative L2 error %2 of "
                                                            "the last logits (bound %3)")
                                                        .arg(p)
                                                        .arg(rel)
                                                        .arg(l2_bound)));
            }
            const QJsonObject r = results[p].toObject();
            const auto expected = ints(r["greedy"].toArray());
            const QJsonArray gaps = r["top2_gap"].toArray();
            QCOMPARE(static_cast<size_t>(gaps.size()), expected.size());

            // Teacher forcing: llama.cpp's own continuation, one token per step; at every
            // step where llama.cpp's best token leads by kMargin, it is Hearth's best too.
            bool forced_ok = true;
            auto fr = gen.forced_logits(ids, expected, [&](size_t i, const std::vector<float>& lg) {
                const auto best =
                    static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
                const double gap = gaps[static_cast<qsizetype>(i)].toDouble();
                ++forced_steps;
                if (gap < kMargin) return;
                ++forced_checked;
                if (best == expected[i]) return;
                forced_ok = false;
                qWarning(
                    "prompt %d step %zu: Hearth's best %d, llama.cpp's %d, which leads by %.3f", p,
                    i, best, expected[i], gap);
            });
            QVERIFY2(fr, fr ? "" : fr.message().c_str());
            QVERIFY2(forced_ok, qPrintable(QString("prompt %1: teacher-forced best tokens differ "
                                                   "from llama.cpp's (see above)")
                                               .arg(p)));

            // Free-running greedy decoding: equal up to a near tie where the arithmetic is
            // llama.cpp's; otherwise reported only (a different rounding flips near ties,
            // and one flip changes the rest of the continuation).
            GenerationRequest req;
            req.prompt = ids;
            req.sampling = SamplingParams::greedy();
            req.max_tokens = static_cast<int32_t>(expected.size());
            req.stop_at_end_of_generation = false;
            Generator free_gen(**m, **tok);
            auto out = free_gen.generate(req);
            QVERIFY2(out, out ? "" : out.message().c_str());
            QCOMPARE(out->tokens.size(), expected.size());
            free_total += static_cast<int>(expected.size());
            for (size_t step = 0; step < expected.size(); ++step) {
                if (out->tokens[step] == expected[step]) {
                    ++free_matched;
                    continue;
                }
                const double gap = gaps[static_cast<qsizetype>(step)].toDouble();
                if (same_arithmetic && gap >= kTie)
                    QFAIL(qPrintable(QString("prompt %1 step %2: Hearth %3, llama.cpp %4 (top-2 "
                                             "gap %5)")
                                         .arg(p)
                                         .arg(step)
                                         .arg(out->tokens[step])
                                         .arg(expected[step])
                                         .arg(gap)));
                break;
            }
        }
        qInfo(
            "%s (%s): worst last-logits relative L2 %.2e (bound %.0e); teacher-forced best "
            "token = llama.cpp's at %d/%d steps where it leads by >= %.1f (of %d); free-running "
            "greedy: %d/%d tokens before the first difference",
            qPrintable(name), same_arithmetic ? "llama.cpp's arithmetic" : "own summation order",
            worst, l2_bound, forced_checked, forced_checked, kMargin, forced_steps, free_matched,
            free_total);
    }
};

QTEST_GUILESS_MAIN(TestQuantGolden)
#include "tst_quant_golden.moc"
