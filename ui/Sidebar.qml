import QtQml
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import QtQuick.Dialogs
import Hearth

// The conversations: pinned first, then newest; while the search field has text, the
// messages matching it (full-text search) with the matches highlighted. Each row has a
// menu: rename, pin, archive, export (Markdown, JSON), delete (undo in the snackbar); New
// chat's menu imports a chat. A chat with a reply under
// way shows a pulsing dot; while the pointer is over the list its order holds (a reply
// ending elsewhere does not move the row about to be clicked).
Rectangle {
    id: sidebar
    required property var conversations
    required property var personas
    property var currentId: -1
    property var busyIds: []  // conversations with a reply under way
    property color background
    property color dividerColor
    property color subtleText
    color: background

    // The mark of a forked chat: a branch (⎇) where a font has it, else an arrow.
    readonly property string forkGlyph: Glyphs.canRender("\u2387") ? "\u2387" : "\u21b3"
    signal openRequested(var conversationId, var messageId)  // messageId: a search hit's, else -1
    signal newChatRequested(var personaId)

    function focusSearch() {
        searchField.forceActiveFocus()
        searchField.selectAll()
    }
    function personaOf(id) {
        const row = personas.rowOf(id)
        return row >= 0 ? personas.get(row) : null
    }
    function relativeTime(ms) {
        const d = new Date(ms)
        const now = new Date()
        if (d.toDateString() === now.toDateString()) return Qt.formatTime(d, "hh:mm")
        const days = Math.floor((now - d) / 86400000)
        if (days < 7) return Qt.formatDate(d, "ddd")
        return Qt.formatDate(d, "d MMM")
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Chats")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                Layout.fillWidth: true
            }
            AccentButton {
                id: newChatButton
                objectName: "newChatButton"
                text: qsTr("New chat")
                Material.elevation: 0
                // Not over its own menu.
                ToolTip.visible: hovered && !personaMenu.visible
                ToolTip.delay: 600
                ToolTip.text: qsTr("New chat (Ctrl+N); choose a persona")
                onClicked: personaMenu.popup(newChatButton, 0, newChatButton.height)
                Menu {
                    id: personaMenu
                    width: {
                        let w = 0
                        for (let i = 0; i < count; ++i) if (itemAt(i)) w = Math.max(w, itemAt(i).implicitWidth)
                        return Math.max(200, w + leftPadding + rightPadding)
                    }
                    MenuItem { text: qsTr("Plain chat (no persona)"); onTriggered: sidebar.newChatRequested(-1) }
                    MenuItem {
                        objectName: "importChatItem"
                        text: qsTr("Import a chat (JSON)…")
                        onTriggered: importDialog.open()
                    }
                    MenuSeparator {}
                    // An Instantiator, not a Repeater: a Menu stacks the items it is given,
                    // and a Repeater's delegates are not its children.
                    Instantiator {
                        model: sidebar.personas
                        delegate: MenuItem {
                            required property var personaId
                            required property string name
                            text: name
                            onTriggered: sidebar.newChatRequested(personaId)
                        }
                        onObjectAdded: (index, item) => personaMenu.insertItem(index + 3, item)
                        onObjectRemoved: (index, item) => personaMenu.removeItem(item)
                    }
                }
            }
        }

        TextField {
            id: searchField
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search all chats (Ctrl+F)")
            Accessible.name: qsTr("Search all chats")
            selectByMouse: true
            onTextChanged: searchTimer.restart()
            Keys.onEscapePressed: text = ""
            Timer {
                id: searchTimer
                interval: 150
                onTriggered: sidebar.conversations.search(searchField.text)
            }
        }

        Label {
            visible: sidebar.conversations.searching
            text: sidebar.conversations.count === 0 ? qsTr("No messages match") : qsTr("%n match(es)", "", sidebar.conversations.count)
            color: sidebar.subtleText
            font.pixelSize: 12
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: sidebar.conversations
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar {}
            HoverHandler { id: listHover }
            Binding {
                target: sidebar.conversations
                property: "holdOrder"
                value: listHover.hovered
            }

            // Pinned and recent chats; while searching, one group per chat: its title
            // over its matching messages.
            section.property: sidebar.conversations.searching ? "conversationId" : "pinned"
            section.criteria: ViewSection.FullString
            section.delegate: Item {
                id: sectionItem
                required property string section
                readonly property bool searching: sidebar.conversations.searching
                readonly property var hit: {
                    sidebar.conversations.count
                    if (!searching) return null
                    const h = sidebar.conversations.get(sidebar.conversations.rowOf(Number(section)))
                    return h.conversationId !== undefined ? h : null
                }
                readonly property int personaId: hit ? hit.personaId : -1
                // (An item around the label: a label's own height bound to its implicit
                // height is a binding loop.)
                width: ListView.view ? ListView.view.width : 0
                height: sectionLabel.implicitHeight + (searching ? 12 : 10)
                RowLayout {
                    width: parent.width
                    spacing: 8
                    Avatar {
                        visible: sectionItem.searching
                        readonly property var persona: sectionItem.personaId >= 0 ? sidebar.personaOf(sectionItem.personaId) : null
                        size: 20
                        glyph: persona && persona.avatar ? persona.avatar : ""
                        name: persona ? persona.name : sectionLabel.text
                        tint: { sidebar.personas.count; return sidebar.personas.colorOf(sectionItem.personaId) }
                        Layout.topMargin: 8
                    }
                    Label {
                        id: sectionLabel
                        objectName: "searchGroupTitle"
                        topPadding: sectionItem.searching ? 8 : 6
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                        text: sectionItem.searching
                              ? (sectionItem.hit && sectionItem.hit.title !== "" ? sectionItem.hit.title : qsTr("New chat"))
                              : sectionItem.section === "true" ? qsTr("PINNED") : qsTr("RECENT")
                        font.pixelSize: sectionItem.searching ? 13 : 11
                        font.letterSpacing: sectionItem.searching ? 0 : 1
                        font.weight: sectionItem.searching ? Font.DemiBold : Font.Normal
                        color: sectionItem.searching ? sidebar.Material.foreground : sidebar.subtleText
                    }
                }
            }

            delegate: ItemDelegate {
                id: row
                required property int index
                required property var conversationId
                required property string title
                required property var personaId
                required property bool pinned
                required property bool archived
                required property var updatedAt
                required property bool isSearchHit
                required property var messageId
                required property string snippetHtml
                required property string messageRole
                required property bool forked
                readonly property bool busy: !isSearchHit && sidebar.busyIds.indexOf(conversationId) >= 0
                objectName: "conversationRow_" + index
                Accessible.name: (title !== "" ? title : qsTr("New chat"))
                                 + (forked ? qsTr(", a fork") : "")
                                 + (busy ? qsTr(", generating") : "")
                                 + (isSearchHit ? ": " + snippetHtml.replace(/<[^>]*>/g, "") : "")
                width: ListView.view.width
                highlighted: conversationId === sidebar.currentId && !isSearchHit
                padding: 8
                leftPadding: isSearchHit ? 36 : 8
                onClicked: sidebar.openRequested(conversationId, isSearchHit ? messageId : -1)
                TapHandler {
                    acceptedButtons: Qt.RightButton
                    onTapped: rowMenu.popup()
                }

                background: Rectangle {
                    radius: 10
                    readonly property color a: row.Material.accent
                    readonly property color f: row.Material.foreground
                    color: row.highlighted ? Qt.rgba(a.r, a.g, a.b, 0.14)
                                           : row.hovered ? Qt.rgba(f.r, f.g, f.b, 0.05) : "transparent"
                }
                contentItem: RowLayout {
                    spacing: 10
                    Avatar {
                        visible: !row.isSearchHit  // (the group's title has it)
                        readonly property var persona: row.personaId >= 0 ? sidebar.personaOf(row.personaId) : null
                        size: 30
                        glyph: persona && persona.avatar ? persona.avatar : ""
                        name: persona ? persona.name : row.title
                        objectName: "conversationAvatar"
                        tint: { sidebar.personas.count; return sidebar.personas.colorOf(row.personaId) }
                        Layout.alignment: Qt.AlignTop
                    }
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 2
                        RowLayout {
                            Layout.fillWidth: true
                            visible: !row.isSearchHit  // (under its group's title)
                            Label {
                                text: row.title !== "" ? row.title : qsTr("New chat")
                                elide: Text.ElideRight
                                font.weight: row.highlighted ? Font.DemiBold : Font.Normal
                                Layout.fillWidth: true
                            }
                            Label {
                                objectName: "forkMark"
                                visible: row.forked && !row.isSearchHit
                                text: sidebar.forkGlyph
                                color: row.Material.accent
                                font.pixelSize: 13
                                ToolTip.visible: forkHover.hovered
                                ToolTip.delay: 600
                                ToolTip.text: qsTr("A fork of another chat")
                                HoverHandler { id: forkHover }
                            }
                            Label {
                                visible: row.pinned && !row.isSearchHit
                                text: "⚑"
                                color: row.Material.accent
                                font.pixelSize: 12
                            }
                            Rectangle {
                                id: busyDot
                                objectName: "busyDot"
                                visible: row.busy
                                implicitWidth: 8
                                implicitHeight: 8
                                radius: 4
                                color: row.Material.accent
                                Accessible.role: Accessible.Indicator
                                Accessible.name: qsTr("Generating")
                                SequentialAnimation on opacity {
                                    running: busyDot.visible
                                    loops: Animation.Infinite
                                    NumberAnimation { to: 0.3; duration: 600 }
                                    NumberAnimation { to: 1; duration: 600 }
                                }
                            }
                            Label {
                                visible: !row.isSearchHit && !row.busy
                                text: sidebar.relativeTime(row.updatedAt)
                                color: sidebar.subtleText
                                font.pixelSize: 11
                            }
                        }
                        Label {
                            objectName: "searchSnippet"
                            visible: row.isSearchHit
                            Layout.fillWidth: true
                            text: (row.messageRole === "user" ? qsTr("You: ") : "") + row.snippetHtml
                            textFormat: Text.StyledText
                            wrapMode: Text.Wrap
                            maximumLineCount: 3
                            elide: Text.ElideRight
                            color: sidebar.subtleText
                            font.pixelSize: 12
                        }
                        Label {
                            visible: row.archived && !row.isSearchHit
                            text: qsTr("Archived")
                            color: sidebar.subtleText
                            font.pixelSize: 11
                        }
                    }
                    ToolButton {
                        visible: (row.hovered || row.highlighted) && !row.isSearchHit
                        objectName: "conversationActions"
                        text: "⋯"
                        implicitWidth: 32
                        implicitHeight: 32
                        Accessible.name: qsTr("Conversation actions")
                        onClicked: rowMenu.popup()
                    }
                }
                Menu {
                    id: rowMenu
                    // As wide as its longest entry (a translation's too), not cut at 200.
                    width: {
                        let w = 0
                        for (let i = 0; i < count; ++i) if (itemAt(i)) w = Math.max(w, itemAt(i).implicitWidth)
                        return Math.max(200, w + leftPadding + rightPadding)
                    }
                    MenuItem { text: qsTr("Rename…"); onTriggered: renameDialog.ask(row.conversationId, row.title) }
                    MenuItem {
                        text: row.pinned ? qsTr("Unpin") : qsTr("Pin to top")
                        onTriggered: sidebar.conversations.setPinned(row.conversationId, !row.pinned)
                    }
                    MenuItem {
                        text: row.archived ? qsTr("Unarchive") : qsTr("Archive")
                        onTriggered: sidebar.conversations.setArchived(row.conversationId, !row.archived)
                    }
                    MenuItem {
                        objectName: "exportMarkdownItem"
                        text: qsTr("Export as Markdown…")
                        onTriggered: exportDialog.ask(row.conversationId, row.title, "markdown")
                    }
                    MenuItem {
                        objectName: "exportJsonItem"
                        text: qsTr("Export as JSON…")
                        onTriggered: exportDialog.ask(row.conversationId, row.title, "json")
                    }
                    MenuSeparator {}
                    MenuItem {
                        text: qsTr("Delete")
                        Material.foreground: "#d84315"
                        onTriggered: sidebar.conversations.remove(row.conversationId)
                    }
                }
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0 && !sidebar.conversations.searching
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                text: qsTr("No chats yet.\nStart one with “New chat”, or from a persona.")
                color: sidebar.subtleText
            }
        }

        CheckBox {
            text: qsTr("Show archived")
            checked: sidebar.conversations.showArchived
            onToggled: sidebar.conversations.showArchived = checked
            font.pixelSize: 12
        }
    }

    // Export and import (the history's JSON format, or Markdown to read and share).
    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property var conversationId: -1
        property string format: "markdown"
        function ask(id, title, kind) {
            conversationId = id
            format = kind
            const name = (title !== "" ? title : qsTr("New chat")).replace(/[\\/:*?"<>|]+/g, " ").trim()
            currentFolder = documentsFolder
            selectedFile = documentsFolder + "/" + name + (kind === "json" ? ".json" : ".md")
            open()
        }
        title: format === "json" ? qsTr("Export the chat as JSON") : qsTr("Export the chat as Markdown")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Save")
        defaultSuffix: format === "json" ? "json" : "md"
        nameFilters: format === "json" ? [qsTr("Hearth chats (*.json)")] : [qsTr("Markdown (*.md)")]
        onAccepted: sidebar.conversations.exportConversation(conversationId, format, selectedFile.toString())
    }
    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a chat")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("Hearth chats (*.json)"), qsTr("All files (*)")]
        onAccepted: sidebar.conversations.importConversation(selectedFile.toString())
    }
    Connections {
        target: sidebar.conversations
        function onImported(id) { sidebar.openRequested(id, -1) }
    }

    Dialog {
        id: renameDialog
        objectName: "renameDialog"
        property var conversationId: -1
        function ask(id, title) {
            conversationId = id
            renameField.text = title
            open()
        }
        // Once open (the dialog takes the keyboard as it opens): the old title selected,
        // so that typing replaces it.
        onOpened: {
            renameField.forceActiveFocus()
            renameField.selectAll()
        }
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: 380
        modal: true
        focus: true  // the keyboard (Esc, Tab) is in the dialog
        title: qsTr("Rename chat")
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAccepted: if (renameField.text.trim() !== "") sidebar.conversations.rename(conversationId, renameField.text.trim())
        TextField {
            id: renameField
            objectName: "renameField"
            width: parent.width
            onAccepted: renameDialog.accept()
        }
    }
}
