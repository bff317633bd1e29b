// HistoryStore: the chat history (AsyncStore) as a QML type. The view models take it as
// their `store`; it opens the database off the GUI thread like every other store call.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QString>

#include <optional>

#include "models/source_roots.h"
#include "store/async_store.h"

class HistoryStore : public hearth::store::AsyncStore {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString path READ path NOTIFY openChanged)
    Q_PROPERTY(bool ready READ ready NOTIFY openChanged)
    Q_PROPERTY(bool opening READ opening NOTIFY openChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    // Set when the last open found a damaged file and moved it aside (to tell the user).
    Q_PROPERTY(QString corruptBackupPath READ corruptBackupPath NOTIFY openChanged)

  public:
    explicit HistoryStore(QObject* parent = nullptr);

    QString path() const { return path_; }
    bool ready() const { return ready_; }
    bool opening() const { return opening_; }
    QString errorString() const { return error_; }
    QString corruptBackupPath() const { return corrupt_backup_; }

    // Opens (creating when missing) the database at path; empty: the default location.
    Q_INVOKABLE void openPath(const QString& path = QString());
    void openWith(const QString& path, hearth::store::OpenOptions options);
    // The whole history (Store::backup_to, restore_from), off the GUI thread; file: a
    // file: URL or a path. backedUp(path) or restored(added, present, personas) follows,
    // or backupFailed(why).
    Q_INVOKABLE void backUp(const QString& file);
    Q_INVOKABLE void restore(const QString& file);
    // The chats GPT4All, Jan and LM Studio saved on this computer (app/imports), off the
    // GUI thread: findChats() reads them and says what an import would do (chatsFound),
    // importChats() brings them in (chatsImported); each with the report in words, which
    // names every chat skipped and everything a chat held that was not carried over.
    Q_INVOKABLE void findChats();
    Q_INVOKABLE void importChats();
    // Where the other apps' chats are looked for (tests); default this computer's.
    void setImportContext(const hearth::models::RootContext& context) { import_context_ = context; }

  signals:
    void openChanged();
    void errorStringChanged();
    void opened(bool ok);
    void backedUp(const QString& path);
    void restored(int added, int present, int personas);
    void backupFailed(const QString& why);
    // found: chats an import would add; present: imported before; skipped: unreadable.
    void chatsFound(int found, int present, int skipped, const QString& report);
    // partly: imported with something left out (named in the report).
    void chatsImported(int imported, int present, int skipped, int partly, int personas,
                       const QString& report);

  private:
    void set_error(const QString& error);

    QString path_;
    QString error_;
    QString corrupt_backup_;
    bool ready_ = false;
    bool opening_ = false;
    std::optional<hearth::models::RootContext> import_context_;
    void run_import(bool dry_run);
};
