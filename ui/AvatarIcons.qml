pragma Singleton
import QtQuick

// The icons a persona's badge can show ("icon:<name>" as its avatar), drawn as paths on a
// 24×24 grid so that they look the same on every machine, with no emoji font needed.
// Emoji that an earlier version stored as badges map to the icon that looks like them.
QtObject {
    readonly property var paths: ({
        "flame": "M12 2.5c.6 3.2-1.9 4.9-1.9 7.6 0 1.3.9 2.3 2.1 2.3 1.5 0 2.3-1.3 1.9-3.1 2.4 1.7 3.9 4.3 3.9 7 0 3.6-2.9 6.2-6.5 6.2s-6.5-2.6-6.5-6.2c0-4.8 4.3-7.6 7-13.8z",
        "code": "M8.6 6.6 10 8l-4 4 4 4-1.4 1.4L3.2 12zM15.4 6.6 14 8l4 4-4 4 1.4 1.4L20.8 12zM13.2 4.8l1.9.6-4.3 13.8-1.9-.6z",
        "cap": "M12 4 1.5 9 12 14l8.5-4.05V16h2V9zM6 12.3v3.5c0 1.6 2.7 3.2 6 3.2s6-1.6 6-3.2v-3.5l-6 2.9z",
        "pen": "M3 17.25V21h3.75L17.8 9.95l-3.75-3.75zM20.7 7.05a1 1 0 0 0 0-1.4l-2.35-2.35a1 1 0 0 0-1.4 0l-1.85 1.85 3.75 3.75z",
        "chat": "M6 4h12a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3h-8l-5 4v-4.3A3 3 0 0 1 3 15V7a3 3 0 0 1 3-3z",
        "star": "M12 2.5l2.9 6.1 6.6.8-4.9 4.6 1.3 6.5L12 17.3l-5.9 3.2 1.3-6.5-4.9-4.6 6.6-.8z",
        "bulb": "M12 2a7 7 0 0 0-4 12.7V17a1 1 0 0 0 1 1h6a1 1 0 0 0 1-1v-2.3A7 7 0 0 0 12 2zM9 19h6v1a2 2 0 0 1-2 2h-2a2 2 0 0 1-2-2z",
        "heart": "M12 21s-7.5-4.6-9.5-9.2C1.1 8.4 3.2 5 6.6 5c2 0 3.6 1.1 5.4 3.1C13.8 6.1 15.4 5 17.4 5c3.4 0 5.5 3.4 4.1 6.8C19.5 16.4 12 21 12 21z",
        "leaf": "M20.5 3.5C11 3.5 4.5 7 4.5 14c0 1.7.5 3.1 1.3 4.3L3.3 20.8l1.4 1.4 2.6-2.6c1.2.9 2.8 1.4 4.7 1.4 6.9 0 8.5-8.3 8.5-17.5zM8.7 17.4C10.5 13.9 13.2 11.3 16.8 9.8c-2.9 2.1-5.1 4.6-6.7 8.5z"
    })
    readonly property var names: ["flame", "code", "cap", "pen", "chat", "star", "bulb", "heart", "leaf"]
    readonly property var emoji: ({
        "🔥": "flame", "{ }": "code", "</>": "code", "💻": "code", "🎓": "cap", "📚": "cap",
        "✎": "pen", "✍": "pen", "✍️": "pen", "✏️": "pen", "✏": "pen", "💬": "chat",
        "⭐": "star", "★": "star", "💡": "bulb", "❤": "heart", "❤️": "heart", "🌿": "leaf", "🍃": "leaf"
    })

    // The icon a badge stands for: "icon:<name>", or an emoji that has one; "" otherwise.
    function iconFor(badge) {
        if (badge.startsWith("icon:")) {
            const name = badge.substring(5)
            return paths[name] !== undefined ? name : ""
        }
        return emoji[badge] !== undefined ? emoji[badge] : ""
    }
}
