// Batch invariance of the CPU backend: a row's result is the same, bit for bit, whatever
// else is in its batch. Prefix caching depends on it: a cached prefix was computed in
// another step, in other company and other chunks, and the sequence that reuses it must
// see exactly the KV (and so the logits) it would have computed itself.
//   - matmul: every weight type, token t of an n-token product equals the 1-token product
//     of that token alone (decode vs prefill tiles, activation groups, thread splits);
//   - attention: a sequence's query rows equal those computed with the sequence alone,
//     when it shares the step with other sequences (decode and prefill, long contexts),
//     and a prefill split into chunks equals the prefill done at once.
#include <QTest>

#include <cstring>

#include "cpu/cpu_backend.h"
#include "cpu/kernel_choice.h"
#include "tst_cpu_helpers.h"

using namespace hearth;
using namespace hearth::test;
using kernels::AttentionBatch;
using kernels::CpuBackend;
using kernels::PagedKvLayer;
using kernels::WeightSource;

Q_DECLARE_METATYPE(hearth::quant::TensorType)

namespace {

constexpr uint32_t kSeed = 4242;

bool same_bits(const float* a, const float* b, std::size_t n) {
    return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// One sequence of an attention step: q_len new tokens at the end of kv_len tokens.
struct SeqSpec {
    int32_t q_len;
    int32_t kv_len;
};

struct KvFixture {
    static constexpr int32_t kBlocks = 256, kBlockSize = 16, kKvHeads = 3, kHeadDim = 64;
    std::vector<uint16_t> k, v;
    PagedKvLayer layer;
    explicit KvFixture(std::mt19937& rng) {
        const std::size_t n = std::size_t{kBlocks} * kBlockSize * kKvHeads * kHeadDim;
        const auto f = random_floats(rng, 2 * n, -2.0f, 2.0f);
        k.resize(n);
        v.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            k[i] = quant::f32_to_fp16(f[i]);
            v[i] = quant::f32_to_fp16(f[n + i]);
        }
        layer = {k.data(), v.data(), kBlocks, kBlockSize, kKvHeads, kHeadDim};
    }
};

// Runs one attention step over `seqs`, each with its own block table (disjoint blocks:
// sequence s uses blocks s*64 ...), and returns the output rows [tokens][heads][dim].
std::vector<float> attend(CpuBackend& b, const KvFixture& kv, const std::vector<SeqSpec>& seqs,
                          const std::vector<int32_t>& table_offsets,
                          const std::vector<float>& q_all, int32_t n_heads) {
    AttentionBatch batch;
    std::vector<int32_t> q_start, q_len, kv_len, bt_start, tables;
    int32_t rows = 0;
    for (std::size_t s = 0; s < seqs.size(); ++s) {
        q_start.push_back(rows);
        q_len.push_back(seqs[s].q_len);
        kv_len.push_back(seqs[s].kv_len);
        bt_start.push_back(static_cast<int32_t>(tables.size()));
        const int32_t nb = (seqs[s].kv_len + KvFixture::kBlockSize - 1) / KvFixture::kBlockSize;
        for (int32_t i = 0; i < nb; ++i) tables.push_back(table_offsets[s] + i);
        rows += seqs[s].q_len;
        batch.max_q_len = std::max(batch.max_q_len, seqs[s].q_len);
        batch.max_kv_len = std::max(batch.max_kv_len, seqs[s].kv_len);
    }
    batch.n_seqs = static_cast<int32_t>(seqs.size());
    batch.q_start = q_start.data();
    batch.q_len = q_len.data();
    batch.kv_len = kv_len.data();
    batch.block_table_start = bt_start.data();
    batch.block_tables = tables.data();
    batch.batch_invariant = true;
    const std::size_t row = static_cast<std::size_t>(n_heads) * KvFixture::kHeadDim;
    std::vector<float> out(static_cast<std::size_t>(rows) * row);
    b.attention(q_all.data(), kv.layer, batch, n_heads, 0.125f, out.data());
    return out;
}

}  // namespace

class TestBatchInvariance : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { qInfo("seed %u", kSeed); }

    void matmul_data() {
        QTest::addColumn<TensorType>("type");
        for (TensorType t : all_weight_types()) QTest::newRow(qPrintable(type_name(t))) << t;
    }
    void matmul() {
        QFETCH(TensorType, type);
        std::mt19937 rng(kSeed);
        const int64_t rows = 200, cols = is_k_quant(type) ? 512 : 192;
        const auto bytes = random_weights(rng, type, rows, cols);
        // Every pairing of the kernels the choice can make (kernels/cpu/kernel_choice.h):
        // a 1-token product runs the decode class's, the longer ones the prefill class's.
        const kernels::cpu::SimdLevel level = CpuBackend(1).simd_level();
        const auto decode =
            kernels::cpu::kernel_variants(type, kernels::cpu::ShapeClass::Decode, level);
        const auto prefill =
            kernels::cpu::kernel_variants(type, kernels::cpu::ShapeClass::Prefill, level);
        QVERIFY(!decode.empty() && !prefill.empty());
        for (const auto& d : decode) {
            for (const auto& p : prefill) {
                CpuBackend b(2);
                const std::string tn(type_name(type).toStdString());
                QVERIFY(b.force_kernels(tn + ".decode=" + d.name + "," + tn + ".prefill=" + p.name)
                            .empty());
                auto w = b.load_weight(WeightSource{"w", type, rows, cols, bytes.data()});
                QVERIFY(w);
                const QString kernels_used =
                    QString(" (decode %1, prefill %2)").arg(d.name.c_str(), p.name.c_str());
                for (int32_t n : {2, 3, 4, 5, 7, 16, 37, 70}) {
                    const auto x =
                        random_floats(rng, static_cast<std::size_t>(n * cols), -3.0f, 3.0f);
                    std::vector<float> batch(static_cast<std::size_t>(n * rows)),
                        one(static_cast<std::size_t>(rows));
                    b.matmul(*w, x.data(), n, batch.data());
                    for (int32_t t = 0; t < n; ++t) {
                        b.matmul(*w, x.data() + static_cast<std::size_t>(t) * cols, 1, one.data());
                        HEARTH_CHECK(
                            same_bits(one.data(), batch.data() + static_cast<std::size_t>(t) * rows,
                                      static_cast<std::size_t>(rows)),
                            QString("%1 tokens: token %2 differs from its 1-token product")
                                    .arg(n)
                                    .arg(t) +
                                kernels_used);
                    }
                }
            }
        }
    }

    void attentionAloneEqualsShared() {
        std::mt19937 rng(kSeed + 1);
        const KvFixture kv(rng);
        CpuBackend b(2);
        const int32_t n_heads = 9;
        const std::size_t row = static_cast<std::size_t>(n_heads) * KvFixture::kHeadDim;
        // The company: a long decode, a prefill chunk over a cached prefix, a short decode.
        const std::vector<SeqSpec> seqs = {{1, 1000}, {40, 300}, {1, 37}, {24, 24}};
        const std::vector<int32_t> tables = {0, 64, 128, 192};
        int32_t total = 0;
        for (const auto& s : seqs) total += s.q_len;
        const auto q = random_floats(rng, static_cast<std::size_t>(total) * row, -1.5f, 1.5f);
        const std::vector<float> shared = attend(b, kv, seqs, tables, q, n_heads);
        int32_t offset = 0;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            const std::vector<float> q_s(
                q.begin() + static_cast<std::ptrdiff_t>(offset * row),
                q.begin() + static_cast<std::ptrdiff_t>((offset + seqs[s].q_len) * row));
            const std::vector<float> alone = attend(b, kv, {seqs[s]}, {tables[s]}, q_s, n_heads);
            HEARTH_CHECK(same_bits(alone.data(), shared.data() + offset * row, alone.size()),
                         QString("sequence %1 differs alone and in company").arg(s));
            offset += seqs[s].q_len;
        }
    }

    void chunkedPrefillEqualsWhole() {
        std::mt19937 rng(kSeed + 2);
        const KvFixture kv(rng);
        CpuBackend b(2);
        const int32_t n_heads = 9, len = 600;
        const std::size_t row = static_cast<std::size_t>(n_heads) * KvFixture::kHeadDim;
        const auto q = random_floats(rng, static_cast<std::size_t>(len) * row, -1.5f, 1.5f);
        const std::vector<float> whole = attend(b, kv, {{len, len}}, {0}, q, n_heads);
        for (int32_t chunk : {7, 64, 256, 1}) {
            for (int32_t start = 0; start < len; start += chunk) {
                const int32_t n = std::min(chunk, len - start);
                const std::vector<float> q_c(
                    q.begin() + static_cast<std::ptrdiff_t>(start * row),
                    q.begin() + static_cast<std::ptrdiff_t>((start + n) * row));
                const std::vector<float> part = attend(b, kv, {{n, start + n}}, {0}, q_c, n_heads);
                HEARTH_CHECK(
                    same_bits(part.data(), whole.data() + start * row, part.size()),
                    QString("chunk %1 at %2 differs from the whole prefill").arg(chunk).arg(start));
                if (chunk == 1 && start > 40) break;  // decode-like steps: a sample is enough
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestBatchInvariance)
#include "tst_cpu_batch_invariance.moc"
