import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// A titled card of settings (SettingsPage and the pages it includes).
Pane {
    id: sec
    property string title
    default property alias content: inner.data
    Layout.fillWidth: true
    background: Rectangle {
        radius: 12
        color: sec.Material.theme === Material.Dark ? "#2a2725" : "#ffffff"
        border.color: sec.Material.theme === Material.Dark ? "#3a3633" : "#e6dfd8"
    }
    padding: 16
    ColumnLayout {
        id: inner
        width: parent.width
        spacing: 8
        Label { text: sec.title; font.weight: Font.DemiBold; Layout.bottomMargin: 4 }
    }
}
