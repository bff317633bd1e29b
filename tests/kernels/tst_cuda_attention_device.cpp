// The CUDA paged attention on a device (skipped without one): the device against its host
// twin over the suites' shapes and those they miss, the same invariances bit for bit on the
// device, and the blocks the device keeps resident per SM for the planned shared memory.
#include <QTest>

#include "cuda_attention_fixture.h"

class TstCudaAttentionDevice : public QObject {
    Q_OBJECT

  private slots:
    void deviceMatchesTheHost();
    void deviceIsBatchInvariant();
    void deviceShapesTheSuitesMissed();
    void deviceKeepsBlocksResident();
};

// The device against the host run: the same operations in the same order but for the
// device's expf (a few ulps), so within 4e-6 (V rows are in [-1, 1]).
void TstCudaAttentionDevice::deviceMatchesTheHost() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7004);
    struct Config {
        int32_t block_size, n_kv, n_heads, head_dim;
    };
    for (const Config& cf : {Config{16, 8, 32, 128}, Config{7, 2, 6, 64}, Config{3, 1, 8, 80},
                             Config{16, 2, 16, 256}, Config{1, 4, 4, 128}}) {
        Cache c(rng, cf.block_size, cf.n_kv, cf.n_heads, cf.head_dim, kMixedLengths, 2.0f);
        DeviceCache dc(c);
        const Step st(c, mixed_parts());
        const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
        const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
        for (size_t i = 0; i < got.size(); ++i)
            HEARTH_CHECK(std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
                         QString("head_dim %1, %2 heads: element %3: %4 vs %5")
                             .arg(cf.head_dim)
                             .arg(cf.n_heads)
                             .arg(i)
                             .arg(got[i])
                             .arg(want[i]));
    }
    const Many many(rng);
    Cache c(rng, 5, 2, 4, 64, many.lengths, 2.0f);
    DeviceCache dc(c);
    const Step st(c, many.parts);
    const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
    const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
    for (size_t i = 0; i < got.size(); ++i)
        HEARTH_CHECK(
            std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
            QString("150 sequences: element %1: %2 vs %3").arg(i).arg(got[i]).arg(want[i]));
}

// On the device, bit for bit: the shapes agree, a row alone equals the row in company, and a
// prompt in one step equals it in chunks (decode steps included).
void TstCudaAttentionDevice::deviceIsBatchInvariant() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7005);
    for (int32_t D : {128, 64, 256}) {
        Cache c(rng, 16, 8, 32, D, kMixedLengths, 2.0f);
        DeviceCache dc(c);
        const Step mixed(c, mixed_parts());
        const Rows all = by_position(c, mixed, run_device(c, dc, mixed, AttentionShape::Planned));
        QString why;
        for (AttentionShape shape : {AttentionShape::AllSplit, AttentionShape::AllWhole})
            QVERIFY2(
                same_rows(all, by_position(c, mixed, run_device(c, dc, mixed, shape)), &why),
                qPrintable(QString("head_dim %1, shape %2: ").arg(D).arg(static_cast<int>(shape)) +
                           why));
        for (const Part& p : mixed_parts()) {
            const Step alone(c, {p});
            QVERIFY2(
                same_rows(all,
                          by_position(c, alone, run_device(c, dc, alone, AttentionShape::Planned)),
                          &why),
                qPrintable(QString("head_dim %1 alone: ").arg(D) + why));
        }
        const Step whole(c, {{4, 0, 700}});
        const Rows one = by_position(c, whole, run_device(c, dc, whole, AttentionShape::Planned));
        for (const auto& ps : prompt_pieces()) {
            const Step st(c, ps);
            QVERIFY2(
                same_rows(one, by_position(c, st, run_device(c, dc, st, AttentionShape::Planned)),
                          &why),
                qPrintable(QString("head_dim %1 chunked prompt: ").arg(D) + why));
        }
    }
}

// Shapes the other device tests miss, device against host: head_dim 96 with GQA 7 and 256
// with GQA 16, contexts one either side of chunk edges, 256 decode sequences in one step,
// and a 1,024 window over a 20k context (decode rows and a prefill chunk).
void TstCudaAttentionDevice::deviceShapesTheSuitesMissed() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7006);
    const auto check = [](Cache& c, DeviceCache& dc, const Step& st, const QString& what) {
        const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
        const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
        for (size_t i = 0; i < got.size(); ++i)
            HEARTH_CHECK(
                std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
                QString("%1: element %2: %3 vs %4").arg(what).arg(i).arg(got[i]).arg(want[i]));
    };
    const std::vector<int32_t> edges = {255, 256, 257, 511, 512, 513, 1023, 1025};
    struct Config {
        int32_t n_kv, n_heads, head_dim;
    };
    for (const Config& cf : {Config{2, 14, 96}, Config{1, 16, 256}, Config{4, 28, 128}}) {
        Cache c(rng, 16, cf.n_kv, cf.n_heads, cf.head_dim, edges, 2.0f);
        DeviceCache dc(c);
        std::vector<Part> decode, prefill;
        for (int32_t s = 0; s < static_cast<int32_t>(edges.size()); ++s) {
            const int32_t len = edges[static_cast<size_t>(s)];
            decode.push_back({s, len - 1, len});
            prefill.push_back({s, len - 37, len});
        }
        const QString what =
            QString("head_dim %1, %2 / %3 heads").arg(cf.head_dim).arg(cf.n_heads).arg(cf.n_kv);
        check(c, dc, Step(c, decode), what + ", decode at chunk edges");
        check(c, dc, Step(c, prefill), what + ", prefill chunks at chunk edges");
    }
    {
        std::vector<int32_t> lengths(256);
        for (int32_t& l : lengths) l = 1 + static_cast<int32_t>(rng() % 2000);
        Cache c(rng, 16, 2, 8, 64, lengths, 2.0f);
        DeviceCache dc(c);
        std::vector<Part> decode;
        for (int32_t s = 0; s < 256; ++s)
            decode.push_back(
                {s, lengths[static_cast<size_t>(s)] - 1, lengths[static_cast<size_t>(s)]});
        check(c, dc, Step(c, decode), "256 decode sequences");
    }
    {
        Cache c(rng, 16, 1, 4, 256, {20000}, 2.0f);
        DeviceCache dc(c);
        for (const std::vector<Part>& parts :
             {std::vector<Part>{{0, 19999, 20000}}, std::vector<Part>{{0, 19000, 19100}}}) {
            Step st(c, parts);
            st.window = 1024;
            check(c, dc, st,
                  QString("window 1024 over 20000, rows %1..%2").arg(parts[0].a).arg(parts[0].b));
        }
    }
}

// The item kernel's resident blocks per SM on this device for the plan's shared memory
// (plan_attention sized it for 2 on sm_75, 4 on sm_80 and later), decode and prefill,
// over common head shapes; printed for the bundle's log.
void TstCudaAttentionDevice::deviceKeepsBlocksResident() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    int device = 0, smem_per_sm = 0, cc_major = 0;
    QCOMPARE(cudaGetDevice(&device), cudaSuccess);
    QCOMPARE(
        cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
        cudaSuccess);
    QCOMPARE(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device),
             cudaSuccess);
    const int want = cc_major >= 8 ? 4 : 2;
    struct Heads {
        int32_t n_heads, n_kv, head_dim;
    };
    const std::vector<int32_t> decode_q(8, 1), decode_kv(8, 3000);
    const std::vector<int32_t> mixed_q = {1, 512}, mixed_kv = {900, 1536};
    for (const Heads& h : {Heads{32, 8, 64}, Heads{32, 8, 128}, Heads{28, 4, 128}, Heads{8, 4, 256},
                           Heads{32, 32, 96}, Heads{16, 1, 128}})
        for (int which = 0; which < 2; ++which) {
            AttentionBatch b;
            b.n_seqs = which == 0 ? 8 : 2;
            b.host_q_len = which == 0 ? decode_q.data() : mixed_q.data();
            b.host_kv_len = which == 0 ? decode_kv.data() : mixed_kv.data();
            g::AttentionPlan p;
            QVERIFY(g::plan_attention(b, h.n_heads, h.n_kv, h.head_dim, AttentionShape::Planned, &p,
                                      smem_per_sm));
            int blocks = 0;
            QCOMPARE(g::attention_occupancy(p, &blocks), cudaSuccess);
            const QString what = QString("%1/%2 heads, head_dim %3, %4: %5 bytes, %6 blocks/SM")
                                     .arg(h.n_heads)
                                     .arg(h.n_kv)
                                     .arg(h.head_dim)
                                     .arg(which == 0 ? "decode" : "prefill")
                                     .arg(p.geometry.smem_bytes)
                                     .arg(blocks);
            qInfo().noquote() << what;
            QVERIFY2(blocks >= want, qPrintable(what));
        }
}

QTEST_GUILESS_MAIN(TstCudaAttentionDevice)
#include "tst_cuda_attention_device.moc"
