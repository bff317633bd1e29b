// Split models (gguf/gguf_split.cpp), built here part by part as llama.cpp's gguf-split
// writes them (examples/gguf-split/gguf-split.cpp: the first part holds the metadata, every
// part "split.no" (u16, from 0), "split.count" (u16) and "split.tensors.count" (i32);
// names "%s-%05d-of-%05d.gguf" counted from 1): opened through any part, they read as one
// file; a missing, foreign or renamed part, a tensor in two parts and a wrong tensor count
// are errors that name the part. tst_split_golden checks a model split by llama.cpp's own
// tool against llama.cpp's goldens.
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "sample_file.h"

using namespace hearth;

namespace {

struct PartSpec {
    int no = 0;             // split.no
    int count = 3;          // split.count
    int tensors_total = 0;  // split.tensors.count (the first part's matters)
    bool metadata = false;  // the model's keys (the first part)
};

std::string part_path(const QTemporaryDir& dir, const std::string& prefix, int no, int count) {
    char tail[40];
    std::snprintf(tail, sizeof tail, "-%05d-of-%05d.gguf", no + 1, count);
    return dir.filePath(QString::fromStdString(prefix + tail)).toStdString();
}

// The sample tensors, dealt out to `count` parts in turn; part `no` written to path.
bool write_part(const std::string& path, const PartSpec& p,
                const std::vector<test::SampleTensor>& tensors, int skip_tensor = -1) {
    gguf::GgufWriter w;
    if (p.metadata) {
        w.add_string("general.architecture", "llama");
        w.add_string("general.name", "Split test");
    }
    w.add_u16("split.no", static_cast<uint16_t>(p.no));
    w.add_u16("split.count", static_cast<uint16_t>(p.count));
    w.add_i32("split.tensors.count", p.tensors_total);
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (static_cast<int>(i % static_cast<size_t>(p.count)) != p.no ||
            static_cast<int>(i) == skip_tensor)
            continue;
        const auto& t = tensors[i];
        if (!w.add_tensor(t.name, t.type, t.ne, t.data)) return false;
    }
    return static_cast<bool>(w.write(path));
}

bool write_model(const QTemporaryDir& dir, const std::string& prefix,
                 const std::vector<test::SampleTensor>& tensors, int count = 3) {
    for (int no = 0; no < count; ++no)
        if (!write_part(part_path(dir, prefix, no, count),
                        {no, count, static_cast<int>(tensors.size()), no == 0}, tensors))
            return false;
    return true;
}

#define OPEN_FAILS(path, needle)                                                      \
    do {                                                                              \
        auto r = gguf::GgufFile::open(path);                                          \
        QVERIFY2(!r, "opened");                                                       \
        QVERIFY2(r.message().find(needle) != std::string::npos, r.message().c_str()); \
    } while (false)

}  // namespace

class TestGgufSplit : public QObject {
    Q_OBJECT

  private slots:
    void readsAsOneFile() {
        QTemporaryDir dir;
        const auto tensors = test::sample_tensors(7);
        QVERIFY(write_model(dir, "model", tensors));
        for (int through = 0; through < 3; ++through) {
            auto f = gguf::GgufFile::open(part_path(dir, "model", through, 3));
            QVERIFY2(f, f ? "" : f.message().c_str());
            const gguf::GgufFile& g = **f;
            QCOMPARE(g.part_count(), std::size_t{3});
            QCOMPARE(g.path(), part_path(dir, "model", 0, 3));  // named by its first part
            QVERIFY(g.get_string("general.name").value_or("") == std::string_view("Split test"));
            QCOMPARE(g.tensors().size(), tensors.size());
            std::uint64_t size = 0;
            for (int no = 0; no < 3; ++no)
                size += QFileInfo(QString::fromStdString(part_path(dir, "model", no, 3))).size();
            QCOMPARE(g.file_size(), size);
            for (const auto& t : tensors) {
                const gguf::TensorInfo* info = g.find_tensor(t.name);
                QVERIFY2(info, t.name.c_str());
                QCOMPARE(info->nbytes, static_cast<uint64_t>(t.data.size()));
                QVERIFY(std::memcmp(info->data, t.data.data(), t.data.size()) == 0);
            }
            g.prefetch();
            QVERIFY(g.changed_on_disk().empty());
        }
        // One part alone, as a download of it is checked.
        auto second = gguf::GgufFile::open_part(part_path(dir, "model", 1, 3));
        QVERIFY(second);
        QCOMPARE((*second)->part_count(), std::size_t{1});
        QVERIFY((*second)->tensors().size() < tensors.size());

        // The fingerprint covers every part: another last part, another model.
        auto whole = gguf::GgufFile::open(part_path(dir, "model", 0, 3));
        const std::string before = (*whole)->fingerprint();
        const std::string content = (*whole)->content_fingerprint();
        whole->reset();
        const auto other = test::sample_tensors(8);
        QVERIFY(write_part(part_path(dir, "model", 2, 3),
                           {2, 3, static_cast<int>(tensors.size()), false}, other));
        auto changed = gguf::GgufFile::open(part_path(dir, "model", 0, 3));
        QVERIFY(changed);
        QVERIFY((*changed)->content_fingerprint() != content);
        QCOMPARE((*changed)->fingerprint().size(), before.size());
    }

    void namesWhatIsWrong() {
        QTemporaryDir dir;
        const auto tensors = test::sample_tensors(7);
        const int n = static_cast<int>(tensors.size());

        QVERIFY(write_model(dir, "missing", tensors));
        QVERIFY(QFile::remove(QString::fromStdString(part_path(dir, "missing", 2, 3))));
        OPEN_FAILS(part_path(dir, "missing", 0, 3), "part 3 of 3");
        OPEN_FAILS(part_path(dir, "missing", 1, 3), "part 3 of 3");

        // The first part missing, opened through the second.
        QVERIFY(write_model(dir, "headless", tensors));
        QVERIFY(QFile::remove(QString::fromStdString(part_path(dir, "headless", 0, 3))));
        OPEN_FAILS(part_path(dir, "headless", 1, 3), "its first part cannot be opened");

        // Another model's part under this one's name.
        QVERIFY(write_model(dir, "foreign", tensors));
        QVERIFY(write_part(part_path(dir, "foreign", 1, 3), {2, 3, n, false}, tensors));
        OPEN_FAILS(part_path(dir, "foreign", 0, 3), "is not part 2 of 3");

        // Renamed: the other parts cannot be found.
        QVERIFY(write_model(dir, "renamed", tensors));
        const QString renamed = dir.filePath("renamed.gguf");
        QVERIFY(QFile::rename(QString::fromStdString(part_path(dir, "renamed", 0, 3)), renamed));
        OPEN_FAILS(renamed.toStdString(), "does not end in -00001-of-00003.gguf");

        // A tensor in two parts.
        QVERIFY(write_model(dir, "twice", tensors, 2));
        gguf::GgufWriter w;
        w.add_u16("split.no", 1);
        w.add_u16("split.count", 2);
        w.add_i32("split.tensors.count", n);
        QVERIFY(w.add_tensor(tensors[0].name, tensors[0].type, tensors[0].ne, tensors[0].data));
        QVERIFY(w.write(part_path(dir, "twice", 1, 2)));
        OPEN_FAILS(part_path(dir, "twice", 0, 2), "is also in an earlier part");

        // A tensor short of what the first part says.
        QVERIFY(write_part(part_path(dir, "short", 0, 2), {0, 2, n, true}, tensors));
        QVERIFY(write_part(part_path(dir, "short", 1, 2), {1, 2, n, false}, tensors, 1));
        OPEN_FAILS(part_path(dir, "short", 0, 2), "split.tensors.count says");

        // Counts no one writes.
        QVERIFY(write_part(part_path(dir, "huge", 0, 60000), {0, 60000, n, true}, tensors));
        OPEN_FAILS(part_path(dir, "huge", 0, 60000), "is more than");
        QVERIFY(write_part(dir.filePath("beyond.gguf").toStdString(), {5, 3, n, true}, tensors));
        OPEN_FAILS(dir.filePath("beyond.gguf").toStdString(), "is not below split.count");
    }
};

QTEST_GUILESS_MAIN(TestGgufSplit)
#include "tst_gguf_split.moc"
