import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// A model's own defaults (Model page → On this computer → Defaults…): the context it is
// opened with, the persona its new chats start with, and reply settings between the
// app's (Settings) and a persona's or a chat's, which keep theirs.
Dialog {
    id: dialog
    objectName: "modelDefaultsDialog"
    property var settings  // AppSettings
    property var personas  // PersonaListModel
    property string path: ""
    property string label: ""
    property int trainedContext: 0  // the file's own context length (0: not known)
    property bool isOpen: false
    readonly property alias form: form
    // The persona ids in the combo's order, after "None".
    property var personaIds: []

    function openFor(modelPath, name, context, open_) {
        path = modelPath
        label = name
        trainedContext = context
        isOpen = open_
        contextSpin.value = settings.modelContextLength(modelPath)
        const ids = [], names = [qsTr("None: as the chat on screen")]
        for (let i = 0; i < personas.count; ++i) {
            const p = personas.get(i)
            ids.push(p.personaId)
            names.push(p.name)
        }
        personaIds = ids
        personaCombo.model = names
        personaCombo.currentIndex = ids.indexOf(settings.modelPersona(modelPath)) + 1
        form.load(settings.modelSampling(modelPath), ReplyDefaults.of(settings))
        open()
    }
    function save() {
        settings.setModelContextLength(path, contextSpin.value === 0 ? 0 : Math.max(256, contextSpin.value))
        settings.setModelPersona(path, personaCombo.currentIndex > 0 ? personaIds[personaCombo.currentIndex - 1] : -1)
        settings.setModelSampling(path, form.values())
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(600, parent.width - 48)
    height: Math.min(implicitHeight, parent.height - 48)
    modal: true
    focus: true  // the keyboard (Esc, Tab) is in the dialog
    title: qsTr("Defaults for %1").arg(label)
    standardButtons: Dialog.Save | Dialog.Cancel
    onAccepted: save()

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: 12
            opacity: 0.7
            text: qsTr("What this model starts with. A persona or a chat that sets a reply setting of its own keeps it; unticked settings follow Settings.")
        }
        SettingRow {
            label: qsTr("Context (tokens)")
            SpinBox {
                id: contextSpin
                objectName: "modelDefaultsContext"
                Accessible.name: parent.label
                from: 0
                to: dialog.trainedContext > 0 ? dialog.trainedContext : 1048576
                stepSize: 512
                editable: true
                textFromValue: v => v === 0 ? qsTr("the model's own") : String(v)
                valueFromText: t => t === qsTr("the model's own") ? 0 : Number(t)
            }
            Label {
                text: dialog.isOpen ? qsTr("applies when the model is opened again")
                                    : qsTr("a smaller context takes less memory")
                wrapMode: Text.Wrap
                opacity: 0.7
                font.pixelSize: 12
                Layout.fillWidth: true
            }
        }
        SettingRow {
            label: qsTr("New chats start with")
            ComboBox {
                id: personaCombo
                objectName: "modelDefaultsPersona"
                Accessible.name: parent.label
                implicitContentWidthPolicy: ComboBox.WidestText
            }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: 12
            opacity: 0.7
            text: qsTr("While this model is open, unless a persona is picked from the New chat menu.")
        }
        ScrollView {
            id: scroll
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.preferredHeight: form.implicitHeight
            clip: true
            contentWidth: availableWidth
            ReplySettingsForm {
                id: form
                objectName: "modelReplySettings"
                width: scroll.availableWidth
            }
        }
    }
}
