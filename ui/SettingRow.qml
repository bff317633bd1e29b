import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A label (wrapped to its column, so a long one never runs under the control) and the
// control; the tip, if any, on hover.
RowLayout {
    id: row
    property string label
    property string tip
    Layout.fillWidth: true
    spacing: 12
    Label {
        text: row.label
        wrapMode: Text.WordWrap
        Layout.preferredWidth: 190
        Layout.maximumWidth: 190
        opacity: 0.8
        HoverHandler { id: labelHover }
        ToolTip.visible: labelHover.hovered && row.tip !== ""
        ToolTip.text: row.tip
        ToolTip.delay: 400
    }
}
