import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// One entry of the navigation rail: a glyph over a short caption.
AbstractButton {
    id: button
    property string glyph
    property string label
    checkable: false
    Layout.alignment: Qt.AlignHCenter
    // Wide enough for its caption (a translation's may be longer than "Settings").
    implicitWidth: Math.max(64, caption.implicitWidth + 10)
    implicitHeight: 58
    hoverEnabled: true
    Accessible.name: label

    background: Rectangle {
        radius: 12
        readonly property color a: button.Material.accent
        readonly property color f: button.Material.foreground
        color: button.checked ? Qt.rgba(a.r, a.g, a.b, 0.16)
                              : button.hovered ? Qt.rgba(f.r, f.g, f.b, 0.06) : "transparent"
    }
    contentItem: Column {
        spacing: 2
        Label {
            anchors.horizontalCenter: parent.horizontalCenter
            text: button.glyph
            font.pixelSize: 20
            color: button.checked ? button.Material.accent : button.Material.foreground
        }
        Label {
            id: caption
            objectName: "navCaption"
            anchors.horizontalCenter: parent.horizontalCenter
            text: button.label
            font.pixelSize: 11
            color: button.checked ? button.Material.accent : button.Material.foreground
            opacity: button.checked ? 1 : 0.75
        }
    }
}
