// The GGUF reader on well-formed files: a synthetic file with every value type and
// tensor type (written by our writer), hand-made error cases with their messages, and
// the default model.
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "sample_file.h"
#include "support/test_model.h"

using hearth::gguf::GgufFile;
using hearth::gguf::GgufWriter;
using hearth::gguf::ValueType;
using hearth::quant::TensorType;

namespace {

std::unique_ptr<GgufFile> parse_ok(const std::vector<std::byte>& bytes) {
    auto r = GgufFile::parse(bytes);
    if (!r) qFatal("parse failed: %s", r.message().c_str());
    return std::move(r).value();
}

QString parse_error(const std::vector<std::byte>& bytes) {
    auto r = GgufFile::parse(bytes);
    return r ? QString() : QString::fromStdString(r.message());
}

void patch_u64(std::vector<std::byte>& b, size_t at, uint64_t v) {
    std::memcpy(b.data() + at, &v, 8);
}
void patch_u32(std::vector<std::byte>& b, size_t at, uint32_t v) {
    std::memcpy(b.data() + at, &v, 4);
}

// Byte offset of the first occurrence of s in b (test files are small and unambiguous).
size_t find(const std::vector<std::byte>& b, std::string_view s) {
    const auto* p = reinterpret_cast<const char*>(b.data());
    const std::string_view all(p, b.size());
    const size_t at = all.find(s);
    if (at == std::string_view::npos) qFatal("marker not found");
    return at;
}

}  // namespace

class TestGgufReader : public QObject {
    Q_OBJECT

  private slots:
    void scalarValues() {
        const auto bytes = hearth::test::sample_bytes();
        auto f = parse_ok(bytes);
        QCOMPARE(f->version(), 3u);
        QCOMPARE(*f->get_string("general.architecture"), std::string_view("llama"));
        QCOMPARE(*f->get_string("general.name"), std::string_view("sample \xe2\x9c\x93 model"));
        QCOMPARE(*f->find("test.u8")->as_int<int>(), 200);
        QCOMPARE(*f->find("test.i8")->as_int<int>(), -100);
        QCOMPARE(*f->find("test.u16")->as_int<int>(), 60000);
        QCOMPARE(*f->find("test.i16")->as_int<int>(), -30000);
        QCOMPARE(*f->get_u32("test.u32"), 4000000000u);
        QCOMPARE(*f->get_i32("test.i32"), -2000000000);
        QCOMPARE(*f->get_u64("test.u64"), 18000000000000000000ull);
        QCOMPARE(*f->find("test.i64")->as_int<int64_t>(), -9000000000000000000ll);
        QCOMPARE(*f->get_f32("test.f32"), 0.25f);
        QCOMPARE(*f->find("test.f64")->as_float(), -1.5);
        QCOMPARE(*f->get_bool("test.bool"), true);
        QCOMPARE(f->find("test.f64")->type(), ValueType::F64);
    }

    void conversionsRefuseWhatDoesNotFit() {
        auto f = parse_ok(hearth::test::sample_bytes());
        QVERIFY(!f->get_i32("test.u32"));                  // 4e9 does not fit in i32
        QVERIFY(!f->find("test.i8")->as_int<uint32_t>());  // negative into unsigned
        QVERIFY(!f->get_u32("test.bool"));                 // bools are not integers here
        QVERIFY(!f->get_string("test.u32"));
        QVERIFY(!f->get_bool("test.u8"));
        QVERIFY(!f->get_u32("no.such.key"));
        QCOMPARE(*f->find("test.u16")->as_int<uint16_t>(), uint16_t{60000});
        QVERIFY(!f->find("test.u16")->as_int<int16_t>());
    }

    void arrays() {
        auto f = parse_ok(hearth::test::sample_bytes());
        auto strs = f->get_array("test.strings");
        QVERIFY(strs);
        QCOMPARE(strs->element_type(), ValueType::String);
        const auto s = *strs->strings();
        QCOMPARE(s.size(), size_t{4});
        QCOMPARE(s[1], std::string_view(""));
        QCOMPARE(s[2], std::string_view("\xe4\xbd\xa0\xe5\xa5\xbd"));
        QCOMPARE(*strs->at(3).as_string(), std::string_view("<|im_start|>"));
        QVERIFY(!strs->i32s());

        const auto ints = *f->get_array("test.ints")->i32s();
        QCOMPARE(ints, (std::vector<int32_t>{1, -2, 3, 2147483647}));
        const auto floats = *f->get_array("test.floats")->f32s();
        QCOMPARE(floats, (std::vector<float>{0.5f, -0.125f}));

        auto nested = f->get_array("test.nested");
        QCOMPARE(nested->element_type(), ValueType::Array);
        QCOMPARE(nested->size(), uint64_t{2});
        auto first = *nested->at(0).as_array();
        auto second = *nested->at(1).as_array();
        QCOMPARE(first.size(), uint64_t{2});
        QCOMPARE(*first.at(1).as_int<int>(), 2);
        QCOMPARE(second.size(), uint64_t{1});
        QCOMPARE(*second.at(0).as_int<int>(), 3);
        QCOMPARE(QString::fromStdString(nested->at(0).to_string()), QStringLiteral("[1, 2]"));
    }

    void tensorsOfEveryType_data() {
        QTest::addColumn<int>("alignment");
        QTest::newRow("default alignment 32") << 32;
        QTest::newRow("alignment 64") << 64;
        QTest::newRow("alignment 1") << 1;
    }
    void tensorsOfEveryType() {
        QFETCH(int, alignment);
        const auto bytes = hearth::test::sample_bytes(static_cast<uint32_t>(alignment));
        auto f = parse_ok(bytes);
        QCOMPARE(f->alignment(), static_cast<uint64_t>(alignment));
        QCOMPARE(f->data_offset() % static_cast<uint64_t>(alignment), uint64_t{0});
        const auto expected = hearth::test::sample_tensors(1);
        QCOMPARE(f->tensors().size(), expected.size());
        for (const auto& e : expected) {
            const auto* t = f->find_tensor(e.name);
            QVERIFY2(t, e.name.c_str());
            QCOMPARE(t->type, e.type);
            QCOMPARE(t->n_dims, static_cast<int>(e.ne.size()));
            for (size_t d = 0; d < 4; ++d)
                QCOMPARE(t->ne[d], d < e.ne.size() ? e.ne[d] : int64_t{1});
            QCOMPARE(t->nbytes, static_cast<uint64_t>(e.data.size()));
            QCOMPARE(t->offset % static_cast<uint64_t>(alignment), uint64_t{0});
            QVERIFY(std::memcmp(t->data, e.data.data(), e.data.size()) == 0);
        }
        QCOMPARE(QString::fromStdString(f->find_tensor("blk.0.F32.weight")->shape_string()),
                 QStringLiteral("[7, 3]"));
    }

    void fingerprintIsStableAndSensitive() {
        auto a = parse_ok(hearth::test::sample_bytes());
        auto b = parse_ok(hearth::test::sample_bytes());
        QCOMPARE(a->fingerprint(), b->fingerprint());
        QCOMPARE(a->fingerprint().size(), size_t{64});
        GgufWriter w;
        hearth::test::write_sample(w);
        w.add_string("general.extra", "x");
        auto c = parse_ok(w.bytes());
        QVERIFY(a->fingerprint() != c->fingerprint());
    }

    void openFromDisk() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.gguf").toStdString();
        GgufWriter w;
        hearth::test::write_sample(w);
        QVERIFY(w.write(path));
        auto f = GgufFile::open(path);
        QVERIFY2(f, f ? "" : f.message().c_str());
        QCOMPARE((*f)->path(), path);
        QCOMPARE((*f)->tensors().size(), size_t{11});

        auto missing = GgufFile::open(dir.filePath("nope.gguf").toStdString());
        QVERIFY(!missing);
        QVERIFY(missing.message().find("cannot open") != std::string::npos);
        auto directory = GgufFile::open(dir.path().toStdString());
        QVERIFY(!directory);
        QVERIFY(directory.message().find("not a regular file") != std::string::npos);
    }

    void namedErrors_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << 0 << "not a GGUF file";
        QTest::newRow("bad magic") << 1 << "bad magic";
        QTest::newRow("version 1") << 2 << "version 1 is obsolete";
        QTest::newRow("version 4") << 3 << "unsupported GGUF version 4";
        QTest::newRow("big-endian") << 4 << "big-endian";
        QTest::newRow("tensor past end")
            << 5 << "tensor blk.10.Q6_K.weight extends past end of file";
        QTest::newRow("huge string") << 6 << "general.architecture";
        QTest::newRow("bad value type") << 7 << "value type 13 is not a GGUF value type";
        QTest::newRow("bad alignment") << 8 << "general.alignment 48 is not a power of two";
        QTest::newRow("unsupported tensor type")
            << 9 << "type IQ2_XXS (id 16), which Hearth does not support";
        QTest::newRow("five dimensions") << 10 << "has 5 dimensions";
        QTest::newRow("huge tensor count") << 11 << "tensors, more than the file can hold";
        QTest::newRow("huge array") << 12 << "test.ints: array of";
        QTest::newRow("misaligned offset") << 13 << "is not a multiple of the alignment";
        QTest::newRow("duplicate key") << 14 << "metadata key dup appears twice";
        QTest::newRow("bad bool") << 15 << "bool value 2 is not 0 or 1";
        QTest::newRow("row not whole blocks") << 16 << "row length 7 is not a multiple";
        QTest::newRow("zero dimension") << 17 << "invalid shape";
    }
    void namedErrors() {
        QFETCH(int, which);
        QFETCH(QString, expected);
        std::vector<std::byte> b = hearth::test::sample_bytes();
        switch (which) {
            case 0:
                b.clear();
                break;
            case 1:
                b[0] = std::byte{'X'};
                break;
            case 2:
                patch_u32(b, 4, 1);
                break;
            case 3:
                patch_u32(b, 4, 4);
                break;
            case 4:
                patch_u32(b, 4, 0x03000000);
                break;
            case 5:
                b.resize(b.size() - 1);
                break;
            case 6:
                patch_u64(b, find(b, "llama") - 8, 1ull << 40);
                break;
            case 7:
                patch_u32(b, find(b, "test.u8") + 7, 13);
                break;
            case 8: {
                GgufWriter w(48);
                hearth::test::write_sample(w);
                b = w.bytes();
                break;
            }
            case 9:
                patch_u32(b, find(b, "blk.3.Q4_0.weight") + 17 + 4 + 16, 16);
                break;
            case 10:
                patch_u32(b, find(b, "blk.0.F32.weight") + 16, 5);
                break;
            case 11:
                patch_u64(b, 8, 1ull << 50);
                break;
            case 12:
                patch_u64(b, find(b, "test.ints") + 9 + 4 + 4, 1ull << 61);
                break;
            case 13:
                patch_u64(b, find(b, "blk.1.F16.weight") + 16 + 4 + 8 + 4, 3);
                break;
            case 14: {
                GgufWriter w;
                w.add_u32("dup", 1);
                w.add_u32("dup", 2);
                b = w.bytes();
                break;
            }
            case 15:
                b[find(b, "test.bool") + 9 + 4] = std::byte{2};
                break;
            case 16: {
                GgufWriter w;
                const std::vector<std::byte> data(28);
                const std::vector<int64_t> ne{7};
                QVERIFY(w.add_tensor("t", TensorType::F32, ne, data));
                b = w.bytes();
                // Rewrite the type to Q8_0 (block 32): 7 elements are not whole blocks.
                patch_u32(b, find(b, "t") + 1 + 4 + 8, static_cast<uint32_t>(TensorType::Q8_0));
                break;
            }
            case 17:
                patch_u64(b, find(b, "blk.0.F32.weight") + 16 + 4, 0);
                break;
        }
        const QString err = parse_error(b);
        QVERIFY2(!err.isEmpty(), "the file parsed");
        QVERIFY2(err.contains(expected), qPrintable(err));
    }

    void defaultModel() {
        HEARTH_REQUIRE_MODEL(path);
        auto r = GgufFile::open(path.toStdString());
        QVERIFY2(r, r ? "" : r.message().c_str());
        const GgufFile& f = **r;
        QCOMPARE(f.file_size(), uint64_t{98362432});
        QCOMPARE(*f.get_string("general.architecture"), std::string_view("llama"));
        QCOMPARE(*f.get_u32("llama.embedding_length"), 576u);
        QCOMPARE(*f.get_u32("llama.block_count"), 30u);
        QCOMPARE(*f.get_u32("llama.attention.head_count"), 9u);
        QCOMPARE(*f.get_u32("llama.attention.head_count_kv"), 3u);
        QCOMPARE(*f.get_u32("llama.feed_forward_length"), 1536u);
        QCOMPARE(*f.get_string("tokenizer.ggml.model"), std::string_view("gpt2"));
        QCOMPARE(*f.get_string("tokenizer.ggml.pre"), std::string_view("smollm"));
        QCOMPARE(f.get_array("tokenizer.ggml.tokens")->size(), uint64_t{49152});
        QVERIFY(f.get_string("tokenizer.chat_template")->find("<|im_start|>") !=
                std::string_view::npos);
        const auto* embd = f.find_tensor("token_embd.weight");
        QVERIFY(embd);
        QCOMPARE(embd->ne[0], int64_t{576});
        QCOMPARE(embd->ne[1], int64_t{49152});
        QVERIFY(!f.find_tensor("output.weight"));  // tied embeddings
        // 30 layers × 9 tensors + token_embd + output_norm.
        QCOMPARE(f.tensors().size(), size_t{272});
        // Every tensor lies inside the file and they do not overlap.
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        for (const auto& t : f.tensors()) ranges.emplace_back(t.offset, t.offset + t.nbytes);
        std::sort(ranges.begin(), ranges.end());
        for (size_t i = 1; i < ranges.size(); ++i) QVERIFY(ranges[i].first >= ranges[i - 1].second);
        QVERIFY(f.data_offset() + ranges.back().second <= f.file_size());
    }
};

QTEST_GUILESS_MAIN(TestGgufReader)
#include "tst_gguf_reader.moc"
