import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One "label: value" line of the model facts.
RowLayout {
    property string label
    property string value
    spacing: 12
    Label {
        text: label
        opacity: 0.7
        Layout.preferredWidth: 150
    }
    Label {
        text: value
        wrapMode: Text.Wrap
        Layout.fillWidth: true
        textFormat: Text.PlainText
    }
}
