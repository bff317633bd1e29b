// The matmul kernel choice (kernels/cpu/kernel_choice.h, kernel_tuner.h): the candidates
// of each type, forcing a choice (HEARTH_CPU_KERNELS), and the file that keeps the
// measured choice: its key (this processor, this build, this thread count), and a file
// for another key or one that does not parse being ignored and written anew. That every
// candidate gives the same bits is tst_cpu_ops' matmul_every_candidate; batch invariance
// under each is tst_cpu_batch_invariance's.
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "cpu/cpu_backend.h"
#include "cpu/kernel_choice.h"
#include "cpu/kernel_tuner.h"
#include "cpu_backends.h"
#include "tst_cpu_helpers.h"

using namespace hearth;
using namespace hearth::test;
using kernels::CpuBackend;
using kernels::WeightSource;
using kernels::cpu::KernelPlan;
using kernels::cpu::ShapeClass;
using kernels::cpu::SimdLevel;
namespace cpu = hearth::kernels::cpu;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spit(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

}  // namespace

class TestKernelChoice : public QObject {
    Q_OBJECT

    SimdLevel best_ = SimdLevel::Scalar;
    std::vector<uint8_t> q4k_, q6k_;
    static constexpr int64_t kRows = 256, kCols = 1024;

    // Weight views of two K-quant matrices (the types with several decode candidates at
    // every SIMD level), as a model's would be.
    std::vector<cpu::WeightView> views() const {
        std::vector<cpu::WeightView> v(2);
        for (int i = 0; i < 2; ++i) {
            v[i].type = i == 0 ? TensorType::Q4_K : TensorType::Q6_K;
            v[i].rows = kRows;
            v[i].cols = kCols;
            v[i].data = (i == 0 ? q4k_ : q6k_).data();
            v[i].row_bytes = (i == 0 ? q4k_ : q6k_).size() / kRows;
        }
        return v;
    }

    cpu::TuneSummary tune(const std::string& path, KernelPlan& plan) {
        cpu::ThreadPool pool(2);
        cpu::AlignedBuffer scratch;
        return cpu::tune_kernels(pool, scratch, plan, views(), path);
    }

  private slots:
    void initTestCase() {
        best_ = CpuBackends::levels().back();
        std::mt19937 rng(77);
        q4k_ = random_weights(rng, TensorType::Q4_K, kRows, kCols);
        q6k_ = random_weights(rng, TensorType::Q6_K, kRows, kCols);
    }

    // Each type has candidates at each level, its default first, names unique, and all of
    // them read the weight layout the load made for the default.
    void candidates() {
        for (SimdLevel level : CpuBackends::levels()) {
            for (TensorType t : all_weight_types()) {
                for (ShapeClass c : {ShapeClass::Decode, ShapeClass::Prefill}) {
                    const auto v = cpu::kernel_variants(t, c, level);
                    QVERIFY(!v.empty());
                    std::set<std::string> names;
                    for (const auto& k : v) {
                        QVERIFY(k.kernels);
                        QCOMPARE(k.kernels->packing, v.front().kernels->packing);
                        QVERIFY(names.insert(k.name).second);
                    }
                    QCOMPARE(KernelPlan(level).get(t, c).name, v.front().name);
                }
            }
        }
        // Where there is something to choose: the K-quants' decode prefetch distances.
        if (best_ != SimdLevel::Scalar)
            QVERIFY(cpu::kernel_variants(TensorType::Q4_K, ShapeClass::Decode, best_).size() >= 3);
        if (best_ == SimdLevel::Avx512) {
            const auto v = cpu::kernel_variants(TensorType::Q4_0, ShapeClass::Prefill, best_);
            QCOMPARE(v.size(), std::size_t{2});
            QCOMPARE(v[0].name, std::string("avx512"));
            QCOMPARE(v[1].name, std::string("avx2"));
        }
    }

    void forced() {
        if (best_ == SimdLevel::Scalar) QSKIP("no SIMD level on this processor: nothing to choose");
        KernelPlan plan(best_);
        QVERIFY(plan.apply_forced("Q4_K.decode=avx2+pf3k").empty());
        QCOMPARE(plan.get(TensorType::Q4_K, ShapeClass::Decode).name, std::string("avx2+pf3k"));
        QCOMPARE(plan.get(TensorType::Q4_K, ShapeClass::Decode).prefetch_bytes, 3072);
        QVERIFY(plan.forced(TensorType::Q4_K, ShapeClass::Decode));
        QVERIFY(!plan.forced(TensorType::Q4_K, ShapeClass::Prefill));
        QVERIFY(!plan.forced(TensorType::Q6_K, ShapeClass::Decode));
        // A bare name: every type and class that has it; a class alone: that class.
        KernelPlan all(best_);
        QVERIFY(all.apply_forced(" decode = avx2+pf12k ").empty());
        QCOMPARE(all.get(TensorType::Q6_K, ShapeClass::Decode).name, std::string("avx2+pf12k"));
        QCOMPARE(all.get(TensorType::Q6_K, ShapeClass::Prefill).name,
                 KernelPlan(best_).get(TensorType::Q6_K, ShapeClass::Prefill).name);
        QVERIFY(all.apply_forced("avx2").empty());
        QCOMPARE(all.get(TensorType::Q8_0, ShapeClass::Prefill).name, std::string("avx2"));
        // What cannot be applied is said, and changes nothing.
        KernelPlan bad(best_);
        const auto problems = bad.apply_forced("Q9_Z=avx2,Q4_K.sideways=avx2,warp-drive,,");
        QCOMPARE(problems.size(), std::size_t{3});
        QVERIFY(problems[0].find("no weight type Q9_Z") != std::string::npos);
        QVERIFY(problems[1].find("no shape class sideways") != std::string::npos);
        QVERIFY(problems[2].find("no kernel of that name") != std::string::npos);
        QCOMPARE(bad.get(TensorType::Q4_K, ShapeClass::Decode).name,
                 KernelPlan(best_).get(TensorType::Q4_K, ShapeClass::Decode).name);
        // The environment variable reaches a new backend, which then uses the choice.
        qputenv("HEARTH_CPU_KERNELS", "Q6_K.decode=avx2+pf3k");
        CpuBackend b(1);
        qunsetenv("HEARTH_CPU_KERNELS");
        QCOMPARE(b.kernel_plan().get(TensorType::Q6_K, ShapeClass::Decode).name,
                 std::string("avx2+pf3k"));
        QVERIFY(b.kernel_plan().forced(TensorType::Q6_K, ShapeClass::Decode));
    }

    // The key names this processor, this build and the thread count.
    void key() {
        const std::string k = cpu::kernel_choice_key(3);
        QVERIFY(k.find(cpu::cpu_identity()) == 0);
        QVERIFY(k.find(cpu::build_identity()) != std::string::npos);
        QVERIFY(k.find("threads 3") != std::string::npos);
        QVERIFY(cpu::kernel_choice_key(3) != cpu::kernel_choice_key(4));
        // The build: the running program's file is part of it.
        QVERIFY(cpu::build_identity().find("program ") != std::string::npos);
    }

    void measured_then_read_back() {
        if (best_ == SimdLevel::Scalar) QSKIP("no SIMD level on this processor: nothing to choose");
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/sub/kernel-choices.txt").toStdString();
        KernelPlan plan(best_);
        const cpu::TuneSummary first = tune(path, plan);
        QVERIFY2(first.measured >= 2, first.report.c_str());  // Q4_K and Q6_K decode
        QCOMPARE(first.from_file, 0);
        QVERIFY(first.saved);
        const cpu::KernelChoiceFile f = cpu::read_kernel_choices(path);
        QCOMPARE(f.key, cpu::kernel_choice_key(2));
        QCOMPARE(static_cast<int>(f.entries.size()), first.measured);
        for (const auto& e : f.entries) {
            QCOMPARE(plan.get(e.type, e.cls).name, e.chosen);
            QCOMPARE(e.micros.size(), cpu::kernel_variants(e.type, e.cls, best_).size());
            for (const auto& [name, us] : e.micros) QVERIFY(us > 0);
        }
        // Read back, nothing measured; the file unchanged.
        const std::string text = slurp(path);
        KernelPlan again(best_);
        const cpu::TuneSummary second = tune(path, again);
        QCOMPARE(second.measured, 0);
        QCOMPARE(second.from_file, first.measured);
        QVERIFY(!second.saved);
        QCOMPARE(slurp(path), text);
        for (const auto& e : f.entries) QCOMPARE(again.get(e.type, e.cls).name, e.chosen);
        // A choice read from the file is applied: edit it to another candidate.
        std::string edited = text;
        const std::string chosen = f.entries.front().chosen;
        const std::string other = chosen == "avx2+pf3k" ? "avx2+pf12k" : "avx2+pf3k";
        const std::string from = std::string(" decode ") + chosen + " ";
        QVERIFY(edited.find(from) != std::string::npos);
        edited.replace(edited.find(from), from.size(), " decode " + other + " ");
        spit(path, edited);
        KernelPlan third(best_);
        QCOMPARE(tune(path, third).measured, 0);
        QCOMPARE(third.get(f.entries.front().type, ShapeClass::Decode).name, other);
    }

    // Another processor, build or thread count, a file that does not parse, or a choice
    // this build does not have: measured again and the file written anew with this key.
    void invalidated_data() {
        QTest::addColumn<QString>("edit");
        QTest::newRow("another processor") << "cpu";
        QTest::newRow("another build") << "build";
        QTest::newRow("another thread count") << "threads";
        QTest::newRow("garbage") << "garbage";
        QTest::newRow("truncated line") << "truncated";
        QTest::newRow("unknown kernel") << "kernel";
        QTest::newRow("unknown type") << "type";
        QTest::newRow("negative time") << "time";
        QTest::newRow("empty") << "empty";
    }
    void invalidated() {
        if (best_ == SimdLevel::Scalar) QSKIP("no SIMD level on this processor: nothing to choose");
        QFETCH(QString, edit);
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/kernel-choices.txt").toStdString();
        KernelPlan plan(best_);
        const int measured = tune(path, plan).measured;
        QVERIFY(measured >= 2);
        std::string text = slurp(path);
        const auto replace = [&](const std::string& from, const std::string& to) {
            const auto at = text.find(from);
            QVERIFY2(at != std::string::npos, from.c_str());
            text.replace(at, from.size(), to);
        };
        if (edit == "cpu") {
            replace(cpu::cpu_identity(), "GenuineIntel 6/183/1 some other processor avx2");
        } else if (edit == "build") {
            replace(cpu::build_identity(), "hearth 0.0.1, gcc 9, program 1 bytes, modified 1");
        } else if (edit == "threads") {
            replace("threads 2", "threads 16");
        } else if (edit == "garbage") {
            const char garbage[] =
                "\x7f"
                "ELF\x01\x02\x00 not a choice file";
            text.assign(garbage, sizeof garbage - 1);
        } else if (edit == "truncated") {
            text += "Q4_K decode\n";
        } else if (edit == "kernel") {
            replace(" decode ", " decode warp-drive-9000 x ");
        } else if (edit == "type") {
            text += "Q9_Z decode avx2 avx2 1.0\n";
        } else if (edit == "time") {
            text += "Q8_0 prefill avx2 avx2 -5\n";
        } else {
            text.clear();
        }
        spit(path, text);
        KernelPlan again(best_);
        const cpu::TuneSummary s = tune(path, again);
        QCOMPARE(s.measured, measured);
        QCOMPARE(s.from_file, 0);
        QVERIFY(s.saved);
        const cpu::KernelChoiceFile f = cpu::read_kernel_choices(path);
        QCOMPARE(f.key, cpu::kernel_choice_key(2));
        QCOMPARE(static_cast<int>(f.entries.size()), measured);
    }

    // A forced choice is not measured, and is not overridden by the file.
    void forced_wins() {
        if (best_ == SimdLevel::Scalar) QSKIP("no SIMD level on this processor: nothing to choose");
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/kernel-choices.txt").toStdString();
        KernelPlan plan(best_);
        QVERIFY(plan.apply_forced("Q4_K.decode=avx2+pf12k").empty());
        const cpu::TuneSummary s = tune(path, plan);
        QCOMPARE(s.forced, 1);
        QVERIFY(s.report.find("Q4_K decode: avx2+pf12k (forced)") != std::string::npos);
        QCOMPARE(plan.get(TensorType::Q4_K, ShapeClass::Decode).name, std::string("avx2+pf12k"));
        for (const auto& e : cpu::read_kernel_choices(path).entries)
            QVERIFY(!(e.type == TensorType::Q4_K && e.cls == ShapeClass::Decode));
    }

    // A file that cannot be written: the choice still holds for this run, and says so.
    void unwritable() {
        if (best_ == SimdLevel::Scalar) QSKIP("no SIMD level on this processor: nothing to choose");
        QTemporaryDir dir;
        const std::string blocker = (dir.path() + "/file").toStdString();
        spit(blocker, "x");
        KernelPlan plan(best_);
        const cpu::TuneSummary s = tune(blocker + "/kernel-choices.txt", plan);
        QVERIFY(s.measured >= 2);
        QVERIFY(!s.saved);
        CpuBackend b(2);
        auto w = b.load_weight(WeightSource{"w", TensorType::Q4_K, kRows, kCols, q4k_.data()});
        const std::string report = b.choose_kernels({w.get()}, blocker + "/kernel-choices.txt");
        QVERIFY2(report.find("could not write") != std::string::npos, report.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKernelChoice)
#include "tst_kernel_choice.moc"
