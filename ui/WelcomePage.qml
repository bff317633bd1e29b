import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// No model open (first run, or it failed to load): what to do about it.
Page {
    id: page
    required property var bridge
    property color subtleText
    signal openFileRequested()
    background: Rectangle { color: page.Material.background }

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 64, 560)
        spacing: 16

        Label {
            text: page.bridge.loading ? qsTr("Opening the model…") : qsTr("Welcome to Hearth")
            font.pixelSize: 28
            font.weight: Font.Light
            Layout.alignment: Qt.AlignHCenter
        }
        BusyIndicator {
            visible: page.bridge.loading
            running: visible
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            visible: !page.bridge.loading
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            text: qsTr("Hearth chats with language models that run on this computer. It needs a model file (GGUF) to start.")
        }
        Pane {
            objectName: "welcomeError"
            visible: !page.bridge.loading && page.bridge.errorString !== ""
            Layout.fillWidth: true
            Material.background: "#29d84315"
            Material.elevation: 0
            Label {
                width: parent.width
                wrapMode: Text.Wrap
                textFormat: Text.PlainText
                text: qsTr("The model could not be opened:\n%1").arg(page.bridge.errorString)
            }
        }
        Pane {
            visible: !page.bridge.loading
            Layout.fillWidth: true
            background: Rectangle {
                radius: 12
                color: page.Material.theme === Material.Dark ? "#2a2725" : "#ffffff"
                border.color: page.Material.theme === Material.Dark ? "#3a3633" : "#e6dfd8"
            }
            ColumnLayout {
                width: parent.width
                spacing: 8
                Label { text: qsTr("Get the default model"); font.weight: Font.DemiBold }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: page.subtleText
                    text: qsTr("SmolLM2-135M-Instruct (98 MB) is small and quick. From the Hearth source folder, run:")
                }
                TextField {
                    Layout.fillWidth: true
                    readOnly: true
                    selectByMouse: true
                    font.family: "monospace"
                    text: "scripts/fetch-model"
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WrapAnywhere
                    color: page.subtleText
                    font.pixelSize: 12
                    text: qsTr("It is saved to %1, where Hearth looks for it on start.").arg(defaultModelPath)
                }
                RowLayout {
                    Layout.topMargin: 6
                    Button {
                        objectName: "openModelButton"
                        text: qsTr("Open a GGUF file…")
                        highlighted: true
                        onClicked: page.openFileRequested()
                    }
                    Button {
                        text: qsTr("Try again")
                        flat: true
                        onClicked: page.bridge.load(defaultModelPath)
                    }
                }
            }
        }
    }
}
