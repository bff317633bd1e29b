import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// Help → About: versions, the backend, and the log folder.
Dialog {
    id: dialog
    required property var bridge
    signal openLogFolder()
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: 420
    modal: true
    focus: true  // the keyboard (Esc, Tab) is in the dialog
    title: qsTr("About Hearth")

    ColumnLayout {
        anchors.fill: parent
        spacing: 6
        Label { text: qsTr("Desktop chat with local language models."); wrapMode: Text.Wrap; Layout.fillWidth: true }
        FactRow { label: qsTr("Hearth"); value: appVersion }
        FactRow { label: qsTr("Qt"); value: qtVersion }
        FactRow { label: qsTr("Backend"); value: dialog.bridge.loaded ? dialog.bridge.backendName : qsTr("(no model)") }
        FactRow { label: qsTr("Model"); value: dialog.bridge.loaded ? dialog.bridge.modelName : qsTr("(none)") }
        FactRow { label: qsTr("Logs"); value: logFolder }
    }
    footer: DialogButtonBox {
        Button { text: qsTr("Open log folder"); flat: true; onClicked: dialog.openLogFolder() }
        Button { text: qsTr("Close"); DialogButtonBox.buttonRole: DialogButtonBox.RejectRole }
    }
}
