import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

// The Model page's "Get models": search Hugging Face for GGUF models, see a repository's
// files with whether each would fit this computer, and download one (checked against the
// repository's checksum; the download shows in ModelDownloads, under the tabs).
Item {
    id: view
    required property var library
    required property var bridge
    required property var connections
    required property var downloads  // ModelDownloads: where a download starts and shows
    property color subtleText: Material.hintTextColor

    HubSearch {
        id: hub
        objectName: "hubSearch"
        token: view.connections.huggingFaceToken
        readBandwidth: view.library.readBandwidth
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
                                    color: view.downloads.fitColor(fileRow.modelData.fit)
                                    text: fileRow.modelData.fitText
                                }
                            }
                            Button {
                                objectName: "hubDownload"
                                readonly property url link: hub.downloadUrl(fileRow.modelData.path)
                                readonly property bool here: view.downloads.here(link)
                                text: here ? qsTr("Downloaded") : qsTr("Download")
                                enabled: fileRow.modelData.complete && fileRow.modelData.fit !== "too-big"
                                         && !here && !view.downloads.transferring(link)
                                // A split model: every part, each checked on its own.
                                onClicked: fileRow.modelData.files.forEach(
                                               f => view.downloads.download(hub.downloadUrl(f.path), f.sha256))
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
    }
}
