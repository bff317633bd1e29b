import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// Ctrl+K: type part of a title or of what was said, Enter opens the conversation (Up/Down
// choose): titles that match first, then the chats whose messages match (full-text
// search), each opened at its matching message. It keeps lists of its own, so a search
// in the sidebar (which turns that list into search hits) does not hide any from it.
Popup {
    id: popup
    required property var store
    property color subtleText
    property var all: []
    property var messageMatches: []  // one per chat: its best matching message
    signal chosen(var conversationId, var messageId)  // messageId: -1 for a title match

    readonly property var matches: {
        const q = field.text.trim().toLowerCase()
        const titles = all.filter(c => q === "" || c.title.toLowerCase().indexOf(q) >= 0)
        const ids = new Set(titles.map(c => c.id))
        return titles.concat(messageMatches.filter(m => !ids.has(m.id))).slice(0, 12)
    }

    parent: Overlay.overlay
    x: (parent.width - width) / 2
    y: parent.height * 0.15
    width: Math.min(520, parent.width - 48)
    modal: true
    focus: true
    padding: 8
    Material.elevation: 8

    ConversationListModel {
        id: conversations
        objectName: "quickSwitcherConversations"
        store: popup.store
        onLoaded: popup.collect()
    }
    ConversationListModel {
        id: hits
        objectName: "quickSwitcherHits"
        store: popup.store
        onLoaded: popup.collectHits()
    }
    Timer {
        id: searchTimer
        interval: 150
        onTriggered: hits.search(field.text.trim().length >= 2 ? field.text.trim() : "")
    }
    function collectHits() {
        const list = []
        const seen = new Set()
        if (hits.searching) {
            for (let i = 0; i < hits.count; ++i) {
                const h = hits.get(i)
                if (!h.isSearchHit || seen.has(h.conversationId)) continue
                seen.add(h.conversationId)
                list.push({id: h.conversationId, title: h.title !== "" ? h.title : qsTr("New chat"),
                           pinned: false, messageId: h.messageId,
                           snippet: (h.messageRole === "user" ? qsTr("You: ") : "") + h.snippetHtml})
            }
        }
        messageMatches = list
    }
    function collect() {
        const list = []
        for (let i = 0; i < conversations.count; ++i) {
            const c = conversations.get(i)
            list.push({id: c.conversationId, title: c.title !== "" ? c.title : qsTr("New chat"),
                       pinned: c.pinned, messageId: -1, snippet: ""})
        }
        all = list
    }

    onAboutToShow: {
        collect()
        field.text = ""
        messageMatches = []
        results.currentIndex = 0
    }
    onOpened: field.forceActiveFocus()

    function choose(i) {
        if (i < 0 || i >= matches.length) return
        const m = matches[i]
        close()
        chosen(m.id, m.messageId)
    }

    contentItem: ColumnLayout {
        spacing: 4
        TextField {
            id: field
            objectName: "quickSwitcherField"
            Layout.fillWidth: true
            placeholderText: qsTr("Go to a chat…")
            onTextChanged: {
                results.currentIndex = 0
                searchTimer.restart()
            }
            Keys.onDownPressed: results.currentIndex = Math.min(results.currentIndex + 1, results.count - 1)
            Keys.onUpPressed: results.currentIndex = Math.max(results.currentIndex - 1, 0)
            onAccepted: popup.choose(results.currentIndex)
        }
        ListView {
            id: results
            objectName: "quickSwitcherList"
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(contentHeight, 360)
            clip: true
            model: popup.matches
            highlightMoveDuration: 0
            delegate: ItemDelegate {
                id: switcherRow
                required property var modelData
                required property int index
                objectName: "quickSwitcherItem_" + index
                width: ListView.view.width
                text: (modelData.pinned ? "⚑  " : "") + modelData.title
                highlighted: ListView.isCurrentItem
                onClicked: popup.choose(index)
                // A message match: the chat's title over the matching words.
                contentItem: ColumnLayout {
                    spacing: 2
                    Label {
                        text: switcherRow.text
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "quickSwitcherSnippet"
                        visible: switcherRow.modelData.snippet !== ""
                        text: switcherRow.modelData.snippet
                        textFormat: Text.StyledText
                        elide: Text.ElideRight
                        maximumLineCount: 2
                        wrapMode: Text.Wrap
                        color: popup.subtleText
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
            }
        }
        Label {
            visible: results.count === 0
            text: qsTr("No chat has that in its title or its messages")
            color: popup.subtleText
            Layout.margins: 8
        }
    }
}
