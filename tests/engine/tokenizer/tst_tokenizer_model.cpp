// The tokenizer against llama.cpp on the default model (SmolLM2, pre-tokenizer smollm):
// every corpus string must encode to exactly the ids llama.cpp produced (special tokens
// off and on) and decode to llama.cpp's text. Goldens: tests/data/tokenizer, written by
// scripts/goldens/tokenizer.py.
#include <QElapsedTimer>

#include "gguf/gguf_file.h"
#include "golden_support.h"

using hearth::TokenId;
using hearth::Tokenizer;
using hearth::test::expected_text;

using hearth::test::ids_of;
using hearth::test::Mismatches;
using hearth::test::quoted;

class TestTokenizerModel : public QObject {
    Q_OBJECT

    QJsonObject goldens_;
    std::unique_ptr<hearth::gguf::GgufFile> file_;
    std::unique_ptr<Tokenizer> tok_;

    // Loads the model's tokenizer once (the slots skip, or fail in CI, without it).
    void load(const QString& model_path) {
        if (tok_) return;
        auto file = hearth::gguf::GgufFile::open(model_path.toStdString());
        QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
        file_ = std::move(file).value();
        auto t = Tokenizer::from_gguf(*file_);
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        tok_ = std::move(t).value();
    }

  private slots:
    void initTestCase() {
        goldens_ = hearth::test::load_golden_json("smollm2-goldens.json");
        QVERIFY(goldens_["cases"].toArray().size() >= 300);
    }

    void vocabulary() {
        HEARTH_REQUIRE_MODEL(model_path);
        load(model_path);
        QVERIFY(tok_);
        QCOMPARE(tok_->kind(), hearth::TokenizerKind::Bpe);
        QCOMPARE(tok_->pre_tokenizer(), std::string_view("smollm"));
        QCOMPARE(tok_->find_token("<|im_start|>"), 1);
        // Sizes, special ids, and every token llama.cpp does not call normal.
        hearth::test::check_vocabulary(*tok_, goldens_["vocab"].toObject(), false);
    }

    void encodeMatchesLlamaCpp() {
        HEARTH_REQUIRE_MODEL(model_path);
        load(model_path);
        QVERIFY(tok_);
        const QJsonArray cases = goldens_["cases"].toArray();
        hearth::test::check_encodings(*tok_, cases);
    }

    void decodeMatchesLlamaCpp() {
        HEARTH_REQUIRE_MODEL(model_path);
        load(model_path);
        QVERIFY(tok_);
        const QJsonArray cases = goldens_["cases"].toArray();
        Mismatches detok, round_trip;
        for (const QJsonValue& value : cases) {
            const QJsonObject c = value.toObject();
            const std::string text = c["text"].toString().toStdString();
            const std::string want = expected_text(c, "detok");
            const std::string want_special = expected_text(c, "special_detok");
            const std::string got = tok_->decode(ids_of(c["ids"]), false);
            const std::string got_special = tok_->decode(ids_of(c["ids_special"]), true);
            if (got != want) detok.add(quoted(text) + " (special off) -> " + quoted(got));
            if (got_special != want_special)
                detok.add(quoted(text) + " (special on) -> " + quoted(got_special));
            // smollm has no detokenizer clean-up, so decoding restores the text exactly.
            for (const bool special : {false, true}) {
                const std::string back = tok_->decode(tok_->encode(text, special), special);
                if (back != text) round_trip.add(quoted(text) + " -> " + quoted(back));
            }
        }
        detok.check("decode", static_cast<int>(cases.size()));
        round_trip.check("decode(encode(s)) == s", static_cast<int>(cases.size()) * 2);
    }

    void malformedUtf8MatchesLlamaCpp() {
        HEARTH_REQUIRE_MODEL(model_path);
        load(model_path);
        QVERIFY(tok_);
        hearth::test::check_malformed_utf8(*tok_, goldens_["invalid_utf8"].toArray());
    }

    void throughput() {
        HEARTH_REQUIRE_MODEL(model_path);
        load(model_path);
        QVERIFY(tok_);
        // Not a pass/fail gate (machines differ), but a number worth seeing in the log.
        std::string text;
        for (const QJsonValue& value : goldens_["cases"].toArray())
            text += value.toObject()["text"].toString().toStdString() + "\n";
        QElapsedTimer timer;
        timer.start();
        size_t tokens = 0;
        int rounds = 0;
        while (timer.elapsed() < 300 || rounds < 3) {
            tokens += tok_->encode(text, true).size();
            ++rounds;
        }
        const double seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
        qInfo("encode: %.1f MB/s, %.0f tokens/s",
              static_cast<double>(text.size()) * rounds / seconds / 1e6,
              static_cast<double>(tokens) / seconds);
        QVERIFY(tokens > 0);
    }
};

QTEST_APPLESS_MAIN(TestTokenizerModel)
#include "tst_tokenizer_model.moc"
