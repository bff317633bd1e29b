import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// A chat's own reply settings: each one the chat's, or its persona's, or the app's.
Dialog {
    id: dialog
    required property var chat
    property var settings  // AppSettings
    property bool thinkingSwitch: false  // the loaded model can turn its reasoning off
    // The open model's own settings: a local model's (a server's model is not that file).
    readonly property var modelSampling: settings && chat.backend && !chat.backend.remote
                                         ? settings.openModelSampling : ({})
    readonly property bool modelSetsSome: Object.keys(modelSampling).length > 0

    function openForChat() {
        form.load(chat.conversationSampling, ReplyDefaults.of(settings, modelSampling, chat.personaSampling))
        open()
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(600, parent.width - 48)
    modal: true
    focus: true  // the keyboard (Esc, Tab) is in the dialog
    title: qsTr("Reply settings of this chat")
    standardButtons: Dialog.Save | Dialog.Cancel
    onAccepted: chat.setConversationSampling(form.values())

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: 12
            opacity: 0.7
            text: chat.personaName !== ""
                  ? (dialog.modelSetsSome
                     ? qsTr("Unticked settings follow the persona %1, then the model's defaults, then Settings.").arg(chat.personaName)
                     : qsTr("Unticked settings follow the persona %1, then Settings.").arg(chat.personaName))
                  : (dialog.modelSetsSome ? qsTr("Unticked settings follow the model's defaults, then Settings.")
                                          : qsTr("Unticked settings follow Settings."))
        }
        ReplySettingsForm {
            id: form
            objectName: "chatReplySettings"
            Layout.fillWidth: true
            thinkingSwitch: dialog.thinkingSwitch
        }
    }
}
