import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// A message across the top of the page (an error or a warning), until dismissed. A new
// text shows it again.
Rectangle {
    id: banner
    property string text
    property string kind: "error"  // "error", "warning"
    property string dismissedText: ""
    readonly property bool shown: text !== "" && text !== dismissedText
    visible: shown
    implicitHeight: shown ? row.implicitHeight + 16 : 0
    color: kind === "error" ? "#29d84315" : "#33f9a825"
    Accessible.role: Accessible.AlertMessage
    Accessible.name: text

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 8
        spacing: 12
        Label {
            text: banner.kind === "error" ? "⚠" : "ⓘ"
            font.pixelSize: 18
            color: banner.kind === "error" ? "#d84315" : "#f9a825"
        }
        Label {
            objectName: "bannerText"
            text: banner.text
            wrapMode: Text.Wrap
            textFormat: Text.PlainText
            Layout.fillWidth: true
        }
        ToolButton {
            text: "✕"
            Accessible.name: qsTr("Dismiss")
            onClicked: banner.dismissedText = banner.text
        }
    }
}
