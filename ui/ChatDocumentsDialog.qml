import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// The documents this chat holds apart from its persona's (ConversationDocuments): read
// after the persona's in the chat's prompt, or looked up per message when too long.
// Files are added from a dialog, a folder, or dropped anywhere on it.
Dialog {
    id: dialog
    required property var documents  // ConversationDocuments
    required property var conversationId

    function openForChat() {
        editor.reset(conversationId)
        open()
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(560, parent.width - 48)
    modal: true
    focus: true
    title: qsTr("Documents of this chat")
    standardButtons: Dialog.Close

    // The one item the dialog holds (it takes its size from it): files dropped on it.
    DropArea {
        anchors.fill: parent
        implicitWidth: editor.implicitWidth
        implicitHeight: editor.implicitHeight
        keys: ["text/uri-list"]
        onDropped: drop => {
            if (!drop.hasUrls) return
            editor.add(drop.urls.map(u => u.toString()))
            drop.accept()
        }
        DocumentsEditor {
            id: editor
            objectName: "chatDocuments"
            anchors.fill: parent
            owner: dialog.documents
            namePrefix: "chat"
            emptyText: qsTr("Documents added here are read by this chat only, after its persona's instructions and documents. Adding one to a chat that has messages reads its history once more.")
        }
    }
}
