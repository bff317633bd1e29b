import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// The engine at a glance: the model, decoding speed, KV cache use, prefix-cache hits and
// the conversations kept resident (EngineBridge's stats, ~4 Hz); the remote model when the
// chat uses one, and the local API server when it runs.
Rectangle {
    id: bar
    required property var bridge
    property var backend    // the chat's ChatBackend
    property var apiServer  // LocalApiServer
    property color dividerColor
    property color subtleText
    implicitHeight: 28
    // A narrow window gets the short forms, and below that only the model and the speed:
    // nothing is cut at the window's edge.
    readonly property bool compact: width < 1000
    readonly property bool tiny: width < 640

    Rectangle { anchors.top: parent.top; width: parent.width; height: 1; color: bar.dividerColor }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 14
        anchors.rightMargin: 14
        spacing: 18
        Label {
            objectName: "statusModel"
            readonly property bool remote: !!bar.backend && bar.backend.remote
            text: remote ? "● " + bar.backend.displayName + "  " + qsTr("(remote)")
                  : bar.bridge.loading ? qsTr("◌ loading model…")
                  : bar.bridge.loaded ? "● " + bar.bridge.modelName + "  (" + bar.bridge.backendName + ")"
                  : qsTr("○ no model")
            color: remote || bar.bridge.loaded ? bar.Material.accent : bar.subtleText
            font.pixelSize: 12
            elide: Text.ElideRight
            // Takes the room the statistics leave (elided only in a narrow window).
            Layout.fillWidth: true
            Layout.minimumWidth: 80
            HoverHandler { id: modelHover }
            ToolTip.visible: modelHover.hovered && truncated
            ToolTip.text: text
        }
        StatusItem {
            objectName: "statusSpeed"
            text: bar.compact ? qsTr("%1 tok/s").arg(Format.decimal(bar.bridge.tokensPerSecond, 1))
                  : bar.bridge.speedIsLast ? qsTr("last reply %1 tokens/s").arg(Format.decimal(bar.bridge.tokensPerSecond, 1))
                                         : qsTr("%1 tokens/s").arg(Format.decimal(bar.bridge.tokensPerSecond, 1))
            tip: bar.bridge.speedIsLast ? qsTr("How fast the last reply was written (as its own statistics say)")
                                        : qsTr("How fast the replies being written are generated")
            visible: bar.bridge.loaded && bar.bridge.tokensPerSecond > 0
        }
        StatusItem {
            objectName: "statusKv"
            text: bar.compact ? qsTr("KV %1/%2").arg(bar.bridge.kvBlocksUsed + bar.bridge.kvBlocksCached).arg(bar.bridge.kvBlocksTotal)
                  : qsTr("KV %1 used · %2 cached · %3 pinned of %4").arg(bar.bridge.kvBlocksUsed).arg(bar.bridge.kvBlocksCached)
                  .arg(bar.bridge.kvBlocksPinned).arg(bar.bridge.kvBlocksTotal)
            tip: qsTr("KV cache blocks (%1 tokens each): %2 used · %3 cached · %4 pinned of %5").arg(bar.bridge.kvBlockSize)
                 .arg(bar.bridge.kvBlocksUsed).arg(bar.bridge.kvBlocksCached).arg(bar.bridge.kvBlocksPinned).arg(bar.bridge.kvBlocksTotal)
            visible: bar.bridge.loaded && !bar.tiny
        }
        StatusItem {
            objectName: "statusHits"
            text: (bar.compact ? qsTr("hits %1%") : qsTr("prefix hits %1%")).arg(Math.round(bar.bridge.prefixHitRate * 100))
            tip: qsTr("Prompt tokens served from the cache instead of computed")
            visible: bar.bridge.loaded && !bar.tiny
        }
        StatusItem {
            objectName: "statusResident"
            text: bar.compact ? qsTr("%1 kept").arg(bar.bridge.conversationsResident)
                  : qsTr("%n conversation(s) kept", "", bar.bridge.conversationsResident)
            tip: qsTr("Conversations whose memory (KV cache) is kept for their next turn (the Memory page shows them)")
            visible: bar.bridge.loaded && !bar.tiny
        }
        StatusItem {
            objectName: "statusApiServer"
            visible: !!bar.apiServer && bar.apiServer.running
            text: !visible ? "" : bar.compact ? qsTr("API") : qsTr("API %1").arg(bar.apiServer.url.replace("http://", ""))
            tip: qsTr("The local API server: other programs use the open model at %1/v1").arg(visible ? bar.apiServer.url : "")
        }
        StatusItem {
            visible: bar.bridge.requestsWaiting > 0
            text: qsTr("%1 waiting").arg(bar.bridge.requestsWaiting)
        }
    }

    component StatusItem: Label {
        id: item
        property string tip
        font.pixelSize: 12
        opacity: 0.7
        HoverHandler { id: h }
        ToolTip.visible: h.hovered && tip !== ""
        ToolTip.text: tip
        ToolTip.delay: 500
    }
}
