import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// Where a message is written: Enter sends, Shift+Enter starts a new line, Up in an empty
// box edits the last message written; Tab moves on to
// the next control (Ctrl+Tab writes a tab); while a reply streams the button stops it (as
// does Esc).
Pane {
    id: composer
    property var chat
    property var backend  // ChatBackend: sending needs it ready
    property color subtleText
    property string placeholder
    property var sendHandler  // text => bool (sent)
    signal editLastRequested()  // Up in an empty box: edit the last message written

    function focusInput() { input.forceActiveFocus() }
    function send() {
        const text = input.text.trim()
        if (text === "" || composer.chat.generating || !composer.backend.ready) return
        if (composer.sendHandler(text)) input.clear()
    }

    padding: 6
    leftPadding: 14
    Material.elevation: 3
    background: Rectangle {
        radius: 20
        color: composer.Material.dialogColor
        border.width: input.activeFocus ? 1.5 : 1
        border.color: input.activeFocus ? composer.Material.accent : Qt.rgba(0.5, 0.5, 0.5, 0.3)
    }

    RowLayout {
        anchors.fill: parent
        spacing: 6
        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 40), 200)
            TextArea {
                id: input
                objectName: "composerField"
                Accessible.name: composer.placeholder
                placeholderText: composer.placeholder + qsTr("  —  Enter to send, Shift+Enter for a new line")
                wrapMode: TextEdit.Wrap
                background: null
                font.pixelSize: 14
                topPadding: 10
                bottomPadding: 10
                Keys.onPressed: event => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                            && !(event.modifiers & Qt.ShiftModifier)) {
                        composer.send()
                        event.accepted = true
                    } else if (event.key === Qt.Key_Up && input.text === "" && !composer.chat.generating) {
                        composer.editLastRequested()
                        event.accepted = true
                    } else if (event.key === Qt.Key_Tab && (event.modifiers & Qt.ControlModifier)) {
                        input.insert(input.cursorPosition, "\t")
                        event.accepted = true
                    } else if (event.key === Qt.Key_Tab || event.key === Qt.Key_Backtab) {
                        const back = event.key === Qt.Key_Backtab || (event.modifiers & Qt.ShiftModifier)
                        const next = input.nextItemInFocusChain(!back)
                        if (next) next.forceActiveFocus(back ? Qt.BacktabFocusReason : Qt.TabFocusReason)
                        event.accepted = true
                    }
                }
            }
        }
        RoundButton {
            objectName: composer.chat.generating ? "stopButton" : "sendButton"
            Layout.alignment: Qt.AlignBottom
            text: composer.chat.generating ? "■" : "↑"
            font.pixelSize: 18
            highlighted: true
            // As AccentButton's label: dark on the dark theme's light accent.
            contentItem: Text {
                text: parent.text
                font: parent.font
                color: !parent.enabled ? parent.Material.hintTextColor
                       : parent.Material.theme === Material.Dark ? "#201a17" : "#ffffff"
                horizontalAlignment: Text.AlignHCenter
                verticalAlignment: Text.AlignVCenter
            }
            enabled: composer.chat.generating || (input.text.trim() !== "" && composer.backend.ready)
            Accessible.name: composer.chat.generating ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
            ToolTip.visible: hovered
            ToolTip.delay: 600
            ToolTip.text: Accessible.name
            onClicked: composer.chat.generating ? composer.chat.stop() : composer.send()
        }
    }
}
