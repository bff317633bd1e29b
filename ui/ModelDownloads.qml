import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// The Model page's downloads, under the Recommended and Get models tabs alike: each one
// under way in its own pane (progress, pause, resume, discard, open), and the ones left
// unfinished, in this run or an earlier one. Each download has its own ModelDownloader, so
// several run at once; the token goes to the Hub only (ModelDownloader).
ColumnLayout {
    id: view
    required property var library
    required property var bridge
    required property string token
    spacing: 8

    // The models folder's view: what is there, what was left unfinished.
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
    // sha256 may be "": the Hub's X-Linked-Etag is checked instead.
    function download(url, sha256) {
        const name = downloader.fileNameFor(url)
        for (let i = 0; i < transfers.count; ++i)
            if (transfers.get(i).name === name) return
        transfers.append({ url: url.toString(), sha256: sha256 || "", name: name })
    }
    function transferring(url) {
        const name = downloader.fileNameFor(url)
        for (let i = 0; i < transfers.count; ++i)
            if (transfers.get(i).name === name) return true
        return false
    }
    // A fit verdict's colour ("fits", "tight", "too-big", "unsupported"), for the views
    // that offer downloads.
    function fitColor(fit) {
        if (fit === "fits") return Material.theme === Material.Dark ? "#8fce8f" : "#2e7d32"
        if (fit === "tight") return Material.theme === Material.Dark ? "#e0b060" : "#9a6700"
        return Material.color(Material.Red)
    }
    // Where a link's model is (or will be) in the models folder.
    function pathFor(url) {
        return downloader.modelsDir + "/" + downloader.fileNameFor(url)
    }
    // Whether a model of that link's name is in the models folder (re-read when a download
    // ends or starts: the bindings that call it depend on both).
    function here(url) {
        return transfers.count >= 0 && view.pending && downloader.destinationExists(url)
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
                token: view.token
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
