// The SentencePiece-style tokenizer (tokenizer.ggml.model = "llama") on a synthetic
// vocabulary: score-ordered merges, the ▁ space marker and space prefix, byte fallback,
// the unknown token, special tokens and malformed input.
#include <QTest>

#include "synthetic_vocab.h"
#include "tokenizer/tokenizer.h"

using hearth::TokenId;
using hearth::Tokenizer;
using hearth::test::SyntheticVocab;

namespace {

using Texts = std::vector<std::string>;
const std::string kSp = "\xE2\x96\x81";  // ▁

std::string hex_token(int b) {
    static const char* hex = "0123456789ABCDEF";
    return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

SyntheticVocab spm_vocab(bool byte_tokens = true) {
    SyntheticVocab v;
    v.model = "llama";
    v.pre.reset();
    v.add("<unk>", 2);
    v.add("<s>", 3);
    v.add("</s>", 3);
    if (byte_tokens)
        for (int b = 0; b < 256; ++b) v.add(hex_token(b), 6);
    v.add(kSp, 1, -1.0f);
    for (const char* c : {"h", "e", "l", "o", "w", "r", "d", "a", "b", "c", "x", "y", "z"})
        v.add(c, 1, -10.0f);
    // "▁hello" and "▁world" are reached through these pairs, best score first.
    const std::pair<std::string, float> pieces[] = {
        {kSp + "h", -6},      {kSp + "he", -3},    {"ll", -2}, {kSp + "hell", -1.5f},
        {kSp + "hello", -1},  {kSp + "w", -4},     {"or", -3}, {"ld", -3},
        {kSp + "wor", -2.5f}, {kSp + "world", -1}, {"ab", -1}, {"bc", -0.5f},
        {"xy", -1},           {"yz", -1}};
    for (const auto& [text, score] : pieces) v.add(text, 1, score);
    return v;
}

std::unique_ptr<Tokenizer> load(const SyntheticVocab& v) {
    auto t = v.load();
    if (!t) qFatal("synthetic vocabulary failed to load: %s", t.message().c_str());
    return std::move(t).value();
}

Texts texts_of(const Tokenizer& t, const std::vector<TokenId>& ids) {
    Texts out;
    for (const TokenId id : ids) out.push_back(t.token_text(id));
    return out;
}

QString show(const Texts& t) {
    QStringList l;
    for (const auto& s : t) l << QString::fromStdString(s);
    return "[" + l.join("|") + "]";
}

}  // namespace

class TestTokenizerSpm : public QObject {
    Q_OBJECT

  private slots:
    void encode_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("parse_special");
        QTest::addColumn<QStringList>("expected");
        const QString sp = QString::fromStdString(kSp);
        QTest::newRow("words") << QByteArray("hello world") << false
                               << QStringList{sp + "hello", sp + "world"};
        QTest::newRow("double space")
            << QByteArray("hello  world") << false << QStringList{sp + "hello", sp, sp + "world"};
        QTest::newRow("higher score first")
            << QByteArray("abc") << false << QStringList{sp, "a", "bc"};
        QTest::newRow("leftmost on ties")
            << QByteArray("xyz") << false << QStringList{sp, "xy", "z"};
        QTest::newRow("byte fallback")
            << QByteArray("\xC3\xA9") << false << QStringList{sp, "<0xC3>", "<0xA9>"};
        QTest::newRow("missing ascii") << QByteArray("q") << false << QStringList{sp, "<0x71>"};
        QTest::newRow("invalid byte") << QByteArray("\xFF") << false << QStringList{sp, "<0xFF>"};
        // The sequence length comes from the lead byte alone, as in llama.cpp, so the
        // ASCII letters after a broken lead byte fall back to bytes too.
        QTest::newRow("broken lead") << QByteArray(
                                            "\xE2"
                                            "ab")
                                     << false << QStringList{sp, "<0xE2>", "<0x61>", "<0x62>"};
        QTest::newRow("truncated end")
            << QByteArray("a\xE2\x82") << false << QStringList{sp, "a", "<0xE2>", "<0x82>"};
        // A space goes in front of the text after every special token.
        QTest::newRow("after special") << QByteArray("<s>hello</s>world") << true
                                       << QStringList{"<s>", sp + "hello", "</s>", sp + "world"};
        QTest::newRow("unknown token parsed")
            << QByteArray("<unk>") << true << QStringList{"<unk>"};
    }
    void encode() {
        QFETCH(QByteArray, text);
        QFETCH(bool, parse_special);
        QFETCH(QStringList, expected);
        auto t = load(spm_vocab());
        Texts want;
        for (const QString& e : expected) want.push_back(e.toStdString());
        const Texts got = texts_of(*t, t->encode(text.toStdString(), parse_special));
        QVERIFY2(got == want, qPrintable(show(got) + " != " + show(want)));
    }

    // llama.cpp's Phi-3 rule: in a vocabulary whose general.name contains "phi3" or
    // "phi-3", the special tokens other than <unk>, <s> and <|endoftext|> swallow the
    // whitespace after them (</s> too). Expectations: llama.cpp on this vocabulary.
    void phi3StripsAfterSpecials_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("parse_special");
        QTest::addColumn<QStringList>("expected");
        const QString sp = QString::fromStdString(kSp);
        const QByteArray chat = "<|user|>\n  hello<|end|>\t\r\n\x0b\x0c world";
        QTest::newRow("chat markers")
            << "Phi3" << chat << true
            << QStringList{"<|user|>", sp + "hello", "<|end|>", sp + "world"};
        QTest::newRow("other name")
            << "Phi 3 Mini" << chat << true
            << QStringList{"<|user|>", sp,       "<0x0A>", sp,       sp + "hello", "<|end|>",   sp,
                           "<0x09>",   "<0x0D>", "<0x0A>", "<0x0B>", "<0x0C>",     sp + "world"};
        QTest::newRow("dashed name") << "phi-3-mini" << QByteArray("hello <|end|>  ") << true
                                     << QStringList{sp + "hello", sp, "<|end|>"};
        QTest::newRow("special off")
            << "phi-3-mini" << QByteArray("hello <|end|>  ") << false
            << QStringList{sp + "hello", sp,       "<0x3C>", "<0x7C>", "e", "<0x6E>",
                           "d",          "<0x7C>", "<0x3E>", sp,       sp};
        QTest::newRow("exceptions")
            << "Phi3" << QByteArray("<s> hello</s> world<|endoftext|> hello") << true
            << QStringList{"<s>",           sp, sp + "hello", "</s>", sp + "world",
                           "<|endoftext|>", sp, sp + "hello"};
        QTest::newRow("user-defined") << "Phi3" << QByteArray("<|x|> hello<|x|>") << false
                                      << QStringList{"<|x|>", sp + "hello", "<|x|>"};
        QTest::newRow("only whitespace after")
            << "Phi3" << QByteArray("<|end|>   ") << true << QStringList{"<|end|>"};
        QTest::newRow("space before")
            << "Phi3" << QByteArray("hello <|end|> <|end|>\nhello") << true
            << QStringList{sp + "hello", sp, "<|end|>", "<|end|>", sp + "hello"};
    }
    void phi3StripsAfterSpecials() {
        QFETCH(QString, name);
        QFETCH(QByteArray, text);
        QFETCH(bool, parse_special);
        QFETCH(QStringList, expected);
        SyntheticVocab v = spm_vocab();
        v.add("<|user|>", 3);
        v.add("<|end|>", 3);
        v.add("<|endoftext|>", 3);
        v.add("<|x|>", 4);
        v.strings.push_back({"general.name", name.toStdString()});
        auto t = load(v);
        Texts want;
        for (const QString& e : expected) want.push_back(e.toStdString());
        const Texts got = texts_of(*t, t->encode(text.toStdString(), parse_special));
        QVERIFY2(got == want, qPrintable(show(got) + " != " + show(want)));
    }

    void noSpacePrefix() {
        SyntheticVocab v = spm_vocab();
        v.flags.push_back({"tokenizer.ggml.add_space_prefix", false});
        auto t = load(v);
        QVERIFY(!t->add_space_prefix());
        QCOMPARE(texts_of(*t, t->encode("hello", false)), (Texts{"h", "e", "ll", "o"}));
        QCOMPARE(t->decode(t->encode(" hello", false), false), std::string(" hello"));
    }

    void unknownWithoutByteTokens() {
        auto t = load(spm_vocab(false));
        // llama.cpp aborts here; Hearth uses the unknown token for each byte.
        QCOMPARE(texts_of(*t, t->encode("\xC3\xA9", false)), (Texts{kSp, "<unk>", "<unk>"}));
        QCOMPARE(t->decode(t->encode("\xC3\xA9", false), false), std::string());
        QCOMPARE(t->decode(t->encode("\xC3\xA9", false), true), std::string("<unk><unk>"));
    }

    void decode() {
        auto t = load(spm_vocab());
        QCOMPARE(t->decode(t->encode("hello world", false), false), std::string("hello world"));
        QCOMPARE(t->decode(t->encode(" hello", false), false), std::string(" hello"));
        QCOMPARE(t->token_to_piece(t->find_token(kSp + "hello"), false), std::string(" hello"));
        QCOMPARE(t->token_to_piece(t->find_token("<0x41>"), false), std::string("A"));
        // Only the first token loses its space, even when it renders as nothing: this is
        // llama_detokenize(remove_special = false).
        const std::vector<TokenId> ids{t->bos(), t->find_token(kSp + "hello")};
        QCOMPARE(t->decode(ids, false), std::string(" hello"));
        QCOMPARE(t->decode(ids, true), std::string("<s> hello"));
    }

    void vocabularyFacts() {
        auto t = load(spm_vocab());
        QCOMPARE(t->kind(), hearth::TokenizerKind::SentencePiece);
        QCOMPARE(t->pre_tokenizer(), std::string_view("spm"));
        // llama.cpp's Llama-2 defaults when the ids are not in the file.
        QCOMPARE(t->bos(), 1);
        QCOMPARE(t->eos(), 2);
        QCOMPARE(t->unknown(), 0);
        QVERIFY(t->add_bos());
        QVERIFY(t->add_space_prefix());
        QCOMPARE(t->end_of_generation_tokens(), std::vector<TokenId>{2});
    }

    void scoresRequired() {
        SyntheticVocab v = spm_vocab();
        v.scores.clear();
        const auto r = v.load();
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find("tokenizer.ggml.scores") != std::string::npos,
                 r.message().c_str());
    }

    void fuzz() {
        auto t = load(spm_vocab());
        uint64_t state = 7;
        const auto next = [&] {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            return static_cast<uint32_t>(state >> 33);
        };
        const std::string alphabet[] = {"h", "e",  "l",  "o",        " ",   "  ",
                                        "w", "or", "ld", "\xC3\xA9", "<s>", "q"};
        for (int round = 0; round < 3000; ++round) {
            const bool raw = round % 2 == 0;
            std::string s;
            const uint32_t len = next() % 40;
            for (uint32_t i = 0; i < len; ++i) {
                if (raw)
                    s += static_cast<char>(next() & 0xFF);
                else
                    s += alphabet[next() % std::size(alphabet)];
            }
            for (const bool special : {false, true}) {
                const std::vector<TokenId> ids = t->encode(s, special);
                for (const TokenId id : ids) QVERIFY(id >= 0 && id < t->vocab_size());
                // Valid text comes back as is when no special token adds a space prefix.
                // (Raw bytes need not: a broken lead byte can swallow part of a ▁.)
                if (!raw && !special) QCOMPARE(t->decode(ids, false), s);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestTokenizerSpm)
#include "tst_tokenizer_spm.moc"
