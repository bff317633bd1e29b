// Durability for real: a child process (this binary, re-executed) writes conversations and
// streaming replies and is killed with SIGKILL at random moments. After every kill the
// database must open, pass PRAGMA integrity_check, and hold every acknowledged message
// (and every acknowledged part of a reply). Seed: HEARTH_CRASH_SEED, else fixed; printed.
#include <signal.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTest>
#include <map>
#include <random>
#include <set>

#include "common/log.h"
#include "crash_child.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

constexpr int kKills = 220;
constexpr int kKillsPerDatabase = 20;  // a fresh database now and then keeps checks cheap
constexpr std::uint64_t kDefaultSeed = 20240601;

// What the acknowledgements promise about one message.
struct Promise {
    enum class Kind { Exists, Prefix, Exact } kind = Kind::Exists;
    QByteArray hash;  // hex
    int bytes = 0;
    int tokens = 0;
};

struct Ledger {
    std::set<Id> conversations;
    std::map<Id, Promise> messages;
    std::map<char, int> counts;

    void absorb(const QByteArray& line) {
        const QList<QByteArray> f = line.split(' ');
        if (f.isEmpty() || f[0].size() != 1) return;
        const char kind = f[0][0];
        ++counts[kind];
        if (kind == 'R' || f.size() < 2) return;
        const Id id = f[1].toLongLong();
        if (kind == 'C') {
            conversations.insert(id);
            return;
        }
        Promise& p = messages[id];
        switch (kind) {
            case 'M':
            case 'F':
                p = {Promise::Kind::Exact, f.value(2), 0, 0};
                break;
            case 'P':
                // Never weaken a promise: a finished reply or a longer part stands.
                if (p.kind == Promise::Kind::Exact ||
                    (p.kind == Promise::Kind::Prefix && p.bytes >= f.value(2).toInt()))
                    break;
                p = {Promise::Kind::Prefix, f.value(4), f.value(2).toInt(), f.value(3).toInt()};
                break;
            default:  // 'B': exists, maybe still empty
                break;
        }
    }

    // An empty string when every promise holds, else what broke.
    QString broken(Store& store) const {
        std::map<Id, std::tuple<QByteArray, std::vector<std::int32_t>, QString>> rows;
        auto stmt = store.database().prepare("SELECT id, content, token_ids, state FROM messages");
        if (!stmt) return QString::fromStdString(stmt.message());
        while (true) {
            auto row = stmt->step();
            if (!row) return QString::fromStdString(row.message());
            if (!*row) break;
            auto ids = decode_token_ids(stmt->column_blob(2));
            if (!ids) return QString::fromStdString(ids.message());
            rows[stmt->column_int64(0)] = {stmt->column_text(1).toUtf8(), *ids,
                                           stmt->column_text(3)};
        }
        for (Id c : conversations)
            if (!store.conversation(c))
                return QStringLiteral("acknowledged conversation %1 is missing").arg(c);
        for (const auto& [id, promise] : messages) {
            const auto it = rows.find(id);
            if (it == rows.end())
                return QStringLiteral("acknowledged message %1 is missing").arg(id);
            const auto& [utf8, ids, state] = it->second;
            if (state == QLatin1String("streaming"))
                return QStringLiteral("message %1 is still streaming after open").arg(id);
            if (promise.kind == Promise::Kind::Exact &&
                message_hash(utf8, ids).toHex() != promise.hash)
                return QStringLiteral("message %1 differs from what was acknowledged").arg(id);
            if (promise.kind == Promise::Kind::Prefix) {
                if (utf8.size() < promise.bytes ||
                    ids.size() < static_cast<std::size_t>(promise.tokens))
                    return QStringLiteral("reply %1 lost acknowledged text (%2 of %3 bytes)")
                        .arg(id)
                        .arg(utf8.size())
                        .arg(promise.bytes);
                const std::span<const std::int32_t> head(ids.data(),
                                                         static_cast<std::size_t>(promise.tokens));
                if (message_hash(utf8.left(promise.bytes), head).toHex() != promise.hash)
                    return QStringLiteral("reply %1 does not continue its acknowledged text")
                        .arg(id);
            }
        }
        return {};
    }
};

}  // namespace

class TestStoreCrash : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    void initTestCase() { hearth::log::set_level("warn"); }

    void sigkill_at_random_moments() {
        bool custom = false;
        const std::uint64_t seed = qEnvironmentVariable("HEARTH_CRASH_SEED").toULongLong(&custom);
        const std::uint64_t base = custom ? seed : kDefaultSeed;
        qInfo("crash test seed %llu (set HEARTH_CRASH_SEED to change it)",
              static_cast<unsigned long long>(base));
        std::mt19937_64 rng(base);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HEARTH_LOG_LEVEL"), QStringLiteral("warn"));

        Ledger ledger;
        QString db;
        int during_reply = 0, during_open = 0;
        // How long the last child took from start to ready: early kills land within it,
        // however fast this machine opens a database.
        qint64 ready_ms = 30;
        for (int kill = 0; kill < kKills; ++kill) {
            if (kill % kKillsPerDatabase == 0) {
                db =
                    dir_.filePath(QStringLiteral("crash-%1.sqlite3").arg(kill / kKillsPerDatabase));
                ledger.conversations.clear();
                ledger.messages.clear();
            }
            // Every combination of API and sync setting, in turn.
            const bool async = kill % 2 == 1;
            const bool full_sync = (kill / 2) % 2 == 1;
            QProcess child;
            child.setProcessEnvironment(env);
            child.start(QCoreApplication::applicationFilePath(),
                        {QStringLiteral("--crash-child"), db,
                         QString::number(base + static_cast<std::uint64_t>(kill)),
                         async ? QStringLiteral("async") : QStringLiteral("sync"),
                         full_sync ? QStringLiteral("full") : QStringLiteral("normal")});
            QVERIFY2(child.waitForStarted(5000), qPrintable(child.errorString()));
            // Most kills land while writing (5-60 ms after it is ready); a quarter land
            // early, during start, open, migration or recovery.
            const bool early = rng() % 4 == 0;
            QByteArray out;
            QElapsedTimer clock;
            clock.start();
            if (!early) {
                while (!out.startsWith("R\n") && clock.elapsed() < 10000) {
                    child.waitForReadyRead(10);
                    out += child.readAllStandardOutput();
                    QVERIFY2(child.state() == QProcess::Running,
                             child.readAllStandardError().constData());
                }
                QVERIFY2(out.startsWith("R\n"), "the child never became ready");
                ready_ms = std::max<qint64>(clock.restart(), 2);
            }
            const qint64 delay = early ? 1 + static_cast<qint64>(rng() % ready_ms)
                                       : 5 + static_cast<qint64>(rng() % 56);
            // Keep draining the pipe, so the child never blocks on a full one.
            while (clock.elapsed() < delay) {
                child.waitForReadyRead(
                    static_cast<int>(std::max<qint64>(1, delay - clock.elapsed())));
                out += child.readAllStandardOutput();
            }
            QVERIFY2(child.state() == QProcess::Running,
                     qPrintable(QStringLiteral("the child stopped by itself: ") +
                                QString::fromLocal8Bit(child.readAllStandardError())));
            ::kill(static_cast<pid_t>(child.processId()), SIGKILL);
            QVERIFY(child.waitForFinished(5000));
            out += child.readAllStandardOutput();
            QCOMPARE(child.exitStatus(), QProcess::CrashExit);

            // Only whole lines are acknowledgements.
            const qsizetype end = out.lastIndexOf('\n');
            const QList<QByteArray> lines =
                end < 0 ? QList<QByteArray>() : out.left(end).split('\n');
            for (const QByteArray& line : lines) ledger.absorb(line);
            if (lines.isEmpty() || lines.back() == "R")
                ++during_open;
            else if (lines.back().startsWith("B ") || lines.back().startsWith("P "))
                ++during_reply;

            auto store = Store::open(db);
            QVERIFY2(
                store.ok(),
                qPrintable(QStringLiteral("kill %1: %2")
                               .arg(kill)
                               .arg(QString::fromStdString(store.ok() ? "" : store.message()))));
            auto integrity = store->integrity_check();
            HEARTH_CHECK(integrity);
            QVERIFY2(*integrity == QLatin1String("ok"),
                     qPrintable(QStringLiteral("kill %1: %2").arg(kill).arg(*integrity)));
            const QString problem = ledger.broken(*store);
            QVERIFY2(problem.isEmpty(),
                     qPrintable(QStringLiteral("kill %1 (seed %2, %3, %4): %5")
                                    .arg(kill)
                                    .arg(base)
                                    .arg(async ? "async" : "sync", full_sync ? "full" : "normal",
                                         problem)));
        }
        qInfo(
            "%d kills: %d conversations, %d messages, %d replies begun, %d parts and %d finished "
            "replies acknowledged; "
            "%d kills mid-reply, %d before any write",
            kKills, ledger.counts['C'], ledger.counts['M'], ledger.counts['B'], ledger.counts['P'],
            ledger.counts['F'], during_reply, during_open);
        // The run must have exercised what it claims to (loose bounds: a loaded machine
        // writes less in each child's few milliseconds).
        QVERIFY(ledger.counts['M'] > 50);
        QVERIFY(ledger.counts['P'] > 100);
        QVERIFY(ledger.counts['F'] > 20);
        QVERIFY(during_reply > 20);
        QVERIFY(during_open > 20);
    }
};

int main(int argc, char** argv) {
    if (argc > 1 && qstrcmp(argv[1], "--crash-child") == 0) return crash_child_main(argc, argv);
    QCoreApplication app(argc, argv);
    TestStoreCrash test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_store_crash.moc"
