import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// Settings: chatting with a model on another machine (an OpenAI-compatible endpoint),
// and the local API server that lets other programs use the model open here.
ColumnLayout {
    id: view
    required property var connections  // ConnectionSettings
    required property var remote       // RemoteBackend
    required property var apiServer    // LocalApiServer
    spacing: 16

    SettingsSection {
        objectName: "remoteSection"
        title: qsTr("Remote model")
        Label {
            text: qsTr("Chat with a model served by another machine: vLLM, SGLang, llama.cpp's server or another Hearth (any OpenAI-compatible endpoint). Personas, history, regenerate and stop work as with a local model.")
            wrapMode: Text.Wrap
            opacity: 0.7
            font.pixelSize: 12
            Layout.fillWidth: true
        }
        SettingRow {
            label: qsTr("Use a remote model")
            Switch {
                Accessible.name: parent.label  // the row's label names it
                objectName: "remoteSwitch"
                checked: view.connections.remoteEnabled
                onToggled: view.connections.remoteEnabled = checked
            }
        }
        SettingRow {
            label: qsTr("Server address")
            TextField {
                Accessible.name: parent.label  // the row's label names it
                objectName: "remoteUrlField"
                text: view.connections.remoteUrl
                placeholderText: "http://localhost:8000/v1"
                selectByMouse: true
                Layout.fillWidth: true
                onEditingFinished: {
                    view.connections.remoteUrl = text
                    view.remote.refreshModels()
                }
            }
        }
        SettingRow {
            label: qsTr("API key")
            tip: qsTr("Sent as 'Authorization: Bearer …'; leave empty when the server needs none.")
            TextField {
                Accessible.name: parent.label  // the row's label names it
                objectName: "remoteKeyField"
                text: view.connections.remoteKey
                echoMode: TextInput.Password
                placeholderText: qsTr("(none)")
                Layout.fillWidth: true
                onEditingFinished: {
                    view.connections.remoteKey = text
                    view.remote.refreshModels()
                }
            }
        }
        SettingRow {
            label: qsTr("Model")
            ComboBox {
                Accessible.name: parent.label  // the row's label names it
                objectName: "remoteModelCombo"
                model: view.remote.models
                Layout.fillWidth: true
                currentIndex: view.remote.models.indexOf(view.connections.remoteModel)
                displayText: currentIndex >= 0 ? currentText
                             : (view.connections.remoteModel !== "" ? view.connections.remoteModel : qsTr("(refresh to list)"))
                onActivated: i => view.connections.remoteModel = view.remote.models[i]
            }
            Button {
                text: qsTr("Refresh")
                enabled: !view.remote.refreshing
                onClicked: view.remote.refreshModels()
            }
        }
        Label {
            objectName: "remoteStatus"
            text: view.remote.status
            visible: text !== ""
            wrapMode: Text.Wrap
            font.pixelSize: 12
            Layout.fillWidth: true
        }
        Label {
            text: view.connections.keyStorageNote
            wrapMode: Text.WrapAnywhere
            opacity: 0.6
            font.pixelSize: 11
            Layout.fillWidth: true
        }
    }

    SettingsSection {
        objectName: "apiServerSection"
        title: qsTr("Local API server")
        Label {
            text: qsTr("Lets other programs on this computer (editors, scripts, agents) use the model open here through the OpenAI API. They share its memory of prompts with your chats.")
            wrapMode: Text.Wrap
            opacity: 0.7
            font.pixelSize: 12
            Layout.fillWidth: true
        }
        SettingRow {
            label: qsTr("Serve the open model")
            Switch {
                Accessible.name: parent.label  // the row's label names it
                objectName: "apiServerSwitch"
                checked: view.connections.serverEnabled
                onToggled: view.connections.serverEnabled = checked
            }
        }
        SettingRow {
            label: qsTr("Port")
            SpinBox {
                Accessible.name: parent.label  // the row's label names it
                objectName: "apiServerPort"
                from: 1; to: 65535
                editable: true
                value: view.connections.serverPort
                onValueModified: view.connections.serverPort = value
                textFromValue: (v, locale) => String(v)
            }
        }
        SettingRow {
            label: qsTr("Other machines may connect")
            tip: qsTr("Listens on every network interface. Needs an API key, so that nobody else on the network can use the model.")
            Switch {
                Accessible.name: parent.label  // the row's label names it
                objectName: "apiServerNetwork"
                checked: view.connections.serverNetwork
                onToggled: view.connections.serverNetwork = checked
            }
        }
        SettingRow {
            label: qsTr("API key")
            TextField {
                Accessible.name: parent.label  // the row's label names it
                objectName: "apiServerKey"
                text: view.connections.serverKey
                echoMode: TextInput.Password
                placeholderText: qsTr("(none: this computer only)")
                Layout.fillWidth: true
                onEditingFinished: view.connections.serverKey = text
            }
        }
        SettingRow {
            label: qsTr("Allowed web origins")
            tip: qsTr("Web pages at these origins may call the server from a browser (comma-separated, e.g. http://localhost:3000). Others are refused.")
            TextField {
                Accessible.name: parent.label  // the row's label names it
                text: view.connections.serverOrigins
                placeholderText: qsTr("(none)")
                Layout.fillWidth: true
                onEditingFinished: view.connections.serverOrigins = text
            }
        }
        Label {
            objectName: "apiServerStatus"
            text: view.apiServer.running
                  ? qsTr("Serving %1 at %2/v1").arg(view.apiServer.modelId !== "" ? view.apiServer.modelId : qsTr("(no model open)")).arg(view.apiServer.url)
                  : (view.apiServer.error !== "" ? qsTr("Not running: %1").arg(view.apiServer.error) : qsTr("Off"))
            color: view.apiServer.error !== "" ? "#c0392b" : view.Material.foreground
            wrapMode: Text.Wrap
            font.pixelSize: 12
            Layout.fillWidth: true
        }
    }
}
