#include "core/sampling_settings_map.h"

#include <algorithm>
#include <cmath>

#include "core/app_settings.h"

namespace st = hearth::store;

namespace {

template <typename T>
void put(QVariantMap& m, const char* key, const std::optional<T>& v) {
    if (v) m.insert(QLatin1String(key), QVariant::fromValue(*v));
}

bool present(const QVariantMap& m, const char* key) {
    const QVariant v = m.value(QLatin1String(key));
    return v.isValid() && !v.isNull() &&
           !(v.typeId() == QMetaType::QString && v.toString().trimmed().isEmpty());
}

std::optional<double> real(const QVariantMap& m, const char* key, double lo, double hi) {
    if (!present(m, key)) return std::nullopt;
    bool ok = false;
    const double v = m.value(QLatin1String(key)).toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::nullopt;
    return std::clamp(v, lo, hi);
}

std::optional<int> integer(const QVariantMap& m, const char* key, int lo, int hi) {
    if (!present(m, key)) return std::nullopt;
    bool ok = false;
    const double v = m.value(QLatin1String(key)).toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::nullopt;
    return static_cast<int>(
        std::clamp(std::round(v), static_cast<double>(lo), static_cast<double>(hi)));
}

}  // namespace

QString stop_strings_text(const std::vector<QString>& stop) {
    QStringList lines;
    for (const QString& text : stop) {
        QString line;
        for (const QChar c : text) {
            if (c == QLatin1Char('\\'))
                line += QLatin1String("\\\\");
            else if (c == QLatin1Char('\n'))
                line += QLatin1String("\\n");
            else if (c == QLatin1Char('\t'))
                line += QLatin1String("\\t");
            else if (c != QLatin1Char('\r'))
                line += c;
        }
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

std::vector<QString> stop_strings_from_text(const QString& text) {
    std::vector<QString> out;
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        QString s;
        for (qsizetype i = 0; i < line.size(); ++i) {
            const QChar c = line[i];
            if (c == QLatin1Char('\r')) continue;
            if (c == QLatin1Char('\\') && i + 1 < line.size()) {
                const QChar next = line[i + 1];
                if (next == QLatin1Char('n') || next == QLatin1Char('t') ||
                    next == QLatin1Char('\\')) {
                    s += next == QLatin1Char('n')   ? QLatin1Char('\n')
                         : next == QLatin1Char('t') ? QLatin1Char('\t')
                                                    : QLatin1Char('\\');
                    ++i;
                    continue;
                }
            }
            s += c;
        }
        if (s.isEmpty()) continue;
        out.push_back(s.left(hearth::store::kMaxStopChars));
        if (out.size() == hearth::store::kMaxStopStrings) break;
    }
    return out;
}

QVariantMap to_variant_map(const st::SamplingSettings& s) {
    QVariantMap m;
    put(m, "temperature", s.temperature);
    put(m, "topP", s.top_p);
    put(m, "minP", s.min_p);
    put(m, "topK", s.top_k);
    put(m, "repeatPenalty", s.repeat_penalty);
    put(m, "frequencyPenalty", s.frequency_penalty);
    put(m, "presencePenalty", s.presence_penalty);
    put(m, "maxTokens", s.max_tokens);
    if (s.seed) m.insert(QStringLiteral("seed"), QString::number(static_cast<quint64>(*s.seed)));
    put(m, "thinking", s.thinking);
    if (s.stop) m.insert(QStringLiteral("stop"), stop_strings_text(*s.stop));
    return m;
}

st::SamplingSettings sampling_settings_from(const QVariantMap& m) {
    using A = AppSettings;
    st::SamplingSettings s;
    s.temperature = real(m, "temperature", A::kTemperatureMin, A::kTemperatureMax);
    s.top_p = real(m, "topP", A::kTopPMin, A::kTopPMax);
    s.min_p = real(m, "minP", A::kMinPMin, A::kMinPMax);
    s.top_k = integer(m, "topK", A::kTopKMin, A::kTopKMax);
    s.repeat_penalty = real(m, "repeatPenalty", A::kRepeatPenaltyMin, A::kRepeatPenaltyMax);
    s.frequency_penalty =
        real(m, "frequencyPenalty", A::kFrequencyPenaltyMin, A::kFrequencyPenaltyMax);
    s.presence_penalty = real(m, "presencePenalty", A::kPresencePenaltyMin, A::kPresencePenaltyMax);
    s.max_tokens = integer(m, "maxTokens", A::kMaxReplyTokensMin, A::kMaxReplyTokensMax);
    if (present(m, "seed")) {
        bool ok = false;
        const quint64 seed = m.value(QStringLiteral("seed")).toString().trimmed().toULongLong(&ok);
        if (ok) s.seed = static_cast<std::int64_t>(seed);
    }
    if (present(m, "thinking")) s.thinking = m.value(QStringLiteral("thinking")).toBool();
    // Set with an empty text: no stop strings here, whatever the persona has.
    const QVariant stop = m.value(QStringLiteral("stop"));
    if (stop.isValid() && !stop.isNull()) s.stop = stop_strings_from_text(stop.toString());
    return s;
}
