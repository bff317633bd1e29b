// Full-text search: query building (never a syntax error), matching, snippets, highlights,
// filters, and the index following edits and deletions.
#include <random>

#include <QTest>

#include "store/search.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

QStringList highlighted(const SearchHit& hit) {
    QStringList out;
    for (const auto& [start, length] : hit.highlights) out << hit.snippet.mid(start, length);
    return out;
}

}  // namespace

class TestStoreSearch : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    Id first_ = 0, second_ = 0;
    std::map<QString, Id> ids_;

    Id add(Id conversation, const QString& text) {
        auto m = store_->append_message(conversation, draft(Role::User, text));
        return m ? m->id : 0;
    }

  private slots:
    void initTestCase() {
        auto store = Store::open(dir_.filePath(QStringLiteral("search.sqlite3")));
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
        auto a = store_->create_conversation(titled(QStringLiteral("Animals")));
        HEARTH_CHECK(a);
        auto b = store_->create_conversation(titled(QStringLiteral("Travel")));
        HEARTH_CHECK(b);
        first_ = a->id;
        second_ = b->id;
        ids_["fox"] = add(first_, QStringLiteral("The quick brown fox jumps over the lazy dog"));
        ids_["news"] = add(first_, QStringLiteral("Fox news is not about foxes, fox fans say"));
        ids_["cafe"] =
            add(second_, QStringLiteral("A caf\u00e9 au lait in Paris, then the Louvre"));
        ids_["token"] = add(
            second_, QStringLiteral("Tokenizers split text into tokens before the model sees it"));
        QString long_text;
        for (int i = 0; i < 200; ++i) long_text += QStringLiteral("filler%1 ").arg(i);
        long_text += QStringLiteral("needle ");
        for (int i = 0; i < 200; ++i) long_text += QStringLiteral("padding%1 ").arg(i);
        ids_["long"] = add(second_, long_text);
        for (const auto& [name, id] : ids_) QVERIFY2(id != 0, qPrintable(name));
    }
    void cleanupTestCase() { store_.reset(); }

    void query_building_data() {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("fts");
        QTest::addRow("words") << "hello world"
                               << "\"hello\" \"world\"";
        QTest::addRow("phrase") << "\"exact phrase\" more"
                                << "\"exact phrase\" \"more\"";
        QTest::addRow("prefix") << "pre*"
                                << "\"pre\"*";
        QTest::addRow("phrase prefix") << "say \"hi th\"*"
                                       << "\"say\" \"hi th\"*";
        QTest::addRow("operators are words") << "AND OR NOT"
                                             << "\"AND\" \"OR\" \"NOT\"";
        QTest::addRow("NEAR is a word") << "NEAR(a b)"
                                        << "\"NEAR(a\" \"b)\"";
        QTest::addRow("column filter is a word") << "content:x"
                                                 << "\"content:x\"";
        QTest::addRow("quote splits") << "a\"b"
                                      << "\"a\" \"b\"";
        QTest::addRow("unterminated") << "\"open phrase"
                                      << "\"open phrase\"";
        QTest::addRow("punctuation only") << "--- *** () \"\""
                                          << "";
        QTest::addRow("star inside") << "a*b"
                                     << "\"ab\"";
        QTest::addRow("one-letter prefix is a word") << "a* \"x y\"*"
                                                     << "\"a\" \"x y\"";
        QTest::addRow("two-letter prefix") << "ab*"
                                           << "\"ab\"*";
        QTest::addRow("spaces") << "  \t "
                                << "";
    }
    void query_building() {
        QFETCH(QString, typed);
        QFETCH(QString, fts);
        QCOMPARE(to_fts_query(typed), fts);
    }

    void hostile_queries_never_fail() {
        QStringList queries{QStringLiteral("\""),
                            QStringLiteral("*"),
                            QStringLiteral("^"),
                            QStringLiteral("a OR"),
                            QStringLiteral("NOT"),
                            QStringLiteral("(("),
                            QStringLiteral("'; DROP TABLE messages; --"),
                            QStringLiteral("\u0000"),
                            QString(QChar(kHighlightOpen))};
        std::mt19937 rng(7);
        const QString alphabet = QStringLiteral("ab \"*()^:+-'\\\u00e9\u4e2dOR NEAR{}");
        for (int i = 0; i < 300; ++i) {
            QString q;
            for (int j = 0, n = static_cast<int>(rng() % 12); j < n; ++j)
                q += alphabet[static_cast<qsizetype>(rng() %
                                                     static_cast<unsigned>(alphabet.size()))];
            queries << q;
        }
        for (const QString& q : queries) {
            auto hits = store_->search(q);
            QVERIFY2(hits.ok(),
                     qPrintable(q + QStringLiteral(": ") +
                                QString::fromStdString(hits.ok() ? "" : hits.message())));
        }
        auto count = store_->database().query_int("SELECT count(*) FROM messages");
        HEARTH_CHECK(count);
        QCOMPARE(*count, 5);
    }

    void words_match_whole_tokens_with_highlights() {
        auto hits = store_->search(QStringLiteral("fox"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{2});
        // Two occurrences rank above one (bm25).
        QCOMPARE(hits->at(0).message_id, ids_["news"]);
        QCOMPARE(highlighted(hits->at(0)),
                 (QStringList{QStringLiteral("Fox"), QStringLiteral("fox")}));
        QCOMPARE(hits->at(1).message_id, ids_["fox"]);
        QCOMPARE(hits->at(1).conversation_title, QStringLiteral("Animals"));
        QCOMPARE(hits->at(1).snippet,
                 QStringLiteral("The quick brown fox jumps over the lazy dog"));
        QVERIFY(hits->at(0).score <= hits->at(1).score);
        QCOMPARE(mark_highlights(hits->at(1).snippet, hits->at(1).highlights, QStringLiteral("<b>"),
                                 QStringLiteral("</b>")),
                 QStringLiteral("The quick brown <b>fox</b> jumps over the lazy dog"));
    }

    void accents_and_case_fold() {
        auto hits = store_->search(QStringLiteral("CAFE"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        QCOMPARE(highlighted(hits->front()), QStringList{QStringLiteral("caf\u00e9")});
    }

    void phrases_prefixes_and_all_terms() {
        auto hits = store_->search(QStringLiteral("\"lazy dog\""));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        hits = store_->search(QStringLiteral("\"dog lazy\""));
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        hits = store_->search(QStringLiteral("token*"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        QCOMPARE(highlighted(hits->front()),
                 (QStringList{QStringLiteral("Tokenizers"), QStringLiteral("tokens")}));
        hits = store_->search(QStringLiteral("fox paris"));
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        hits = store_->search(QStringLiteral("the"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{3});
    }

    void very_common_queries_list_the_newest_first() {
        SearchOptions options;
        options.rank_at_most = 2;  // "the" matches 3 messages: more than are ranked
        auto hits = store_->search(QStringLiteral("the"), options);
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{3});
        QCOMPARE(hits->at(0).message_id, ids_["token"]);
        QCOMPARE(hits->at(1).message_id, ids_["cafe"]);
        QCOMPARE(hits->at(2).message_id, ids_["fox"]);
        for (const SearchHit& h : *hits) {
            QCOMPARE(h.score, 0.0);
            QVERIFY(!h.highlights.empty());
            QCOMPARE(highlighted(h).front().toLower(), QStringLiteral("the"));
        }
        options.rank_at_most = 3;  // now all are ranked: best (lowest bm25) first
        hits = store_->search(QStringLiteral("the"), options);
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{3});
        for (std::size_t i = 0; i < hits->size(); ++i) {
            QVERIFY(hits->at(i).score < 0);
            if (i > 0) QVERIFY(hits->at(i - 1).score <= hits->at(i).score);
        }
    }

    void long_messages_get_a_short_snippet() {
        auto hits = store_->search(QStringLiteral("needle"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        const SearchHit& hit = hits->front();
        QVERIFY(hit.snippet.size() < 300);
        QVERIFY(hit.snippet.startsWith(QChar(u'\u2026')));
        QVERIFY(hit.snippet.endsWith(QChar(u'\u2026')));
        QCOMPARE(highlighted(hit), QStringList{QStringLiteral("needle")});
    }

    void filters_and_limits() {
        SearchOptions options;
        options.conversation_id = second_;
        auto hits = store_->search(QStringLiteral("the"), options);
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{2});
        for (const SearchHit& h : *hits) QCOMPARE(h.conversation_id, second_);
        SearchOptions limited;
        limited.limit = 1;
        hits = store_->search(QStringLiteral("the"), limited);
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        HEARTH_CHECK(store_->set_archived(first_, true));
        SearchOptions active_only;
        active_only.include_archived = false;
        hits = store_->search(QStringLiteral("fox"), active_only);
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        HEARTH_CHECK(store_->set_archived(first_, false));
    }

    void the_index_follows_changes() {
        auto r = store_->begin_reply(first_, std::nullopt, {});
        HEARTH_CHECK(r);
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("ephemeral wombat"), {}));
        HEARTH_CHECK(store_->flush_replies(true));
        auto hits = store_->search(QStringLiteral("wombat"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("settled platypus"), {}));
        HEARTH_CHECK(store_->finish_reply(*r, {}));
        hits = store_->search(QStringLiteral("wombat"));
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        hits = store_->search(QStringLiteral("platypus"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        HEARTH_CHECK(store_->delete_message(*r));
        hits = store_->search(QStringLiteral("platypus"));
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        auto check = store_->database().query_text(
            "SELECT 'ok' WHERE (SELECT count(*) FROM messages_fts) >= 0");
        HEARTH_CHECK(check);
        // FTS5's own consistency check against the messages table.
        HEARTH_CHECK(store_->database().exec(
            "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"));
    }

    void markers_in_message_text_are_harmless() {
        const QString odd = QStringLiteral("marker ") + QChar(kHighlightClose) +
                            QStringLiteral(" then ") + QChar(kHighlightOpen) +
                            QStringLiteral(" quokka");
        HEARTH_CHECK(store_->append_message(second_, draft(Role::User, odd)));
        auto hits = store_->search(QStringLiteral("quokka"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
        for (const auto& [start, length] : hits->front().highlights) {
            QVERIFY(start >= 0);
            QVERIFY(start + length <= hits->front().snippet.size());
        }
    }
};

QTEST_GUILESS_MAIN(TestStoreSearch)
#include "tst_store_search.moc"
