import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// The Model page's "Recommended": the curated catalog (ModelCatalog), shown offline too.
// Models on the left, by family; the chosen one's facts, where they were checked, and its
// files with whether each would fit this computer, to download (ModelDownloads shows the
// download) or to open once it is here.
Item {
    id: view
    required property var catalog
    required property var downloads  // ModelDownloads
    required property var bridge
    property color subtleText: Material.hintTextColor
    property string selectedId: ""
    readonly property var selected: {
        const models = view.catalog.models
        for (let i = 0; i < models.length; ++i)
            if (models[i].id === view.selectedId) return models[i]
        return models.length > 0 ? models[0] : null
    }

    // A check for a newer list, at most daily and only when the user allows it.
    onVisibleChanged: if (visible) view.catalog.checkIfDue()

    function facts(m) {
        const parts = []
        if (m.parametersB > 0)
            parts.push(m.parametersB >= 1 ? qsTr("%1 B parameters").arg(Format.decimal(m.parametersB, 1))
                                          : qsTr("%1 M parameters").arg(Math.round(m.parametersB * 1000)))
        if (m.contextLength > 0)
            parts.push(qsTr("context %1 tokens").arg(Number(m.contextLength).toLocaleString(Qt.locale(), 'f', 0)))
        if (m.license !== "") parts.push(qsTr("licence %1").arg(m.license))
        if (m.thinking) parts.push(qsTr("can think before answering"))
        return parts.join(" · ")
    }
    // A file's fit in a few words, for the list.
    function shortFit(f) {
        if (f.fit === "fits") {
            if (f.tokensPerSecond > 1000) return qsTr("fits, very fast")
            if (f.tokensPerSecond > 0)
                return qsTr("fits, about %1 tokens/s").arg(f.tokensPerSecond >= 10 ? Math.round(f.tokensPerSecond)
                                                                                      : Format.decimal(f.tokensPerSecond, 1))
            return qsTr("fits")
        }
        if (f.fit === "tight") return qsTr("takes most of the memory")
        if (f.fit === "too-big") return qsTr("too big for this computer")
        if (f.fit === "unsupported") return qsTr("cannot run here")
        return ""
    }
    // The catalog's field names, in words.
    function uncheckedWords(fields) {
        const words = { "files.size_bytes": qsTr("file sizes"), "parameters_b": qsTr("parameter count"),
                        "license": qsTr("licence"), "context_length": qsTr("context length"),
                        "base_repo": qsTr("original repository"), "files": qsTr("files"),
                        "description": qsTr("description") }
        return fields.map(f => words[f] || f).join(", ")
    }
    function recommendedFile(m) {
        for (let i = 0; i < m.files.length; ++i)
            if (m.files[i].recommended) return m.files[i]
        return m.files.length > 0 ? m.files[0] : null
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        Label {
            objectName: "catalogAbout"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: view.subtleText
            font.pixelSize: 12
            text: qsTr("Models that run well on a desktop, each checked against its page on Hugging Face (list of %1%2). Downloads come from Hugging Face.")
                  .arg(view.catalog.updated).arg(view.catalog.fromUpdate ? qsTr(", updated") : "")
                  + (view.catalog.status !== "" ? " " + view.catalog.status : "")
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 16

            ListView {
                id: models
                objectName: "catalogModels"
                Layout.preferredWidth: 300
                Layout.fillHeight: true
                clip: true
                model: view.catalog.models
                ScrollBar.vertical: ScrollBar {}
                delegate: ItemDelegate {
                    id: modelRow
                    required property var modelData
                    required property int index
                    readonly property var pick: view.recommendedFile(modelData)
                    // (a JS list has no sections: the family heads its first model)
                    readonly property bool firstOfFamily: index === 0
                        || view.catalog.models[index - 1].family !== modelData.family
                    objectName: "catalogModel_" + modelData.id
                    width: ListView.view.width
                    highlighted: view.selected !== null && view.selected.id === modelData.id
                    onClicked: view.selectedId = modelData.id
                    contentItem: ColumnLayout {
                        spacing: 2
                        Label {
                            visible: modelRow.firstOfFamily && modelRow.modelData.family !== ""
                            topPadding: modelRow.index > 0 ? 8 : 0
                            font.pixelSize: 12
                            font.weight: Font.DemiBold
                            color: view.subtleText
                            text: modelRow.modelData.family
                        }
                        Label {
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                            font.bold: true
                            text: modelRow.modelData.name
                        }
                        Label {
                            Layout.fillWidth: true
                            elide: Text.ElideRight
                            font.pixelSize: 12
                            color: modelRow.pick && modelRow.pick.fit !== "" ? view.downloads.fitColor(modelRow.pick.fit) : view.subtleText
                            text: modelRow.pick ? [modelRow.pick.quant, Format.bytes(modelRow.pick.size), view.shortFit(modelRow.pick)].filter(s => s !== "").join(" · ")
                                                : qsTr("No files listed")
                        }
                    }
                }
            }

            // The chosen model: its facts (a Column of labels as wide as the pane: wrapped
            // text in a layout would make it lay out again and again), then its files.
            Item {
                Layout.fillWidth: true
                Layout.fillHeight: true
                visible: view.selected !== null
                Column {
                    id: details
                    width: parent.width
                    spacing: 6
                    Label {
                        objectName: "catalogName"
                        text: view.selected ? view.selected.name : ""
                        font.pixelSize: 18
                        font.weight: Font.DemiBold
                    }
                    Label {
                        width: parent.width
                        wrapMode: Text.Wrap
                        text: view.selected ? view.selected.description : ""
                    }
                    Label {
                        objectName: "catalogFacts"
                        width: parent.width
                        wrapMode: Text.Wrap
                        font.pixelSize: 12
                        color: view.subtleText
                        text: view.selected ? view.facts(view.selected) : ""
                    }
                    Label {
                        width: parent.width
                        wrapMode: Text.Wrap
                        font.pixelSize: 12
                        textFormat: Text.StyledText
                        linkColor: Material.accent
                        onLinkActivated: link => Qt.openUrlExternally(link)
                        text: view.selected ? qsTr("From %1, checked against %2")
                                              .arg("<a href=\"https://huggingface.co/" + view.selected.repo + "\">" + view.selected.repo + "</a>")
                                              .arg(view.selected.sources.length > 0 ? qsTr("%n source(s)", "", view.selected.sources.length) : qsTr("no source"))
                                            : ""
                    }
                    Label {
                        objectName: "catalogCaveat"
                        visible: text !== ""
                        width: parent.width
                        wrapMode: Text.Wrap
                        font.pixelSize: 12
                        text: view.selected ? view.selected.caveat : ""
                    }
                    Label {
                        objectName: "catalogUnchecked"
                        visible: view.selected !== null && view.selected.unchecked.length > 0
                        width: parent.width
                        wrapMode: Text.Wrap
                        font.pixelSize: 12
                        color: Material.theme === Material.Dark ? "#e0b060" : "#9a6700"
                        text: view.selected ? qsTr("Not checked against the model's own pages: %1").arg(view.uncheckedWords(view.selected.unchecked)) : ""
                    }
                    Label {
                        visible: view.selected !== null && !view.selected.supported
                        width: parent.width
                        wrapMode: Text.Wrap
                        color: Material.color(Material.Red)
                        text: view.selected ? qsTr("This Hearth cannot run %1 models; a newer one may.").arg(view.selected.architecture) : ""
                    }
                }
                ListView {
                    id: files
                    objectName: "catalogFiles"
                    anchors.top: details.bottom
                    anchors.topMargin: 12
                    anchors.bottom: parent.bottom
                    width: parent.width
                    clip: true
                    spacing: 2
                    model: view.selected ? view.selected.files : []
                    ScrollBar.vertical: ScrollBar {}
                    delegate: ItemDelegate {
                        id: fileRow
                        required property var modelData
                        objectName: "catalogFile_" + modelData.name
                        width: ListView.view.width
                        ToolTip.visible: hovered && modelData.fitDetail !== ""
                        ToolTip.text: modelData.fitDetail
                        ToolTip.delay: 400
                        contentItem: RowLayout {
                            spacing: 12
                            ColumnLayout {
                                Layout.fillWidth: true
                                spacing: 2
                                Label {
                                    Layout.fillWidth: true
                                    elide: Text.ElideMiddle
                                    text: fileRow.modelData.name
                                    font.bold: fileRow.modelData.recommended
                                }
                                Label {
                                    Layout.fillWidth: true
                                    elide: Text.ElideRight
                                    font.pixelSize: 12
                                    color: view.subtleText
                                    text: [fileRow.modelData.quant, Format.bytes(fileRow.modelData.size),
                                           fileRow.modelData.recommended ? qsTr("recommended") : ""].filter(s => s !== "").join(" · ")
                                }
                                Label {
                                    objectName: "catalogFileFit"
                                    Layout.fillWidth: true
                                    wrapMode: Text.Wrap
                                    font.pixelSize: 12
                                    visible: text !== ""
                                    color: view.downloads.fitColor(fileRow.modelData.fit)
                                    text: fileRow.modelData.fitText
                                }
                            }
                            Button {
                                objectName: "catalogDownload"
                                readonly property bool here: view.downloads.here(fileRow.modelData.url)
                                text: here ? qsTr("Open") : qsTr("Download")
                                enabled: here ? !view.bridge.loading
                                              : fileRow.modelData.fit !== "unsupported" && fileRow.modelData.fit !== "too-big"
                                                && !view.downloads.transferring(fileRow.modelData.url)
                                onClicked: here ? view.bridge.load(view.downloads.pathFor(fileRow.modelData.url))
                                                : view.downloads.download(fileRow.modelData.url, "")
                            }
                        }
                    }
                }
            }
        }
    }
}
