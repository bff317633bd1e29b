// The tokenizer against llama.cpp on vocabularies derived from the default model, so that
// code paths SmolLM2 itself does not take are checked against the reference too:
//  - the same vocabulary under the llama-bpe, qwen2, gpt-2 and default pre-tokenizers;
//  - a SentencePiece vocabulary built from it (score merges, ▁, byte fallback).
// scripts/goldens/tokenizer.py --variants-out builds the same files for llama.cpp; the
// rule for the SentencePiece one is in its spm_vocabulary() and in spm_file() here.
#include <QUtf8StringView>

#include <map>
#include <set>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "golden_support.h"
#include "synthetic_vocab.h"

using hearth::TokenId;
using hearth::Tokenizer;
using hearth::gguf::GgufFile;
using hearth::gguf::GgufWriter;
using hearth::gguf::ValueType;
using hearth::test::ids_of;
using hearth::test::Mismatches;
using hearth::test::SyntheticVocab;

namespace {

std::vector<std::string> to_strings(const std::vector<std::string_view>& v) {
    return {v.begin(), v.end()};
}

// Copies every tokenizer.ggml.* key, with tokenizer.ggml.pre replaced.
std::vector<std::byte> bpe_file(const GgufFile& model, const std::string& pre) {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    for (const auto& [key, value] : model.metadata()) {
        if (!key.starts_with("tokenizer.ggml.")) continue;
        if (key == "tokenizer.ggml.pre") {
            w.add_string(key, pre);
            continue;
        }
        switch (value.type()) {
            case ValueType::String:
                w.add_string(key, *value.as_string());
                break;
            case ValueType::Bool:
                w.add_bool(key, *value.as_bool());
                break;
            case ValueType::U32:
                w.add_u32(key, *value.as_int<uint32_t>());
                break;
            case ValueType::I32:
                w.add_i32(key, *value.as_int<int32_t>());
                break;
            case ValueType::Array: {
                const auto a = *value.as_array();
                if (a.element_type() == ValueType::String)
                    w.add_strings(key, to_strings(*a.strings()));
                else if (a.element_type() == ValueType::I32)
                    w.add_i32s(key, *a.i32s());
                else if (a.element_type() == ValueType::F32)
                    w.add_f32s(key, *a.f32s());
                else
                    qFatal("unexpected array type for %s", std::string(key).c_str());
                break;
            }
            default:
                qFatal("unexpected type for %s", std::string(key).c_str());
        }
    }
    return w.bytes();
}

// The SentencePiece vocabulary rule (see spm_vocabulary in the golden script): <unk>,
// <s>, </s>, <0x00>..<0xFF>, <|im_start|>, <|im_end|>, then every token typed normal
// whose byte-level text decodes to valid UTF-8 without NUL, spaces as U+2581, first
// occurrence only, scored -id. (NUL is left out because llama.cpp reads token texts as C
// strings and would cut such a token short; Hearth keeps the whole text.)
std::vector<std::byte> spm_file(const GgufFile& model) {
    std::map<std::string, int> byte_of;  // byte-level character -> byte
    for (int b = 0; b < 256; ++b)
        byte_of[hearth::test::byte_char(static_cast<unsigned char>(b))] = b;
    const auto tokens = *model.get_array("tokenizer.ggml.tokens")->strings();
    const auto types = *model.get_array("tokenizer.ggml.token_type")->i32s();

    SyntheticVocab v;
    v.model = "llama";
    v.pre.reset();
    v.add("<unk>", 2);
    v.add("<s>", 3);
    v.add("</s>", 3);
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        v.add(name, 6);
    }
    v.add("<|im_start|>", 3);
    v.add("<|im_end|>", 3);
    std::set<std::string> seen(v.tokens.begin(), v.tokens.end());
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (types[i] != 1) continue;
        std::string bytes;
        bool ok = true;
        for (size_t k = 0; k < tokens[i].size() && ok;) {
            // Byte-level characters are U+0021..U+0143: one or two UTF-8 bytes.
            const size_t len = static_cast<unsigned char>(tokens[i][k]) < 0x80 ? 1 : 2;
            const auto it = byte_of.find(std::string(tokens[i].substr(k, len)));
            ok = it != byte_of.end();
            if (ok) bytes.push_back(static_cast<char>(it->second));
            k += len;
        }
        if (!ok || !QUtf8StringView(bytes).isValidUtf8() || bytes.find('\0') != std::string::npos)
            continue;
        std::string piece;
        for (const char c : bytes)
            piece += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
        if (seen.insert(piece).second) v.add(piece, 1, -static_cast<float>(i));
    }
    return v.bytes();
}

std::unique_ptr<Tokenizer> tokenizer_from(const std::vector<std::byte>& bytes) {
    auto file = GgufFile::parse(bytes);
    if (!file) qFatal("%s", file.message().c_str());
    auto t = Tokenizer::from_gguf(**file);
    if (!t) qFatal("%s", t.message().c_str());
    return std::move(t).value();
}

}  // namespace

class TestTokenizerVariants : public QObject {
    Q_OBJECT

    QJsonObject base_;
    QJsonObject variants_;
    std::unique_ptr<GgufFile> model_;

    void open_model(const QString& path) {
        if (model_) return;
        auto f = GgufFile::open(path.toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        model_ = std::move(f).value();
    }

  private slots:
    void initTestCase() {
        base_ = hearth::test::load_golden_json("smollm2-goldens.json");
        variants_ = hearth::test::load_golden_json("smollm2-variants.json");
    }

    void bpePreTokenizers_data() {
        QTest::addColumn<QString>("pre");
        QTest::addColumn<QString>("family");
        QTest::newRow("llama-bpe") << "llama-bpe"
                                   << "llama3";
        QTest::newRow("qwen2") << "qwen2"
                               << "qwen2";
        QTest::newRow("gpt-2") << "gpt-2"
                               << "gpt-2";
        QTest::newRow("default") << "default"
                                 << "default";
    }
    void bpePreTokenizers() {
        QFETCH(QString, pre);
        QFETCH(QString, family);
        HEARTH_REQUIRE_MODEL(model_path);
        open_model(model_path);
        QVERIFY(model_);
        // Expected: the smollm goldens, except where llama.cpp recorded a difference.
        const QJsonArray cases = base_["cases"].toArray();
        std::vector<std::vector<TokenId>> want(cases.size()), want_special(cases.size());
        for (qsizetype i = 0; i < cases.size(); ++i) {
            want[i] = ids_of(cases[i].toObject()["ids"]);
            want_special[i] = ids_of(cases[i].toObject()["ids_special"]);
        }
        // Detokenized text: the input, except where llama.cpp's clean-up changed it.
        std::vector<std::string> text(cases.size()), detok(cases.size()),
            detok_special(cases.size());
        for (qsizetype i = 0; i < cases.size(); ++i)
            text[i] = detok[i] = detok_special[i] =
                cases[i].toObject()["text"].toString().toStdString();
        bool found = false;
        for (const QJsonValue& line : variants_["variants"].toArray()) {
            if (line.toObject()["bpe_pre"].toString() != pre) continue;
            found = true;
            for (const QJsonValue& d : line.toObject()["differs_from_smollm"].toArray()) {
                const QJsonArray a = d.toArray();
                want[a[0].toInt()] = ids_of(a[1]);
                want_special[a[0].toInt()] = ids_of(a[2]);
            }
            for (const QJsonValue& d : line.toObject()["detok_differs"].toArray()) {
                const QJsonArray a = d.toArray();
                if (!a[1].isNull()) detok[a[0].toInt()] = hearth::test::from_hex(a[1]);
                if (!a[2].isNull()) detok_special[a[0].toInt()] = hearth::test::from_hex(a[2]);
            }
        }
        QVERIFY(found);

        auto tok = tokenizer_from(bpe_file(*model_, pre.toStdString()));
        QCOMPARE(QString::fromUtf8(tok->pre_tokenizer()), family);
        Mismatches off, on, decoded;
        for (size_t i = 0; i < text.size(); ++i) {
            const auto got = tok->encode(text[i], false);
            const auto got_special = tok->encode(text[i], true);
            if (got != want[i]) off.add_ids(text[i], want[i], got);
            if (got_special != want_special[i]) on.add_ids(text[i], want_special[i], got_special);
            if (tok->decode(want[i], false) != detok[i])
                decoded.add(hearth::test::quoted(text[i]) + " -> " +
                            hearth::test::quoted(tok->decode(want[i], false)));
            if (tok->decode(want_special[i], true) != detok_special[i])
                decoded.add(hearth::test::quoted(text[i]) + " (special) -> " +
                            hearth::test::quoted(tok->decode(want_special[i], true)));
        }
        off.check(pre + " parse_special=false", cases.size());
        on.check(pre + " parse_special=true", cases.size());
        decoded.check(pre + " decode", cases.size() * 2);
    }

    void sentencePiece() {
        HEARTH_REQUIRE_MODEL(model_path);
        open_model(model_path);
        QVERIFY(model_);
        auto tok = tokenizer_from(spm_file(*model_));
        QCOMPARE(tok->kind(), hearth::TokenizerKind::SentencePiece);
        QCOMPARE(tok->vocab_size(), variants_["spm_vocab_size"].toInt());
        QCOMPARE(tok->end_of_generation_tokens(), ids_of(variants_["spm_eog"]));

        // Inputs: the corpus strings, then the malformed ones, in the script's order.
        std::vector<std::string> inputs;
        for (const QJsonValue& c : base_["cases"].toArray())
            inputs.push_back(c.toObject()["text"].toString().toStdString());
        for (const QJsonValue& c : base_["invalid_utf8"].toArray())
            inputs.push_back(hearth::test::from_hex(c.toObject()["hex"]));

        Mismatches off, on, detok;
        qsizetype n = 0;
        for (const QJsonValue& line : variants_["variants"].toArray()) {
            const QJsonObject item = line.toObject()["spm"].toObject();
            if (item.isEmpty()) continue;
            ++n;
            const std::string& text = inputs.at(static_cast<size_t>(item["i"].toInt()));
            const auto want = ids_of(item["ids"]);
            const auto want_special =
                item.contains("ids_special") ? ids_of(item["ids_special"]) : want;
            const auto got = tok->encode(text, false);
            const auto got_special = tok->encode(text, true);
            if (got != want) off.add_ids(text, want, got);
            if (got_special != want_special) on.add_ids(text, want_special, got_special);
            const std::string want_text =
                item.contains("detok_hex") ? hearth::test::from_hex(item["detok_hex"]) : text;
            const std::string want_special_text =
                item.contains("special_detok_hex")
                    ? hearth::test::from_hex(item["special_detok_hex"])
                    : text;
            if (tok->decode(want, false) != want_text)
                detok.add(hearth::test::quoted(text) + " -> " +
                          hearth::test::quoted(tok->decode(want, false)));
            if (tok->decode(want_special, true) != want_special_text)
                detok.add(hearth::test::quoted(text) + " (special) -> " +
                          hearth::test::quoted(tok->decode(want_special, true)));
        }
        QCOMPARE(n, static_cast<qsizetype>(inputs.size()));
        off.check("spm parse_special=false", n);
        on.check("spm parse_special=true", n);
        detok.check("spm decode", n);
    }
};

QTEST_APPLESS_MAIN(TestTokenizerVariants)
#include "tst_tokenizer_variants.moc"
