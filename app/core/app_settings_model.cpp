// AppSettings: a model's own defaults (reply settings, persona, context), each kept under
// "models/<file name>/", beside the context and overflow settings it already had there.
// The reply settings are a group of plain keys ("models/x.gguf/sampling/temperature=0.6")
// so that a hand-edited file reads as it looks; what does not parse is left unset.
#include <QSettings>

#include <algorithm>
#include <limits>

#include "core/app_settings.h"
#include "core/sampling_settings_map.h"

QVariantMap AppSettings::modelSampling(const QString& model_path) const {
    QSettings& s = *settings_;
    QVariantMap raw;
    s.beginGroup(model_key("sampling", model_of(model_path)));
    for (const QString& k : s.childKeys()) raw.insert(k, s.value(k));
    s.endGroup();
    return to_variant_map(sampling_settings_from(raw));
}

hearth::store::SamplingSettings AppSettings::modelSamplingSettings() const {
    return sampling_settings_from(modelSampling(QString()));
}

void AppSettings::setModelSampling(const QString& model_path, const QVariantMap& values) {
    const QString path = model_of(model_path);
    if (path.isEmpty()) return;
    // Cleaned as a persona's are (clamped, unparsable values dropped) before they are kept.
    const QVariantMap clean = to_variant_map(sampling_settings_from(values));
    if (clean == modelSampling(path)) return;
    QSettings& s = *settings_;
    const QString group = model_key("sampling", path);
    s.remove(group);
    s.beginGroup(group);
    for (auto it = clean.constBegin(); it != clean.constEnd(); ++it) s.setValue(it.key(), *it);
    s.endGroup();
    emit modelDefaultsChanged();
    emit settingsChanged();
}

int AppSettings::modelPersona(const QString& model_path) const {
    bool ok = false;
    const qlonglong id =
        settings_->value(model_key("persona", model_of(model_path))).toLongLong(&ok);
    return ok && id > 0 && id <= std::numeric_limits<int>::max() ? static_cast<int>(id) : -1;
}

void AppSettings::setModelPersona(const QString& model_path, int persona_id) {
    const QString path = model_of(model_path);
    if (path.isEmpty()) return;
    const int id = persona_id > 0 ? persona_id : -1;
    if (id == modelPersona(path)) return;
    if (id < 0)
        settings_->remove(model_key("persona", path));
    else
        settings_->setValue(model_key("persona", path), id);
    emit modelDefaultsChanged();
    emit settingsChanged();
}

int AppSettings::modelContextLength(const QString& model_path) const {
    return contextLengthFor(model_of(model_path));
}

void AppSettings::setModelContextLength(const QString& model_path, int length) {
    const QString path = model_of(model_path);
    if (path.isEmpty()) return;
    // The open model's goes through its property, so the engine restarts with it.
    if (model_key("contextLength", path) == model_key("contextLength")) {
        setContextLength(length);
        return;
    }
    const int c = length <= 0 ? 0 : std::clamp(length, kContextLengthMin, kContextLengthMax);
    if (c == contextLengthFor(path)) return;
    settings_->setValue(model_key("contextLength", path), c);
    emit modelDefaultsChanged();
    emit settingsChanged();
}
