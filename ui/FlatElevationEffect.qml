import QtQuick

// What Qt's Material controls draw their backgrounds through when the scene is rendered in
// software (render_backend.h). Material's own ElevationEffect shows the control's
// background through a ShaderEffect, which Qt Quick's software renderer does not draw:
// buttons, combo boxes, switches, menus and dialogs had no background at all (a
// ShaderEffectSource of the layered item drew nothing either). The backgrounds are
// rectangles: this draws the same rectangle (colour, radius, border), with a hairline
// where Material would cast a shadow. The press ripple inside it is not drawn.
// Same properties as the effect it stands in for. Sizes are bound, not anchored (with
// anchors the content was not drawn in this place).
Item {
    id: effect
    property var source
    property int elevation: 0
    property bool fullWidth: false
    property bool fullHeight: false
    readonly property Item sourceItem: source ? source.sourceItem : null

    readonly property bool isRectangle: sourceItem !== null && sourceItem.color !== undefined && sourceItem.radius !== undefined
    // A border of its own (Frame, GroupBox). A Rectangle reads border.width 1 and black
    // even with no border set, so an unset one is told by its default colour.
    readonly property int ownBorder: isRectangle && sourceItem.border && !Qt.colorEqual(sourceItem.border.color, "black")
                                     ? sourceItem.border.width : 0

    Rectangle {
        objectName: "flatElevation"
        visible: effect.isRectangle
        width: effect.width
        height: effect.height
        color: effect.isRectangle ? effect.sourceItem.color : "transparent"
        radius: effect.isRectangle ? effect.sourceItem.radius : 0
        opacity: effect.sourceItem ? effect.sourceItem.opacity : 1
        border.width: effect.ownBorder > 0 ? effect.ownBorder : (effect.elevation > 0 ? 1 : 0)
        border.color: effect.ownBorder > 0 ? effect.sourceItem.border.color : Qt.rgba(0, 0, 0, 0.14)
    }
}
