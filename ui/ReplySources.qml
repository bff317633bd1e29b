import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// A reply's sources: the passages of documents its message was given (best first, as
// MessageListModel's `sources` role has them: {name, heading, snippet, path, url,
// exists}); each names its file and section and shows the passage's start, and a click
// opens the file while it is there.
ColumnLayout {
    id: box
    required property var sources
    property color subtleText
    spacing: 0
    Label {
        text: qsTr("Sources")
        color: box.subtleText
        font.pixelSize: 11
        font.bold: true
    }
    Repeater {
        model: box.sources
        delegate: ItemDelegate {
            id: sourceRow
            required property var modelData
            required property int index
            objectName: "source" + index
            Layout.fillWidth: true
            topPadding: 3
            bottomPadding: 3
            leftPadding: 0
            hoverEnabled: modelData.exists
            Accessible.name: qsTr("Open %1").arg(modelData.name)
            ToolTip.visible: hovered
            ToolTip.delay: 600
            ToolTip.text: modelData.exists ? modelData.path
                                           : modelData.path !== "" ? qsTr("%1 is no longer there").arg(modelData.path)
                                                                   : qsTr("This document was not read from a file")
            onClicked: if (modelData.exists) Qt.openUrlExternally(modelData.url)
            contentItem: ColumnLayout {
                spacing: 0
                Label {
                    Layout.fillWidth: true
                    text: (sourceRow.index + 1) + ". " + sourceRow.modelData.name
                          + (sourceRow.modelData.heading !== "" ? " · " + sourceRow.modelData.heading : "")
                    textFormat: Text.PlainText
                    elide: Text.ElideRight
                    font.pixelSize: 12
                    font.underline: sourceRow.hovered && sourceRow.modelData.exists
                    color: sourceRow.modelData.exists ? box.Material.accent : box.subtleText
                }
                Label {
                    Layout.fillWidth: true
                    text: sourceRow.modelData.snippet
                    textFormat: Text.PlainText
                    elide: Text.ElideRight
                    maximumLineCount: 2
                    wrapMode: Text.Wrap
                    font.pixelSize: 11
                    color: box.subtleText
                }
            }
        }
    }
}
