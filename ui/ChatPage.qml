import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth
import Hearth.Core

// The conversation on screen: its messages (streaming replies, Markdown, actions and
// statistics per message) and the composer.
Page {
    id: page
    required property var chat
    required property var bridge
    required property var backend  // who answers (ChatBackend): this computer or a server
    required property var personas
    property color subtleText
    property color dividerColor
    property color personaColor
    property string personaAvatar
    property var sendHandler
    property var settings  // AppSettings
    signal newChatRequested(var personaId)
    signal forkRequested(var messageId)
    // The mark of a forked chat (as the chat list shows it): a branch where a font has one.
    readonly property string forkGlyph: Glyphs.canRender("\u2387") ? "\u2387" : "\u21b3"
    // A fork's "show the original": that chat, at the message it was copied up to.
    signal originRequested(var conversationId, var messageId)
    property bool sidebarToggleVisible: false  // the chat list is hidden (narrow window)
    signal sidebarToggled()

    function focusComposer() { composer.focusInput() }
    // The last message the user wrote, in its edit box (Up in an empty message box).
    function editLastMessage() {
        for (let row = page.chat.count - 1; row >= 0; --row) {
            if (page.chat.get(row).role !== "user") continue
            messages.positionViewAtIndex(row, ListView.Contain)
            const item = messages.itemAtIndex(row)
            if (item) item.startEditing()
            return
        }
    }
    // Shown (at start-up once the model is ready, or back from another page): the keyboard
    // goes to the message box, so that the first thing typed is not lost.
    onVisibleChanged: if (visible) composer.focusInput()

    background: Rectangle { color: page.Material.background }

    header: Rectangle {
        implicitHeight: 56
        color: page.Material.background
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 20
            anchors.rightMargin: 12
            spacing: 10
            ToolButton {
                objectName: "sidebarToggle"
                visible: page.sidebarToggleVisible
                text: "☰"
                font.pixelSize: 18
                Accessible.name: qsTr("Show the chat list (Ctrl+B)")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: Accessible.name
                onClicked: page.sidebarToggled()
            }
            Avatar {
                objectName: "chatHeaderAvatar"
                visible: page.chat.conversationId >= 0
                size: 30
                glyph: page.personaAvatar
                name: page.chat.personaName
                tint: page.personaColor
            }
            ColumnLayout {
                spacing: 0
                Layout.fillWidth: true
                Label {
                    objectName: "chatTitle"
                    text: page.chat.conversationId < 0 ? qsTr("No chat open")
                          : (page.chat.title !== "" ? page.chat.title : qsTr("New chat"))
                    font.pixelSize: 16
                    font.weight: Font.DemiBold
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                RowLayout {
                    visible: page.chat.conversationId >= 0
                    Layout.fillWidth: true
                    spacing: 0
                    // A fork says where it came from, and goes there on a click.
                    Label {
                        id: forkOrigin
                        objectName: "forkOrigin"
                        readonly property var origin: page.chat.forkOrigin
                        visible: origin.conversationId !== undefined
                        text: visible ? page.forkGlyph + " " + qsTr("Forked from “%1”").arg(origin.title !== "" ? origin.title : qsTr("New chat")) + " · " : ""
                        color: page.Material.accent
                        font.pixelSize: 12
                        elide: Text.ElideRight
                        Layout.maximumWidth: 260
                        Accessible.role: Accessible.Link
                        Accessible.name: qsTr("Forked from “%1”: show the original").arg(origin.title || "")
                        HoverHandler { cursorShape: Qt.PointingHandCursor }
                        TapHandler { onTapped: page.originRequested(forkOrigin.origin.conversationId, forkOrigin.origin.messageId) }
                    }
                    Label {
                        text: (page.chat.personaName !== "" ? page.chat.personaName : qsTr("No persona"))
                              + " · " + page.backend.displayName
                              + (page.chat.droppedMessages > 0 ? " · " + qsTr("%n older message(s) beyond the model's memory", "", page.chat.droppedMessages) : "")
                        color: page.subtleText
                        font.pixelSize: 12
                        elide: Text.ElideRight
                        // As wide as its text where there is room: the meter follows it.
                        Layout.preferredWidth: Math.min(implicitWidth, parent.width - (contextMeter.visible ? contextMeter.implicitWidth : 0)
                                                                      - (forkOrigin.visible ? forkOrigin.width : 0))
                    }
                    // How much of the model's context the chat fills: its last reply's prompt
                    // and the reply itself (the next turn adds to it).
                    Label {
                        id: contextMeter
                        objectName: "contextMeter"
                        readonly property int limit: !page.backend.remote && page.bridge ? page.bridge.contextLength : 0
                        readonly property int used: {
                            page.chat.count; page.chat.generating  // read again as replies end
                            for (let row = page.chat.count - 1; row >= 0; --row) {
                                const m = page.chat.get(row)
                                if (m.role === "assistant" && m.generatedTokens > 0)
                                    return m.promptTokensCached + m.promptTokensComputed + m.promptTokensShifted + m.generatedTokens
                            }
                            return 0
                        }
                        visible: limit > 0 && used > 0
                        text: " · " + qsTr("%1 of %2 tokens").arg(used.toLocaleString(Qt.locale(), "f", 0)).arg(limit.toLocaleString(Qt.locale(), "f", 0))
                        color: used > 0.9 * limit ? page.Material.accent : page.subtleText
                        font.pixelSize: 12
                        HoverHandler { id: meterHover }
                        ToolTip.visible: meterHover.hovered
                        ToolTip.delay: 400
                        ToolTip.text: page.chat.droppedMessages > 0
                                      ? qsTr("The model's context holds %1 tokens; the oldest messages no longer fit and are left out of what it sees.").arg(limit)
                                      : qsTr("The model's context holds %1 tokens; it sees every message of this chat.").arg(limit)
                    }
                    Item { Layout.fillWidth: true }
                }
            }
            ToolButton {
                objectName: "chatDocumentsButton"
                visible: page.chat.conversationId >= 0
                text: chatDocuments.count > 0 ? qsTr("Documents (%1)").arg(chatDocuments.count) : qsTr("Documents")
                font.pixelSize: 12
                flat: true
                onClicked: chatDocumentsDialog.openForChat()
            }
            ToolButton {
                objectName: "chatSettingsButton"
                visible: page.chat.conversationId >= 0
                text: qsTr("Reply settings")
                font.pixelSize: 12
                flat: true
                onClicked: chatSettings.openForChat()
            }
        }
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: page.dividerColor }
    }

    // The chat's own documents (its persona's are in the persona's editor).
    ConversationDocuments {
        id: chatDocuments
        objectName: "chatDocumentsModel"
        store: page.chat.store
        bridge: page.bridge
        conversationId: page.chat.conversationId
        conversationRoom: page.personas.conversationRoom
    }
    ChatDocumentsDialog {
        id: chatDocumentsDialog
        objectName: "chatDocumentsDialog"
        documents: chatDocuments
        conversationId: page.chat.conversationId
    }

    ChatSettingsDialog {
        id: chatSettings
        objectName: "chatSettingsDialog"
        chat: page.chat
        settings: page.settings
        thinkingSwitch: page.bridge ? page.bridge.thinkingSwitch : false
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ListView {
            id: messages
            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: page.chat
            spacing: 4
            topMargin: 16
            bottomMargin: 16
            boundsBehavior: Flickable.StopAtBounds
            reuseItems: false
            ScrollBar.vertical: ScrollBar {}
            // Follow a streaming reply while the view is at the end.
            property bool stick: true
            onMovementEnded: stick = atYEnd
            // Deferred, and only if still following when it runs: a search hit that
            // arrives in between stops the follow.
            function followEnd() { if (stick) positionViewAtEnd() }
            function revealAgain() {
                if (revealedRow >= 0) positionViewAtIndex(revealedRow, ListView.Beginning)
            }
            onContentHeightChanged: if (stick) Qt.callLater(followEnd)
            onCountChanged: {
                // Rows that arrive just after a search hit keep the hit in view.
                if (revealedRow >= 0) { Qt.callLater(revealAgain); return }
                stick = true
                Qt.callLater(followEnd)
            }
            Connections {
                target: page.chat
                function onConversationIdChanged() { messages.revealedRow = -1; messages.stick = true }
                // A reply the user started (send, edit, regenerate, continue) is followed,
                // even just after a search hit was shown (its mark held the view there).
                function onReplyStarted(messageId) {
                    messages.revealedRow = -1
                    messages.stick = true
                    Qt.callLater(messages.followEnd)
                }
                // A search hit: scroll to it (twice: rows above it that were not built yet
                // get their real heights on the first pass) and mark it for a moment.
                function onMessageRevealed(row) {
                    messages.stick = false
                    messages.revealedRow = row
                    messages.positionViewAtIndex(row, ListView.Beginning)
                    Qt.callLater(messages.revealAgain)
                    revealTimer.restart()
                }
            }
            property int revealedRow: -1
            Timer { id: revealTimer; interval: 2000; onTriggered: messages.revealedRow = -1 }

            delegate: MessageDelegate {
                width: messages.width
                chat: page.chat
                subtleText: page.subtleText
                dividerColor: page.dividerColor
                personaColor: page.personaColor
                personaAvatar: page.personaAvatar
                personaName: page.chat.personaName
                isLast: index === messages.count - 1
                revealed: index === messages.revealedRow
                onEditFinished: composer.focusInput()
                onForkRequested: id => page.forkRequested(id)
            }

            // An empty chat, or none open.
            ColumnLayout {
                anchors.centerIn: parent
                width: Math.min(parent.width - 48, 520)
                visible: messages.count === 0
                spacing: 12
                Label {
                    Layout.alignment: Qt.AlignHCenter
                    text: page.chat.conversationId < 0 ? qsTr("Start a conversation")
                          : page.chat.personaName !== "" ? qsTr("Say hello to %1").arg(page.chat.personaName) : qsTr("Say hello")
                    font.pixelSize: 22
                    font.weight: Font.Light
                }
                Label {
                    Layout.fillWidth: true
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    color: page.subtleText
                    text: page.chat.conversationId < 0
                          ? (page.backend.remote ? qsTr("Type below to start a plain chat, or pick a persona. Replies come from %1; the history stays on this computer.").arg(page.backend.displayName)
                                                 : qsTr("Type below to start a plain chat, or pick a persona. Everything stays on this computer."))
                          : page.backend.remote
                            ? qsTr("Replies come from %1 on another machine.").arg(page.backend.displayName)
                            : qsTr("Replies are generated by %1 on this computer.").arg(page.backend.displayName)
                }
                // An open chat with no message yet can still change persona (Ctrl+N gives a
                // new chat the persona of the one on screen: said here, not silently).
                Label {
                    objectName: "emptyChatPersonaNote"
                    visible: page.chat.conversationId >= 0
                    Layout.fillWidth: true
                    Layout.topMargin: 8
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    color: page.subtleText
                    text: page.chat.personaName !== ""
                          ? qsTr("This chat uses the persona %1. Before you write, you can pick another:").arg(page.chat.personaName)
                          : qsTr("This is a plain chat. Before you write, you can pick a persona:")
                }
                Flow {
                    Layout.fillWidth: true
                    Layout.topMargin: page.chat.conversationId < 0 ? 8 : 0
                    spacing: 8
                    Button {
                        objectName: "emptyChatPlain"
                        visible: page.chat.conversationId >= 0
                        text: (page.chat.personaId < 0 ? "✓ " : "") + qsTr("Plain chat")
                        flat: true
                        onClicked: page.chat.choosePersona(-1)
                    }
                    Repeater {
                        model: page.personas
                        delegate: Button {
                            required property var personaId
                            required property string name
                            required property string color
                            objectName: "emptyChatPersona_" + name
                            // ✓: the open chat's persona.
                            text: (page.chat.conversationId >= 0 && page.chat.personaId === personaId ? "✓ " : "") + name
                            flat: true
                            Material.foreground: color !== "" ? color : Material.accent
                            onClicked: page.chat.conversationId >= 0 ? page.chat.choosePersona(personaId)
                                                                     : page.newChatRequested(personaId)
                        }
                    }
                }
            }
        }

        // The chat has outgrown the context and the model's setting is "ask": the reply
        // waits for the user's choice.
        Pane {
            objectName: "contextFullPanel"
            visible: page.chat.contextFull
            Layout.fillWidth: true
            Layout.maximumWidth: 900
            Layout.alignment: Qt.AlignHCenter
            Material.elevation: 2
            ColumnLayout {
                anchors.fill: parent
                spacing: 8
                Label {
                    text: page.chat.contextFullText
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                RowLayout {
                    spacing: 8
                    AccentButton {
                        objectName: "contextDropButton"
                        text: qsTr("Leave the oldest messages out")
                        onClicked: page.chat.resolveContextFull("drop", rememberOverflow.checked)
                    }
                    Button {
                        objectName: "contextShiftButton"
                        text: qsTr("Shift (faster, not exact)")
                        onClicked: page.chat.resolveContextFull("shift", rememberOverflow.checked)
                    }
                    CheckBox {
                        id: rememberOverflow
                        objectName: "contextRememberCheck"
                        text: qsTr("Always for this model")
                    }
                }
            }
        }

        Composer {
            id: composer
            objectName: "composer"
            Layout.fillWidth: true
            Layout.maximumWidth: 900
            Layout.alignment: Qt.AlignHCenter
            Layout.leftMargin: 20
            Layout.rightMargin: 20
            Layout.bottomMargin: 16
            chat: page.chat
            backend: page.backend
            subtleText: page.subtleText
            placeholder: page.chat.personaName !== "" ? qsTr("Message %1").arg(page.chat.personaName) : qsTr("Message")
            sendHandler: page.sendHandler
            onEditLastRequested: page.editLastMessage()
        }
    }
}
