import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// The Model page's "Get models": search Hugging Face for GGUF models, see a repository's
// files with whether each would fit this computer, download one (checked against the
// repository's checksum) and open it.
Item {
    id: view
    required property var library
    required property var bridge
    required property var connections
    property color subtleText: Material.hintTextColor

    function fitColor(fit) {
        if (fit === "fits") return Material.theme === Material.Dark ? "#8fce8f" : "#2e7d32"
        if (fit === "tight") return Material.theme === Material.Dark ? "#e0b060" : "#9a6700"
        return Material.color(Material.Red)
    }

    HubSearch {
        id: hub
        objectName: "hubSearch"
        token: view.connections.huggingFaceToken
        readBandwidth: view.library.readBandwidth
    }
    ModelDownloader {
        id: downloader
        objectName: "hubDownloader"
        onFinished: path => view.library.refresh()
        onStateChanged: view.pending = pendingDownloads()
        onModelsDirChanged: view.pending = pendingDownloads()
        Component.onCompleted: view.pending = pendingDownloads()
    }
    // Downloads left unfinished, in this run or an earlier one.
    property var pending: []

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: query
                objectName: "hubSearchField"
                Layout.fillWidth: true
                placeholderText: qsTr("Search Hugging Face for GGUF models, e.g. Qwen3 4B")
                Accessible.name: qsTr("Search Hugging Face")
                onAccepted: hub.search(text, sort.currentValue)
            }
            ComboBox {
                id: sort
                objectName: "hubSort"
                textRole: "text"
                valueRole: "value"
                Layout.preferredWidth: Math.max(implicitWidth, 200)
                model: [{ value: "downloads", text: qsTr("Most downloaded") },
                        { value: "trending", text: qsTr("Trending") }]
                onActivated: hub.search(query.text, currentValue)
            }
            AccentButton {
                objectName: "hubSearchButton"
                text: qsTr("Search")
                enabled: !hub.busy
                onClicked: hub.search(query.text, sort.currentValue)
            }
        }
        Label {
            objectName: "hubError"
            visible: hub.errorString !== ""
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Material.color(Material.Red)
            text: hub.errorString
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 16

            // Repositories.
            ListView {
                id: results
                objectName: "hubResults"
                Layout.preferredWidth: parent.width * 0.4
                Layout.fillHeight: true
                clip: true
                model: hub.results
                ScrollBar.vertical: ScrollBar {}
                BusyIndicator {
                    anchors.centerIn: parent
                    running: hub.busy && results.count === 0
                    visible: running
                }
                Label {
                    anchors.centerIn: parent
                    width: parent.width - 24
                    visible: !hub.busy && results.count === 0
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    color: view.subtleText
                    text: qsTr("Search for a model by name; the results are Hugging Face repositories with GGUF files.")
                }
                delegate: ItemDelegate {
                    required property var modelData
                    objectName: "hubResult_" + modelData.id
                    width: ListView.view.width
                    highlighted: hub.repo === modelData.id
                    onClicked: hub.listFiles(modelData.id)
                    contentItem: ColumnLayout {
                        spacing: 2
                        Label {
                            Layout.fillWidth: true
                            elide: Text.ElideMiddle
                            font.bold: true
                            text: modelData.id
                        }
                        Label {
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                            font.pixelSize: 12
                            color: view.subtleText
                            text: qsTr("%1 downloads · %2 likes").arg(Number(modelData.downloads).toLocaleString(Qt.locale(), 'f', 0))
                                  .arg(modelData.likes)
                                  + (modelData.gated ? " · " + qsTr("gated: accept its terms on huggingface.co") : "")
                        }
                    }
                }
            }

            // The chosen repository's models.
            ColumnLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                Label {
                    visible: hub.repo !== ""
                    text: hub.repo
                    font.bold: true
                }
                ListView {
                    id: files
                    objectName: "hubFiles"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    spacing: 2
                    model: hub.files
                    ScrollBar.vertical: ScrollBar {}
                    delegate: ItemDelegate {
                        id: fileRow
                        required property var modelData
                        objectName: "hubFile_" + modelData.name
                        width: ListView.view.width
                        contentItem: RowLayout {
                            spacing: 12
                            ColumnLayout {
                                Layout.fillWidth: true
                                spacing: 2
                                Label {
                                    Layout.fillWidth: true
                                    elide: Text.ElideMiddle
                                    text: fileRow.modelData.name
                                }
                                Label {
                                    Layout.fillWidth: true
                                    elide: Text.ElideRight
                                    font.pixelSize: 12
                                    color: view.subtleText
                                    text: [fileRow.modelData.quant, Format.bytes(fileRow.modelData.size)].filter(s => s !== "").join(" · ")
                                }
                                Label {
                                    objectName: "hubFileFit"
                                    Layout.fillWidth: true
                                    wrapMode: Text.Wrap
                                    font.pixelSize: 12
                                    visible: text !== ""
                                    color: view.fitColor(fileRow.modelData.fit)
                                    text: fileRow.modelData.fitText
                                }
                            }
                            Button {
                                objectName: "hubDownload"
                                text: downloader.destinationExists(hub.downloadUrl(fileRow.modelData.path)) ? qsTr("Downloaded") : qsTr("Download")
                                enabled: !downloader.busy && fileRow.modelData.parts === 1
                                         && fileRow.modelData.fit !== "too-big"
                                         && !downloader.destinationExists(hub.downloadUrl(fileRow.modelData.path))
                                onClicked: downloader.start(hub.downloadUrl(fileRow.modelData.path), fileRow.modelData.sha256)
                            }
                        }
                    }
                }
                TextField {
                    objectName: "hubToken"
                    Layout.fillWidth: true
                    echoMode: TextInput.Password
                    placeholderText: qsTr("Hugging Face access token, for gated models (optional)")
                    Accessible.name: qsTr("Hugging Face access token")
                    text: view.connections.huggingFaceToken
                    onEditingFinished: view.connections.huggingFaceToken = text
                }
            }
        }

        // Unfinished downloads from before: continue or throw away.
        Repeater {
            model: downloader.busy ? [] : view.pending
            delegate: RowLayout {
                required property var modelData
                objectName: "hubPending_" + modelData.name
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    elide: Text.ElideMiddle
                    text: qsTr("Unfinished download: %1 (%2 so far)").arg(modelData.name).arg(Format.bytes(modelData.received))
                }
                Button {
                    objectName: "hubPendingResume"
                    text: qsTr("Resume")
                    onClicked: downloader.start(modelData.url, modelData.sha256)
                }
                Button {
                    objectName: "hubPendingDiscard"
                    flat: true
                    text: qsTr("Discard")
                    onClicked: downloader.discardPending(modelData.name)
                }
            }
        }

        // The download under way, or its end.
        Pane {
            objectName: "hubDownloadPane"
            visible: downloader.state !== ModelDownloader.Idle
            Layout.fillWidth: true
            Material.elevation: 2
            RowLayout {
                anchors.fill: parent
                ColumnLayout {
                    Layout.fillWidth: true
                    Label {
                        objectName: "hubDownloadStatus"
                        Layout.fillWidth: true
                        wrapMode: Text.Wrap
                        text: {
                            const name = downloader.destinationPath.split("/").pop()
                            switch (downloader.state) {
                            case ModelDownloader.Downloading:
                                return qsTr("Downloading %1: %2 of %3").arg(name).arg(Format.bytes(downloader.bytesReceived))
                                       .arg(downloader.bytesTotal > 0 ? Format.bytes(downloader.bytesTotal) : "?")
                            case ModelDownloader.Verifying: return qsTr("Checking %1…").arg(name)
                            case ModelDownloader.Done: return qsTr("%1 is downloaded.").arg(name)
                            case ModelDownloader.Cancelled: return qsTr("The download of %1 is paused.").arg(name)
                            default: return downloader.errorString
                            }
                        }
                    }
                    ProgressBar {
                        Layout.fillWidth: true
                        visible: downloader.busy
                        value: downloader.progress
                        indeterminate: downloader.bytesTotal <= 0 && downloader.state === ModelDownloader.Downloading
                    }
                }
                Button {
                    objectName: "hubOpenDownloaded"
                    visible: downloader.state === ModelDownloader.Done
                    text: qsTr("Open it")
                    onClicked: view.bridge.load(downloader.destinationPath)
                }
                Button {
                    visible: downloader.busy
                    text: qsTr("Pause")
                    onClicked: downloader.cancel()
                }
                Button {
                    visible: downloader.canResume
                    text: qsTr("Resume")
                    onClicked: downloader.resume()
                }
                Button {
                    visible: downloader.canResume
                    flat: true
                    text: qsTr("Discard")
                    onClicked: downloader.discard()
                }
            }
        }
    }
}
