import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Keyboard shortcuts (F1, Ctrl+/): every key the window answers, named in the user's
// language (uiTranslator, a context property, names Qt's keys).
Dialog {
    id: dialog
    objectName: "shortcutsDialog"
    title: qsTr("Keyboard shortcuts")
    parent: Overlay.overlay
    anchors.centerIn: parent
    modal: true
    focus: true  // the keyboard (Esc, Tab) is in the dialog
    standardButtons: Dialog.Close
    // (Scrolls in a short window: the list is longer than 480 pixels. A width of its
    // own: one from its content looped with the scroll view's.)
    width: Math.min(640, parent.width - 40)
    height: Math.min(implicitHeight, parent.height - 40)
    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true
        ColumnLayout {
            width: parent.width
            spacing: 6
            Repeater {
                model: [["Enter", qsTr("Send")], ["Shift+Enter", qsTr("New line")],
                        ["Up", qsTr("Edit your last message (in an empty message box)")],
                        ["Tab", qsTr("Next control (Ctrl+Tab writes a tab in a message)")],
                        ["Ctrl+N", qsTr("New chat")], ["Ctrl+K", qsTr("Switch to a conversation")],
                        ["Ctrl+F", qsTr("Search conversations")], ["Ctrl+B", qsTr("Show or hide the chat list")],
                        ["Ctrl+R", qsTr("Regenerate the last reply")], ["Ctrl+Shift+C", qsTr("Copy the last reply")],
                        ["Ctrl+.", qsTr("Stop the reply")], ["Esc", qsTr("Stop the reply (when no menu or dialog is open); close a menu or dialog")],
                        ["Ctrl+1", qsTr("Chats")], ["Ctrl+2", qsTr("Personas")], ["Ctrl+3", qsTr("Memory")],
                        ["Ctrl+4", qsTr("Model")], ["Ctrl+5", qsTr("Settings (also Ctrl+,)")],
                        ["F1", qsTr("This list (also Ctrl+/)")], ["Ctrl+Q", qsTr("Quit")]]
                delegate: RowLayout {
                    required property var modelData
                    objectName: "shortcutRow"
                    Layout.fillWidth: true
                    // (Read again when the language changes: Qt names the keys.)
                    Label {
                        text: { uiTranslator.current; return uiTranslator.keyText(modelData[0]) }
                        font.family: "monospace"
                        Layout.preferredWidth: 120
                    }
                    Label { text: modelData[1]; wrapMode: Text.Wrap; Layout.fillWidth: true }
                }
            }
        }
    }
}
