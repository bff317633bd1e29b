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
    // The models folder's view: what is there, what was left unfinished. Each download has
    // its own ModelDownloader (below), so several run at once.
    ModelDownloader {
        id: downloader
        objectName: "hubDownloader"
        onModelsDirChanged: view.refreshPending()
        Component.onCompleted: view.refreshPending()
    }
    ListModel {
        id: transfers  // {url, sha256, name}
        onCountChanged: view.refreshPending()
    }
    // Downloads left unfinished, in this run or an earlier one, that are not running now.
    property var pending: []
    function refreshPending() {
        const running = []
        for (let i = 0; i < transfers.count; ++i) running.push(transfers.get(i).name)
        pending = downloader.pendingDownloads().filter(p => running.indexOf(p.name) < 0)
    }
    function download(url, sha256) {
        const name = downloader.fileNameFor(url)
        for (let i = 0; i < transfers.count; ++i)
            if (transfers.get(i).name === name) return
        transfers.append({ url: url.toString(), sha256: sha256, name: name })
    }
    function transferring(url) {
        const name = downloader.fileNameFor(url)
        for (let i = 0; i < transfers.count; ++i)
            if (transfers.get(i).name === name) return true
        return false
    }

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
                                readonly property url link: hub.downloadUrl(fileRow.modelData.path)
                                // (re-read when a download ends or starts)
                                readonly property bool here: transfers.count >= 0 && view.pending && downloader.destinationExists(link)
                                text: here ? qsTr("Downloaded") : qsTr("Download")
                                enabled: fileRow.modelData.parts === 1 && fileRow.modelData.fit !== "too-big"
                                         && !here && !view.transferring(link)
                                onClicked: view.download(link, fileRow.modelData.sha256)
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
            model: view.pending
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
                    onClicked: view.download(modelData.url, modelData.sha256)
                }
                Button {
                    objectName: "hubPendingDiscard"
                    flat: true
                    text: qsTr("Discard")
                    onClicked: {
                        downloader.discardPending(modelData.name)
                        view.refreshPending()
                    }
                }
            }
        }

        // The downloads under way, each with its own end.
        Repeater {
            model: transfers
            delegate: Pane {
                id: transfer
                required property int index
                required property string url
                required property string sha256
                objectName: "hubTransfer_" + transfer.name
                required property string name
                readonly property var job: d  // (tests read it)
                Layout.fillWidth: true
                Material.elevation: 2
                ModelDownloader {
                    id: d
                    objectName: "hubTransfer"
                    modelsDir: downloader.modelsDir
                    Component.onCompleted: start(transfer.url, transfer.sha256)
                    onFinished: path => view.library.refresh()
                    onStateChanged: view.refreshPending()
                }
                RowLayout {
                    anchors.fill: parent
                    ColumnLayout {
                        Layout.fillWidth: true
                        Label {
                            objectName: "hubDownloadStatus"
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            text: {
                                switch (d.state) {
                                case ModelDownloader.Downloading:
                                    return qsTr("Downloading %1: %2 of %3").arg(transfer.name).arg(Format.bytes(d.bytesReceived))
                                           .arg(d.bytesTotal > 0 ? Format.bytes(d.bytesTotal) : "?")
                                case ModelDownloader.Verifying: return qsTr("Checking %1…").arg(transfer.name)
                                case ModelDownloader.Done: return qsTr("%1 is downloaded.").arg(transfer.name)
                                case ModelDownloader.Cancelled: return qsTr("The download of %1 is paused.").arg(transfer.name)
                                default: return d.errorString
                                }
                            }
                        }
                        ProgressBar {
                            Layout.fillWidth: true
                            visible: d.busy
                            value: d.progress
                            indeterminate: d.bytesTotal <= 0 && d.state === ModelDownloader.Downloading
                        }
                    }
                    Button {
                        objectName: "hubOpenDownloaded"
                        visible: d.state === ModelDownloader.Done
                        text: qsTr("Open it")
                        onClicked: view.bridge.load(d.destinationPath)
                    }
                    Button {
                        objectName: "hubPause"
                        visible: d.busy
                        text: qsTr("Pause")
                        onClicked: d.cancel()
                    }
                    Button {
                        visible: d.canResume
                        text: qsTr("Resume")
                        onClicked: d.resume()
                    }
                    Button {
                        visible: d.canResume
                        flat: true
                        text: qsTr("Discard")
                        onClicked: d.discard()
                    }
                    Button {
                        objectName: "hubTransferClose"
                        visible: !d.busy
                        flat: true
                        text: qsTr("Close")
                        onClicked: transfers.remove(transfer.index)  // the pending list follows
                    }
                }
            }
        }
    }
}
