import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts

// The whole chat history: a backup (a copy of the database, written while the app runs)
// and restoring one (its chats and personas are added beside those here; nothing here is
// replaced, and a chat already here is not added twice); and the chats other apps saved on
// this computer (GPT4All, Jan, LM Studio): looked for first, then imported, with a report
// of everything that could not come.
SettingsSection {
    id: section
    required property var history   // HistoryStore
    required property var personas  // PersonaListModel (reloaded after a restore)
    title: qsTr("Chat history")

    property string result: ""
    property bool failed: false
    property bool busy: false
    property int importable: 0     // chats the last look found to import
    property string importResult: ""
    property string importReport: ""

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

    Label {
        text: qsTr("Chats that GPT4All, Jan or LM Studio saved on this computer can be brought in, with their branches. Whatever cannot come (attachments, tool calls, a model Hearth does not have) is listed.")
        wrapMode: Text.Wrap
        opacity: 0.7
        font.pixelSize: 12
        Layout.fillWidth: true
    }
    RowLayout {
        spacing: 8
        Button {
            objectName: "findChatsButton"
            text: qsTr("Look for chats from other apps")
            enabled: section.history.ready && !section.busy
            onClicked: { section.busy = true; section.history.findChats() }
        }
        Button {
            objectName: "importChatsButton"
            visible: section.importable > 0
            text: qsTr("Import %n chat(s)", "", section.importable)
            enabled: section.history.ready && !section.busy
            onClicked: { section.busy = true; section.history.importChats() }
        }
        Button {
            objectName: "importReportButton"
            visible: section.importReport !== ""
            flat: true
            text: qsTr("Show the report")
            onClicked: reportDialog.open()
        }
    }
    Label {
        objectName: "importResult"
        visible: section.importResult !== ""
        text: section.importResult
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    Dialog {
        id: reportDialog
        objectName: "importReportDialog"
        title: qsTr("Chats from other apps")
        modal: true
        standardButtons: Dialog.Close
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: Math.min(parent.width - 48, 760)
        height: Math.min(parent.height - 48, 560)
        ScrollView {
            anchors.fill: parent
            TextArea {
                objectName: "importReportText"
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                textFormat: TextEdit.PlainText
                font.family: "monospace"
                font.pixelSize: 12
                text: section.importReport
            }
        }
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
        function onChatsFound(found, present, skipped, report) {
            section.busy = false
            section.importable = found
            section.importReport = report
            const parts = [found > 0 ? qsTr("%n chat(s) to import", "", found) : qsTr("No new chats to import")]
            if (present > 0) parts.push(qsTr("%n imported before", "", present))
            if (skipped > 0) parts.push(qsTr("%n cannot be read (see the report)", "", skipped))
            section.importResult = parts.join(", ") + "."
        }
        function onChatsImported(imported, present, skipped, partly, personas, report) {
            section.busy = false
            section.importable = 0
            section.importReport = report
            const parts = [qsTr("%n chat(s) imported", "", imported)]
            if (partly > 0) parts.push(qsTr("%n with something left out (see the report)", "", partly))
            if (present > 0) parts.push(qsTr("%n imported before", "", present))
            if (skipped > 0) parts.push(qsTr("%n cannot be read", "", skipped))
            section.importResult = parts.join(", ") + "."
            if (personas > 0) section.personas.reload()
        }
        function onBackupFailed(why) {
            section.busy = false
            section.failed = true
            section.result = why
        }
    }
}
