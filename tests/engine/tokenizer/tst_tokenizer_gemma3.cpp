// The tokenizer against llama.cpp on a real Gemma 3 vocabulary: Gemma 3 270M's
// (scripts/fetch-model --model gemma3-270m): SentencePiece, 262,144 tokens, byte fallback,
// no space prefix, user-defined runs of newlines, spaces and tabs and HTML tags that are
// split out before the SentencePiece merges. Every corpus string
// (tests/data/tokenizer/corpus.json) and Gemma's own special-token strings must encode to
// llama.cpp's ids with special tokens off and on, decode to llama.cpp's text and round
// trip (tests/data/tokenizer/gemma3-goldens.json, scripts/goldens/tokenizer.py --extra
// gemma3), and malformed UTF-8 must give llama.cpp's ids.

#include "gguf/gguf_file.h"
#include "golden_support.h"

using hearth::TokenId;
using hearth::Tokenizer;
using hearth::TokenizerKind;
using hearth::test::expected_text;

using hearth::test::ids_of;
using hearth::test::Mismatches;
using hearth::test::quoted;

class TestTokenizerGemma3 : public QObject {
    Q_OBJECT

    QJsonObject goldens_;
    QString path_;
    std::unique_ptr<hearth::gguf::GgufFile> file_;
    std::unique_ptr<Tokenizer> tok_;

  private slots:
    void initTestCase() {
        goldens_ = hearth::test::load_golden_json("gemma3-goldens.json");
        QVERIFY(goldens_["cases"].toArray().size() >= 550);
        HEARTH_REQUIRE_GEMMA3_MODEL(path);
        path_ = path;
        auto f = hearth::gguf::GgufFile::open(path.toStdString());
        QVERIFY2(f, f ? "" : f.message().c_str());
        file_ = std::move(f).value();
        auto t = Tokenizer::from_gguf(*file_);
        QVERIFY2(t, t ? "" : t.message().c_str());
        tok_ = std::move(t).value();
    }

    // The file is the one the goldens were recorded on.
    void fileMatchesGoldens() {
        QCOMPARE(hearth::test::sha256_of_file(path_), goldens_["model_sha256"].toString());
    }

    void vocabulary() {
        QCOMPARE(tok_->kind(), TokenizerKind::SentencePiece);
        QCOMPARE(tok_->vocab_size(), 262144);
        hearth::test::check_vocabulary(*tok_, goldens_["vocab"].toObject());
    }

    void encodeMatchesLlamaCpp() {
        hearth::test::check_encodings(*tok_, goldens_["cases"].toArray());
    }

    // Decoding gives llama.cpp's text, and the text itself: Gemma's vocabulary has no
    // space prefix and falls back to bytes, so every string round trips, except that
    // U+2581 (SentencePiece's space mark) comes back as a space, in llama.cpp as here.
    void decodeMatchesLlamaCppAndRoundTrips() {
        const QJsonArray cases = goldens_["cases"].toArray();
        Mismatches detok, round;
        int round_trips = 0;
        for (const QJsonValue& value : cases) {
            const QJsonObject c = value.toObject();
            const std::string text = c["text"].toString().toStdString();
            const std::string got = tok_->decode(ids_of(c["ids"]), false);
            const std::string got_special = tok_->decode(ids_of(c["ids_special"]), true);
            if (got != expected_text(c, "detok"))
                detok.add(quoted(text) + " (special off)\n  llama.cpp " +
                          quoted(expected_text(c, "detok")) + "\n  hearth    " + quoted(got));
            if (got_special != expected_text(c, "special_detok"))
                detok.add(quoted(text) + " (special on)\n  llama.cpp " +
                          quoted(expected_text(c, "special_detok")) + "\n  hearth    " +
                          quoted(got_special));
            if (text.find("\xE2\x96\x81") != std::string::npos) continue;
            ++round_trips;
            for (const bool special : {false, true}) {
                const std::string back = tok_->decode(tok_->encode(text, special), special);
                if (back != text) round.add(quoted(text) + " came back as " + quoted(back));
            }
        }
        detok.check("decode", cases.size() * 2);
        round.check("round trip", round_trips * 2);
        QVERIFY(round_trips >= 550);
    }

    void malformedUtf8MatchesLlamaCpp() {
        const QJsonArray cases = goldens_["invalid_utf8"].toArray();
        hearth::test::check_malformed_utf8(*tok_, cases);
    }
};

QTEST_APPLESS_MAIN(TestTokenizerGemma3)
#include "tst_tokenizer_gemma3.moc"
