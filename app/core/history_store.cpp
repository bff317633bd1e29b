#include "core/history_store.h"

#include <QPointer>

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
