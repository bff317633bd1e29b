// The SQLite wrappers: typed binds and columns, errors as values, transactions, token blobs.
#include <limits>
#include <random>

#include <QTest>

#include "store/database.h"
#include "store_test_util.h"

using namespace hearth::store;

class TestStoreDatabase : public QObject {
    Q_OBJECT

    std::optional<Database> db_;

  private slots:
    void init() {
        auto db = Database::open(QStringLiteral(":memory:"), OpenMode::ReadWriteCreate);
        HEARTH_CHECK(db);
        db_ = std::move(*db);
        HEARTH_CHECK(db_->exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)"));
    }

    void typed_binds_round_trip() {
        const QString text = QStringLiteral("caf\u00e9 \U0001F600 \u4e2d\u6587 with a NUL") +
                             QChar(u'\0') + QStringLiteral("inside");
        const std::vector<std::byte> blob{std::byte{0}, std::byte{0xff}, std::byte{0x7f}};
        auto insert = db_->prepare("INSERT INTO t VALUES (?, ?, ?, ?)");
        HEARTH_CHECK(insert);
        insert->bind(1, std::numeric_limits<std::int64_t>::min())
            .bind(2, -0.125)
            .bind(3, text)
            .bind_blob(4, blob);
        HEARTH_CHECK(insert->run());
        insert->reset();
        insert->bind(1, std::optional<std::int64_t>()).bind(2, std::optional<double>(3.5));
        insert->bind(3, std::string_view("utf8 \xc3\xa9")).bind_null(4);
        HEARTH_CHECK(insert->run());

        auto select = db_->prepare("SELECT i, r, s, b FROM t ORDER BY rowid");
        HEARTH_CHECK(select);
        auto row = select->step();
        HEARTH_CHECK(row);
        QVERIFY(*row);
        QCOMPARE(select->column_int64(0), std::numeric_limits<std::int64_t>::min());
        QCOMPARE(select->column_double(1), -0.125);
        QCOMPARE(select->column_text(2), text);  // embedded NUL and non-BMP survive
        QCOMPARE(select->column_blob(3), blob);
        row = select->step();
        HEARTH_CHECK(row);
        QVERIFY(*row);
        QVERIFY(select->is_null(0));
        QCOMPARE(select->column_optional_int64(0), std::optional<std::int64_t>());
        QCOMPARE(select->column_optional_double(1), std::optional<double>(3.5));
        QCOMPARE(select->column_utf8(2), std::string("utf8 \xc3\xa9"));
        QVERIFY(select->is_null(3));
        row = select->step();
        HEARTH_CHECK(row);
        QVERIFY(!*row);
    }

    void empty_blob_is_not_null() {
        auto insert = db_->prepare("INSERT INTO t (b) VALUES (?)");
        HEARTH_CHECK(insert);
        insert->bind_blob(1, {});
        HEARTH_CHECK(insert->run());
        auto is_null = db_->query_int("SELECT b IS NULL FROM t");
        HEARTH_CHECK(is_null);
        QCOMPARE(*is_null, 0);
    }

    void bad_bind_is_reported_by_step() {
        auto insert = db_->prepare("INSERT INTO t (i) VALUES (?)");
        HEARTH_CHECK(insert);
        insert->bind(7, 1);  // there is no parameter 7
        HEARTH_CHECK_ERROR(insert->run(), "binding parameter 7");
        auto count = db_->query_int("SELECT count(*) FROM t");
        HEARTH_CHECK(count);
        QCOMPARE(*count, 0);
    }

    void sql_errors_are_values() {
        HEARTH_CHECK_ERROR(db_->prepare("SELEC nonsense"), "syntax error");
        HEARTH_CHECK(db_->exec("CREATE TABLE u (x INTEGER NOT NULL)"));
        auto insert = db_->prepare("INSERT INTO u VALUES (NULL)");
        HEARTH_CHECK(insert);
        HEARTH_CHECK_ERROR(insert->run(), "NOT NULL");
        // The statement is usable again after a failure.
        insert->reset();
        HEARTH_CHECK_ERROR(insert->run(), "NOT NULL");
    }

    void transaction_rolls_back_unless_committed() {
        {
            auto tx = Transaction::begin(*db_);
            HEARTH_CHECK(tx);
            HEARTH_CHECK(db_->exec("INSERT INTO t (i) VALUES (1)"));
        }  // dropped: rolled back
        auto count = db_->query_int("SELECT count(*) FROM t");
        HEARTH_CHECK(count);
        QCOMPARE(*count, 0);
        {
            auto tx = Transaction::begin(*db_);
            HEARTH_CHECK(tx);
            HEARTH_CHECK(db_->exec("INSERT INTO t (i) VALUES (2)"));
            HEARTH_CHECK(tx->commit());
            HEARTH_CHECK_ERROR(tx->commit(), "no longer active");
        }
        count = db_->query_int("SELECT count(*) FROM t");
        HEARTH_CHECK(count);
        QCOMPARE(*count, 1);
    }

    void transactions_do_not_nest() {
        auto outer = Transaction::begin(*db_);
        HEARTH_CHECK(outer);
        HEARTH_CHECK_ERROR(Transaction::begin(*db_), "within a transaction");
    }

    void user_version_round_trips() {
        HEARTH_CHECK(db_->set_user_version(42));
        auto v = db_->user_version();
        HEARTH_CHECK(v);
        QCOMPARE(*v, 42);
    }

    void fts5_is_compiled_in() {
        HEARTH_CHECK(db_->exec(
            "CREATE VIRTUAL TABLE f USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')"));
        HEARTH_CHECK(db_->exec("INSERT INTO f VALUES ('Caf\xc3\xa9 cr\xc3\xa8me')"));
        auto hits = db_->query_int("SELECT count(*) FROM f WHERE f MATCH 'cafe creme'");
        HEARTH_CHECK(hits);
        QCOMPARE(*hits, 1);
    }

    void token_ids_are_little_endian_int32() {
        const std::vector<std::int32_t> ids{1, 0x01020304, -1};
        const auto blob = encode_token_ids(ids);
        QCOMPARE(blob.size(), std::size_t{12});
        QCOMPARE(blob[0], std::byte{1});
        QCOMPARE(blob[3], std::byte{0});
        QCOMPARE(blob[4], std::byte{0x04});
        QCOMPARE(blob[7], std::byte{0x01});
        for (std::size_t i = 8; i < 12; ++i) QCOMPARE(blob[i], std::byte{0xff});
    }

    void token_ids_round_trip_exactly() {
        std::vector<std::int32_t> ids{std::numeric_limits<std::int32_t>::min(), -1, 0, 1,
                                      std::numeric_limits<std::int32_t>::max()};
        std::mt19937 rng(1234);
        for (int i = 0; i < 10000; ++i) ids.push_back(static_cast<std::int32_t>(rng()));
        auto insert = db_->prepare("INSERT INTO t (b) VALUES (?)");
        HEARTH_CHECK(insert);
        insert->bind_blob(1, encode_token_ids(ids));
        HEARTH_CHECK(insert->run());
        auto select = db_->prepare("SELECT b FROM t");
        HEARTH_CHECK(select);
        auto row = select->step();
        HEARTH_CHECK(row);
        QVERIFY(*row);
        auto back = decode_token_ids(select->column_blob(0));
        HEARTH_CHECK(back);
        QCOMPARE(*back, ids);
        auto empty = decode_token_ids({});
        HEARTH_CHECK(empty);
        QVERIFY(empty->empty());
    }

    void damaged_token_blob_is_an_error() {
        const std::vector<std::byte> odd(7, std::byte{1});
        HEARTH_CHECK_ERROR(decode_token_ids(odd), "damaged");
    }
};

QTEST_GUILESS_MAIN(TestStoreDatabase)
#include "tst_store_database.moc"
