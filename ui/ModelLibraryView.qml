import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts

// The Model page's "On this computer": every model Hearth found, grouped by where it lives
// (Hearth's folder, the user's folders, other apps' downloads used in place), what each
// file is, and what can be done with it.
Item {
    id: view
    required property var library
    required property var bridge
    property var settings  // AppSettings: a model's own defaults
    property var personas  // PersonaListModel: the persona a model's chats start with
    property color subtleText: Material.hintTextColor
    signal openRequested(string path)

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            Label {
                objectName: "libraryCount"
                Layout.fillWidth: true
                text: view.library.scanning && view.library.count === 0 ? qsTr("Looking for models…")
                      : qsTr("%n model(s) on this computer", "", view.library.count)
                font.bold: true
            }
            BusyIndicator {
                visible: view.library.scanning
                running: visible
                implicitWidth: 28
                implicitHeight: 28
            }
            Button {
                objectName: "libraryRefresh"
                text: qsTr("Look again")
                flat: true
                enabled: !view.library.scanning
                onClicked: view.library.refresh()
            }
            Button {
                objectName: "libraryAddFolder"
                text: qsTr("Add a folder…")
                flat: true
                onClicked: folderDialog.open()
            }
        }
        Label {
            id: errorLabel
            objectName: "libraryError"
            visible: text !== ""
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Material.color(Material.Red)
            text: ""
        }

        ListView {
            id: list
            objectName: "libraryList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: view.library
            ScrollBar.vertical: ScrollBar {}
            section.property: "sourceLabel"
            section.delegate: Label {
                required property string section
                width: ListView.view.width
                topPadding: 12
                bottomPadding: 4
                text: section
                font.bold: true
                color: view.subtleText
            }
            footer: Item {
                width: ListView.view.width
                implicitHeight: whereColumn.implicitHeight + 24
                ColumnLayout {
                    id: whereColumn
                    y: 16
                    width: parent.width
                    spacing: 2
                    Label {
                        text: qsTr("Where Hearth looks")
                        font.bold: true
                        color: view.subtleText
                    }
                    Repeater {
                        model: view.library.sources.filter(s => s.present)
                        delegate: RowLayout {
                            required property var modelData
                            Layout.fillWidth: true
                            Label {
                                Layout.fillWidth: true
                                wrapMode: Text.Wrap
                                color: view.subtleText
                                font.pixelSize: 12
                                text: modelData.label + " — " + modelData.path + ": "
                                      + qsTr("%n model(s)", "", modelData.models)
                                      + (modelData.problems.length > 0
                                         ? " · " + qsTr("passed over: %1").arg(modelData.problems.join("; ")) : "")
                            }
                            Button {
                                visible: modelData.source === "folder"
                                text: qsTr("Remove")
                                flat: true
                                font.pixelSize: 12
                                onClicked: view.library.removeFolder(modelData.path)
                            }
                        }
                    }
                    Label {
                        // The apps none of whose folders is here, by name, once each.
                        readonly property var present: view.library.sources.filter(s => s.present).map(s => s.label)
                        readonly property var absent: view.library.sources.filter(s => !s.present)
                                                          .map(s => s.label)
                                                          .filter((l, i, all) => all.indexOf(l) === i && present.indexOf(l) < 0)
                        visible: absent.length > 0
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        color: view.subtleText
                        font.pixelSize: 12
                        text: qsTr("Also looked for, not on this computer: %1").arg(absent.join(", "))
                    }
                }
            }

            delegate: ItemDelegate {
                id: row
                required property int index
                required property string path
                required property string name
                required property string fileName
                required property var aliases
                required property string title
                required property string quantisation
                required property string architecture
                required property double size
                required property double parameters
                required property double contextLength
                required property bool supported
                required property string whyNot
                required property var lastUsed
                required property bool isOpen
                required property bool isDefault
                required property bool canDelete
                required property bool thinkingSwitch
                required property bool ownDefaults
                required property string fit
                required property string fitText
                required property string fitDetail
                property bool showDetail: false
                objectName: "libraryRow_" + fileName
                width: ListView.view.width
                hoverEnabled: true
                onDoubleClicked: if (supported && !isOpen) view.openRequested(path)
                contentItem: RowLayout {
                    spacing: 12
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 2
                        RowLayout {
                            Layout.fillWidth: true
                            Label {
                                text: row.name
                                font.bold: true
                                elide: Text.ElideMiddle
                                Layout.maximumWidth: row.width * 0.5
                            }
                            Label {
                                // The file, where the name is not it (an Ollama blob's digest says nothing).
                                text: row.fileName !== row.name && row.fileName.indexOf("sha256") !== 0 ? row.fileName : ""
                                color: view.subtleText
                                elide: Text.ElideMiddle
                                Layout.fillWidth: true
                            }
                        }
                        Label {
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                            color: row.supported ? view.subtleText : Material.color(Material.Red)
                            font.pixelSize: 12
                            text: {
                                const parts = []
                                if (row.quantisation !== "") parts.push(row.quantisation)
                                parts.push(Format.bytes(row.size))
                                if (row.architecture !== "") parts.push(row.architecture)
                                if (row.contextLength > 0) parts.push(qsTr("%1 tokens of context").arg(row.contextLength))
                                if (row.isOpen) parts.push(qsTr("open now"))
                                else if (row.lastUsed && !isNaN(row.lastUsed.getTime())) parts.push(qsTr("last opened %1").arg(Format.ago(row.lastUsed)))
                                if (row.isDefault) parts.push(qsTr("opens at start"))
                                if (row.ownDefaults) parts.push(qsTr("own defaults"))
                                if (row.aliases.length > 0) parts.push(qsTr("also %1").arg(row.aliases.join(", ")))
                                const facts = parts.join(" · ")
                                return row.supported ? facts : qsTr("Cannot open: %1").arg(row.whyNot) + " · " + facts
                            }
                        }
                        // Will it run here: plain words, the numbers one click away.
                        Label {
                            objectName: "libraryFit"
                            visible: row.fitText !== ""
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            font.pixelSize: 12
                            color: row.fit === "fits" ? (Material.theme === Material.Dark ? "#8fce8f" : "#2e7d32")
                                 : row.fit === "tight" ? (Material.theme === Material.Dark ? "#e0b060" : "#9a6700")
                                 : Material.color(Material.Red)
                            text: row.fitText + "  " + (row.showDetail ? "▴" : "▾")
                            TapHandler { onTapped: row.showDetail = !row.showDetail }
                            HoverHandler { cursorShape: Qt.PointingHandCursor }
                        }
                        Label {
                            objectName: "libraryFitDetail"
                            visible: row.showDetail && row.fitDetail !== ""
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            font.pixelSize: 12
                            color: view.subtleText
                            text: row.fitDetail
                        }
                    }
                    Button {
                        objectName: "libraryOpen"
                        text: row.isOpen ? qsTr("Open now") : qsTr("Open")
                        enabled: row.supported && !row.isOpen && !view.bridge.loading
                        onClicked: view.openRequested(row.path)
                    }
                    CheckBox {
                        objectName: "libraryDefault"
                        checked: row.isDefault
                        text: qsTr("At start")
                        enabled: row.supported
                        ToolTip.visible: hovered
                        ToolTip.delay: 600
                        ToolTip.text: qsTr("Open this model when Hearth starts (otherwise the last one opened)")
                        onClicked: view.library.setDefault(row.isDefault ? "" : row.path)
                    }
                    Button {
                        objectName: "libraryDefaults"
                        flat: true
                        visible: !!view.settings && !!view.personas
                        enabled: row.supported
                        text: qsTr("Defaults…")
                        ToolTip.visible: hovered
                        ToolTip.delay: 600
                        ToolTip.text: qsTr("This model's context, the persona its new chats start with, and its reply settings")
                        onClicked: {
                            defaultsDialog.form.thinkingSwitch = row.thinkingSwitch
                            defaultsDialog.openFor(row.path, row.name, row.contextLength, row.isOpen)
                        }
                    }
                    Button {
                        objectName: "libraryReveal"
                        flat: true
                        text: qsTr("Show")
                        ToolTip.visible: hovered
                        ToolTip.delay: 600
                        ToolTip.text: qsTr("Show the file in its folder")
                        onClicked: view.library.reveal(row.path)
                    }
                    Button {
                        objectName: "libraryDelete"
                        flat: true
                        visible: row.canDelete
                        enabled: !row.isOpen
                        text: qsTr("Delete…")
                        onClicked: {
                            deleteDialog.path = row.path
                            deleteDialog.label = row.fileName
                            deleteDialog.bytes = row.size
                            deleteDialog.open()
                        }
                    }
                }
            }
        }
    }

    Dialog {
        id: deleteDialog
        objectName: "libraryDeleteDialog"
        property string path: ""
        property string label: ""
        property double bytes: 0
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete this model?")
        standardButtons: Dialog.Ok | Dialog.Cancel
        width: Math.min(view.width * 0.9, 520)
        Label {
            width: deleteDialog.availableWidth
            wrapMode: Text.Wrap
            text: qsTr("%1 (%2) is deleted from this computer. Your chats stay.").arg(deleteDialog.label).arg(Format.bytes(deleteDialog.bytes))
        }
        onAccepted: {
            const error = view.library.remove(path)
            errorLabel.text = error
        }
    }
    ModelDefaultsDialog {
        id: defaultsDialog
        settings: view.settings
        personas: view.personas
    }
    FolderDialog {
        id: folderDialog
        objectName: "libraryFolderDialog"
        title: qsTr("Add a folder of models")
        onAccepted: errorLabel.text = view.library.addFolder(selectedFolder)
    }
}
