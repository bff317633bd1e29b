import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts

// The whole chat history: a backup (a copy of the database, written while the app runs)
// and restoring one (its chats and personas are added beside those here; nothing here is
// replaced, and a chat already here is not added twice).
SettingsSection {
    id: section
    required property var history   // HistoryStore
    required property var personas  // PersonaListModel (reloaded after a restore)
    title: qsTr("Chat history")

    property string result: ""
    property bool failed: false
    property bool busy: false

    Label {
        text: qsTr("A backup holds every chat, with its branches and statistics, and every persona.")
        wrapMode: Text.Wrap
        opacity: 0.7
        font.pixelSize: 12
        Layout.fillWidth: true
    }
    RowLayout {
        spacing: 8
        Button {
            objectName: "backupButton"
            text: qsTr("Back up…")
            enabled: section.history.ready && !section.busy
            onClicked: {
                const day = new Date().toISOString().substring(0, 10)
                backupDialog.currentFolder = documentsFolder
                backupDialog.selectedFile = documentsFolder + "/" + qsTr("Hearth backup %1").arg(day) + ".hearth"
                backupDialog.open()
            }
        }
        Button {
            objectName: "restoreButton"
            text: qsTr("Restore from a backup…")
            enabled: section.history.ready && !section.busy
            onClicked: {
                restoreDialog.currentFolder = documentsFolder
                restoreDialog.open()
            }
        }
        BusyIndicator { running: section.busy; visible: running; implicitWidth: 28; implicitHeight: 28 }
    }
    Label {
        objectName: "backupResult"
        visible: section.result !== ""
        text: section.result
        color: section.failed ? "#d9534f" : section.Material.foreground
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    FileDialog {
        id: backupDialog
        objectName: "backupDialog"
        title: qsTr("Back up the chat history")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Save")
        defaultSuffix: "hearth"
        nameFilters: [qsTr("Hearth backups (*.hearth)"), qsTr("All files (*)")]
        onAccepted: { section.busy = true; section.history.backUp(selectedFile.toString()) }
    }
    FileDialog {
        id: restoreDialog
        objectName: "restoreDialog"
        title: qsTr("Restore chats from a backup")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("Hearth backups (*.hearth)"), qsTr("All files (*)")]
        onAccepted: { section.busy = true; section.history.restore(selectedFile.toString()) }
    }
    Connections {
        target: section.history
        function onBackedUp(path) {
            section.busy = false
            section.failed = false
            section.result = qsTr("Backed up to %1.").arg(path)
        }
        function onRestored(added, present, personas) {
            section.busy = false
            section.failed = false
            const parts = [qsTr("%n chat(s) restored", "", added)]
            if (present > 0) parts.push(qsTr("%n already here", "", present))
            if (personas > 0) parts.push(qsTr("%n persona(s) added", "", personas))
            section.result = parts.join(", ") + "."
            if (personas > 0) section.personas.reload()
        }
        function onBackupFailed(why) {
            section.busy = false
            section.failed = true
            section.result = why
        }
    }
}
