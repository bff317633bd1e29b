// tst_chat_imports: the suite's class (its functions are in tst_chat_imports*.cpp) and the
// helpers they share.
#pragma once

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "chat_fixtures.h"
#include "imports/chat_import.h"
#include "store/store.h"

// Fails the test with the error's message when a hearth::Result is not ok.
#define CHECK_OK(result)                                                                   \
    do {                                                                                   \
        const auto& check_ok_r_ = (result);                                                \
        QVERIFY2(check_ok_r_.ok(), check_ok_r_.ok() ? "" : check_ok_r_.message().c_str()); \
    } while (0)

namespace import_test {

using namespace hearth;
using namespace hearth::imports;

inline QDateTime utc_ms(qint64 ms) {
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

// A home folder of its own: nothing of this computer's apps is read.
inline models::RootContext fake_home(const QString& home) {
    return models::RootContext{home, QProcessEnvironment(), models::Os::Linux, {}, {}};
}

inline ImportReport run(store::Store* s, const QString& home, const QStringList& paths,
                        QList<ChatSource> sources = {ChatSource::Gpt4All, ChatSource::Jan,
                                                     ChatSource::LmStudio},
                        bool dry_run = false) {
    ImportOptions o;
    o.sources = std::move(sources);
    o.paths = paths;
    o.dry_run = dry_run;
    o.context = fake_home(home);
    return import_chats(s, o);
}

inline const SourceReport& source_of(const ImportReport& r, ChatSource s) {
    for (const SourceReport& sr : r.sources)
        if (sr.source == s) return sr;
    static const SourceReport none;
    return none;
}

inline int conversation_count(store::Store& s) {
    store::ConversationFilter all;
    all.archived = store::ConversationFilter::Archived::Include;
    auto list = s.conversations(all);
    return list ? static_cast<int>(list->size()) : -1;
}

inline std::vector<store::Message> thread_of(store::Store& s, store::Id id) {
    std::vector<store::Message> out;
    auto thread = s.active_thread(id);
    if (thread)
        for (const store::ThreadEntry& e : *thread) out.push_back(e.message);
    return out;
}

inline bool has_note(const ChatOutcome& c, const QString& needle) {
    for (const QString& n : c.notes)
        if (n.contains(needle)) return true;
    return false;
}

// A chat with every feature GPT4All's format `version` keeps (tst_chat_imports.cpp).
fixtures::G4Chat rich_chat(int version);

}  // namespace import_test

class TestChatImports : public QObject {
    Q_OBJECT

  private slots:
    void gpt4all_versions_data();
    void gpt4all_versions();
    void gpt4all_finds_chats_and_links_models();
    void gpt4all_bad_files_data();
    void gpt4all_bad_files();
    void jan_dialects_data();
    void jan_dialects();
    void jan_bad_threads_data();
    void jan_bad_threads();
    void lmstudio_conversations();
    void lmstudio_bad_files();
    void reimport_adds_nothing_twice();
    void dry_run_writes_nothing();
    void cli_import_chats();
};
