pragma Singleton
import QtQuick

// What a reply gets where a persona or a chat sets nothing of its own: the app's settings,
// then `over` (a persona's own settings, for a chat's form).
QtObject {
    function of(settings, over) {
        const m = settings ? {
            temperature: settings.temperature,
            topP: settings.topP,
            minP: settings.minP,
            topK: settings.topK,
            repeatPenalty: settings.repeatPenalty,
            frequencyPenalty: settings.frequencyPenalty,
            presencePenalty: settings.presencePenalty,
            maxTokens: settings.maxReplyTokens
        } : {}
        for (const k in over) m[k] = over[k]
        return m
    }
}
