import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth.Core

ApplicationWindow {
    id: window
    width: 1000
    height: 700
    visible: true
    title: inspector.status === "ready" && inspector.facts.name
           ? qsTr("Hearth — %1").arg(inspector.facts.name) : qsTr("Hearth")
    Material.theme: Material.System
    Material.accent: Material.DeepOrange

    ModelInspector {
        id: inspector
        Component.onCompleted: load(initialModelPath !== "" ? initialModelPath : defaultModelPath)
    }

    ModelPage {
        anchors.fill: parent
        inspector: inspector
    }
}
