import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// Creating or editing a persona: name, badge (a glyph and a colour), system prompt, keep warm.
Dialog {
    id: dialog
    required property var personas
    property var settings  // AppSettings: what the persona's reply settings override
    property var personaId: -1  // -1: a new persona
    readonly property var palette: ["#e0703f", "#3f7ae0", "#2e9d6e", "#9b59b6", "#d4a017", "#c0392b", "#16a0a8", "#7f8c8d"]
    property string chosenColor: palette[0]
    // The badge: "icon:<name>" (AvatarIcons) or a short glyph typed in the field.
    property string badge: ""
    property bool showReplies: false
    property bool showDocuments: false

    function openFor(p) {
        personaId = p ? p.personaId : -1
        nameField.text = p ? p.name : ""
        badge = p ? p.avatar : "icon:star"
        avatarField.text = badge.startsWith("icon:") ? "" : badge
        promptField.text = p ? p.systemPrompt : ""
        chosenColor = p && p.color ? p.color : palette[Math.floor(Math.random() * palette.length)]
        keepWarmSwitch.checked = p ? p.keepWarm : false
        // Unset rows show what they get now: the open model's defaults, then Settings.
        replySettings.load(p ? p.sampling : {}, ReplyDefaults.of(settings, settings ? settings.openModelSampling : {}))
        documentsBox.reset(personaId)
        showDocuments = p ? p.documents.length > 0 : false
        open()
    }
    onOpened: nameField.forceActiveFocus()  // once open: the dialog takes the keyboard as it opens
    function save() {
        const name = nameField.text.trim()
        if (name === "") return
        if (personaId < 0) {
            // Files chosen before it existed are read once it does.
            if (documentsBox.pending.length > 0) awaitingCreation = true
            personas.create(name, promptField.text, chosenColor, badge.trim(), keepWarmSwitch.checked,
                            replySettings.values())
        }
        else
            personas.edit(personaId, {name: name, systemPrompt: promptField.text, color: chosenColor,
                                      avatar: badge.trim(), keepWarm: keepWarmSwitch.checked,
                                      sampling: replySettings.values()})
        close()
    }

    property bool awaitingCreation: false
    Connections {
        target: dialog.awaitingCreation ? dialog.personas : null
        function onPersonaCreated(id) {
            dialog.awaitingCreation = false
            documentsBox.created(id)
        }
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(560, parent.width - 48)
    modal: true
    focus: true  // the keyboard (Esc, Tab) is in the dialog
    title: personaId < 0 ? qsTr("New persona") : qsTr("Edit persona")

    // Files dropped anywhere on the dialog become the persona's documents. (The one item
    // the dialog holds, so that the dialog takes its size from the column inside.)
    DropArea {
        anchors.fill: parent
        implicitWidth: column.implicitWidth
        implicitHeight: column.implicitHeight
        keys: ["text/uri-list"]
        onDropped: drop => {
            if (!drop.hasUrls) return
            documentsBox.add(drop.urls.map(u => u.toString()))
            dialog.showDocuments = true
            drop.accept()
        }
        ColumnLayout {
            id: column
            anchors.fill: parent
            spacing: 10
            RowLayout {
                spacing: 12
                Avatar {
                    size: 48
                    glyph: dialog.badge
                    name: nameField.text
                    tint: dialog.chosenColor
                }
                TextField {
                    id: nameField
                    objectName: "personaNameField"
                    placeholderText: qsTr("Name")
                    Accessible.name: placeholderText
                    maximumLength: dialog.personas.maxNameLength
                    Layout.fillWidth: true
                }
                TextField {
                    id: avatarField
                    objectName: "personaAvatarField"
                    placeholderText: qsTr("Badge")
                    Accessible.name: placeholderText
                    maximumLength: 3
                    Layout.preferredWidth: 70
                    ToolTip.visible: activeFocus
                    ToolTip.text: qsTr("Letters or an emoji; or pick an icon below")
                    onTextEdited: dialog.badge = text.trim()
                }
            }
            RowLayout {
                spacing: 6
                Label { text: qsTr("Icon"); Layout.rightMargin: 18 }
                Repeater {
                    model: AvatarIcons.names
                    delegate: Avatar {
                        required property string modelData
                        objectName: "badgeIcon_" + modelData
                        size: 26
                        glyph: "icon:" + modelData
                        tint: dialog.badge === glyph ? dialog.chosenColor : Qt.rgba(0.5, 0.5, 0.5, 0.45)
                        TapHandler {
                            onTapped: {
                                dialog.badge = parent.glyph
                                avatarField.text = ""
                            }
                        }
                    }
                }
            }
            RowLayout {
                spacing: 6
                Label { text: qsTr("Colour"); Layout.rightMargin: 6 }
                Repeater {
                    model: dialog.palette
                    delegate: Rectangle {
                        required property string modelData
                        width: 24; height: 24; radius: 12
                        color: modelData
                        border.width: dialog.chosenColor === modelData ? 3 : 0
                        border.color: dialog.Material.foreground
                        TapHandler { onTapped: dialog.chosenColor = modelData }
                    }
                }
            }
            Label { text: qsTr("System prompt"); font.pixelSize: 12; opacity: 0.7 }
            ScrollView {
                Layout.fillWidth: true
                Layout.preferredHeight: dialog.showReplies || dialog.showDocuments ? 90 : 160
                TextArea {
                    id: promptField
                    objectName: "personaPromptField"
                    Accessible.name: qsTr("System prompt")
                    wrapMode: TextEdit.Wrap
                    placeholderText: qsTr("How the persona should behave, e.g. “You are a patient tutor…”")
                }
            }
            // Its documents: read with the instructions, part of the shared prefix.
            Label {
                objectName: "personaDocumentsToggle"
                text: dialog.showDocuments ? qsTr("▾ Documents")
                                           : documentsBox.documents.length > 0
                                             ? qsTr("▸ Documents (%1)").arg(documentsBox.documents.length)
                                             : qsTr("▸ Documents (files it knows)")
                font.pixelSize: 12
                opacity: 0.7
                TapHandler { onTapped: dialog.showDocuments = !dialog.showDocuments }
            }
            DocumentsEditor {
                id: documentsBox
                objectName: "personaDocuments"
                visible: dialog.showDocuments
                Layout.fillWidth: true
                owner: dialog.personas
            }
            // Its replies: each setting the persona's own, or the open model's, or the app's (Settings).
            Label {
                objectName: "personaRepliesToggle"
                text: dialog.showReplies ? qsTr("▾ Replies") : qsTr("▸ Replies (sampling, penalties, length)")
                font.pixelSize: 12
                opacity: 0.7
                TapHandler { onTapped: dialog.showReplies = !dialog.showReplies }
            }
            // Ten rows: they scroll where the window is too short for them and the rest.
            ScrollView {
                id: repliesScroll
                visible: dialog.showReplies
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(replySettings.implicitHeight,
                                                 Math.max(140, dialog.parent.height - 560))
                clip: true
                contentWidth: availableWidth
                ReplySettingsForm {
                    id: replySettings
                    objectName: "personaReplySettings"
                    width: repliesScroll.availableWidth
                }
            }
            Switch {
                id: keepWarmSwitch
                objectName: "personaKeepWarmSwitch"
                text: qsTr("Keep warm (its prompt stays in the model's memory)")
            }
        }
    }

    footer: DialogButtonBox {
        Button {
            text: qsTr("Cancel")
            flat: true
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
        AccentButton {
            objectName: "personaSaveButton"
            text: dialog.personaId < 0 ? qsTr("Create") : qsTr("Save")
            enabled: nameField.text.trim() !== ""
            onClicked: dialog.save()
        }
    }
}
