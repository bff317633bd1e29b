import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material

// A filled button in the accent colour (the main action of a view) whose label keeps
// WCAG AA contrast in both themes: Material writes white on the accent, which the dark
// theme's pale accent cannot carry (1.9:1), so the label is dark there.
Button {
    id: button
    highlighted: true
    // The text on the accent: see Main.qml's accent choice (both above 4.5:1).
    readonly property color labelColor: Material.theme === Material.Dark ? "#201a17" : "#ffffff"
    contentItem: Text {
        objectName: "accentButtonLabel"
        text: button.text
        font: button.font
        color: button.enabled ? button.labelColor : button.Material.hintTextColor
        horizontalAlignment: Text.AlignHCenter
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
}
