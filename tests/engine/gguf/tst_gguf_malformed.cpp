// A generated corpus of truncated and mutated GGUF files. Every file either fails with
// an error message or, if a mutation happened to leave a valid file, parses into a file
// whose every tensor lies inside it. Nothing may crash, hang or allocate without bound;
// this suite also runs under AddressSanitizer + UBSan (label asan).
//
// Files are written to a temporary folder and opened through the memory-mapping path,
// as the app would open them.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <random>

#include "gguf/gguf_file.h"
#include "sample_file.h"

using hearth::gguf::GgufFile;

namespace {

constexpr uint32_t kSeed = 20261202;

struct Outcome {
    int errors = 0;
    int parsed = 0;
};

// Opens bytes through a file on disk; checks the invariants of a successful parse.
void check_one(const QString& path, const std::vector<std::byte>& bytes, Outcome& out,
               QString& failure) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        failure = "cannot write " + path;
        return;
    }
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<qint64>(bytes.size()));
    f.close();
    auto r = GgufFile::open(path.toStdString());
    if (!r) {
        if (r.message().empty()) failure = "empty error message for " + path;
        ++out.errors;
        return;
    }
    ++out.parsed;
    const GgufFile& g = **r;
    for (const auto& t : g.tensors()) {
        if (g.data_offset() + t.offset + t.nbytes > g.file_size())
            failure = QString::fromStdString("tensor outside the file: " + t.name);
        // Touch the first and last byte (ASan catches an out-of-bounds view).
        if (t.nbytes) {
            volatile std::byte first = t.data[0];
            volatile std::byte last = t.data[t.nbytes - 1];
            (void)first;
            (void)last;
        }
    }
    // Walk all metadata the way `hearth-cli info` does.
    for (const auto& e : g.metadata()) (void)e.value.to_string(1000);
}

// Offsets of every u64 length, count, dimension and offset field of a well-formed file,
// found by walking its structure independently of the reader (the fields a hostile
// file would attack).
class FieldWalker {
  public:
    explicit FieldWalker(const std::vector<std::byte>& b) : b_(b) {}

    std::vector<size_t> run() {
        pos_ = 8;
        const uint64_t n_tensors = field();
        const uint64_t n_kv = field();
        for (uint64_t i = 0; i < n_kv; ++i) {
            string();
            value(u32());
        }
        for (uint64_t i = 0; i < n_tensors; ++i) {
            string();
            const uint32_t dims = u32();
            for (uint32_t d = 0; d < dims; ++d) field();
            u32();
            field();
        }
        return fields_;
    }

  private:
    uint32_t u32() {
        uint32_t v;
        std::memcpy(&v, b_.data() + pos_, 4);
        pos_ += 4;
        return v;
    }
    uint64_t field() {
        fields_.push_back(pos_);
        uint64_t v;
        std::memcpy(&v, b_.data() + pos_, 8);
        pos_ += 8;
        return v;
    }
    void string() { pos_ += field(); }
    void value(uint32_t type) {
        static constexpr size_t kFixed[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == 8) return string();
        if (type == 9) {
            const uint32_t elem = u32();
            const uint64_t count = field();
            for (uint64_t i = 0; i < count; ++i) value(elem);
            return;
        }
        pos_ += kFixed[type];
    }

    const std::vector<std::byte>& b_;
    size_t pos_ = 0;
    std::vector<size_t> fields_;
};

}  // namespace

class TestGgufMalformed : public QObject {
    Q_OBJECT

  private slots:
    void corpus() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::vector<std::byte> good = hearth::test::sample_bytes();
        auto parsed_good = GgufFile::parse(good);
        QVERIFY(parsed_good);
        const size_t header_end = (*parsed_good)->data_offset();
        std::mt19937_64 rng(kSeed);
        qInfo("seed %u, sample file %zu bytes, header %zu bytes", kSeed, good.size(), header_end);

        Outcome truncated, hostile, flipped;
        QString failure;
        int n = 0;
        auto next_path = [&] { return dir.filePath(QString("f%1.gguf").arg(n++)); };

        // 1. Truncations: every length inside the header, then a spread across the data.
        //    All must fail: the last tensor ends exactly at the end of the file.
        std::vector<size_t> cuts;
        for (size_t len = 0; len < header_end; ++len) cuts.push_back(len);
        for (int i = 0; i < 200; ++i)
            cuts.push_back(header_end + rng() % (good.size() - header_end));
        for (size_t len : cuts) {
            std::vector<std::byte> b(good.begin(), good.begin() + static_cast<ptrdiff_t>(len));
            check_one(next_path(), b, truncated, failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        QCOMPARE(truncated.parsed, 0);

        // 2. Hostile lengths and counts: each length/count field set to huge values.
        const uint64_t evil[] = {~0ull,       1ull << 63,      (1ull << 32) + 1,
                                 good.size(), good.size() + 1, 1ull << 40};
        const std::vector<size_t> fields = FieldWalker(good).run();
        QVERIFY(fields.size() > 50);
        for (size_t at : fields) {
            for (uint64_t v : evil) {
                std::vector<std::byte> b = good;
                std::memcpy(b.data() + at, &v, 8);
                check_one(next_path(), b, hostile, failure);
                QVERIFY2(failure.isEmpty(), qPrintable(failure));
            }
        }
        // A huge length or count can never describe a valid file of this size.
        QCOMPARE(hostile.parsed, 0);

        // 3. Random byte flips in the header and metadata (1 to 8 bytes each). Some may
        //    leave a valid file (a changed string character); those must parse cleanly.
        for (int i = 0; i < 1500; ++i) {
            std::vector<std::byte> b = good;
            const int flips = 1 + static_cast<int>(rng() % 8);
            for (int k = 0; k < flips; ++k)
                b[rng() % header_end] = static_cast<std::byte>(rng() & 0xff);
            check_one(next_path(), b, flipped, failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }

        const int total = n;
        const int errors = truncated.errors + hostile.errors + flipped.errors;
        qInfo(
            "corpus: %d files; truncated %d (all errors), hostile lengths %d (all errors), "
            "random flips %d (%d errors, %d still valid)",
            total, truncated.errors, hostile.errors, flipped.errors + flipped.parsed,
            flipped.errors, flipped.parsed);
        QVERIFY2(errors >= 1000, qPrintable(QString("only %1 files gave an error").arg(errors)));
    }
};

QTEST_GUILESS_MAIN(TestGgufMalformed)
#include "tst_gguf_malformed.moc"
