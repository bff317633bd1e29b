pragma Singleton
import QtQuick

// What a reply gets where a persona or a chat sets nothing of its own: the app's settings,
// then each of `overs` in turn (the open model's own settings, then a persona's, for a
// chat's form).
QtObject {
    function of(settings, ...overs) {
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
        for (const over of overs)
            for (const k in over) m[k] = over[k]
        return m
    }
}
