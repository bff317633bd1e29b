#include "core/persona_list_model.h"

#include "core/persona_prefix.h"
#include "core/sampling_settings_map.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

#include "chat/prompt_builder.h"
#include "common/log.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

constexpr const char* kSeededSetting = "personas.seeded";

QString qerr(const Error& e) {
    return QString::fromStdString(e.message);
}

}  // namespace

PersonaListModel::PersonaListModel(QObject* parent) : RowListModel(parent) {}

std::vector<st::Persona> PersonaListModel::defaultPersonas() {
    std::vector<std::pair<int, st::Persona>> found;
    const QDir dir(QStringLiteral(":/personas"));
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        QFile f(dir.filePath(name));
        if (!f.open(QIODevice::ReadOnly)) continue;
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        st::Persona p;
        p.name = o.value(QLatin1String("name")).toString();
        p.system_prompt = o.value(QLatin1String("systemPrompt")).toString();
        p.color = o.value(QLatin1String("color")).toString();
        p.avatar = o.value(QLatin1String("avatar")).toString();
        p.keep_warm = o.value(QLatin1String("keepWarm")).toBool();
        if (p.name.isEmpty()) {
            log::get("app")->warn("default persona {} has no name", name.toStdString());
            continue;
        }
        found.emplace_back(o.value(QLatin1String("order")).toInt(100), std::move(p));
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<st::Persona> out;
    for (auto& [order, p] : found) out.push_back(std::move(p));
    return out;
}

void PersonaListModel::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    pinned_.clear();
    if (bridge_) {
        connect(bridge_, &EngineBridge::modelChanged, this, [this] {
            pinned_.clear();  // a new engine holds no pins
            sync_pins();
        });
        connect(bridge_, &EngineBridge::pinsChanged, this, [this] {
            if (!rows_.empty()) emit dataChanged(index(0), index(count() - 1), {WarmStateRole});
        });
    }
    emit bridgeChanged();
    sync_pins();
}

QObject* PersonaListModel::storeObject() const {
    return store_;
}
void PersonaListModel::setStoreObject(QObject* store) {
    setStore(qobject_cast<st::AsyncStore*>(store));
}

void PersonaListModel::setStore(st::AsyncStore* store) {
    if (store == store_) return;
    if (store_) store_->disconnect(this);
    store_ = store;
    if (store_) {
        // (Re)opened: read the personas of that database.
        connect(store_, &st::AsyncStore::storeOpened, this, &PersonaListModel::reload);
    }
    emit storeChanged();
    reload();
}

void PersonaListModel::setSeedDefaults(bool seed) {
    if (seed == seed_defaults_) return;
    seed_defaults_ = seed;
    emit seedDefaultsChanged();
}

void PersonaListModel::set_error(const QString& error) {
    if (!error.isEmpty()) log::get("app")->warn("personas: {}", error.toStdString());
    if (error == error_) return;
    error_ = error;
    emit errorStringChanged();
}

int PersonaListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> PersonaListModel::roleNames() const {
    return {{PersonaIdRole, "personaId"},
            {NameRole, "name"},
            {SystemPromptRole, "systemPrompt"},
            {ColorRole, "color"},
            {AvatarRole, "avatar"},
            {KeepWarmRole, "keepWarm"},
            {WarmStateRole, "warmState"},
            {SamplingRole, "sampling"},
            {DocumentsRole, "documents"}};
}

QVariant PersonaListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const st::Persona& p = rows_[static_cast<size_t>(index.row())];
    switch (role) {
        case PersonaIdRole:
            return QVariant::fromValue<qint64>(p.id);
        case Qt::DisplayRole:
        case NameRole:
            return p.name;
        case SystemPromptRole:
            return p.system_prompt;
        case ColorRole:
            return p.color;
        case AvatarRole:
            return p.avatar;
        case KeepWarmRole:
            return p.keep_warm;
        case WarmStateRole:
            return bridge_ ? bridge_->pinState(p.id) : QString();
        case SamplingRole:
            return to_variant_map(p.sampling);
        case DocumentsRole:
            return documents_of(p);
        default:
            return {};
    }
}

int PersonaListModel::rowOf(qint64 personaId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == personaId) return static_cast<int>(i);
    return -1;
}

QString PersonaListModel::colorOf(qint64 personaId) const {
    const st::Persona* p = personaId >= 0 ? find(personaId) : nullptr;
    if (p && !p->color.trimmed().isEmpty()) return p->color.trimmed();
    return QString::fromLatin1(kNoColor);
}

const st::Persona* PersonaListModel::find(qint64 id) const {
    const int row = rowOf(id);
    return row < 0 ? nullptr : &rows_[static_cast<size_t>(row)];
}

QVariantMap PersonaListModel::get(int row) const {
    QVariantMap map;
    if (row < 0 || row >= count()) return map;
    const auto names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        map.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
    return map;
}

void PersonaListModel::reload() {
    if (!store_ || !store_->isOpen()) return;  // storeOpened() reloads
    const int serial = ++reload_serial_;
    const bool seed = seed_defaults_;
    std::vector<st::Persona> defaults = seed ? defaultPersonas() : std::vector<st::Persona>{};
    QPointer<PersonaListModel> self(this);
    store_->run<std::vector<st::Persona>>(
        [seed, defaults](st::Store& s) -> Result<std::vector<st::Persona>> {
            auto personas = s.personas();
            if (!personas || !personas->empty() || !seed) return personas;
            auto seeded = s.setting(QString::fromLatin1(kSeededSetting));
            if (!seeded) return seeded.error();
            if (*seeded) return personas;  // seeded once already; the user deleted them
            for (const st::Persona& p : defaults)
                if (auto rc = s.create_persona(p); !rc) return rc.error();
            if (auto rc = s.set_setting(QString::fromLatin1(kSeededSetting), QStringLiteral("1"));
                !rc)
                return rc.error();
            return s.personas();
        },
        [self, serial](Result<std::vector<st::Persona>> r) {
            if (!self || serial != self->reload_serial_) return;
            if (!r) return self->set_error(qerr(r.error()));
            self->apply(std::move(*r));
        });
}

void PersonaListModel::apply(std::vector<st::Persona> personas) {
    const bool count_changed = merge_rows(
        rows_, std::move(personas),
        [](const st::Persona& a, const st::Persona& b) { return a.id == b.id; },
        [](const st::Persona& a, const st::Persona& b) {
            return a.name == b.name && a.system_prompt == b.system_prompt && a.color == b.color &&
                   a.avatar == b.avatar && a.keep_warm == b.keep_warm && a.sampling == b.sampling &&
                   std::equal(a.documents.begin(), a.documents.end(), b.documents.begin(),
                              b.documents.end(), [](const auto& x, const auto& y) {
                                  return x.id == y.id && x.updated_at == y.updated_at;
                              });
        });
    if (count_changed) emit countChanged();
    watch_documents();
    sync_pins();
    emit loaded();
}

void PersonaListModel::sync_pins() {
    if (!bridge_ || !bridge_->loaded()) return;
    const chat::PromptBuilder* builder = bridge_->promptBuilder();
    std::map<qint64, QString> want;
    for (const st::Persona& p : rows_) {
        // Its instructions and documents: the prefix every chat of it starts with.
        const QString prefix = hearth::app::persona_prefix(p.system_prompt, p.documents);
        if (p.keep_warm && !prefix.trimmed().isEmpty()) want[p.id] = prefix;
    }
    for (auto it = pinned_.begin(); it != pinned_.end();) {
        if (!want.count(it->first)) {
            bridge_->unpin(it->first);
            it = pinned_.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& [id, prompt] : want) {
        auto it = pinned_.find(id);
        if (it != pinned_.end() && it->second == prompt) continue;
        // Pinning a key again replaces its prefix.
        bridge_->pin(id, builder->persona_prefix(prompt.toStdString()));
        pinned_[id] = prompt;
    }
}

QString PersonaListModel::clean_name(const QString& name) {
    QString n = name.simplified();
    if (n.size() > kMaxNameLength) {
        n.truncate(kMaxNameLength);
        if (n.back().isHighSurrogate()) n.chop(1);  // not half a character
        n = n.trimmed();
    }
    return n;
}

void PersonaListModel::create(const QString& name, const QString& systemPrompt,
                              const QString& color, const QString& avatar, bool keepWarm,
                              const QVariantMap& sampling) {
    if (!store_) return;
    st::Persona p;
    p.sampling = sampling_settings_from(sampling);
    p.name = clean_name(name);
    p.system_prompt = systemPrompt;
    p.color = color;
    p.avatar = avatar;
    p.keep_warm = keepWarm;
    QPointer<PersonaListModel> self(this);
    store_->run<st::Persona>([p](st::Store& s) { return s.create_persona(p); },
                             [self](Result<st::Persona> r) {
                                 if (!self) return;
                                 if (!r) return self->set_error(qerr(r.error()));
                                 self->set_error(QString());
                                 const qint64 id = r->id;
                                 self->reload();
                                 emit self->personaCreated(id);
                             });
}

void PersonaListModel::save(const st::Persona& p) {
    if (!store_) return;
    QPointer<PersonaListModel> self(this);
    store_->run<void>([p](st::Store& s) { return s.update_persona(p); },
                      [self](Result<void> r) {
                          if (!self) return;
                          if (!r)
                              self->set_error(qerr(r.error()));
                          else
                              self->set_error(QString());
                          self->reload();
                      });
}

void PersonaListModel::edit(qint64 personaId, const QVariantMap& fields) {
    const st::Persona* current = find(personaId);
    if (!current) return;
    st::Persona p = *current;
    if (fields.contains(QLatin1String("name")))
        p.name = clean_name(fields.value(QLatin1String("name")).toString());
    if (fields.contains(QLatin1String("systemPrompt")))
        p.system_prompt = fields.value(QLatin1String("systemPrompt")).toString();
    if (fields.contains(QLatin1String("color")))
        p.color = fields.value(QLatin1String("color")).toString();
    if (fields.contains(QLatin1String("avatar")))
        p.avatar = fields.value(QLatin1String("avatar")).toString();
    if (fields.contains(QLatin1String("keepWarm")))
        p.keep_warm = fields.value(QLatin1String("keepWarm")).toBool();
    if (fields.contains(QLatin1String("sampling")))
        p.sampling = sampling_settings_from(fields.value(QLatin1String("sampling")).toMap());
    save(p);
}

void PersonaListModel::setKeepWarm(qint64 personaId, bool keepWarm) {
    edit(personaId, {{QStringLiteral("keepWarm"), keepWarm}});
}

void PersonaListModel::duplicate(qint64 personaId) {
    const st::Persona* found = find(personaId);
    if (!found || !store_) return;
    st::Persona p = *found;
    p.name = clean_name(p.name + QStringLiteral(" (copy)"));
    p.keep_warm = false;
    QPointer<PersonaListModel> self(this);
    // With its documents, in order (one job: the copy appears whole).
    store_->run<st::Persona>(
        [p](st::Store& s) -> Result<st::Persona> {
            auto made = s.create_persona(p);
            if (!made) return made;
            for (st::Document d : p.documents) {
                d.persona_id = made->id;
                if (auto rc = s.add_document(d); !rc) return rc.error();
            }
            return s.persona(made->id);
        },
        [self](Result<st::Persona> r) {
            if (!self) return;
            if (!r) return self->set_error(qerr(r.error()));
            self->set_error(QString());
            self->reload();
            emit self->personaCreated(r->id);
        });
}

void PersonaListModel::remove(qint64 personaId) {
    if (!store_ || !find(personaId)) return;
    QPointer<PersonaListModel> self(this);
    store_->run<void>([personaId](st::Store& s) { return s.delete_persona(personaId); },
                      [self](Result<void> r) {
                          if (!self) return;
                          if (!r) self->set_error(qerr(r.error()));
                          self->reload();  // sync_pins unpins it
                      });
}
