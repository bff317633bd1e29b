// A persona's or a conversation's own reply settings (store::SamplingSettings) as the
// QVariantMap QML edits: a key per setting that is set, none for one left to the default
// below it (app → persona → conversation). Keys: temperature, topP, minP, topK,
// repeatPenalty, frequencyPenalty, presencePenalty, maxTokens, seed (a decimal string:
// JavaScript numbers lose 64-bit seeds), thinking, and stop: the stop strings as text to
// edit, one per line (an empty text: none, over any below); inside one, a line break is
// written \n, a tab \t and a backslash \\ as two.
#pragma once

#include <QVariantMap>

#include "store/types.h"

QVariantMap to_variant_map(const hearth::store::SamplingSettings& settings);

// Missing, null, undefined or empty values leave a setting unset; numbers are clamped to
// the ranges of the app's own settings (AppSettings); values that do not parse are unset.
hearth::store::SamplingSettings sampling_settings_from(const QVariantMap& map);

// The stop strings as that text, and back (blank lines are skipped, at most
// store's kMaxStopStrings are kept, each cut to kMaxStopChars).
QString stop_strings_text(const std::vector<QString>& stop);
std::vector<QString> stop_strings_from_text(const QString& text);
