// Faults and bad input: damaged or non-SQLite files (set aside, never deleted), read-only
// folders and file systems, a full disk, a busy database. Each must give a clear error
// and leave the user's data as it was.
#include <fcntl.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTest>
#include <cerrno>
#include <cstring>
#include <functional>

#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

QByteArray sha(const QString& path) {
    return QCryptographicHash::hash(read_all(path), QCryptographicHash::Sha256);
}

// A history with enough messages to span many pages.
bool make_history(const QString& path, int messages) {
    auto store = Store::open(path);
    if (!store) return false;
    auto c = store->create_conversation(titled(QStringLiteral("precious")));
    if (!c) return false;
    for (int i = 0; i < messages; ++i)
        if (!store->append_message(
                c->id, draft(Role::User, QStringLiteral("message %1 ").arg(i).repeated(40))))
            return false;
    return true;
}

// Runs `checks` in a forked child as an unprivileged user (root ignores permissions) and
// returns the lines it reported. The child does no Qt Test work; it only writes lines.
QStringList run_unprivileged(const std::function<QStringList()>& checks, QString* skip) {
    int fds[2];
    if (pipe(fds) != 0) {
        *skip = QStringLiteral("pipe() failed");
        return {};
    }
    const pid_t pid = fork();
    if (pid == 0) {
        ::close(fds[0]);
        QByteArray out;
        if (geteuid() == 0 &&
            (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
            out = "SKIP cannot drop root privileges to uid 65534\n";
        } else {
            for (const QString& line : checks()) out += line.toUtf8() + '\n';
        }
        for (qsizetype at = 0; at < out.size();) {
            const ssize_t n =
                ::write(fds[1], out.constData() + at, static_cast<std::size_t>(out.size() - at));
            if (n <= 0) break;
            at += n;
        }
        _exit(0);
    }
    ::close(fds[1]);
    QByteArray all;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) all.append(buffer, n);
    ::close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    QStringList lines = QString::fromUtf8(all).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (!lines.isEmpty() && lines.front().startsWith(QStringLiteral("SKIP "))) {
        *skip = lines.front().mid(5);
        return {};
    }
    return lines;
}

QString outcome(const hearth::Result<Store>& r) {
    return r.ok() ? QStringLiteral("opened") : QString::fromStdString(r.message());
}

// A small tmpfs mounted on `dir`, or an empty string with the reason it could not be.
QString mount_tmpfs(const QString& dir, const char* options, unsigned long flags = 0) {
    if (::mount("tmpfs", QFile::encodeName(dir).constData(), "tmpfs", flags, options) != 0)
        return QStringLiteral("cannot mount a tmpfs here (%1): needs root with CAP_SYS_ADMIN")
            .arg(QString::fromLocal8Bit(std::strerror(errno)));
    return {};
}

}  // namespace

class TestStoreFaults : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

  private slots:
    void a_non_sqlite_file_is_set_aside() {
        const QString file = path(QStringLiteral("novel/hearth.sqlite3"));
        QVERIFY(QDir().mkpath(QFileInfo(file).absolutePath()));
        const QByteArray novel = "It was a dark and stormy night; this is not a database.\n";
        QVERIFY(write_all(file, novel));
        QVERIFY(write_all(file + "-wal", "stale wal"));
        QVERIFY(write_all(file + "-shm", "stale shm"));

        auto store = Store::open(file);
        HEARTH_CHECK(store);
        const OpenReport& report = store->report();
        QVERIFY(report.created);
        QVERIFY(report.corrupt_reason.contains(QStringLiteral("not an SQLite database")));
        static const QRegularExpression kName(
            QStringLiteral("/hearth\\.sqlite3\\.corrupt-\\d{8}-\\d{6}$"));
        QVERIFY2(kName.match(report.corrupt_backup_path).hasMatch(),
                 qPrintable(report.corrupt_backup_path));
        QCOMPARE(read_all(report.corrupt_backup_path), novel);
        QCOMPARE(read_all(report.corrupt_backup_path + "-wal"), QByteArray("stale wal"));
        QCOMPARE(read_all(report.corrupt_backup_path + "-shm"), QByteArray("stale shm"));
        // A fresh, working history took its place.
        auto c = store->create_conversation(titled(QStringLiteral("new start")));
        HEARTH_CHECK(c);
        store = Store::open(file);  // reopen: no second backup
        HEARTH_CHECK(store);
        QVERIFY(store->report().corrupt_backup_path.isEmpty());
        auto list = store->conversations();
        HEARTH_CHECK(list);
        QCOMPARE(list->size(), std::size_t{1});
    }

    void damaged_pages_are_found_and_set_aside() {
        const QString file = path(QStringLiteral("damaged.sqlite3"));
        QVERIFY(make_history(file, 200));
        QByteArray bytes = read_all(file);
        QVERIFY(bytes.size() > 40 * 4096);
        // Scribble over a run of b-tree pages, as a failing disk or a stray write would.
        for (qsizetype i = 10 * 4096; i < 30 * 4096; ++i)
            bytes[i] = static_cast<char>((i * 131) & 0xff);
        QVERIFY(write_all(file, bytes));
        const QByteArray damaged = sha(file);

        OpenOptions fail;
        fail.on_corrupt = OpenOptions::OnCorrupt::Fail;
        HEARTH_CHECK_ERROR(Store::open(file, fail), "left untouched");
        QCOMPARE(sha(file), damaged);
        OpenOptions read_only;
        read_only.read_only = true;
        HEARTH_CHECK_ERROR(Store::open(file, read_only), "damaged");
        QCOMPARE(sha(file), damaged);

        auto store = Store::open(file);
        HEARTH_CHECK(store);
        QVERIFY(!store->report().corrupt_backup_path.isEmpty());
        QCOMPARE(sha(store->report().corrupt_backup_path), damaged);
        auto integrity = store->integrity_check();
        HEARTH_CHECK(integrity);
        QCOMPARE(*integrity, QStringLiteral("ok"));
    }

    void backups_never_overwrite_each_other() {
        const QString file = path(QStringLiteral("twice.sqlite3"));
        QStringList backups;
        for (int i = 0; i < 3; ++i) {
            QVERIFY(write_all(file, QByteArray("junk number ") + QByteArray::number(i)));
            auto store = Store::open(file);
            HEARTH_CHECK(store);
            backups << store->report().corrupt_backup_path;
        }
        backups.removeDuplicates();
        QCOMPARE(backups.size(), 3);  // same second: -2, -3 suffixes
        for (int i = 0; i < 3; ++i)
            QCOMPARE(read_all(backups[i]), QByteArray("junk number ") + QByteArray::number(i));
    }

    void read_only_folder() {
        // Permissions, exercised as an unprivileged user: as root this test forks a child
        // that drops to uid 65534, since root ignores file permissions.
        QVERIFY(QFile::setPermissions(
            dir_.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                             QFileDevice::ReadGroup | QFileDevice::ExeGroup |
                             QFileDevice::ReadOther | QFileDevice::ExeOther));
        const QString ro = path(QStringLiteral("ro"));
        QVERIFY(QDir().mkpath(ro));
        const QString existing = ro + QStringLiteral("/existing.sqlite3");
        QVERIFY(make_history(existing, 3));
        const QString junk = ro + QStringLiteral("/junk.sqlite3");
        QVERIFY(write_all(junk, "not a database"));
        const QByteArray existing_sha = sha(existing);
        QVERIFY(QFile::setPermissions(ro, QFileDevice::ReadOwner | QFileDevice::ExeOwner |
                                              QFileDevice::ReadGroup | QFileDevice::ExeGroup |
                                              QFileDevice::ReadOther | QFileDevice::ExeOther));
        QString skip;
        const QStringList lines = run_unprivileged(
            [&] {
                if (::access(QFile::encodeName(ro).constData(), W_OK) == 0)
                    return QStringList{QStringLiteral("SETUP the folder is still writable")};
                OpenOptions read_only;
                read_only.read_only = true;
                return QStringList{outcome(Store::open(ro + QStringLiteral("/new.sqlite3"))),
                                   outcome(Store::open(existing)), outcome(Store::open(junk)),
                                   outcome(Store::open(existing, read_only))};
            },
            &skip);
        QVERIFY(QFile::setPermissions(
            ro, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        if (!skip.isEmpty()) QSKIP(qPrintable(skip));
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[0].contains(QStringLiteral("you lack permission")), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains(QStringLiteral("read-only")), qPrintable(lines[1]));
        QVERIFY2(lines[2].contains(QStringLiteral("could not be moved aside")),
                 qPrintable(lines[2]));
        // Reading works where writing cannot (the CLI's case).
        QCOMPARE(lines[3], QStringLiteral("opened"));
        QCOMPARE(sha(existing), existing_sha);
        QCOMPARE(read_all(junk), QByteArray("not a database"));
        QCOMPARE(QDir(ro).entryList(QDir::Files).size(), 2);
    }

    void read_only_file_system() {
        const QString mnt = path(QStringLiteral("rofs"));
        QVERIFY(QDir().mkpath(mnt));
        if (const QString why = mount_tmpfs(mnt, "size=4m"); !why.isEmpty()) QSKIP(qPrintable(why));
        const QString existing = mnt + QStringLiteral("/existing.sqlite3");
        const QString junk = mnt + QStringLiteral("/junk.sqlite3");
        const bool made = make_history(existing, 3) && write_all(junk, "junk");
        const bool remounted = ::mount("tmpfs", QFile::encodeName(mnt).constData(), "tmpfs",
                                       MS_REMOUNT | MS_RDONLY, "size=4m") == 0;
        const QString fresh = outcome(Store::open(mnt + QStringLiteral("/new.sqlite3")));
        const QString old = outcome(Store::open(existing));
        const QString damaged = outcome(Store::open(junk));
        const QByteArray junk_after = read_all(junk);
        ::umount(QFile::encodeName(mnt).constData());
        QVERIFY(made);
        QVERIFY(remounted);
        QVERIFY2(fresh.contains(QStringLiteral("Read-only file system")), qPrintable(fresh));
        QVERIFY2(old.contains(QStringLiteral("read-only")), qPrintable(old));
        QVERIFY2(damaged.contains(QStringLiteral("could not be moved aside")), qPrintable(damaged));
        QCOMPARE(junk_after, QByteArray("junk"));
    }

    void size_limit_acts_as_a_full_disk() {
        // SQLite's own limit gives SQLITE_FULL deterministically, wherever the test runs.
        const QString file = path(QStringLiteral("capped.sqlite3"));
        OpenOptions capped;
        capped.max_page_count = 80;  // 320 KiB
        auto store = Store::open(file, capped);
        HEARTH_CHECK(store);
        auto c = store->create_conversation(titled(QStringLiteral("filling up")));
        HEARTH_CHECK(c);
        auto side = store->create_conversation(titled(QStringLiteral("streaming")));
        HEARTH_CHECK(side);
        auto r = store->begin_reply(side->id, std::nullopt, {});
        HEARTH_CHECK(r);
        std::vector<Id> acknowledged;
        hearth::Result<Message> last = hearth::make_error("never ran");
        for (int i = 0; i < 1000; ++i) {
            last = store->append_message(
                c->id, draft(Role::User, QStringLiteral("%1 ").arg(i).repeated(600)));
            if (!last) break;
            acknowledged.push_back(last->id);
        }
        HEARTH_CHECK_ERROR(last, "is full");
        QVERIFY(acknowledged.size() > 10);
        // A streaming reply that cannot be written says so, and keeps its text for later.
        auto wrote = store->update_reply(*r, QStringLiteral("x").repeated(200000), {});
        HEARTH_CHECK(wrote);
        QVERIFY(!*wrote);  // not due yet
        HEARTH_CHECK_ERROR(store->flush_replies(true), "is full");
        QVERIFY(store->has_pending_replies());
        auto integrity = store->integrity_check();
        HEARTH_CHECK(integrity);
        QCOMPARE(*integrity, QStringLiteral("ok"));
        auto count = store->message_count(c->id);
        HEARTH_CHECK(count);
        QCOMPARE(*count, static_cast<int>(acknowledged.size()));
        // Reopen without the cap: room again. (The old store's final flush fails, logged.)
        store = Store::open(file);
        HEARTH_CHECK(store);
        auto thread = store->active_thread(c->id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->size(), acknowledged.size());
        for (std::size_t i = 0; i < acknowledged.size(); ++i)
            QCOMPARE(thread->at(i).message.id, acknowledged[i]);
        HEARTH_CHECK(
            store->append_message(c->id, draft(Role::User, QStringLiteral("there is room now"))));
        auto reply = store->message(*r);
        HEARTH_CHECK(reply);
        QCOMPARE(reply->state, MessageState::Interrupted);  // what was written of it survives
    }

    void a_really_full_disk() {
        const QString mnt = path(QStringLiteral("small"));
        QVERIFY(QDir().mkpath(mnt));
        if (const QString why = mount_tmpfs(mnt, "size=1536k"); !why.isEmpty())
            QSKIP(qPrintable(why));
        const QString file = mnt + QStringLiteral("/hearth.sqlite3");
        QString failure, integrity, reopened;
        std::size_t acknowledged = 0;
        int count = -1;
        {
            auto store = Store::open(file);
            if (store) {
                auto c = store->create_conversation(titled(QStringLiteral("tmpfs")));
                for (int i = 0; c && i < 1000; ++i) {
                    auto m = store->append_message(
                        c->id, draft(Role::User, QStringLiteral("%1 ").arg(i).repeated(200)));
                    if (!m) {
                        failure = QString::fromStdString(m.message());
                        break;
                    }
                    ++acknowledged;
                }
                auto check = store->integrity_check();
                integrity = check ? *check : QString::fromStdString(check.message());
                if (c) {
                    auto n = store->message_count(c->id);
                    count = n ? *n : -1;
                }
            } else {
                failure = QStringLiteral("open failed: ") + QString::fromStdString(store.message());
            }
        }
        // Reopening on the still-full disk must work (reading needs no space).
        {
            OpenOptions read_only;
            read_only.read_only = true;
            auto again = Store::open(file, read_only);
            reopened = again ? QStringLiteral("opened") : QString::fromStdString(again.message());
        }
        ::umount(QFile::encodeName(mnt).constData());
        QVERIFY2(failure.contains(QStringLiteral("is full")), qPrintable(failure));
        QVERIFY2(acknowledged > 5,
                 qPrintable(QStringLiteral("%1 acknowledged; %2").arg(acknowledged).arg(failure)));
        QCOMPARE(integrity, QStringLiteral("ok"));
        QCOMPARE(count, static_cast<int>(acknowledged));
        QCOMPARE(reopened, QStringLiteral("opened"));
    }

    void a_busy_database_says_so() {
        const QString file = path(QStringLiteral("busy.sqlite3"));
        OpenOptions quick;
        quick.busy_timeout = std::chrono::milliseconds(50);
        auto store = Store::open(file, quick);
        HEARTH_CHECK(store);
        auto c = store->create_conversation(titled(QStringLiteral("contended")));
        HEARTH_CHECK(c);
        auto other = Database::open(file, OpenMode::ReadWrite);
        HEARTH_CHECK(other);
        HEARTH_CHECK(other->exec("BEGIN IMMEDIATE"));
        HEARTH_CHECK_ERROR(
            store->append_message(c->id, draft(Role::User, QStringLiteral("blocked"))),
            "in use by another program");
        HEARTH_CHECK(other->exec("ROLLBACK"));
        HEARTH_CHECK(store->append_message(c->id, draft(Role::User, QStringLiteral("through"))));
    }

    void when_the_integrity_check_runs() {
        const QString file = path(QStringLiteral("policy.sqlite3"));
        QVERIFY(make_history(file, 5));
        OpenOptions big;  // as if the file were large: the check is skipped when it can be
        big.check_below_bytes = 0;
        {
            auto store = Store::open(file, big);
            HEARTH_CHECK(store);
            QVERIFY(!store->report().integrity_checked);  // checked moments ago, closed cleanly
            // A check a week and a bit ago is due again.
            HEARTH_CHECK(store->set_setting(
                QStringLiteral("store.integrity_checked_at"),
                QString::number(QDateTime::currentMSecsSinceEpoch() - 8LL * 24 * 3600 * 1000)));
        }
        {
            auto store = Store::open(file, big);
            HEARTH_CHECK(store);
            QVERIFY(store->report().integrity_checked);
        }
        {
            // An unclean end: the last connection goes without checkpointing its -wal.
            auto raw = Database::open(file, OpenMode::ReadWrite);
            HEARTH_CHECK(raw);
            HEARTH_CHECK(raw->exec("PRAGMA wal_autocheckpoint = 0"));
            HEARTH_CHECK(raw->exec("INSERT INTO settings VALUES ('left', 'behind')"));
            sqlite3_db_config(raw->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        }
        QVERIFY(QFileInfo(file + "-wal").size() > 0);
        {
            auto store = Store::open(file, big);
            HEARTH_CHECK(store);
            QVERIFY(store->report().integrity_checked);
        }
        OpenOptions never = big;
        never.integrity_check = OpenOptions::IntegrityCheck::Never;
        OpenOptions always = never;
        always.integrity_check = OpenOptions::IntegrityCheck::Always;
        auto skipped = Store::open(file, never);
        HEARTH_CHECK(skipped);
        QVERIFY(!skipped->report().integrity_checked);
        auto forced = Store::open(file, always);
        HEARTH_CHECK(forced);
        QVERIFY(forced->report().integrity_checked);
    }

    void a_folder_is_not_a_database() {
        HEARTH_CHECK_ERROR(Store::open(dir_.path()), "is a folder");
        HEARTH_CHECK_ERROR(Store::open(QString()), "no chat history file");
        OpenOptions read_only;
        read_only.read_only = true;
        HEARTH_CHECK_ERROR(Store::open(path(QStringLiteral("absent.sqlite3")), read_only),
                           "does not exist");
        QVERIFY(!QFileInfo::exists(path(QStringLiteral("absent.sqlite3"))));
    }
};

QTEST_GUILESS_MAIN(TestStoreFaults)
#include "tst_store_faults.moc"
