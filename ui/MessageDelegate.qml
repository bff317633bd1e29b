import QtQml
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// One message: who wrote it, its text (streaming while the reply is made) in segments:
// prose as Markdown, and fenced code blocks in monospace, each with its language and a
// Copy button of its own (CodeBlock.qml; the model splits the text: its `segments` role),
// the variant pager, the actions (copy, copy code, regenerate, edit and resend, delete)
// and, on hover, the reply's statistics. Messages the model no longer sees are dimmed,
// with a marker above the first one it still does.
Item {
    id: root
    objectName: "message_" + index
    required property int index
    required property var messageId
    required property string role
    required property string text
    required property string state
    required property int variantIndex
    required property int variantCount
    required property double ttftMs
    required property double tokensPerSecond
    required property int promptTokensCached
    required property int promptTokensShifted
    required property int promptTokensLoaded
    required property int draftTokens
    required property int draftAccepted
    required property int messagesDropped
    required property int promptTokensComputed
    required property int generatedTokens
    required property bool inContext
    required property string error
    required property double prefillProgress
    required property var segments  // [{kind: "text"|"code", text, language, open}]
    required property string finishReason  // "stop", "length", "cancelled", "error" or ""
    required property string seed
    // A reply's reasoning block (<think>…</think>): its text, "" / "thinking" / "done", and
    // its time in seconds (-1: not known); `answer` is the reply without it.
    required property string reasoning
    required property string reasoningState
    required property double reasoningSeconds
    required property string answer
    // A reply's sources: the passages of documents its message was given, best first,
    // [{name, heading, snippet, path, url, exists}] (MessageListModel::SourcesRole).
    required property var sources

    property var chat
    property color subtleText
    property color dividerColor
    property color personaColor
    property string personaAvatar
    property string personaName
    property bool isLast: false
    property bool revealed: false  // a search hit just opened: marked for a moment
    property bool editing: false
    property bool reasoningOpen: false  // the reasoning block shown (it starts collapsed)

    // The edit box opens in view: the list scrolls so that all of it, buttons included,
    // is on screen (it used to open below the composer), again as it grows.
    function startEditing() {
        editor.text = root.text
        root.editing = true
        editor.forceActiveFocus()
        editor.cursorPosition = editor.length
        revealEditor()
    }
    // The box closed (saved or cancelled): the keyboard goes back to the message box.
    signal editFinished()
    // "Fork from here": a new chat holding the thread up to this message.
    signal forkRequested(var messageId)
    function stopEditing() {
        root.editing = false
        root.editFinished()
    }
    function revealEditor() {
        if (root.editing && root.ListView.view)
            root.ListView.view.positionViewAtIndex(root.index, ListView.Contain)
    }
    onHeightChanged: if (editing) Qt.callLater(revealEditor)

    readonly property bool isUser: role === "user"
    readonly property bool streaming: state === "streaming"
    readonly property bool showMemoryMarker: inContext && index > 0 && chat.droppedMessages > 0
                                             && !chat.get(index - 1).inContext
    readonly property var codeBlocks: {
        const out = []
        for (let i = 0; i < segments.length; ++i)
            if (segments[i].kind === "code") out.push(segments[i].text)
        return out
    }
    // What the body shows: the segments, or (no text at all) one line saying so.
    readonly property var shownSegments: segments.length > 0 ? segments
        : [{ kind: "text", text: text !== "" || streaming || error !== "" ? "" : qsTr("(empty)"), language: "", open: false }]
    // Still thinking and no answer yet: the reasoning line alone, no empty text under it.
    readonly property bool answerPending: reasoningState === "thinking" && segments.length === 0
    // A reply cut at its token limit (it can be continued).
    readonly property bool cutAtLimit: !isUser && !streaming && finishReason === "length"
    readonly property string statsText: {
        if (isUser || streaming) return ""
        const parts = []
        if (ttftMs >= 0) parts.push(qsTr("first token in %1").arg(Format.duration(ttftMs)))
        if (tokensPerSecond > 0) parts.push(qsTr("%1 tokens/s").arg(Format.decimal(tokensPerSecond, 1)))
        if (generatedTokens > 0) parts.push(qsTr("%n token(s)", "", generatedTokens))
        // Where the prompt came from: memory, the disk tier, a context shift, or computed.
        if (promptTokensCached + promptTokensShifted + promptTokensComputed > 0) {
            const from = []
            if (promptTokensLoaded >= 0) {
                if (promptTokensCached > promptTokensLoaded)
                    from.push(qsTr("%1 from memory").arg(promptTokensCached - promptTokensLoaded))
                if (promptTokensLoaded > 0) from.push(qsTr("%1 from disk").arg(promptTokensLoaded))
            } else {
                from.push(qsTr("%1 cached").arg(promptTokensCached))
            }
            if (promptTokensShifted > 0) from.push(qsTr("%1 shifted").arg(promptTokensShifted))
            from.push(qsTr("%1 computed").arg(promptTokensComputed))
            parts.push(qsTr("prompt: %1").arg(from.join(" + ")))
        }
        if (messagesDropped > 0)
            parts.push(qsTr("%n older message(s) left the model's view", "", messagesDropped))
        if (seed !== "") parts.push(qsTr("seed %1").arg(seed))
        return parts.join("  ·  ")
    }

    implicitHeight: column.implicitHeight + 12
    height: implicitHeight
    opacity: inContext ? 1.0 : 0.45

    function copyToClipboard(s) {
        clipboardHelper.text = s
        clipboardHelper.selectAll()
        clipboardHelper.copy()
        clipboardHelper.text = ""
    }

    HoverHandler { id: hover }
    Rectangle {
        objectName: "revealMark"
        visible: root.revealed
        anchors.fill: parent
        radius: 8
        color: Qt.rgba(root.Material.accent.r, root.Material.accent.g, root.Material.accent.b, 0.10)
    }
    TextEdit { id: clipboardHelper; visible: false }

    ColumnLayout {
        id: column
        width: Math.min(root.width - 40, 860)
        anchors.horizontalCenter: parent.horizontalCenter
        y: 6
        spacing: 4

        // Where the model's memory begins: older messages are no longer in its context.
        RowLayout {
            objectName: "memoryMarker"
            visible: root.showMemoryMarker
            Layout.fillWidth: true
            Layout.topMargin: 4
            Layout.bottomMargin: 8
            spacing: 10
            Rectangle { Layout.fillWidth: true; height: 1; color: root.Material.accent; opacity: 0.5 }
            Label {
                text: qsTr("the model's memory begins here")
                color: root.Material.accent
                font.pixelSize: 11
                font.letterSpacing: 0.5
            }
            Rectangle { Layout.fillWidth: true; height: 1; color: root.Material.accent; opacity: 0.5 }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 12

            Avatar {
                visible: !root.isUser
                Layout.alignment: Qt.AlignTop
                size: 30
                glyph: root.isUser ? "" : root.personaAvatar
                name: root.isUser ? qsTr("You") : (root.personaName !== "" ? root.personaName : "H")
                tint: root.isUser ? "#8d7f75" : root.personaColor
            }

            ColumnLayout {
                // The full width (a layout's own width hints come from its children, so
                // fillWidth alone would stop at the bubble's width and leave a user's
                // bubble on the left): a user's bubble on the right, a reply on the left.
                Layout.fillWidth: true
                Layout.preferredWidth: column.width - (root.isUser ? 0 : 42)
                spacing: 4

                // The reply's reasoning, collapsed to one line: "Thinking… 4 s" while it
                // streams, "Thought for 12 s" after; a click shows or hides the text.
                ColumnLayout {
                    objectName: "reasoningBlock"
                    visible: !root.isUser && root.reasoningState !== ""
                    Layout.fillWidth: true
                    Layout.maximumWidth: column.width - 42
                    spacing: 4

                    Label {
                        id: reasoningHeader
                        objectName: "reasoningHeader"
                        readonly property string seconds: root.reasoningSeconds >= 0
                            ? Format.duration(root.reasoningSeconds * 1000) : ""
                        text: (root.reasoningOpen ? "▾ " : "▸ ")
                              + (root.reasoningState === "thinking"
                                 ? (seconds !== "" ? qsTr("Thinking… %1").arg(seconds) : qsTr("Thinking…"))
                                 : (seconds !== "" ? qsTr("Thought for %1").arg(seconds) : qsTr("Thoughts")))
                        color: root.subtleText
                        font.pixelSize: 12
                        MouseArea {
                            anchors.fill: parent
                            cursorShape: Qt.PointingHandCursor
                            onClicked: root.reasoningOpen = !root.reasoningOpen
                        }
                        Accessible.role: Accessible.Button
                        Accessible.name: text
                    }
                    Rectangle {
                        visible: root.reasoningOpen
                        Layout.fillWidth: true
                        implicitHeight: reasoningText.implicitHeight + 12
                        color: "transparent"
                        border.width: 0
                        Rectangle {
                            width: 2; height: parent.height
                            color: Qt.rgba(root.subtleText.r, root.subtleText.g, root.subtleText.b, 0.35)
                        }
                        TextEdit {
                            id: reasoningText
                            objectName: "reasoningText"
                            x: 12; y: 6
                            width: parent.width - 14
                            readOnly: true
                            selectByMouse: true
                            wrapMode: TextEdit.Wrap
                            textFormat: TextEdit.PlainText
                            text: root.reasoningOpen ? root.reasoning : ""
                            color: root.subtleText
                            font.pixelSize: 13
                        }
                    }
                }

                // The bubble (a user's message) or the plain text (a reply).
                Rectangle {
                    id: bubble
                    objectName: "messageBubble"
                    visible: !root.answerPending
                    readonly property color a: root.Material.accent
                    Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
                    Layout.maximumWidth: root.isUser ? column.width * 0.8 : column.width - 42
                    Layout.preferredWidth: root.editing ? column.width - 42
                                           : Math.min(Layout.maximumWidth, body.implicitWidth + 2 * padding)
                    implicitHeight: (root.editing ? editor.implicitHeight + editButtons.implicitHeight + 8 : body.implicitHeight) + 2 * padding
                    readonly property int padding: root.isUser ? 12 : 2
                    radius: 14
                    color: root.isUser ? Qt.rgba(a.r, a.g, a.b, 0.13) : "transparent"

                    // The segments, one under the other (a Repeater over their count, so a
                    // streaming reply updates its last segment in place).
                    Column {
                        id: body
                        objectName: "messageBody"
                        visible: !root.editing
                        x: bubble.padding
                        y: bubble.padding
                        spacing: 8
                        readonly property real maxWidth: bubble.Layout.maximumWidth - 2 * bubble.padding

                        Repeater {
                            model: root.shownSegments.length
                            delegate: Loader {
                                id: segmentLoader
                                required property int index
                                readonly property var segment: root.shownSegments[index] || ({ kind: "text", text: "" })
                                sourceComponent: segment.kind === "code" ? codeSegment : proseSegment

                                Component {
                                    id: proseSegment
                                    TextEdit {
                                        id: prose
                                        objectName: "messageText"
                                        // A reply takes the full width (its natural width is
                                        // never asked for: that would lay it out twice).
                                        width: root.isUser ? Math.min(implicitWidth, body.maxWidth) : body.maxWidth
                                        readOnly: true
                                        selectByMouse: true
                                        wrapMode: TextEdit.Wrap
                                        textFormat: root.isUser ? TextEdit.PlainText : TextEdit.MarkdownText
                                        // The text is set only when this block's source changed:
                                        // the segments list is new on every update of a
                                        // streaming reply, and TextEdit would parse and lay
                                        // out its Markdown again even for the same source
                                        // (it compares with Markdown it writes itself).
                                        property string source: segmentLoader.segment.text
                                        property string shownSource
                                        function show() {
                                            if (source === shownSource) return
                                            shownSource = source
                                            text = source
                                        }
                                        onSourceChanged: show()
                                        Component.onCompleted: show()
                                        color: root.Material.foreground
                                        selectionColor: root.Material.accent
                                        selectedTextColor: "white"
                                        font.pixelSize: 14
                                        onLinkActivated: link => Qt.openUrlExternally(link)
                                        HoverHandler { cursorShape: prose.hoveredLink !== "" ? Qt.PointingHandCursor : Qt.IBeamCursor }
                                    }
                                }
                                Component {
                                    id: codeSegment
                                    CodeBlock {
                                        width: body.maxWidth
                                        chat: root.chat
                                        messageId: root.messageId
                                        segmentIndex: segmentLoader.index
                                        code: segmentLoader.segment.text
                                        language: segmentLoader.segment.language
                                        open: segmentLoader.segment.open
                                        subtleText: root.subtleText
                                    }
                                }
                            }
                        }
                    }

                    TextArea {
                        id: editor
                        objectName: "editField"
                        visible: root.editing
                        x: bubble.padding
                        y: bubble.padding
                        width: bubble.width - 2 * bubble.padding
                        wrapMode: TextEdit.Wrap
                        Keys.onPressed: event => {
                            if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && !(event.modifiers & Qt.ShiftModifier)) {
                                saveEdit.clicked()
                                event.accepted = true
                            } else if (event.key === Qt.Key_Escape) {
                                root.stopEditing()
                                event.accepted = true
                            }
                        }
                    }
                    RowLayout {
                        id: editButtons
                        visible: root.editing
                        anchors.right: parent.right
                        anchors.bottom: parent.bottom
                        anchors.margins: 6
                        Button { text: qsTr("Cancel"); flat: true; onClicked: root.stopEditing() }
                        AccentButton {
                            id: saveEdit
                            objectName: "saveEditButton"
                            text: qsTr("Save and send")
                            onClicked: {
                                if (root.chat.editAndResend(root.messageId, editor.text)) root.stopEditing()
                            }
                        }
                    }
                }

                // Thinking: the prompt being read (a bar that moves only when the progress
                // does: no animation runs while waiting, so nothing is repainted for it).
                RowLayout {
                    objectName: "thinking"
                    visible: root.streaming && root.text === ""
                    spacing: 8
                    Rectangle {
                        objectName: "prefillBar"
                        visible: root.prefillProgress >= 0
                        implicitWidth: 80
                        implicitHeight: 4
                        radius: 2
                        color: Qt.rgba(root.subtleText.r, root.subtleText.g, root.subtleText.b, 0.25)
                        Rectangle {
                            width: parent.width * Math.max(0, root.prefillProgress)
                            height: parent.height
                            radius: 2
                            color: root.Material.accent
                        }
                    }
                    Label {
                        text: root.prefillProgress >= 0 ? qsTr("Reading the conversation… %1%").arg(Math.round(root.prefillProgress * 100))
                                                        : qsTr("Thinking…")
                        color: root.subtleText
                        font.pixelSize: 12
                    }
                }

                Label {
                    visible: root.error !== "" || root.state === "error"
                    // The history keeps the reason (schema v7); a reply that failed before
                    // that has only its state.
                    text: root.error !== "" ? qsTr("The reply failed: %1").arg(root.error)
                                            : qsTr("This reply failed before it finished.")
                    color: "#d84315"
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                    font.pixelSize: 12
                }
                // Where the passages given with the message came from: each opens its file.
                ReplySources {
                    objectName: "replySources"
                    visible: !root.isUser && root.sources.length > 0 && !root.streaming
                    sources: root.sources
                    subtleText: root.subtleText
                    Layout.fillWidth: true
                }

                // Why a reply ended early: stopped by the user, or its length limit.
                RowLayout {
                    objectName: "replyEnd"
                    visible: root.state === "stopped" || root.cutAtLimit
                    spacing: 8
                    Label {
                        objectName: "replyEndLabel"
                        text: root.cutAtLimit ? qsTr("cut at the length limit (%n token(s))", "", root.generatedTokens) : qsTr("stopped")
                        color: root.subtleText
                        font.pixelSize: 11
                        font.italic: true
                    }
                    Button {
                        objectName: "continueButton"
                        // (canContinue reads the model: the state and reason say when to ask again)
                        visible: { root.state; root.finishReason; return root.isLast && root.chat.canSend && root.chat.canContinue(root.messageId) }
                        text: qsTr("Continue")
                        flat: true
                        font.pixelSize: 12
                        implicitHeight: 30
                        padding: 6
                        Material.foreground: root.Material.accent
                        onClicked: root.chat.continueReply(root.messageId)
                    }
                }

                // The versions, then the actions and statistics: on hover (always for the
                // last reply).
                RowLayout {
                    Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
                    spacing: 0
                    // ‹ n/m ›: the versions of this message (regenerated or edited), shown
                    // whenever there is more than one (not only on hover: an edit must not
                    // look like it replaced the turn).
                    RowLayout {
                        objectName: "variantPager"
                        visible: root.variantCount > 1 && !root.editing
                        spacing: 0
                        ToolButton {
                            objectName: "previousVariant"
                            text: "‹"
                            enabled: root.variantIndex > 0 && !root.chat.generating
                            implicitWidth: 28
                            Accessible.name: qsTr("Previous version")
                            onClicked: root.chat.pageVariant(root.messageId, -1)
                        }
                        Label {
                            objectName: "variantLabel"
                            text: (root.variantIndex + 1) + " / " + root.variantCount
                            font.pixelSize: 12
                            color: root.subtleText
                            Accessible.name: root.isUser ? qsTr("Version %1 of %2 of this message").arg(root.variantIndex + 1).arg(root.variantCount)
                                                         : qsTr("Reply %1 of %2").arg(root.variantIndex + 1).arg(root.variantCount)
                        }
                        ToolButton {
                            objectName: "nextVariant"
                            text: "›"
                            enabled: root.variantIndex < root.variantCount - 1 && !root.chat.generating
                            implicitWidth: 28
                            Accessible.name: qsTr("Next version")
                            onClicked: root.chat.pageVariant(root.messageId, 1)
                        }
                    }
                    RowLayout {
                        id: actions
                        objectName: "messageActions"
                        spacing: 0
                        opacity: (hover.hovered || (root.isLast && !root.isUser)) && !root.streaming && !root.editing ? 1 : 0
                        Behavior on opacity { NumberAnimation { duration: 120 } }
                        enabled: opacity > 0

                        ActionButton { label: qsTr("Copy"); onClicked: root.copyToClipboard(root.isUser ? root.text : root.answer) }
                        ActionButton {
                            visible: root.codeBlocks.length > 0
                            label: root.codeBlocks.length > 1 ? qsTr("Copy code ▾") : qsTr("Copy code")
                            onClicked: {
                                if (root.codeBlocks.length === 1) root.copyToClipboard(root.codeBlocks[0])
                                else codeMenu.popup(this, 0, height)
                            }
                            Menu {
                                id: codeMenu
                                Instantiator {  // (a Menu stacks items it is given; see Sidebar)
                                    model: root.codeBlocks
                                    delegate: MenuItem {
                                        required property int index
                                        required property string modelData
                                        text: qsTr("Block %1: %2").arg(index + 1).arg(modelData.split("\n")[0].substring(0, 40))
                                        onTriggered: root.copyToClipboard(modelData)
                                    }
                                    onObjectAdded: (index, item) => codeMenu.insertItem(index, item)
                                    onObjectRemoved: (index, item) => codeMenu.removeItem(item)
                                }
                            }
                        }
                        ActionButton {
                            objectName: "regenerateButton"
                            visible: !root.isUser && root.isLast
                            enabled: !root.chat.generating
                            label: qsTr("Regenerate")
                            onClicked: root.chat.regenerate()
                        }
                        ActionButton {
                            objectName: "editButton"
                            visible: root.isUser
                            enabled: !root.chat.generating
                            label: qsTr("Edit")
                            onClicked: root.startEditing()
                        }
                        ActionButton {
                            objectName: "forkButton"
                            label: qsTr("Fork")
                            ToolTip.visible: hovered
                            ToolTip.delay: 600
                            ToolTip.text: qsTr("A new chat with the conversation up to here (nothing to compute again)")
                            Accessible.description: ToolTip.text
                            onClicked: root.forkRequested(root.messageId)
                        }
                        ActionButton {
                            enabled: !root.chat.generating
                            label: qsTr("Delete")
                            onClicked: root.chat.deleteMessage(root.messageId)
                        }
                    }
                }
                // The reply's statistics, under its actions: wrapped in a narrow window. The
                // line keeps its place when not hovered, so nothing moves under the mouse.
                Label {
                    objectName: "messageStats"
                    visible: root.statsText !== ""
                    opacity: hover.hovered ? 1 : 0
                    // (Not its implicit width, the unwrapped line, which would push the row.)
                    Layout.preferredWidth: column.width - (root.isUser ? 0 : 42)
                    leftPadding: 6
                    text: root.statsText
                    wrapMode: Text.Wrap
                    color: root.subtleText
                    font.pixelSize: 11
                    // Speculative decoding's count, on the line's tooltip: a longer line that
                    // wraps once more kept a reply finished in another chat from being
                    // scrolled into view on return (tst_ui_replies).
                    HoverHandler { id: statsHover }
                    ToolTip.visible: statsHover.hovered && root.draftTokens > 0
                    ToolTip.delay: 400
                    ToolTip.text: qsTr("Speculative decoding: %1 of %2 drafted tokens kept").arg(root.draftAccepted).arg(root.draftTokens)
                }
            }
        }
    }

    component ActionButton: ToolButton {
        property string label
        text: label
        font.pixelSize: 12
        implicitHeight: 30
        padding: 6
        opacity: 0.7
    }
}
