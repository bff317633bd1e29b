#include "core/model_library.h"

#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <thread>

#include "common/log.h"
#include "common/paths.h"
#include "core/app_settings.h"
#include "core/engine_bridge.h"
#include "core/fit_text.h"
#include "core/model_downloader.h"
#include "engine.h"
#include "gguf/gguf_file.h"
#include "kv/disk_tier.h"
#include "memory_probe.h"
#include "models/scan_util.h"

using namespace hearth::models;

ModelLibrary::ModelLibrary(QObject* parent)
    : QAbstractListModel(parent),
      models_dir_(ModelDownloader::defaultModelsDir()),
      kv_disk_dir_(QString::fromStdString(hearth::paths::kv_cache_dir())) {
    connect(&watcher_, &QFutureWatcher<ScanResult>::finished, this, &ModelLibrary::on_scanned);
}

ModelLibrary::~ModelLibrary() {
    watcher_.waitForFinished();
}

int ModelLibrary::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> ModelLibrary::roleNames() const {
    return {{PathRole, "path"},
            {NameRole, "name"},
            {FileNameRole, "fileName"},
            {AliasesRole, "aliases"},
            {SourceRole, "source"},
            {SourceLabelRole, "sourceLabel"},
            {RepoRole, "repo"},
            {SizeRole, "size"},
            {PartsRole, "parts"},
            {TitleRole, "title"},
            {ArchitectureRole, "architecture"},
            {QuantisationRole, "quantisation"},
            {ParametersRole, "parameters"},
            {ContextLengthRole, "contextLength"},
            {SupportedRole, "supported"},
            {WhyNotRole, "whyNot"},
            {LastUsedRole, "lastUsed"},
            {IsOpenRole, "isOpen"},
            {IsDefaultRole, "isDefault"},
            {CanDeleteRole, "canDelete"},
            {ThinkingSwitchRole, "thinkingSwitch"},
            {OwnDefaultsRole, "ownDefaults"},
            {FitRole, "fit"},
            {FitTextRole, "fitText"},
            {FitDetailRole, "fitDetail"},
            {EstimatedBytesRole, "estimatedBytes"},
            {EstimatedTokensPerSecondRole, "estimatedTokensPerSecond"}};
}

QVariant ModelLibrary::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_.size()) return {};
    const Row& r = rows_[index.row()];
    const FoundModel& m = r.model;
    switch (role) {
        case Qt::DisplayRole:
        case NameRole:
            return m.name;
        case PathRole:
            return m.path;
        case FileNameRole:
            return m.file_name;
        case AliasesRole:
            return m.aliases;
        case SourceRole:
            return source_id(m.source);
        case SourceLabelRole:
            return source_label(m.source);
        case RepoRole:
            return m.repo;
        case SizeRole:
            return m.size;
        case PartsRole:
            return m.parts;
        case TitleRole:
            return r.facts.title;
        case ArchitectureRole:
            return r.facts.architecture;
        case QuantisationRole:
            return r.facts.quantisation;
        case ParametersRole:
            return r.facts.parameters;
        case ContextLengthRole:
            return r.facts.context_length;
        case SupportedRole:
            return r.facts.supported && m.complete;
        case WhyNotRole:
            return !m.complete ? QStringLiteral("some of its %1 parts are missing").arg(m.parts)
                               : r.facts.why_not;
        case LastUsedRole:
            return settings_ ? settings_->modelLastUsed(m.path) : QDateTime();
        case IsOpenRole:
            return !open_path_.isEmpty() &&
                   (m.path == open_path_ ||
                    (!r.canonical.isEmpty() && r.canonical == open_canonical_));
        case IsDefaultRole:
            return settings_ && settings_->defaultModelPath() == m.path;
        case CanDeleteRole:
            return m.source == Source::Hearth || m.source == Source::Folder;
        case ThinkingSwitchRole:
            return r.facts.thinking_switch;
        case OwnDefaultsRole:
            return settings_ && (settings_->modelContextLength(m.path) > 0 ||
                                 settings_->modelPersona(m.path) >= 0 ||
                                 !settings_->modelSampling(m.path).isEmpty());
        case FitRole:
        case FitTextRole:
        case FitDetailRole:
        case EstimatedBytesRole:
        case EstimatedTokensPerSecondRole: {
            static const char* const keys[] = {"fit", "text", "detail", "bytes", "tokensPerSecond"};
            const QVariantMap e = estimate_map(r);
            if (e.isEmpty()) return role <= FitDetailRole ? QVariant(QString()) : QVariant(0);
            return e.value(QLatin1String(keys[role - FitRole]));
        }
        default:
            return {};
    }
}

std::optional<hearth::FitEstimate> ModelLibrary::estimate(const Row& r) const {
    if (!r.facts.supported || !r.model.complete || machine_.ram_available == 0) return std::nullopt;
    const int context = settings_ ? settings_->contextLengthFor(r.model.path) : 0;
    const int kv_mb = settings_ ? settings_->kvCacheMb() : 0;
    return hearth::estimate_fit(r.facts.needs, context, static_cast<std::size_t>(kv_mb), machine_);
}

QVariantMap ModelLibrary::estimateFor(const QString& path) const {
    const int row = row_of(path);
    return row < 0 ? QVariantMap() : estimate_map(rows_[row]);
}

QVariantMap ModelLibrary::estimate_map(const Row& r) const {
    const auto e = estimate(r);
    return e ? hearth::app::fit_map(*e, machine_) : QVariantMap();
}

void ModelLibrary::setSettings(AppSettings* settings) {
    if (settings == settings_) return;
    if (settings_) settings_->disconnect(this);
    settings_ = settings;
    if (settings_) {
        connect(settings_, &AppSettings::modelFoldersChanged, this, &ModelLibrary::refresh);
        connect(settings_, &AppSettings::defaultModelPathChanged, this,
                &ModelLibrary::refresh_flags);
        // A model's own context changes its fit estimate.
        connect(settings_, &AppSettings::modelDefaultsChanged, this, &ModelLibrary::refresh_flags);
        connect(settings_, &AppSettings::contextSettingsChanged, this,
                &ModelLibrary::refresh_flags);
        if (!open_path_.isEmpty()) settings_->noteModelUsed(open_path_);
    }
    emit settingsChanged();
    refresh();
}

EngineBridge* ModelLibrary::bridge() const {
    return bridge_;
}

void ModelLibrary::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    bridge_ = bridge;
    emit settingsChanged();
}

void ModelLibrary::setModelsDir(const QString& dir) {
    const QString clean =
        dir.isEmpty() ? ModelDownloader::defaultModelsDir() : QDir::cleanPath(dir);
    if (clean == models_dir_) return;
    models_dir_ = clean;
    emit modelsDirChanged();
    refresh();
}

void ModelLibrary::setOpenPath(const QString& path) {
    if (path == open_path_) return;
    open_path_ = path;
    open_canonical_ = path.isEmpty() ? QString() : QFileInfo(path).canonicalFilePath();
    if (settings_ && !path.isEmpty()) settings_->noteModelUsed(path);
    emit openPathChanged();
    refresh_flags();
}

void ModelLibrary::setActive(bool on) {
    if (on == active_) return;
    active_ = on;
    emit activeChanged();
    refresh();
}

void ModelLibrary::setOtherApps(bool on) {
    if (on == other_apps_) return;
    other_apps_ = on;
    emit otherAppsChanged();
    refresh();
}

void ModelLibrary::setRootsForTesting(std::optional<QList<SourceRoot>> roots) {
    test_roots_ = std::move(roots);
    refresh();
}

QList<SourceRoot> ModelLibrary::roots() const {
    if (test_roots_) return *test_roots_;
    const QStringList folders = settings_ ? settings_->modelFolders() : QStringList();
    QList<SourceRoot> all = source_roots(this_computer(models_dir_, folders));
    if (!other_apps_) {
        all.removeIf([](const SourceRoot& r) {
            return r.source != Source::Hearth && r.source != Source::Folder;
        });
    }
    return all;
}

void ModelLibrary::refresh() {
    if (!active_) return;
    if (watcher_.isRunning()) {
        rescan_ = true;
        return;
    }
    rescan_ = false;
    const QList<SourceRoot> roots_now = roots();
    // The facts already read, for the files that have not changed.
    QHash<QString, FactsKey> cache = facts_cache_;
    // The bandwidth once per run (a quarter of a second), with inference's threads.
    const double bandwidth = machine_.read_bytes_per_s;
    const int threads = settings_ && settings_->threads() > 0
                            ? settings_->threads()
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    watcher_.setFuture(QtConcurrent::run([roots_now, cache, bandwidth, threads]() -> ScanResult {
        ScanResult r;
        if (auto memory = hearth::system_memory()) {
            r.machine.ram_total = memory->total;
            r.machine.ram_available = memory->available;
        }
        r.machine.read_bytes_per_s =
            bandwidth > 0 ? bandwidth : hearth::measure_read_bandwidth(threads);
        r.scan = scan_roots(roots_now);
        for (const FoundModel& m : r.scan.models) {
            const auto hit = cache.constFind(m.path);
            if (hit != cache.constEnd() && hit->size == m.size && hit->modified == m.modified)
                r.facts << hit->facts;
            else
                r.facts << read_facts(m);
        }
        return r;
    }));
    emit scanningChanged();
}

void ModelLibrary::on_scanned() {
    ScanResult r = watcher_.result();
    machine_ = r.machine;
    beginResetModel();
    rows_.clear();
    facts_cache_.clear();
    for (qsizetype i = 0; i < r.scan.models.size(); ++i) {
        const FoundModel& m = r.scan.models[i];
        rows_ << Row{m, r.facts[i], QFileInfo(m.path).canonicalFilePath()};
        facts_cache_.insert(m.path, FactsKey{m.size, m.modified, r.facts[i]});
    }
    endResetModel();

    sources_.clear();
    for (const SourceScan& s : r.scan.sources) {
        sources_ << QVariantMap{{"source", source_id(s.source)},
                                {"label", source_label(s.source)},
                                {"path", QDir::toNativeSeparators(s.root)},
                                {"present", s.present},
                                {"models", static_cast<int>(s.models.size())},
                                {"problems", s.problems}};
        for (const QString& p : s.problems)
            hearth::log::get("app")->info("models in {}: passed over {}", s.root.toStdString(),
                                          p.toStdString());
    }
    emit countChanged();
    emit scanned();
    emit scanningChanged();
    if (rescan_) refresh();
}

int ModelLibrary::row_of(const QString& path) const {
    for (qsizetype i = 0; i < rows_.size(); ++i)
        if (rows_[i].model.path == path) return static_cast<int>(i);
    return -1;
}

int ModelLibrary::indexOf(const QString& path) const {
    return row_of(path);
}

void ModelLibrary::refresh_flags() {
    if (rows_.isEmpty()) return;
    emit dataChanged(
        index(0), index(static_cast<int>(rows_.size()) - 1),
        {LastUsedRole, IsOpenRole, IsDefaultRole, OwnDefaultsRole, FitRole, FitTextRole,
         FitDetailRole, EstimatedBytesRole, EstimatedTokensPerSecondRole});
}

QString ModelLibrary::addFolder(const QVariant& folder) {
    const QUrl url = folder.toUrl();
    const QString path = QDir::cleanPath(url.isLocalFile() ? url.toLocalFile() : folder.toString());
    if (path.isEmpty() || !QFileInfo(path).isDir())
        return QStringLiteral("%1 is not a folder").arg(QDir::toNativeSeparators(path));
    if (!settings_) return QStringLiteral("Folders cannot be kept without settings");
    if (path == models_dir_ || settings_->modelFolders().contains(path))
        return QStringLiteral("%1 is already listed").arg(QDir::toNativeSeparators(path));
    settings_->setModelFolders(settings_->modelFolders() << path);
    return {};
}

void ModelLibrary::removeFolder(const QString& folder) {
    if (!settings_) return;
    QStringList folders = settings_->modelFolders();
    if (folders.removeAll(QDir::cleanPath(folder)) > 0) settings_->setModelFolders(folders);
}

QString ModelLibrary::remove(const QString& path) {
    const int row = row_of(path);
    if (row < 0) return QStringLiteral("%1 is not in the list").arg(QDir::toNativeSeparators(path));
    const FoundModel m = rows_[row].model;
    if (m.source != Source::Hearth && m.source != Source::Folder)
        return QStringLiteral("This file belongs to %1; delete it there")
            .arg(source_label(m.source));
    if (data(index(row), IsOpenRole).toBool())
        return QStringLiteral("The model is open; open another one first");

    // What keys its KV blocks on disk: read before the file goes.
    std::string fingerprint;
    if (auto file = hearth::gguf::GgufFile::open(m.path.toStdString()))
        fingerprint = (*file)->content_fingerprint();

    QStringList files{m.path};
    if (const auto split = split_name(m.file_name); split && m.parts > 1) {
        const QDir dir = QFileInfo(m.path).dir();
        files.clear();
        for (int i = 1; i <= split->count; ++i)
            files << dir.filePath(split_part_name(split->prefix, i, split->count));
    }
    for (const QString& file : files) {
        QFile f(file);
        if (f.exists() && !f.remove())
            return QStringLiteral("Cannot delete %1: %2")
                .arg(QDir::toNativeSeparators(file), f.errorString());
    }
    hearth::log::get("app")->info("deleted model {}", path.toStdString());
    if (!fingerprint.empty()) {
        if (bridge_ && bridge_->engine()) {
            bridge_->engine()->erase_disk_cache_of(fingerprint);  // its engine holds the tier
        } else if (auto erased = hearth::kv::erase_model_from_disk_tier(kv_disk_dir_.toStdString(),
                                                                        fingerprint);
                   !erased) {
            hearth::log::get("app")->warn("its KV blocks on disk stay: {}", erased.message());
        }
    }
    if (settings_ && settings_->defaultModelPath() == path) settings_->setDefaultModelPath({});
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
    facts_cache_.remove(path);
    emit countChanged();
    return {};
}

void ModelLibrary::reveal(const QString& path) const {
    QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath()));
}

void ModelLibrary::setDefault(const QString& path) {
    if (settings_) settings_->setDefaultModelPath(path);
}
