// Synthetic random-weight models (both architectures, several weight types) loaded and
// run end to end: the CPU backend's logits against the naive reference backend's on the
// same model, over a prefill and several decode steps through the paged cache.
#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "cpu/cpu_backend.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "kv/kv_storage.h"
#include "model/llama_model.h"
#include "model/synthetic_model.h"
#include "reference/reference_backend.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;
using quant::TensorType;

Q_DECLARE_METATYPE(hearth::quant::TensorType)

namespace {

constexpr uint32_t kSeed = 7;

struct Run {
    std::unique_ptr<kernels::Backend> backend;
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<KvStorage> kv;
};

Run make_run(const gguf::GgufFile& file, std::unique_ptr<kernels::Backend> backend,
             int32_t block_size) {
    Run r;
    r.backend = std::move(backend);
    auto m = LlamaModel::load(file, *r.backend);
    if (!m) qFatal("load: %s", m.message().c_str());
    r.model = std::move(m).value();
    const ModelConfig& c = r.model->config();
    auto kv = KvStorage::create(*r.backend,
                                {static_cast<int32_t>(c.n_layer), static_cast<int32_t>(c.n_head_kv),
                                 static_cast<int32_t>(c.head_dim), block_size},
                                64);
    if (!kv) qFatal("kv: %s", kv.message().c_str());
    r.kv = std::move(kv).value();
    return r;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0, n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        d += (a[i] - b[i]) * (a[i] - b[i]);
        n += b[i] * b[i];
    }
    return std::sqrt(d / n);
}

}  // namespace

class TestSyntheticModel : public QObject {
    Q_OBJECT

  private slots:
    void cpuMatchesReference_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<TensorType>("type");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<double>("tolerance");
        // Float weights use float dot products; quantised ones quantise activations to
        // 8 bits, which costs about 1 % relative error through two layers. The CPU
        // backend's attention also rounds Q and the softmax probabilities to fp16, as
        // llama.cpp's does (kernels/cpu/attention_fns.h): ~3e-4 even with F32 weights.
        QTest::newRow("llama F32 bs16") << "llama" << TensorType::F32 << 16 << 1e-3;
        QTest::newRow("llama F16 bs3") << "llama" << TensorType::F16 << 3 << 1e-3;
        QTest::newRow("llama Q8_0 bs7") << "llama" << TensorType::Q8_0 << 7 << 3e-2;
        QTest::newRow("llama Q4_1 bs1") << "llama" << TensorType::Q4_1 << 1 << 3e-2;
        QTest::newRow("qwen2 Q4_0 bs16") << "qwen2" << TensorType::Q4_0 << 16 << 3e-2;
        QTest::newRow("qwen2 Q5_1 bs32") << "qwen2" << TensorType::Q5_1 << 32 << 3e-2;
        QTest::newRow("llama Q4_K bs16") << "llama" << TensorType::Q4_K << 16 << 3e-2;
        QTest::newRow("qwen2 Q6_K bs5") << "qwen2" << TensorType::Q6_K << 5 << 3e-2;
    }
    void cpuMatchesReference() {
        QFETCH(QString, arch);
        QFETCH(TensorType, type);
        QFETCH(int, blockSize);
        QFETCH(double, tolerance);
        SyntheticModelSpec spec;
        spec.architecture = arch.toStdString();
        spec.weight_type = type;
        spec.seed = kSeed;
        if (type == TensorType::Q4_K || type == TensorType::Q6_K) {
            spec.n_embd = 256;  // K-quant rows are whole 256-element super-blocks
            spec.n_ff = 512;
        }
        auto bytes = make_synthetic_model(spec);
        QVERIFY2(bytes, bytes ? "" : bytes.message().c_str());
        auto file = gguf::GgufFile::parse(std::move(bytes).value());
        QVERIFY2(file, file ? "" : file.message().c_str());
        auto tokenizer = Tokenizer::from_gguf(**file);
        QVERIFY2(tokenizer, tokenizer ? "" : tokenizer.message().c_str());
        QCOMPARE((*tokenizer)->vocab_size(), synthetic_vocab_size());

        Run cpu = make_run(**file, std::make_unique<kernels::CpuBackend>(2), blockSize);
        Run ref = make_run(**file, kernels::make_reference_backend(), blockSize);
        const std::vector<int32_t> prompt =
            (*tokenizer)->encode("<|im_start|>user\nthe theory<|im_end|>\n", true);
        QVERIFY(prompt.size() > 5);
        std::vector<int32_t> table(64);
        std::mt19937 rng(kSeed);
        for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int32_t>(i);
        std::shuffle(table.begin(), table.end(), rng);  // blocks need not be contiguous

        std::vector<int32_t> seq = prompt;
        int32_t done = 0;
        for (int step = 0; step < 6; ++step) {
            SequenceStep s;
            s.tokens = std::span(seq).subspan(static_cast<size_t>(done));
            s.start_pos = done;
            s.block_table = table;
            std::vector<float> a, b;
            QVERIFY(cpu.model->forward(std::span(&s, 1), *cpu.kv, a));
            QVERIFY(ref.model->forward(std::span(&s, 1), *ref.kv, b));
            const double err = rel_l2(a, b);
            QVERIFY2(err < tolerance,
                     qPrintable(QString("step %1: relative L2 %2").arg(step).arg(err)));
            done = static_cast<int32_t>(seq.size());
            seq.push_back(argmax_of(b));
        }
    }

    // A top-k step returns each logit row's best values exactly as a naive sort of the
    // whole row (largest first, lower id on ties), the rows' picked tokens' raw logits,
    // and no invalid index; in a step of two sequences whose rows differ.
    void topKLogitsMatchWholeRows() {
        SyntheticModelSpec spec;
        spec.seed = kSeed;
        auto file = gguf::GgufFile::parse(*make_synthetic_model(spec));
        QVERIFY(file);
        std::vector<int32_t> table_a(32), table_b(32);
        for (int32_t i = 0; i < 32; ++i) {
            table_a[static_cast<size_t>(i)] = i;
            table_b[static_cast<size_t>(i)] = 32 + i;
        }
        const std::vector<int32_t> prompt_a = {5, 17, 29, 31, 8, 40}, prompt_b = {9, 9, 12, 77};
        const std::vector<int32_t> pick_a = {3, 40, 17}, pick_b = {};
        const auto steps = [&] {
            std::array<SequenceStep, 2> s{SequenceStep{prompt_a, 0, table_a, true, pick_a},
                                          SequenceStep{prompt_b, 0, table_b, true, pick_b}};
            return s;
        };
        Run whole = make_run(**file, std::make_unique<kernels::CpuBackend>(2), 4);
        std::vector<float> rows;
        const auto sw = steps();
        QVERIFY(whole.model->forward(sw, *whole.kv, rows));
        const auto V = static_cast<size_t>(whole.model->config().n_vocab);
        QCOMPARE(rows.size(), 2 * V);

        for (int32_t k : {1, 7, 64}) {
            Run top = make_run(**file, std::make_unique<kernels::CpuBackend>(2), 4);
            StepLogits out;
            out.top_k = k;
            const auto st = steps();
            auto r = top.model->forward(st, *top.kv, out);
            QVERIFY2(r, r ? "" : r.message().c_str());
            QVERIFY(out.rows.empty());
            QCOMPARE(out.invalid, (std::vector<int32_t>{-1, -1}));
            QCOMPARE(out.top_ids.size(), 2 * static_cast<size_t>(k));
            for (size_t row = 0; row < 2; ++row) {
                const float* x = rows.data() + row * V;
                std::vector<int32_t> order(V);
                for (size_t i = 0; i < V; ++i) order[i] = static_cast<int32_t>(i);
                std::stable_sort(order.begin(), order.end(),
                                 [x](int32_t a, int32_t b) { return x[a] > x[b]; });
                for (int32_t j = 0; j < k; ++j) {
                    const size_t at = row * static_cast<size_t>(k) + static_cast<size_t>(j);
                    QCOMPARE(out.top_ids[at], order[static_cast<size_t>(j)]);
                    QCOMPARE(out.top_values[at], x[order[static_cast<size_t>(j)]]);
                }
            }
            QCOMPARE(out.picked.size(), pick_a.size());
            for (size_t i = 0; i < pick_a.size(); ++i)
                QCOMPARE(out.picked[i], rows[static_cast<size_t>(pick_a[i])]);
        }

        // Bad requests are errors: k out of range, a picked id outside the vocabulary.
        Run bad = make_run(**file, std::make_unique<kernels::CpuBackend>(1), 4);
        StepLogits out;
        out.top_k = kernels::Backend::kMaxTopK + 1;
        const auto sb = steps();
        QVERIFY(!bad.model->forward(sb, *bad.kv, out));
        out.top_k = 4;
        const std::vector<int32_t> outside = {static_cast<int32_t>(V)};
        SequenceStep one{prompt_a, 0, table_a, true, outside};
        auto r = bad.model->forward(std::span(&one, 1), *bad.kv, out);
        QVERIFY(!r);
        QVERIFY2(r.message().find("outside the vocabulary") != std::string::npos,
                 r.message().c_str());
    }

    void badInputIsAnError() {
        SyntheticModelSpec spec;
        auto file = gguf::GgufFile::parse(*make_synthetic_model(spec));
        QVERIFY(file);
        Run cpu = make_run(**file, std::make_unique<kernels::CpuBackend>(1), 16);
        std::vector<int32_t> table(64);
        for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int32_t>(i);
        std::vector<float> logits;
        const std::vector<int32_t> bad = {1, 99999};
        SequenceStep s{bad, 0, table, true, {}};
        auto r = cpu.model->forward(std::span(&s, 1), *cpu.kv, logits);
        QVERIFY(!r);
        QVERIFY(r.message().find("outside the vocabulary") != std::string::npos);
        const std::vector<int32_t> ok = {1, 2};
        SequenceStep beyond{ok, spec.context_length - 1, table, true, {}};
        auto r2 = cpu.model->forward(std::span(&beyond, 1), *cpu.kv, logits);
        QVERIFY(!r2);
        QVERIFY(r2.message().find("context") != std::string::npos);

        // A missing tensor is named.
        gguf::GgufWriter w;
        w.add_string("general.architecture", "mamba");
        auto unsupported = gguf::GgufFile::parse(w.bytes());
        QVERIFY(unsupported);
        auto m = LlamaModel::load(**unsupported, *cpu.backend);
        QVERIFY(!m);
        QVERIFY(m.message().find("unsupported architecture \"mamba\"") != std::string::npos);
    }

  private:
    static int32_t argmax_of(const std::vector<float>& v) {
        return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
    }
};

QTEST_GUILESS_MAIN(TestSyntheticModel)
#include "tst_synthetic_model.moc"
