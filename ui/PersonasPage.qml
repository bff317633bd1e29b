import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// The persona library: cards with the persona's badge, name, system prompt and keep-warm
// state; new chat, edit, duplicate, delete.
Page {
    id: page
    required property var personas
    property var settings  // AppSettings: the defaults a persona's reply settings override
    property color subtleText
    property color dividerColor
    signal newChatRequested(var personaId)

    background: Rectangle { color: page.Material.background }

    header: Rectangle {
        implicitHeight: 64
        color: page.Material.background
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 24
            anchors.rightMargin: 24
            ColumnLayout {
                spacing: 0
                Layout.fillWidth: true
                Label { text: qsTr("Personas"); font.pixelSize: 20; font.weight: Font.DemiBold }
                Label {
                    text: qsTr("A persona is a system prompt with a face. Kept warm, its prompt stays in the model's memory, so new chats with it start at once.")
                    color: page.subtleText
                    font.pixelSize: 12
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
            AccentButton {
                objectName: "newPersonaButton"
                text: qsTr("New persona")
                onClicked: dialog.openFor(null)
            }
        }
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: page.dividerColor }
    }

    GridView {
        id: grid
        objectName: "personaGrid"
        anchors.fill: parent
        anchors.margins: 16
        clip: true
        readonly property int columns: Math.max(1, Math.floor(width / 300))
        cellWidth: width / columns
        cellHeight: 214
        model: page.personas
        ScrollBar.vertical: ScrollBar {}

        delegate: Item {
            id: cell
            required property int index
            required property var personaId
            required property string name
            required property string systemPrompt
            required property string color
            required property string avatar
            required property bool keepWarm
            required property string warmState
            objectName: "personaCard_" + name
            width: grid.cellWidth
            height: grid.cellHeight

            Pane {
                anchors.fill: parent
                anchors.margins: 8
                background: Rectangle {
                    radius: 12
                    color: page.Material.theme === Material.Dark ? "#2a2725" : "#ffffff"
                    border.color: page.Material.theme === Material.Dark ? "#3a3633" : "#e6dfd8"
                }
                padding: 16
                HoverHandler { id: cardHover }
                ColumnLayout {
                    anchors.fill: parent
                    spacing: 8
                    RowLayout {
                        spacing: 12
                        Avatar {
                            size: 40
                            glyph: cell.avatar
                            name: cell.name
                            tint: cell.color !== "" ? cell.color : page.Material.accent
                        }
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label { text: cell.name; font.pixelSize: 16; font.weight: Font.DemiBold; elide: Text.ElideRight; Layout.fillWidth: true }
                            Label {
                                objectName: "warmState"
                                text: cell.warmState === "pinned" ? qsTr("● kept warm")
                                      : cell.warmState === "warming" ? qsTr("◌ warming up…")
                                      : cell.warmState === "failed" ? qsTr("⚠ could not keep warm")
                                      : cell.keepWarm ? qsTr("kept warm when a model is open") : qsTr("not kept warm")
                                color: cell.warmState === "pinned" ? page.Material.accent
                                       : cell.warmState === "failed" ? "#d84315" : page.subtleText
                                font.pixelSize: 11
                            }
                        }
                    }
                    Label {
                        text: cell.systemPrompt !== "" ? cell.systemPrompt : qsTr("(no system prompt)")
                        wrapMode: Text.Wrap
                        maximumLineCount: 3
                        elide: Text.ElideRight
                        color: page.subtleText
                        font.pixelSize: 12
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        verticalAlignment: Text.AlignTop
                    }
                    RowLayout {
                        spacing: 0
                        Button {
                            objectName: "newChatWith_" + cell.name
                            text: qsTr("New chat")
                            flat: true
                            Material.foreground: cell.color !== "" ? cell.color : page.Material.accent
                            onClicked: page.newChatRequested(cell.personaId)
                        }
                        Item { Layout.fillWidth: true }
                        ToolButton {
                            objectName: "editPersona_" + cell.name
                            text: "✎"
                            Accessible.name: qsTr("Edit")
                            ToolTip.visible: hovered; ToolTip.text: qsTr("Edit"); ToolTip.delay: 500
                            onClicked: dialog.openFor(page.personas.get(cell.index))
                        }
                        ToolButton {
                            text: "❐"
                            Accessible.name: qsTr("Duplicate")
                            ToolTip.visible: hovered; ToolTip.text: qsTr("Duplicate"); ToolTip.delay: 500
                            onClicked: page.personas.duplicate(cell.personaId)
                        }
                        ToolButton {
                            text: "✕"
                            Accessible.name: qsTr("Delete")
                            ToolTip.visible: hovered; ToolTip.text: qsTr("Delete"); ToolTip.delay: 500
                            onClicked: { confirmDelete.personaId = cell.personaId; confirmDelete.personaName = cell.name; confirmDelete.open() }
                        }
                    }
                }
            }
        }
    }

    PersonaDialog {
        id: dialog
        objectName: "personaDialog"
        personas: page.personas
        settings: page.settings
    }

    Dialog {
        id: confirmDelete
        property var personaId: -1
        property string personaName
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        focus: true  // the keyboard (Esc, Tab) is in the dialog
        title: qsTr("Delete “%1”?").arg(personaName)
        standardButtons: Dialog.Ok | Dialog.Cancel
        // (A width of its own: sized by its text, a long title looped with its layout.)
        width: Math.min(parent ? parent.width - 48 : 460, 460)
        Label {
            width: parent.width
            wrapMode: Text.Wrap
            text: qsTr("Chats with this persona stay; they lose its system prompt.")
        }
        onAccepted: page.personas.remove(personaId)
    }
}
