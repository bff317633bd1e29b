// split_markdown (app/core/markdown_segments.h): prose and fenced code blocks, languages,
// longer fences around backticks, tildes, fences in list items, CRLF, empty blocks,
// unterminated fences; and MarkdownSplitter fed a text a character at a time (as a reply
// streams) gives what splitting each prefix from scratch gives. Prose is cut at blank lines
// only where the parts render apart as they do together.
#include <QTest>

#include "core/markdown_segments.h"

namespace {

using Kind = MarkdownSegment::Kind;

MarkdownSegment prose(const QString& text) {
    return {Kind::Text, text, QString(), false};
}
MarkdownSegment code(const QString& text, const QString& language = QString(), bool open = false) {
    return {Kind::Code, text, language, open};
}

QString describe(const std::vector<MarkdownSegment>& segments) {
    QStringList out;
    for (const MarkdownSegment& s : segments)
        out << QStringLiteral("%1[%2%3]<%4>")
                   .arg(s.kind == Kind::Code ? QStringLiteral("code") : QStringLiteral("text"),
                        s.language, s.open ? QStringLiteral(",open") : QString(), s.text);
    return out.join(QStringLiteral(" | "));
}

}  // namespace

Q_DECLARE_METATYPE(std::vector<MarkdownSegment>)

class TestMarkdownSegments : public QObject {
    Q_OBJECT

  private slots:
    void split_data() {
        QTest::addColumn<QString>("markdown");
        QTest::addColumn<std::vector<MarkdownSegment>>("expected");
        using V = std::vector<MarkdownSegment>;

        QTest::newRow("empty") << QString() << V{};
        QTest::newRow("blank") << QStringLiteral("\n  \n\t\n") << V{};
        QTest::newRow("paragraphs are blocks of their own")
            << QStringLiteral(
                   "Hello *there*.\nStill the first.\n\n\nA second paragraph.\n\n# A heading")
            << V{prose(QStringLiteral("Hello *there*.\nStill the first.")),
                 prose(QStringLiteral("A second paragraph.")),
                 prose(QStringLiteral("# A heading"))};
        QTest::newRow("a loose list stays one block")
            << QStringLiteral(
                   "Steps:\n\n1. one\n\n2. two\n\n   more of two\n\n- a\n\n* b\n\n+ c\n\nAfter.")
            << V{prose(QStringLiteral(
                     "Steps:\n\n1. one\n\n2. two\n\n   more of two\n\n- a\n\n* b\n\n+ c")),
                 prose(QStringLiteral("After."))};
        QTest::newRow("quotes and link definitions stay with what is above")
            << QStringLiteral(
                   "> a\n\n> b\n\nSee [x].\n\n[x]: https://example.org\n\n-not a list\n\n1.5 is a "
                   "number")
            << V{prose(QStringLiteral("> a\n\n> b")),
                 prose(QStringLiteral("See [x].\n\n[x]: https://example.org")),
                 prose(QStringLiteral("-not a list")), prose(QStringLiteral("1.5 is a number"))};
        QTest::newRow("prose, code, prose")
            << QStringLiteral("Try this:\n\n```python\nprint('hi')\nx = 1\n```\n\nThat's it.\n")
            << V{prose(QStringLiteral("Try this:")),
                 code(QStringLiteral("print('hi')\nx = 1"), QStringLiteral("python")),
                 prose(QStringLiteral("That's it."))};
        QTest::newRow("two blocks, no prose")
            << QStringLiteral("```c++\nint a;\n```\n```\nplain\n```")
            << V{code(QStringLiteral("int a;"), QStringLiteral("c++")),
                 code(QStringLiteral("plain"))};
        QTest::newRow("info string: first word")
            << QStringLiteral("```  rust   ignore title=\"x\"\nfn main() {}\n```")
            << V{code(QStringLiteral("fn main() {}"), QStringLiteral("rust"))};
        QTest::newRow("tildes") << QStringLiteral("~~~bash\necho ```\n~~~")
                                << V{code(QStringLiteral("echo ```"), QStringLiteral("bash"))};
        QTest::newRow("backticks inside a longer fence")
            << QStringLiteral("````markdown\n```js\nlet a = `x`;\n```\n````\nafter")
            << V{code(QStringLiteral("```js\nlet a = `x`;\n```"), QStringLiteral("markdown")),
                 prose(QStringLiteral("after"))};
        QTest::newRow("a shorter or other fence does not close")
            << QStringLiteral("````\n```\n~~~~\n`````") << V{code(QStringLiteral("```\n~~~~"))};
        QTest::newRow("a closing fence has no info string")
            << QStringLiteral("```\na\n``` not a close\n```")
            << V{code(QStringLiteral("a\n``` not a close"))};
        QTest::newRow("inline triple backticks are prose")
            << QStringLiteral("Use ```x``` here.\n```y``` too")
            << V{prose(QStringLiteral("Use ```x``` here.\n```y``` too"))};
        QTest::newRow("two backticks are prose")
            << QStringLiteral("``\ncode\n``") << V{prose(QStringLiteral("``\ncode\n``"))};
        QTest::newRow("fence in a list item")
            << QStringLiteral(
                   "1. Install:\n\n   ```sh\n   pip install x\n     --user\n   ```\n2. Run it.")
            << V{prose(QStringLiteral("1. Install:")),
                 code(QStringLiteral("pip install x\n  --user"), QStringLiteral("sh")),
                 prose(QStringLiteral("2. Run it."))};
        QTest::newRow("less indented code lines keep their text")
            << QStringLiteral("  ```\nleft\n   right\n  ```")
            << V{code(QStringLiteral("left\n right"))};
        QTest::newRow("CRLF")
            << QStringLiteral("Intro\r\n\r\n```js\r\nlet a = 1;\r\nlet b = 2;\r\n```\r\nOutro\r\n")
            << V{prose(QStringLiteral("Intro")),
                 code(QStringLiteral("let a = 1;\nlet b = 2;"), QStringLiteral("js")),
                 prose(QStringLiteral("Outro"))};
        QTest::newRow("empty block")
            << QStringLiteral("a\n```\n```\nb")
            << V{prose(QStringLiteral("a")), code(QString()), prose(QStringLiteral("b"))};
        QTest::newRow("blank lines inside code stay")
            << QStringLiteral("```\n\nx\n\n\n```") << V{code(QStringLiteral("\nx\n\n"))};
        QTest::newRow("unterminated")
            << QStringLiteral("Here:\n```python\ndef f():\n    return 1")
            << V{prose(QStringLiteral("Here:")),
                 code(QStringLiteral("def f():\n    return 1"), QStringLiteral("python"), true)};
        QTest::newRow("just opened")
            << QStringLiteral("Here:\n```py")
            << V{prose(QStringLiteral("Here:")), code(QString(), QStringLiteral("py"), true)};
        QTest::newRow("opened, line break")
            << QStringLiteral("```py\n") << V{code(QString(), QStringLiteral("py"), true)};
        QTest::newRow("indented code stays prose")
            << QStringLiteral("Text\n\n    int x;\n    int y;")
            << V{prose(QStringLiteral("Text\n\n    int x;\n    int y;"))};
    }

    void split() {
        QFETCH(QString, markdown);
        QFETCH(std::vector<MarkdownSegment>, expected);
        const std::vector<MarkdownSegment> got = split_markdown(markdown);
        QVERIFY2(got == expected,
                 qPrintable(describe(got) + QStringLiteral("\nexpected ") + describe(expected)));
    }

    // Streaming: every prefix, fed in order, splits as it does from scratch.
    void streamingMatchesAFullSplit() {
        const QString reply = QStringLiteral(
            "Sure! Here is how:\r\n\r\n1. First:\n   ```bash\n   echo `date`\n   ```\n2. Then "
            "~~~\n\n"
            "````md\n```js\nx\n```\n````\n\nInline ```no``` fence.\n\n~~~\n~~\n~~~~\n"
            "```python\ndef f():\n    return '```'\n``\n```\nDone.\n\nNext paragraph.\n\n10. "
            "ten\n\n10 is more\n\n> q\n\n```rust\nfn main() {");
        MarkdownSplitter splitter;
        for (qsizetype n = 0; n <= reply.size(); ++n) {
            const QString prefix = reply.left(n);
            splitter.update(prefix);
            const std::vector<MarkdownSegment> full = split_markdown(prefix);
            QVERIFY2(splitter.segments() == full,
                     qPrintable(QStringLiteral("at %1: %2\nexpected %3")
                                    .arg(n)
                                    .arg(describe(splitter.segments()), describe(full))));
        }
        const auto& last = splitter.segments();
        QCOMPARE(last.back().kind, Kind::Code);
        QCOMPARE(last.back().language, QStringLiteral("rust"));
        QVERIFY(last.back().open);
        // A text that is not an extension is split from scratch.
        QVERIFY(splitter.update(QStringLiteral("```\nnew\n```")));
        QVERIFY(splitter.segments() == std::vector<MarkdownSegment>{code(QStringLiteral("new"))});
        QVERIFY(!splitter.update(QStringLiteral("```\nnew\n```")));
        // Appended after a closing fence that was the last line: not a fence any more.
        QVERIFY(splitter.update(QStringLiteral("```\nnew\n```x")));
        QVERIFY(splitter.segments() ==
                std::vector<MarkdownSegment>{code(QStringLiteral("new\n```x"), QString(), true)});
    }
};

QTEST_APPLESS_MAIN(TestMarkdownSegments)
#include "tst_markdown_segments.moc"
