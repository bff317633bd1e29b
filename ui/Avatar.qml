import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Shapes
import Hearth

// A round badge on a persona's colour: its icon ("icon:<name>", AvatarIcons), else its
// glyph (an emoji, initials) when a font here can draw it, else its name's initial.
Rectangle {
    id: avatar
    property string glyph
    property string name
    property color tint: Material.accent
    property int size: 32
    readonly property string icon: AvatarIcons.iconFor(glyph)
    readonly property string shown: icon !== "" ? ""
                                    : glyph !== "" && Glyphs.canRender(glyph, label.font) ? glyph
                                    : name !== "" ? name.charAt(0).toUpperCase() : "·"
    width: size
    height: size
    radius: size / 2
    color: tint

    Shape {
        objectName: "avatarIcon"
        visible: avatar.icon !== ""
        width: 24
        height: 24
        anchors.centerIn: parent
        scale: avatar.size * 0.58 / 24
        ShapePath {
            fillColor: "white"
            strokeColor: "transparent"
            strokeWidth: 0
            PathSvg { path: avatar.icon !== "" ? AvatarIcons.paths[avatar.icon] : "" }
        }
    }
    Label {
        id: label
        objectName: "avatarText"
        visible: avatar.icon === ""
        anchors.centerIn: parent
        text: avatar.shown
        color: "white"
        font.pixelSize: avatar.size * (text.length > 2 ? 0.32 : 0.45)
        font.bold: true
    }
}
