import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts
import Hearth

// The documents of a persona (in its editor, PersonaDialog) or of one chat (its documents
// dialog, ChatDocumentsDialog): each with what it costs in tokens, the whole prefix
// against the open model's context (or that they are looked up per message), files added
// by a dialog, a folder, or dropped on the dialog, and a file that changed on disk read
// again on request. A new persona keeps the files chosen until it is created (pending).
// `owner` is a PersonaListModel or a ConversationDocuments: the same calls, by owner id.
ColumnLayout {
    id: box
    required property var owner     // PersonaListModel or ConversationDocuments
    property var ownerId: -1        // the persona's or the chat's id
    property string namePrefix: "persona"  // of the items' objectNames
    property string emptyText: qsTr("Documents added here are read with the instructions by every chat of this persona, computed once and kept.")
    property var pending: []       // files chosen for a persona not created yet
    property var documents: []     // the persona's, as its row has them
    property var cost: ({})        // owner.prefixCost(ownerId)
    property var problems: []      // what the last addition could not add, and why
    spacing: 4

    function reset(id) {
        ownerId = id
        pending = []
        problems = []
        refresh()
    }
    // The cost is counted (the whole prefix tokenized) only while it is shown.
    function refresh() {
        documents = ownerId >= 0 ? owner.documentsOf(ownerId) : []
        cost = ownerId >= 0 && visible ? owner.prefixCost(ownerId) : ({})
    }
    onVisibleChanged: if (visible) refresh()
    function tokensOf(documentId) {
        const list = cost.documents || []
        for (let i = 0; i < list.length; ++i)
            if (list[i].documentId === documentId) return list[i].tokens
        return -1
    }
    function add(files) {
        if (files.length === 0) return
        problems = []
        if (ownerId >= 0) owner.addDocuments(ownerId, files)
        else pending = pending.concat(files)
    }
    // The persona was created: its pending files are read now.
    function created(id) {
        ownerId = id
        const files = pending
        pending = []
        if (files.length > 0) owner.addDocuments(id, files)
    }

    Connections {
        target: box.owner
        enabled: box.visible  // a closed editor reads nothing on every reload
        function onLoaded() { box.refresh() }
        function onDocumentsAdded(id, added, problems) {
            if (id === box.ownerId) box.problems = problems
        }
    }

    Label {
        objectName: box.namePrefix + "PrefixCost"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        font.pixelSize: 12
        color: box.cost.fits === false ? Material.color(Material.Red) : Material.foreground
        opacity: box.cost.fits === false ? 1 : 0.7
        text: box.documents.length === 0 && box.pending.length === 0
              ? box.emptyText
              : box.cost.tokens === undefined
                ? qsTr("The cost in tokens is counted when a model is open.")
                : box.cost.lookup
                  ? qsTr("These documents are too long to read whole, so each message is given the passages of them it needs, shown under the reply as sources. Instructions: %1 tokens of the model's %2.")
                      .arg(box.cost.tokens).arg(box.cost.context)
                  : qsTr("Instructions and documents: %1 tokens of the model's %2; %3 are left for the conversation.")
                      .arg(box.cost.tokens).arg(box.cost.context).arg(box.cost.room)
    }
    // A folder's worth of documents scrolls within a few rows' height, so the buttons
    // below stay in the window.
    ListView {
        id: documentList
        objectName: box.namePrefix + "DocumentList"
        Layout.fillWidth: true
        Layout.preferredHeight: Math.min(contentHeight, 240)
        visible: box.documents.length > 0
        clip: true
        boundsBehavior: Flickable.StopAtBounds
        ScrollBar.vertical: ScrollBar { policy: documentList.contentHeight > documentList.height ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded }
        model: box.documents
        delegate: RowLayout {
            id: docRow
            required property var modelData
            objectName: box.namePrefix + "Document_" + modelData.name
            width: documentList.width - 12
            spacing: 8
            Label {
                Layout.fillWidth: true
                elide: Text.ElideMiddle
                text: docRow.modelData.name
                ToolTip.visible: nameHover.hovered && docRow.modelData.sourcePath !== ""
                ToolTip.text: docRow.modelData.sourcePath
                HoverHandler { id: nameHover }
            }
            Label {
                objectName: "documentTokens"
                font.pixelSize: 12
                opacity: 0.7
                text: {
                    const t = box.tokensOf(docRow.modelData.documentId)
                    return t >= 0 ? qsTr("%1 tokens").arg(t) : qsTr("%1 characters").arg(docRow.modelData.characters)
                }
            }
            Label {
                visible: docRow.modelData.changed || docRow.modelData.missing
                font.pixelSize: 12
                color: Material.color(Material.Orange)
                text: docRow.modelData.missing ? qsTr("file gone") : qsTr("changed on disk")
            }
            Button {
                objectName: "documentRefresh"
                visible: docRow.modelData.changed
                flat: true
                text: qsTr("Read again")
                onClicked: box.owner.refreshDocument(docRow.modelData.documentId)
            }
            Button {
                objectName: "documentRemove"
                flat: true
                text: qsTr("Remove")
                Accessible.name: qsTr("Remove %1").arg(docRow.modelData.name)
                onClicked: box.owner.removeDocument(docRow.modelData.documentId)
            }
        }
    }
    Label {
        visible: box.pending.length > 0
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        font.pixelSize: 12
        opacity: 0.7
        text: qsTr("%n file(s) to read once the persona is created", "", box.pending.length)
    }
    Label {
        objectName: box.namePrefix + "DocumentProblems"
        visible: box.problems.length > 0
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        font.pixelSize: 12
        color: Material.color(Material.Red)
        text: box.problems.join("\n")
    }
    RowLayout {
        spacing: 8
        Button {
            objectName: box.namePrefix + "AddDocuments"
            text: qsTr("Add files…")
            enabled: !box.owner.readingDocuments
            onClicked: fileDialog.open()
        }
        Button {
            objectName: box.namePrefix + "AddFolder"
            text: qsTr("Add a folder…")
            flat: true
            enabled: !box.owner.readingDocuments
            onClicked: folderDialog.open()
        }
        BusyIndicator {
            visible: box.owner.readingDocuments
            running: visible
            implicitWidth: 28
            implicitHeight: 28
        }
        Label {
            visible: !box.owner.readingDocuments
            font.pixelSize: 12
            opacity: 0.6
            text: qsTr("or drop files here")
        }
    }
    FileDialog {
        id: fileDialog
        objectName: box.namePrefix + "DocumentDialog"
        title: qsTr("Add documents")
        fileMode: FileDialog.OpenFiles
        nameFilters: [qsTr("Documents (*.txt *.md *.markdown *.pdf *.docx *.odt *.html *.htm)"), qsTr("All files (*)")]
        onAccepted: box.add((selectedFiles.length > 0 ? selectedFiles : [selectedFile]).map(u => u.toString()))
    }
    FolderDialog {
        id: folderDialog
        title: qsTr("Add a folder of documents")
        onAccepted: box.add([selectedFolder.toString()])
    }
}
