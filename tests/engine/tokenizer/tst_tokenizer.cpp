// The byte-level BPE tokenizer on a synthetic vocabulary (no model needed): the byte
// alphabet, merge order, special-token splitting, decoding, malformed UTF-8, metadata
// errors and concurrent use.
#include <QTest>

#include <thread>

#include "synthetic_vocab.h"
#include "tokenizer/tokenizer.h"

using hearth::TokenAttr;
using hearth::TokenId;
using hearth::Tokenizer;
using hearth::test::byte_char;
using hearth::test::byte_level;
using hearth::test::SyntheticVocab;

namespace {

using Texts = std::vector<std::string>;

// Control tokens 0-2, a user-defined one, the 256 byte characters, then merge results.
SyntheticVocab bpe_vocab(const std::string& pre = "gpt-2") {
    SyntheticVocab v;
    v.pre = pre;
    v.add("<|endoftext|>", 3);
    v.add("<|im_start|>", 3);
    v.add("<|im_end|>", 3);
    v.add("<tool>", 4);
    v.add("AB", 4);
    v.add("BCD", 4);
    for (int b = 0; b < 256; ++b) v.add(byte_char(static_cast<unsigned char>(b)));
    // Ranks in this order: "ll" beats "he", which beats "lo".
    v.add_merge("l", "l");
    v.add_merge("h", "e");
    v.add_merge("he", "ll");
    v.add_merge("hell", "o");
    v.add_merge("l", "o");
    v.add_merge("a", "a");
    v.add_merge(byte_char(' '), "hello");
    v.ids = {{"tokenizer.ggml.eos_token_id", 0}, {"tokenizer.ggml.bos_token_id", 1}};
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

// One token per byte of s (the vocabulary has no merges for these characters).
Texts per_byte(const std::string& s) {
    Texts out;
    for (const char c : s) out.push_back(byte_char(static_cast<unsigned char>(c)));
    return out;
}

Texts concat(std::initializer_list<Texts> parts) {
    Texts out;
    for (const Texts& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

QString show(const Texts& t) {
    QStringList l;
    for (const auto& s : t) l << QString::fromStdString(s);
    return "[" + l.join("|") + "]";
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

  private slots:
    void byteAlphabet() {
        // Fixed points of GPT-2's table, as every byte-level vocabulary spells them.
        QCOMPARE(byte_char(' '), std::string("\xC4\xA0"));   // Ġ U+0120
        QCOMPARE(byte_char('\n'), std::string("\xC4\x8A"));  // Ċ U+010A
        QCOMPARE(byte_char(0x00), std::string("\xC4\x80"));  // Ā U+0100
        QCOMPARE(byte_char(0x7F), std::string("\xC4\xA1"));  // ġ U+0121
        QCOMPARE(byte_char(0xAD), std::string("\xC5\x83"));  // Ń U+0143
        QCOMPARE(byte_char('a'), std::string("a"));
        auto t = load(bpe_vocab());
        for (int b = 0; b < 0x80; ++b) {
            const std::string s(1, static_cast<char>(b));
            QCOMPARE(texts_of(*t, t->encode(s, false)),
                     Texts{byte_char(static_cast<unsigned char>(b))});
            QCOMPARE(t->decode(t->encode(s, false), false), s);
        }
        // Multi-byte characters split into their bytes when no merge joins them.
        QCOMPARE(texts_of(*t, t->encode("\xC2\xAD", false)), per_byte("\xC2\xAD"));
        QCOMPARE(texts_of(*t, t->encode("\xE4\xB8\xAD", false)), per_byte("\xE4\xB8\xAD"));
    }

    void mergesByRank_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("full word") << "hello" << QStringList{"hello"};
        QTest::newRow("ll before lo") << "hell" << QStringList{"hell"};
        QTest::newRow("lo when no ll") << "lol" << QStringList{"lo", "l"};
        QTest::newRow("leftmost on ties") << "aaa" << QStringList{"aa", "a"};
        QTest::newRow("pairs") << "aaaa" << QStringList{"aa", "aa"};
        QTest::newRow("space joins word") << " hello" << QStringList{"\u0120hello"};
        QTest::newRow("two words") << "hello hello" << QStringList{"hello", "\u0120hello"};
        QTest::newRow("no merge across pieces") << "he's" << QStringList{"he", "'s"};
    }
    void mergesByRank() {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        SyntheticVocab v = bpe_vocab();
        v.add("'s");
        v.add_merge("'", "s");
        auto t = load(v);
        Texts want;
        for (const QString& e : expected) want.push_back(e.toStdString());
        const Texts got = texts_of(*t, t->encode(text.toStdString(), false));
        QVERIFY2(got == want, qPrintable(show(got) + " != " + show(want)));
    }

    void ignoreMergesForWholeTokens() {
        SyntheticVocab v = bpe_vocab("llama3");
        v.add("xyz");  // reachable by no merge
        auto llama3 = load(v);
        QCOMPARE(texts_of(*llama3, llama3->encode("xyz", false)), Texts{"xyz"});
        v.pre = "gpt-2";
        auto gpt2 = load(v);
        QCOMPARE(texts_of(*gpt2, gpt2->encode("xyz", false)), per_byte("xyz"));
    }

    void specialTokens_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("parse_special");
        QTest::addColumn<QStringList>("expected");  // "*x": one token per byte of x
        QTest::newRow("control parsed") << "<|im_start|>hi<|im_end|>" << true
                                        << QStringList{"<|im_start|>", "*hi", "<|im_end|>"};
        QTest::newRow("control as text")
            << "<|im_start|>hi" << false << QStringList{"*<|im_start|>hi"};
        QTest::newRow("user-defined always")
            << "<tool>x<tool>" << false << QStringList{"<tool>", "*x", "<tool>"};
        QTest::newRow("adjacent") << "<|im_end|><|im_end|>" << true
                                  << QStringList{"<|im_end|>", "<|im_end|>"};
        QTest::newRow("partial") << "<|im_end|<|im_end" << true
                                 << QStringList{"*<|im_end|<|im_end"};
        QTest::newRow("inside partial")
            << "<<|im_end|>>" << true << QStringList{"*<", "<|im_end|>", "*>"};
        // The longer token is taken first even though the shorter one starts earlier.
        QTest::newRow("longest first") << "ABCD" << false << QStringList{"*A", "BCD"};
        QTest::newRow("repeated") << "ABAB" << false << QStringList{"AB", "AB"};
    }
    void specialTokens() {
        QFETCH(QString, text);
        QFETCH(bool, parse_special);
        QFETCH(QStringList, expected);
        auto t = load(bpe_vocab());
        Texts want;
        for (const QString& e : expected) {
            const std::string s = e.toStdString();
            if (s.size() > 1 && s[0] == '*')
                want = concat({want, per_byte(s.substr(1))});
            else
                want.push_back(s);
        }
        const Texts got = texts_of(*t, t->encode(text.toStdString(), parse_special));
        QVERIFY2(got == want, qPrintable(show(got) + " != " + show(want)));
        // Decoding gives the text back when the special tokens are rendered.
        QCOMPARE(t->decode(t->encode(text.toStdString(), parse_special), true), text.toStdString());
    }

    void renderSpecial() {
        auto t = load(bpe_vocab());
        const std::vector<TokenId> ids = t->encode("<|im_start|>hi<tool><|im_end|>", true);
        QCOMPARE(t->decode(ids, true), std::string("<|im_start|>hi<tool><|im_end|>"));
        QCOMPARE(t->decode(ids, false), std::string("hi<tool>"));  // user-defined is text
        QCOMPARE(t->token_to_piece(ids.front(), false), std::string());
        QCOMPARE(t->token_to_piece(ids.front(), true), std::string("<|im_start|>"));
        QCOMPARE(t->token_to_piece(t->find_token(byte_char(' ')), false), std::string(" "));
    }

    void cleanSpaces() {
        const std::string text =
            "a , b . c ! d ? it 's i 'm we 're they 've don 't I 'll he 'd x ' y";
        // gpt-2 asks for llama.cpp's clean-up; smollm does not.
        auto gpt2 = load(bpe_vocab("gpt-2"));
        QCOMPARE(gpt2->decode(gpt2->encode(text, false), false),
                 std::string("a, b. c! d? it's i'm we're they've don 't I 'll he 'd x'y"));
        auto smollm = load(bpe_vocab("smollm"));
        QCOMPARE(smollm->decode(smollm->encode(text, false), false), text);
    }

    void malformedUtf8_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QByteArray>("as_llama_cpp_reads_it");
        const QByteArray fffd("\xEF\xBF\xBD");
        QTest::newRow("bad byte") << QByteArray(
                                         "a\xFF"
                                         "b")
                                  << "a" + fffd + "b";
        QTest::newRow("truncated") << QByteArray("\xE2\x82") << fffd + fffd;
        QTest::newRow("truncated then ascii") << QByteArray(
                                                     "\xE2\x82"
                                                     "a")
                                              << fffd + fffd + "a";
        QTest::newRow("stray continuation") << QByteArray("\x80\xBF") << fffd + fffd;
        QTest::newRow("overlong nul") << QByteArray("\xC0\x80", 2) << QByteArray("\0", 1);
        QTest::newRow("overlong slash") << QByteArray("\xE0\x80\xAF") << QByteArray("/");
        QTest::newRow("surrogate") << QByteArray("\xED\xA0\x80") << QByteArray("\xED\xA0\x80");
        QTest::newRow("beyond U+10FFFF")
            << QByteArray("\xF5\x80\x80\x80") << fffd + fffd + fffd + fffd;
        QTest::newRow("5-byte form")
            << QByteArray("\xF8\x88\x80\x80\x80") << fffd + fffd + fffd + fffd + fffd;
        QTest::newRow("before special") << QByteArray("\xFF<|im_end|>") << fffd + "<|im_end|>";
    }
    void malformedUtf8() {
        QFETCH(QByteArray, raw);
        QFETCH(QByteArray, as_llama_cpp_reads_it);
        auto t = load(bpe_vocab("smollm"));
        const std::vector<TokenId> ids = t->encode(raw.toStdString(), true);
        const std::string expected = as_llama_cpp_reads_it.toStdString();
        // Everything but the control token is one token per byte (no merges apply).
        Texts want = per_byte(expected);
        if (expected.ends_with("<|im_end|>")) {
            want = per_byte(expected.substr(0, expected.size() - 10));
            want.push_back("<|im_end|>");
        }
        QCOMPARE(texts_of(*t, ids), want);
        QCOMPARE(t->decode(ids, true), expected);
    }

    void fuzzNeverCrashes_data() {
        QTest::addColumn<QString>("pre");
        // Families without the detokenizer clean-up, so that valid text round-trips.
        QTest::newRow("smollm") << "smollm";
        QTest::newRow("qwen2") << "qwen2";
    }
    void fuzzNeverCrashes() {
        QFETCH(QString, pre);
        auto t = load(bpe_vocab(pre.toStdString()));
        uint64_t state = 42;
        const auto next = [&] {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            return static_cast<uint32_t>(state >> 33);
        };
        const std::string alphabet[] = {
            "a", " ",        "\n",         "\r",           "'",
            "1", "\xC3\xA9", "<|im_end|>", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
            "!", "\t",       "AB"};
        for (int round = 0; round < 3000; ++round) {
            std::string s;
            const uint32_t len = next() % 40;
            for (uint32_t i = 0; i < len; ++i) {
                if (round % 2 == 0)
                    s += static_cast<char>(next() & 0xFF);  // raw bytes
                else
                    s += alphabet[next() % std::size(alphabet)];  // valid UTF-8
            }
            for (const bool special : {false, true}) {
                const std::vector<TokenId> ids = t->encode(s, special);
                for (const TokenId id : ids) QVERIFY(id >= 0 && id < t->vocab_size());
                const std::string back = t->decode(ids, true);
                if (round % 2 == 1) QCOMPARE(back, s);  // valid text round-trips exactly
                // Malformed text is read as llama.cpp reads it; that reading is stable.
                if (!special) QCOMPARE(t->encode(back, false), ids);
            }
        }
    }

    void roundTrip_data() {
        QTest::addColumn<QString>("text");
        for (const char* s :
             {"", " ", "  hello  world  ", "line\r\nbreak\n\n\ttab", "caf\u00e9 na\u00efve",
              "\u4e2d\u6587 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4",
              "\U0001f468\u200d\U0001f469\u200d\U0001f467", "don't I'LL 12345 3.14",
              "<|im_start|>user\nhi<|im_end|>"}) {
            QString name = QString::fromUtf8(s);  // control characters garble the log
            name.replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t");
            QTest::addRow("%s", qPrintable(name)) << QString::fromUtf8(s);
        }
    }
    void roundTrip() {
        QFETCH(QString, text);
        const std::string s = text.toStdString();
        for (const char* pre : {"smollm", "llama3", "qwen2", "gpt-2", "default"}) {
            auto t = load(bpe_vocab(pre));
            // (None of these strings has what the clean-up of gpt-2/llama3 removes.)
            QCOMPARE(t->decode(t->encode(s, true), true), s);
            QCOMPARE(t->decode(t->encode(s, false), false), s);
        }
    }

    void vocabularyFacts() {
        SyntheticVocab v = bpe_vocab();
        const TokenId eot = v.add("<|eot_id|>", 1);  // typed normal by a sloppy converter
        auto t = load(v);
        QCOMPARE(t->kind(), hearth::TokenizerKind::Bpe);
        QCOMPARE(t->pre_tokenizer(), std::string_view("gpt-2"));
        QCOMPARE(t->bos(), 1);
        QCOMPARE(t->eos(), 0);
        QCOMPARE(t->eot(), eot);
        QVERIFY(!t->add_bos());
        QCOMPARE(t->end_of_generation_tokens(), (std::vector<TokenId>{0, 2, eot}));
        QVERIFY(t->is_end_of_generation(2));
        QVERIFY(!t->is_end_of_generation(1));
        QCOMPARE(t->token_attr(eot), TokenAttr::Control);  // as llama.cpp overrides it
        QCOMPARE(t->token_attr(3), TokenAttr::UserDefined);
        QCOMPARE(t->find_token("<tool>"), 3);
        QCOMPARE(t->find_token("not a token"), -1);
        QCOMPARE(t->token_text(-1), std::string());
        QCOMPARE(t->token_attr(t->vocab_size()), TokenAttr::Undefined);
        QCOMPARE(t->token_to_piece(t->vocab_size(), true), std::string());
        const std::vector<TokenId> bad{-5, 99999, 7};
        QCOMPARE(t->decode(bad, true), t->token_to_piece(7, true));
    }

    void preTokenizerNames() {
        SyntheticVocab v = bpe_vocab("no-such-pre");
        QCOMPARE(load(v)->pre_tokenizer(), std::string_view("default"));  // with a warning
        v.pre.reset();
        QCOMPARE(load(v)->pre_tokenizer(), std::string_view("default"));
        v.pre = "llama-bpe";
        QCOMPARE(load(v)->pre_tokenizer(), std::string_view("llama3"));
        QVERIFY(load(v)->add_bos());  // llama3's default
    }

    void metadataErrors_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("key");
        const char* keys[] = {"tokenizer.ggml.model",        "tokenizer.ggml.model",
                              "tokenizer.ggml.tokens",       "tokenizer.ggml.token_type",
                              "tokenizer.ggml.merges",       "tokenizer.ggml.merges[",
                              "tokenizer.ggml.merges[",      "tokenizer.ggml.bos_token_id",
                              "tokenizer.ggml.eos_token_id", "tokenizer.ggml.pre",
                              "tokenizer.ggml.scores"};
        for (int i = 0; i < static_cast<int>(std::size(keys)); ++i)
            QTest::addRow("%d %s", i, keys[i]) << i << keys[i];
    }
    void metadataErrors() {
        QFETCH(int, which);
        QFETCH(QString, key);
        SyntheticVocab v = bpe_vocab();
        switch (which) {
            case 0:
                v.model.reset();
                break;
            case 1:
                v.model = "bert";
                break;
            case 2:
                v.tokens.clear();
                break;
            case 3:
                v.types.pop_back();
                break;
            case 4:
                v.merges.reset();
                break;
            case 5:
                v.merges->push_back("h zz");
                break;  // zz is no token
            case 6:
                v.merges->push_back("hello");
                break;  // not "a b"
            case 7:
                v.ids.push_back({"tokenizer.ggml.bos_token_id", 100000});
                v.ids.erase(v.ids.begin() + 1);
                break;
            case 8:
                v.ids.erase(v.ids.begin());
                v.strings.push_back({"tokenizer.ggml.eos_token_id", "2"});
                break;
            case 9:
                v.pre.reset();
                v.ids.push_back({"tokenizer.ggml.pre", 3});
                break;
            case 10:
                v.scores.pop_back();
                break;
        }
        const auto r = v.load();
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).contains(key), r.message().c_str());
    }

    void concurrentEncode() {
        auto t = load(bpe_vocab("smollm"));
        const std::string text = "<|im_start|>hello hell lol aaa 123 \xE4\xB8\xAD\xFF<|im_end|>";
        const std::vector<TokenId> expected = t->encode(text, true);
        std::vector<int> mismatches(4, 0);
        std::vector<std::thread> threads;
        for (int k = 0; k < 4; ++k) {
            threads.emplace_back([&, k] {
                for (int i = 0; i < 300; ++i)
                    if (t->encode(text, true) != expected) ++mismatches[k];
            });
        }
        for (auto& th : threads) th.join();
        QCOMPARE(mismatches, std::vector<int>(4, 0));
    }
};

QTEST_APPLESS_MAIN(TestTokenizer)
#include "tst_tokenizer.moc"
