// The pre-tokenizer regex sequences (PCRE2) on their own: where each family splits text,
// for several scripts, whitespace and digits, and on very long runs.
#include <QTest>

#include "tokenizer/pretokenizer.h"

using hearth::tok::PreTokenizer;

namespace {

QStringList split(const std::string& pre, const std::string& text) {
    const auto* spec = hearth::tok::find_pre_tokenizer(pre);
    if (!spec) qFatal("no spec for %s", pre.c_str());
    auto pt = PreTokenizer::create(*spec);
    if (!pt) qFatal("%s", pt.message().c_str());
    QStringList out;
    for (const auto& p : pt->split(text))
        out << QString::fromStdString(text.substr(p.begin, p.end - p.begin));
    return out;
}

}  // namespace

class TestPreTokenizer : public QObject {
    Q_OBJECT

  private slots:
    void splits_data() {
        QTest::addColumn<QString>("pre");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("pieces");
        const auto row = [](const char* pre, const char* text, QStringList pieces) {
            QString name = QString::fromUtf8(text);  // control characters garble the log
            name.replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t");
            QTest::addRow("%s: %s", pre, qPrintable(name))
                << pre << QString::fromUtf8(text) << pieces;
        };
        // smollm: digits are isolated before the GPT-2 regex runs, so a space cannot
        // join the number that follows it.
        row("smollm", "Hello world", {"Hello", " world"});
        row("smollm", "abc 123", {"abc", " ", "1", "2", "3"});
        row("smollm", "x  y", {"x", " ", " y"});
        row("smollm", "don't", {"don", "'t"});
        row("smollm", "I'LL", {"I", "'", "LL"});  // GPT-2 contractions are case-sensitive
        row("smollm", "a\n\nb", {"a", "\n", "\n", "b"});
        row("smollm", "  hi", {" ", " hi"});
        row("smollm", "hi  ", {"hi", "  "});
        row("smollm", "\uff13\u00bd\u2163", {"\uff13", "\u00bd", "\u2163"});  // all \p{N}
        // Devanagari vowel signs and virama are marks, not letters: they split words.
        row("smollm", "\u0939\u093f\u0928\u094d\u0926\u0940",
            {"\u0939", "\u093f", "\u0928", "\u094d", "\u0926", "\u0940"});
        row("smollm", "\u4e2d\u6587\u5b57 \u03a9mega", {"\u4e2d\u6587\u5b57", " \u03a9mega"});
        row("smollm", "\U0001f600! ok", {"\U0001f600!", " ok"});
        row("smollm", "a\u3000b", {"a", "\u3000", "b"});  // U+3000 is whitespace
        // U+180E is not whitespace for llama.cpp (PCRE2's \s would say it is).
        row("smollm", "a\u180e\u180e!", {"a", "\u180e\u180e!"});
        // llama3: case-insensitive contractions, digit triples, newline runs.
        row("llama3", "12345", {"123", "45"});
        row("llama3", "1234567", {"123", "456", "7"});
        row("llama3", "abc 123", {"abc", " ", "123"});
        row("llama3", "I'LL don't", {"I", "'LL", " don", "'t"});
        row("llama3", "\thello", {"\thello"});
        row("llama3", "hello\n\nworld", {"hello", "\n\n", "world"});
        row("llama3", "a  \n  b", {"a", "  \n", " ", " b"});
        row("llama3", "x!!\n\ny", {"x", "!!\n\n", "y"});
        row("llama3", "hi  ", {"hi", "  "});
        row("llama3", "\u0645\u0631\u062d\u0628\u0627 \u0628\u0643",
            {"\u0645\u0631\u062d\u0628\u0627", " \u0628\u0643"});
        // qwen2: the llama3 regex with single digits.
        row("qwen2", "12345", {"1", "2", "3", "4", "5"});
        row("qwen2", "abc 123", {"abc", " ", "1", "2", "3"});
        row("qwen2", "I'M", {"I", "'M"});
        // gpt-2: one regex.
        row("gpt-2", "abc 12345", {"abc", " 12345"});
        row("gpt-2", "I'LL", {"I", "'", "LL"});
        row("gpt-2", "a\r\n\r\nb", {"a", "\r\n\r", "\n", "b"});
        // default: punctuation runs first (so "'" leaves "don't"), digit triples last.
        row("default", "Hello, world!", {"Hello", ",", " world", "!"});
        row("default", "abc 12345", {"abc", " ", "123", "45"});
        row("default", "don't", {"don", "'", "t"});
        row("default", "a+=b", {"a", "+=", "b"});
    }
    void splits() {
        QFETCH(QString, pre);
        QFETCH(QString, text);
        QFETCH(QStringList, pieces);
        QCOMPARE(split(pre.toStdString(), text.toStdString()), pieces);
    }

    void whitespaceClassRewrite() {
        const std::string ws = hearth::tok::expand_whitespace_classes(R"(\s)");
        QVERIFY(ws.starts_with("[") && ws.ends_with("]"));
        QVERIFY(ws.find(R"(\x{3000})") != std::string::npos);
        QVERIFY(ws.find("180E") == std::string::npos);
        const std::string body = ws.substr(1, ws.size() - 2);
        QCOMPARE(
            hearth::tok::expand_whitespace_classes(R"( ?[^\s\p{L}]+|\s+(?!\S)|\[\s)"),
            " ?[^" + body + R"(\p{L}]+|[)" + body + "]+(?![^" + body + R"(])|\[[)" + body + "]");
    }

    void longRuns() {
        // Long runs must neither overflow the JIT stack nor lose text.
        for (const std::string pre : {"smollm", "llama3", "qwen2", "gpt-2", "default"}) {
            for (const std::string unit : {" ", "a", "!", "\n", "1", "\xe4\xb8\xad", " a"}) {
                std::string text;
                for (int i = 0; i < 100000; ++i) text += unit;
                text += "x";
                const auto* spec = hearth::tok::find_pre_tokenizer(pre);
                auto pt = PreTokenizer::create(*spec);
                QVERIFY(pt.ok());
                const auto pieces = pt->split(text);
                QVERIFY(!pieces.empty());
                size_t at = 0;
                for (const auto& p : pieces) {
                    QCOMPARE(p.begin, at);
                    QVERIFY(p.end > p.begin);
                    at = p.end;
                }
                QCOMPARE(at, text.size());
            }
        }
    }

    void invalidUtf8StaysInGaps() {
        // Callers pass sanitized text, but the regexes must cope with anything.
        const std::string text = "ab\xff\xfe cd \xc3 12";
        auto pt = PreTokenizer::create(*hearth::tok::find_pre_tokenizer("llama3"));
        QVERIFY(pt.ok());
        size_t at = 0;
        for (const auto& p : pt->split(text)) {
            QCOMPARE(p.begin, at);
            at = p.end;
        }
        QCOMPARE(at, text.size());
    }
};

QTEST_APPLESS_MAIN(TestPreTokenizer)
#include "tst_pretokenizer.moc"
