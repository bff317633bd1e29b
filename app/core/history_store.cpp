#include "core/history_store.h"

#include <QPointer>
#include <QUrl>

#include "core/error_text.h"

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
