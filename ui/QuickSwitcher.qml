import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// Ctrl+K: type part of a title, Enter opens the conversation (Up/Down choose). It keeps a
// list of its own, so a search in the sidebar (which turns that list into search hits)
// does not hide any conversation from it.
Popup {
    id: popup
    required property var store
    property color subtleText
    property var all: []
    signal chosen(var conversationId)

    readonly property var matches: {
        const q = field.text.trim().toLowerCase()
        return all.filter(c => q === "" || c.title.toLowerCase().indexOf(q) >= 0).slice(0, 12)
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
    function collect() {
        const list = []
        for (let i = 0; i < conversations.count; ++i) {
            const c = conversations.get(i)
            list.push({id: c.conversationId, title: c.title !== "" ? c.title : qsTr("New chat"), pinned: c.pinned})
        }
        all = list
    }

    onAboutToShow: {
        collect()
        field.text = ""
        results.currentIndex = 0
    }
    onOpened: field.forceActiveFocus()

    function choose(i) {
        if (i < 0 || i >= matches.length) return
        const id = matches[i].id
        close()
        chosen(id)
    }

    contentItem: ColumnLayout {
        spacing: 4
        TextField {
            id: field
            objectName: "quickSwitcherField"
            Layout.fillWidth: true
            placeholderText: qsTr("Go to a chat…")
            onTextChanged: results.currentIndex = 0
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
                required property var modelData
                required property int index
                width: ListView.view.width
                text: (modelData.pinned ? "⚑  " : "") + modelData.title
                highlighted: ListView.isCurrentItem
                onClicked: popup.choose(index)
            }
        }
        Label {
            visible: results.count === 0
            text: qsTr("No chat has that in its title")
            color: popup.subtleText
            Layout.margins: 8
        }
    }
}
