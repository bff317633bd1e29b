// The tokenizer against llama.cpp on two real model families' vocabularies, llama.cpp's own
// vocabulary-only files (scripts/vocab-files; the CTest fixture vocab_files extracts them):
//  - ggml-vocab-phi-3.gguf: Phi-3's SentencePiece vocabulary (space prefix, byte fallback,
//    </s> user-defined, [PAD...] of type unknown, and llama.cpp's Phi-3 rule that its
//    special tokens strip the whitespace after them);
//  - ggml-vocab-qwen2.gguf: Qwen2's byte-level BPE with the qwen2 pre-tokenizer (that of
//    Qwen2.5 and Qwen3), [PAD...] user-defined.
// For each: every corpus string (tests/data/tokenizer/corpus.json) and the vocabulary's
// own special-token strings must encode to llama.cpp's ids with special tokens off and on
// and decode to its text (tests/data/tokenizer/{phi3,qwen2}-goldens.json, written by
// scripts/goldens/tokenizer.py --extra), and llama.cpp's own test data next to the file
// (.inp/.out, read by its tests/test-tokenizer-0.cpp) must give its ids.

#include <map>

#include "golden_support.h"
#include "vocab_files.h"

using hearth::TokenId;
using hearth::Tokenizer;
using hearth::TokenizerKind;
using hearth::test::expected_text;

using hearth::test::ids_of;
using hearth::test::Mismatches;
using hearth::test::quoted;

namespace {

struct Family {
    QString vocab_file;  // in the vocab-files folder
    QString goldens;     // in tests/data/tokenizer
    TokenizerKind kind;
    std::string_view pre;
};

const std::map<QString, Family>& families() {
    static const std::map<QString, Family> f = {
        {"phi3",
         {"ggml-vocab-phi-3.gguf", "phi3-goldens.json", TokenizerKind::SentencePiece, "spm"}},
        {"qwen2", {"ggml-vocab-qwen2.gguf", "qwen2-goldens.json", TokenizerKind::Bpe, "qwen2"}},
    };
    return f;
}

// llama.cpp's tests/test-tokenizer-0.cpp format: inputs separated by
// "\n__ggml_vocab_test__\n", one line of space-separated ids per input.
struct LlamaTest {
    std::string text;
    std::vector<TokenId> ids;
};

std::vector<LlamaTest> read_llama_tests(const QString& inp_path, const QString& out_path) {
    QFile inp(inp_path), out(out_path);
    if (!inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly)) return {};
    const std::string raw = inp.readAll().toStdString();
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> inputs;
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        if (next == std::string::npos) {
            inputs.push_back(raw.substr(pos));
            break;
        }
        inputs.push_back(raw.substr(pos, next - pos));
        pos = next + sep.size();
    }
    const QList<QByteArray> lines = out.readAll().split('\n');
    std::vector<LlamaTest> tests;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (i >= static_cast<size_t>(lines.size())) return {};
        LlamaTest t{inputs[i], {}};
        for (const QByteArray& id : lines[static_cast<qsizetype>(i)].simplified().split(' '))
            if (!id.isEmpty()) t.ids.push_back(id.toInt());
        tests.push_back(std::move(t));
    }
    return tests;
}

}  // namespace

class TestTokenizerFamilies : public QObject {
    Q_OBJECT

    hearth::test::VocabFiles vocabs_;
    std::map<QString, QJsonObject> goldens_;

    // The family's tokenizer, loaded once; nullptr after a QSKIP/QFAIL in the caller.
    const Tokenizer* load(const QString& name, const QString& path) {
        return vocabs_.get(name, path);
    }

    void add_rows() {
        QTest::addColumn<QString>("name");
        for (const auto& [name, family] : families()) QTest::newRow(qPrintable(name)) << name;
    }

  private slots:
    void initTestCase() {
        for (const auto& [name, family] : families()) {
            goldens_[name] = hearth::test::load_golden_json(family.goldens);
            QVERIFY(goldens_[name]["cases"].toArray().size() >= 500);
        }
    }

    // The file is the one the goldens were recorded on.
    void fileMatchesGoldens_data() { add_rows(); }
    void fileMatchesGoldens() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        QCOMPARE(hearth::test::sha256_of_file(path), goldens_[name]["model_sha256"].toString());
    }

    void vocabulary_data() { add_rows(); }
    void vocabulary() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        const Tokenizer* tok = load(name, path);
        QVERIFY(tok);
        QCOMPARE(tok->kind(), f.kind);
        QCOMPARE(tok->pre_tokenizer(), f.pre);
        hearth::test::check_vocabulary(*tok, goldens_[name]["vocab"].toObject());
    }

    void encodeMatchesLlamaCpp_data() { add_rows(); }
    void encodeMatchesLlamaCpp() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        const Tokenizer* tok = load(name, path);
        QVERIFY(tok);
        const QJsonArray cases = goldens_[name]["cases"].toArray();
        hearth::test::check_encodings(*tok, cases);
    }

    void decodeMatchesLlamaCpp_data() { add_rows(); }
    void decodeMatchesLlamaCpp() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        const Tokenizer* tok = load(name, path);
        QVERIFY(tok);
        const QJsonArray cases = goldens_[name]["cases"].toArray();
        Mismatches detok;
        for (const QJsonValue& value : cases) {
            const QJsonObject c = value.toObject();
            const std::string text = c["text"].toString().toStdString();
            const std::string want = expected_text(c, "detok");
            const std::string want_special = expected_text(c, "special_detok");
            const std::string got = tok->decode(ids_of(c["ids"]), false);
            const std::string got_special = tok->decode(ids_of(c["ids_special"]), true);
            if (got != want)
                detok.add(quoted(text) + " (special off)\n  llama.cpp " + quoted(want) +
                          "\n  hearth    " + quoted(got));
            if (got_special != want_special)
                detok.add(quoted(text) + " (special on)\n  llama.cpp " + quoted(want_special) +
                          "\n  hearth    " + quoted(got_special));
        }
        detok.check("decode", cases.size() * 2);
    }

    void malformedUtf8MatchesLlamaCpp_data() { add_rows(); }
    void malformedUtf8MatchesLlamaCpp() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        const Tokenizer* tok = load(name, path);
        QVERIFY(tok);
        const QJsonArray cases = goldens_[name]["invalid_utf8"].toArray();
        hearth::test::check_malformed_utf8(*tok, cases);
    }

    // llama.cpp's own test data for the file (special tokens off, no BOS, as its
    // test-tokenizer-0 runs it).
    void llamaCppTestData_data() { add_rows(); }
    void llamaCppTestData() {
        QFETCH(QString, name);
        const Family& f = families().at(name);
        HEARTH_REQUIRE_VOCAB_FILE(path, f.vocab_file);
        HEARTH_REQUIRE_VOCAB_FILE(inp, f.vocab_file + ".inp");
        HEARTH_REQUIRE_VOCAB_FILE(out, f.vocab_file + ".out");
        const Tokenizer* tok = load(name, path);
        QVERIFY(tok);
        const std::vector<LlamaTest> tests = read_llama_tests(inp, out);
        QVERIFY2(tests.size() >= 30, "the .inp and .out files do not pair up");
        Mismatches m;
        for (const LlamaTest& t : tests) {
            const std::vector<TokenId> got = tok->encode(t.text, false);
            if (got != t.ids) m.add_ids(t.text, t.ids, got);
        }
        m.check(f.vocab_file + ".inp", static_cast<qsizetype>(tests.size()));
    }
};

QTEST_APPLESS_MAIN(TestTokenizerFamilies)
#include "tst_tokenizer_families.moc"
