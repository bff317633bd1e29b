import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material

// A round badge: a persona's glyph (or its initial) on its colour.
Rectangle {
    id: avatar
    property string glyph
    property string name
    property color tint: Material.accent
    property int size: 32
    width: size
    height: size
    radius: size / 2
    color: tint
    Label {
        anchors.centerIn: parent
        text: avatar.glyph !== "" ? avatar.glyph : (avatar.name !== "" ? avatar.name.charAt(0).toUpperCase() : "·")
        color: "white"
        font.pixelSize: avatar.size * (text.length > 2 ? 0.32 : 0.45)
        font.bold: true
    }
}
