// Helpers shared by the store suites.
#pragma once

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "store/database.h"
#include "store/store.h"

// Fails the test with the error's message when a hearth::Result is not ok.
#define HEARTH_CHECK(result)                                                     \
    do {                                                                         \
        const auto& hearth_check_r_ = (result);                                  \
        QVERIFY2(hearth_check_r_.ok(),                                           \
                 hearth_check_r_.ok() ? "" : hearth_check_r_.message().c_str()); \
    } while (0)

// Fails unless `result` is an error whose message contains `needle`.
#define HEARTH_CHECK_ERROR(result, needle)                                           \
    do {                                                                             \
        const auto& hearth_check_r_ = (result);                                      \
        QVERIFY2(!hearth_check_r_.ok(), "expected an error, got success");           \
        QVERIFY2(QString::fromStdString(hearth_check_r_.message()).contains(needle), \
                 hearth_check_r_.message().c_str());                                 \
    } while (0)

namespace hearth::store::test {

// What another connection sees: the committed text of a message.
inline QString committed_text(const QString& path, Id id) {
    auto db = Database::open(path, OpenMode::ReadOnly);
    if (!db) return QStringLiteral("<open failed>");
    auto stmt = db->prepare("SELECT content FROM messages WHERE id = ?");
    if (!stmt) return QStringLiteral("<prepare failed>");
    stmt->bind(1, id);
    auto row = stmt->step();
    return row && *row ? stmt->column_text(0) : QStringLiteral("<missing>");
}

inline QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool write_all(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

inline MessageDraft draft(Role role, const QString& text, std::vector<std::int32_t> ids = {},
                          const QString& fingerprint = {}) {
    MessageDraft d;
    d.role = role;
    d.text = text;
    d.token_ids = std::move(ids);
    d.token_fingerprint = fingerprint;
    return d;
}

inline Conversation titled(const QString& title) {
    Conversation c;
    c.title = title;
    return c;
}

}  // namespace hearth::store::test
