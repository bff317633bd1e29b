#include "core/history_store.h"

#include <QPointer>
#include <QUrl>

#include "core/error_text.h"
#include "imports/chat_import.h"

using namespace hearth::store;

HistoryStore::HistoryStore(QObject* parent) : AsyncStore(parent) {
    connect(this, &AsyncStore::errorOccurred, this, &HistoryStore::set_error);
}

void HistoryStore::set_error(const QString& error) {
    if (error == error_) return;
    error_ = error;
    emit errorStringChanged();
}

void HistoryStore::openPath(const QString& path) {
    openWith(path, OpenOptions{});
}

void HistoryStore::openWith(const QString& path, OpenOptions options) {
    const QString target = path.isEmpty() ? Store::default_path() : path;
    opening_ = true;
    ready_ = false;
    emit openChanged();
    QPointer<HistoryStore> self(this);
    open(target, std::move(options), [self, target](hearth::Result<OpenReport> r) {
        if (!self) return;
        self->opening_ = false;
        self->ready_ = r.ok();
        self->path_ = target;
        if (r) {
            self->corrupt_backup_ = r->corrupt_backup_path;
            self->set_error(QString());
        } else {
            self->set_error(QString::fromStdString(r.message()));
        }
        emit self->openChanged();
        emit self->opened(self->ready_);
    });
}

namespace {

QString local_file(const QString& file) {
    const QUrl url(file);
    return url.isLocalFile() ? url.toLocalFile() : file;  // (a file: URL from a FileDialog)
}

}  // namespace

void HistoryStore::backUp(const QString& file) {
    const QString path = local_file(file);
    QPointer<HistoryStore> self(this);
    // The dialog asked before replacing a file.
    run<bool>(
        [path](Store& s) -> hearth::Result<bool> {
            if (auto rc = s.backup_to(path, true); !rc) return rc.error();
            return true;
        },
        [self, path](hearth::Result<bool> r) {
            if (!self) return;
            if (r)
                emit self->backedUp(path);
            else
                emit self->backupFailed(error_text(r.error()));
        });
}

void HistoryStore::restore(const QString& file) {
    const QString path = local_file(file);
    QPointer<HistoryStore> self(this);
    run<RestoreReport>([path](Store& s) { return s.restore_from(path); },
                       [self](hearth::Result<RestoreReport> r) {
                           if (!self) return;
                           if (!r) return emit self->backupFailed(error_text(r.error()));
                           if (r->conversations_added > 0) emit self->conversationsChanged();
                           emit self->restored(r->conversations_added, r->conversations_present,
                                               r->personas_added);
                       });
}

void HistoryStore::findChats() {
    run_import(true);
}

void HistoryStore::importChats() {
    run_import(false);
}

void HistoryStore::run_import(bool dry_run) {
    namespace im = hearth::imports;
    im::ImportOptions options;
    options.dry_run = dry_run;
    options.context = import_context_ ? *import_context_ : hearth::models::this_computer({}, {});
    QPointer<HistoryStore> self(this);
    struct Outcome {
        im::ImportReport report;
        int personas_before = 0, personas_after = 0;
    };
    run<Outcome>(
        [options](Store& s) -> hearth::Result<Outcome> {
            Outcome o;
            auto before = s.personas();
            if (before) o.personas_before = static_cast<int>(before->size());
            o.report = im::import_chats(&s, options);  // a dry run reads, writes nothing
            auto after = s.personas();
            if (after) o.personas_after = static_cast<int>(after->size());
            return o;
        },
        [self, dry_run](hearth::Result<Outcome> r) {
            if (!self) return;
            if (!r) return emit self->backupFailed(error_text(r.error()));
            const im::ImportReport& report = r->report;
            int imported = 0, present = 0, skipped = 0, partly = 0;
            for (const im::SourceReport& source : report.sources) {
                imported += source.count(im::Outcome::Imported);
                present += source.count(im::Outcome::AlreadyImported);
                skipped += source.count(im::Outcome::Skipped);
                partly += source.partly_imported();
            }
            if (!report.errors.isEmpty())
                return emit self->backupFailed(report.errors.join(QLatin1Char('\n')));
            if (dry_run) return emit self->chatsFound(imported, present, skipped, report.text());
            if (imported > 0) emit self->conversationsChanged();
            emit self->chatsImported(imported, present, skipped, partly,
                                     r->personas_after - r->personas_before, report.text());
        });
}
