// PersonaListModel: the personas (by name), with create / edit / duplicate / delete and
// keep-warm. A keep-warm persona's prompt prefix (PromptBuilder::persona_prefix of its
// system prompt) is pinned in the engine's KV cache under the persona's id: the engine
// prefills it in the background and keeps it resident, so a new chat with the persona
// starts from the cache. Pins follow the personas: set again when a model loads (every
// keep-warm persona is warmed up then), when the system prompt changes, and removed when
// keep-warm goes off or the persona is deleted.
//
// An empty history is seeded once with the default personas in resources/personas/
// (compiled in under :/personas/); the setting "personas.seeded" records that, so
// deleting them all does not bring them back.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QPointer>
#include "core/row_list_model.h"

#include <map>
#include <vector>

#include "core/engine_bridge.h"
#include "store/async_store.h"

class PersonaListModel : public RowListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)
    Q_PROPERTY(QObject* store READ storeObject WRITE setStoreObject NOTIFY storeChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    Q_PROPERTY(bool seedDefaults READ seedDefaults WRITE setSeedDefaults NOTIFY seedDefaultsChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(int maxNameLength READ maxNameLength CONSTANT)

  public:
    enum Roles {
        PersonaIdRole = Qt::UserRole + 1,
        NameRole,
        SystemPromptRole,
        ColorRole,
        AvatarRole,
        KeepWarmRole,
        WarmStateRole,  // "warming", "pinned", "failed", "" (not pinned)
        SamplingRole,   // its own reply settings (sampling_settings_map.h); {} for none
    };
    Q_ENUM(Roles)

    explicit PersonaListModel(QObject* parent = nullptr);

    // A persona's name is one line of at most this many characters (the dialog's field
    // stops there; longer names from elsewhere are cut, whitespace runs become one space).
    static constexpr int kMaxNameLength = 60;
    int maxNameLength() const { return kMaxNameLength; }
    static QString clean_name(const QString& name);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    QObject* storeObject() const;
    void setStoreObject(QObject* store);
    void setStore(hearth::store::AsyncStore* store);
    int count() const { return static_cast<int>(rows_.size()); }
    bool seedDefaults() const { return seed_defaults_; }
    void setSeedDefaults(bool seed);
    QString errorString() const { return error_; }

    // The personas in the resources (for the seeding and a "restore defaults" action).
    static std::vector<hearth::store::Persona> defaultPersonas();

    // personaCreated(id) follows on success.
    // sampling (optional): its own reply settings, as the sampling role has them.
    Q_INVOKABLE void create(const QString& name, const QString& systemPrompt,
                            const QString& color = QString(), const QString& avatar = QString(),
                            bool keepWarm = false, const QVariantMap& sampling = {});
    // Changes the given fields: name, systemPrompt, color, avatar, keepWarm.
    // fields: name, systemPrompt, color, avatar, keepWarm, sampling (a map, see the role).
    Q_INVOKABLE void edit(qint64 personaId, const QVariantMap& fields);
    Q_INVOKABLE void setKeepWarm(qint64 personaId, bool keepWarm);
    Q_INVOKABLE void duplicate(qint64 personaId);  // "<name> (copy)", not kept warm
    Q_INVOKABLE void remove(qint64 personaId);
    Q_INVOKABLE int rowOf(qint64 personaId) const;
    Q_INVOKABLE QVariantMap get(int row) const;
    // The colour a persona is shown with, everywhere (the sidebar, the chat header, the
    // replies): its own, else kNoColor (no persona, an unknown one, or none set).
    Q_INVOKABLE QString colorOf(qint64 personaId) const;
    static constexpr const char* kNoColor = "#9e928a";
    Q_INVOKABLE void reload();

  signals:
    void bridgeChanged();
    void storeChanged();
    void countChanged();
    void seedDefaultsChanged();
    void errorStringChanged();
    void personaCreated(qint64 personaId);
    void loaded();  // after each reload

  private:
    void apply(std::vector<hearth::store::Persona> personas);
    void sync_pins();
    void set_error(const QString& error);
    void save(const hearth::store::Persona& persona);
    const hearth::store::Persona* find(qint64 id) const;

    QPointer<EngineBridge> bridge_;
    QPointer<hearth::store::AsyncStore> store_;
    std::vector<hearth::store::Persona> rows_;
    std::map<qint64, QString> pinned_;  // persona id -> system prompt pinned on this engine
    bool seed_defaults_ = true;
    int reload_serial_ = 0;
    QString error_;
};
