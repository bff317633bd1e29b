// Hearth's forward pass on the default model against llama.cpp (goldens recorded by
// scripts/goldens/inference.py with llama-cpp-python on the same file):
// - logits at the last prompt position agree with relative L2 error below 1e-3;
// - greedy continuations of 64 tokens match token for token, up to any step where
//   llama.cpp's own two best logits are within 1e-3 (a near tie, reported, not failed).
//
// The CPU backend reproduces llama.cpp's default CPU path operation for operation (fp16
// activation scales, its attention and exponential, rope and rms_norm arithmetic, its
// summation orders; see kernels/cpu/act_quant.h and attention_fns.h), so the hidden
// states are bit-identical to those of llama.cpp's AVX2 build, on the AVX2 kernels and on
// the (slow) scalar fallback alike, and the remaining logit error (~2e-4) is the fp16
// storage of the goldens. The bounds are that tight on purpose: this model amplifies any
// rounding difference; llama.cpp's own flash-attention path, numerically a little
// different, is 2 % (median) to 12 % (max) relative L2 away from its default one, and
// before the CPU backend followed llama.cpp's roundings it was 0.7-8 % away with only 2-3
// of 22 greedy continuations intact. The naive reference backend
// (HEARTH_TEST_BACKEND=reference) computes in plain float and is not expected to pass.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

#include "cpu/cpu_backend.h"
#include "generation/generator.h"
#include "gguf/gguf_file.h"
#include "model/llama_model.h"
#include "quant/fp16.h"
#include "reference/reference_backend.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

namespace {

std::vector<int32_t> ints(const QJsonArray& a) {
    std::vector<int32_t> v;
    for (const auto& x : a) v.push_back(x.toInt());
    return v;
}

}  // namespace

class TestModelGolden : public QObject {
    Q_OBJECT

    std::unique_ptr<gguf::GgufFile> file_;
    std::unique_ptr<kernels::Backend> backend_;
    std::unique_ptr<LlamaModel> model_;
    std::unique_ptr<Tokenizer> tokenizer_;
    QJsonArray prompts_;
    std::vector<uint16_t> golden_logits_;
    int n_vocab_ = 0;

  private slots:
    void initTestCase() {
        HEARTH_REQUIRE_MODEL(path);
        auto f = gguf::GgufFile::open(path.toStdString());
        QVERIFY2(f, f ? "" : f.message().c_str());
        file_ = std::move(f).value();
        if (qEnvironmentVariable("HEARTH_TEST_BACKEND") == "reference")
            backend_ = kernels::make_reference_backend();
        else
            backend_ = std::make_unique<kernels::CpuBackend>(0);
        auto m = LlamaModel::load(*file_, *backend_);
        QVERIFY2(m, m ? "" : m.message().c_str());
        model_ = std::move(m).value();
        auto t = Tokenizer::from_gguf(*file_);
        QVERIFY2(t, t ? "" : t.message().c_str());
        tokenizer_ = std::move(t).value();

        const QString dir = test::source_dir() + "/tests/data/inference/";
        QFile json(dir + "smollm2-goldens.json");
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(json.readAll()).object();
        prompts_ = root["prompts"].toArray();
        n_vocab_ = root["n_vocab"].toInt();
        QCOMPARE(n_vocab_, static_cast<int>(model_->config().n_vocab));
        QVERIFY(prompts_.size() >= 20);
        QFile bin(dir + root["logits_file"].toString());
        QVERIFY(bin.open(QIODevice::ReadOnly));
        const QByteArray raw = bin.readAll();
        QCOMPARE(raw.size(), static_cast<qsizetype>(prompts_.size()) * n_vocab_ * 2);
        golden_logits_.resize(static_cast<size_t>(raw.size() / 2));
        std::memcpy(golden_logits_.data(), raw.constData(), static_cast<size_t>(raw.size()));
    }

    void lastLogits_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < prompts_.size(); ++i)
            QTest::newRow(
                qPrintable(QString("%1 %2").arg(i).arg(prompts_[i].toObject()["kind"].toString())))
                << i;
    }
    void lastLogits() {
        QFETCH(int, index);
        const auto ids = ints(prompts_[index].toObject()["prompt_ids"].toArray());
        Generator gen(*model_, *tokenizer_);
        auto logits = gen.last_logits(ids);
        QVERIFY2(logits, logits ? "" : logits.message().c_str());
        QCOMPARE(logits->size(), static_cast<size_t>(n_vocab_));
        double diff = 0, ref = 0, mean_d = 0, xy = 0;
        const uint16_t* g =
            golden_logits_.data() + static_cast<size_t>(index) * static_cast<size_t>(n_vocab_);
        for (int i = 0; i < n_vocab_; ++i) {
            const double r = quant::fp16_to_f32(g[i]);
            const double d = (*logits)[static_cast<size_t>(i)] - r;
            diff += d * d;
            ref += r * r;
            mean_d += d;
            xy += (*logits)[static_cast<size_t>(i)] * r;
        }
        const double rel = std::sqrt(diff / ref);
        qInfo("prompt %d: relative L2 error of last logits %.2e (mean difference %.3f, scale %.4f)",
              index, rel, mean_d / n_vocab_, xy / ref);
        QVERIFY2(rel < 1e-3, qPrintable(QString("relative L2 error %1").arg(rel)));
    }

    void greedyContinuation_data() { lastLogits_data(); }
    void greedyContinuation() {
        QFETCH(int, index);
        const QJsonObject p = prompts_[index].toObject();
        const auto ids = ints(p["prompt_ids"].toArray());
        const auto expected = ints(p["greedy"].toArray());
        const QJsonArray gaps = p["top2_gap"].toArray();

        // Greedy, ignoring end-of-turn tokens: the goldens are 64 tokens whatever they are.
        Generator gen(*model_, *tokenizer_);
        GenerationRequest req;
        req.prompt = ids;
        req.sampling = SamplingParams::greedy();
        req.max_tokens = static_cast<int32_t>(expected.size());
        req.stop_at_end_of_generation = false;
        auto result = gen.generate(req);
        QVERIFY2(result, result ? "" : result.message().c_str());
        QCOMPARE(result->tokens.size(), expected.size());
        int matched = 0;
        for (size_t step = 0; step < expected.size(); ++step) {
            if (result->tokens[step] != expected[step]) {
                const double gap = gaps[static_cast<qsizetype>(step)].toDouble();
                if (gap < 1e-3) {
                    qInfo(
                        "prompt %d: diverged at step %zu where llama.cpp's top-2 gap is %.1e "
                        "(allowed)",
                        index, step, gap);
                    break;
                }
                QFAIL(qPrintable(
                    QString("prompt %1: step %2: Hearth %3, llama.cpp %4 (llama.cpp top-2 gap %5)")
                        .arg(index)
                        .arg(step)
                        .arg(result->tokens[step])
                        .arg(expected[step])
                        .arg(gap)));
            }
            ++matched;
        }
        qInfo("prompt %d: %d/%zu greedy tokens match", index, matched, expected.size());
    }
};

QTEST_GUILESS_MAIN(TestModelGolden)
#include "tst_model_golden.moc"
