pragma Singleton
import QtQuick

// Numbers as people read them: durations in the unit that fits, memory in binary units
// named as such (MiB, GiB), counts with their unit.
QtObject {
    // A number with `places` decimals as the interface's language writes it (2.5 or 2,5).
    function decimal(n, places) {
        // Qt.locale() is the default locale, which UiTranslator sets with the language; the
        // language is read here so that bindings calling this follow a change of it.
        const language = Qt.uiLanguage
        return Number(n).toLocaleString(Qt.locale(), 'f', places)
    }
    // 850 ms, 2.4 s, 38 s, 3 min 42 s, 1 h 5 min
    function duration(ms) {
        if (ms < 0 || isNaN(ms)) return ""
        if (ms < 1000) return qsTr("%1 ms").arg(Math.round(ms))
        const s = ms / 1000
        if (s < 10) return qsTr("%1 s").arg(decimal(s, 1))
        if (s < 60) return qsTr("%1 s").arg(Math.round(s))
        const whole = Math.round(s)
        const h = Math.floor(whole / 3600), m = Math.floor(whole / 60) % 60, sec = whole % 60
        if (h > 0) return qsTr("%1 h %2 min").arg(h).arg(m)
        return sec > 0 ? qsTr("%1 min %2 s").arg(m).arg(sec) : qsTr("%1 min").arg(m)
    }
    // When something last happened: "today", "yesterday", "3 days ago", else the date.
    function ago(date) {
        if (!date || isNaN(date.getTime())) return ""
        const language = Qt.uiLanguage
        const startOfDay = d => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime()
        const days = Math.round((startOfDay(new Date()) - startOfDay(date)) / 86400000)
        if (days <= 0) return qsTr("today")
        if (days === 1) return qsTr("yesterday")
        if (days < 30) return qsTr("%1 days ago").arg(days)
        return date.toLocaleDateString(Qt.locale(), Locale.ShortFormat)
    }
    // 512 KiB, 98.4 MiB, 1.50 GiB
    function bytes(n) {
        if (n < 1024) return qsTr("%1 bytes").arg(n)
        if (n < 1048576) return qsTr("%1 KiB").arg(decimal(n / 1024, 0))
        if (n < 1073741824) return qsTr("%1 MiB").arg(decimal(n / 1048576, 1))
        return qsTr("%1 GiB").arg(decimal(n / 1073741824, 2))
    }
}
