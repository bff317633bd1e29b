// The whole history at once: a backup is a copy of the database (VACUUM INTO: consistent
// while the app keeps writing, and compact), and restoring one adds what it holds that is
// not here, so a restore never replaces or loses a chat written since.
#include <algorithm>

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <set>
#include <utility>

#include "store/path_check.h"
#include "store/rows.h"
#include "store/store.h"

namespace hearth::store {

using detail::context;

namespace {

// A file beside `path` that nothing else uses: VACUUM INTO and the copy for reading write
// there first.
QString scratch_beside(const QString& path, const char* what) {
    return path + QStringLiteral(".%1-%2")
                      .arg(QLatin1String(what))
                      .arg(QCoreApplication::applicationPid());
}

// How a conversation is known again in another database: imports keep its title and the
// time it was created.
using ConversationKey = std::pair<QString, std::int64_t>;
ConversationKey key_of(const Conversation& c) {
    return {c.title, detail::to_ms(c.created_at)};
}

}  // namespace

Result<void> Store::backup_to(const QString& path, bool overwrite) {
    auto target = validate_export_path(path, this->path(), overwrite);
    if (!target) return target.error();
    // Replies still being written go in as they stand (they read back as interrupted).
    if (auto rc = flush_replies(true); !rc) return context("backing up the history", rc.error());
    const QString partial = scratch_beside(*target, "partial");
    QFile::remove(partial);  // a leftover of a backup that was cut short
    auto vacuum = db_.prepare("VACUUM INTO ?");
    if (!vacuum) return vacuum.error();
    vacuum->bind(1, partial);
    if (auto rc = vacuum->run(); !rc) {
        QFile::remove(partial);
        return context("backing up the history to " + target->toStdString(), rc.error());
    }
    // Replaced only now, so a failed backup leaves an older one as it was.
    if (QFileInfo::exists(*target) && !QFile::remove(*target)) {
        QFile::remove(partial);
        return make_error("cannot replace " + target->toStdString());
    }
    if (!QFile::rename(partial, *target)) {
        QFile::remove(partial);
        return make_error("cannot write " + target->toStdString());
    }
    return {};
}

Result<RestoreReport> Store::restore_from(const QString& path) {
    const QFileInfo info(path);
    if (path.isEmpty() || !info.exists())
        return make_error("there is no file " + path.toStdString());
    if (!info.isFile() || !info.isReadable())
        return make_error(path.toStdString() + " is not a file that can be read");
    if (info.absoluteFilePath() == QFileInfo(this->path()).absoluteFilePath())
        return make_error("that is the chat history itself, not a backup of it");

    // Read from a copy: opening it may migrate a backup from an older Hearth, and the
    // backup itself stays untouched.
    const QString copy = scratch_beside(this->path(), "restoring");
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) QFile::remove(copy + suffix);
    if (!QFile::copy(info.absoluteFilePath(), copy))
        return make_error("cannot copy " + path.toStdString() + " to read it (is the disk full?)");
    struct Cleanup {
        QString file;
        ~Cleanup() {
            for (const char* suffix : {"", "-wal", "-shm", "-journal"})
                QFile::remove(file + suffix);
        }
    } cleanup{copy};
    OpenOptions options;
    options.on_corrupt = OpenOptions::OnCorrupt::Fail;
    options.integrity_check = OpenOptions::IntegrityCheck::Always;
    options.full_sync = false;
    auto source = Store::open(copy, options);
    if (!source)
        return make_error(path.toStdString() +
                          " is not a Hearth backup that can be read: " + source.message());

    RestoreReport report;
    // Personas first (those with chats come with them too, but one without any would not).
    auto theirs = source->personas();
    if (!theirs) return context("reading the backup", theirs.error());
    auto ours = personas();
    if (!ours) return ours.error();
    for (const Persona& p : *theirs) {
        const bool here = std::any_of(ours->begin(), ours->end(), [&](const Persona& o) {
            return o.name == p.name && o.system_prompt == p.system_prompt;
        });
        if (here) continue;
        auto made = create_persona(p);
        if (!made) return context("restoring a persona", made.error());
        for (Document d : p.documents) {  // with its documents, in order
            d.persona_id = made->id;
            if (auto added = add_document(d); !added)
                return context("restoring a persona's documents", added.error());
        }
        ++report.personas_added;
    }

    ConversationFilter all;
    all.archived = ConversationFilter::Archived::Include;
    auto existing = conversations(all);
    if (!existing) return existing.error();
    std::set<ConversationKey> known;
    for (const Conversation& c : *existing) known.insert(key_of(c));
    auto chats = source->conversations(all);
    if (!chats) return context("reading the backup", chats.error());
    // Oldest first, so the restored list keeps the backup's order by activity.
    for (auto it = chats->rbegin(); it != chats->rend(); ++it) {
        if (known.contains(key_of(*it))) {
            ++report.conversations_present;
            continue;
        }
        auto json = source->export_conversation(it->id, ExportFormat::Json);
        if (!json) return context("reading the backup", json.error());
        auto id = import_json(*json);
        if (!id)
            return make_error("restoring \"" + it->title.toStdString() + "\" failed after " +
                              std::to_string(report.conversations_added) +
                              " chats were restored: " + id.message());
        ++report.conversations_added;
    }
    return report;
}

}  // namespace hearth::store
