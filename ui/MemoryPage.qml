import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Hearth

// The KV cache, live: one square per block, coloured by what holds it: a persona's pinned
// prefix (its colour, a ring), each resident conversation its own colour, blocks shared by
// several (a dot), cached-but-evictable prefixes, and free blocks. Refreshed ~4 Hz.
Page {
    id: page
    required property var bridge
    required property var conversations
    required property var personas
    property var settings  // AppSettings: the pinned prompts' share
    property bool active: true
    property color subtleText
    property bool dark: false

    function conversationTitle(id) {
        const row = conversations.rowOf(id)
        const c = row >= 0 ? conversations.get(row) : null
        return c && c.title ? c.title : qsTr("Chat #%1").arg(id)
    }
    function personaName(id) {
        const row = personas.rowOf(id)
        return row >= 0 ? personas.get(row).name : qsTr("Pin #%1").arg(id)
    }
    readonly property var pinColors: {
        const m = {}
        for (let i = 0; i < personas.count; ++i) {
            const p = personas.get(i)
            if (p.color) m[String(p.personaId)] = p.color
        }
        return m
    }

    background: Rectangle { color: page.Material.background }
    padding: 24

    ColumnLayout {
        anchors.fill: parent
        spacing: 14

        RowLayout {
            Layout.fillWidth: true
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                Label { text: qsTr("Memory"); font.pixelSize: 20; font.weight: Font.DemiBold }
                Label {
                    objectName: "memoryIntro"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: page.subtleText
                    font.pixelSize: 12
                    text: page.bridge.loaded
                          ? qsTr("The model's working memory (KV cache): %1 blocks of %2 tokens, %3. Conversations that share a beginning share its blocks.")
                                .arg(grid.blockCount).arg(grid.blockSize).arg(Format.bytes(page.bridge.kvCacheBytes))
                          : qsTr("No model is open.")
                }
            }
        }

        // The numbers: conversations kept (the status bar's number), then blocks by holder.
        Flow {
            Layout.fillWidth: true
            spacing: 10
            Repeater {
                model: [
                    {name: qsTr("Conversations kept"), value: page.bridge.conversationsResident, color: "transparent", mark: ""},
                    {name: qsTr("Pinned blocks"), value: grid.pinnedBlocks, color: grid.pinnedColor, mark: "ring"},
                    {name: qsTr("Conversation blocks"), value: grid.conversationBlocks, color: grid.colorFor(1), mark: ""},
                    {name: qsTr("Shared blocks"), value: grid.sharedBlocks, color: grid.sharedColor, mark: "dot"},
                    {name: qsTr("Cached blocks (evictable)"), value: grid.cachedBlocks, color: grid.cachedColor, mark: ""},
                    {name: qsTr("Free blocks"), value: grid.freeBlocks, color: grid.freeColor, mark: ""}
                ]
                delegate: Pane {
                    required property var modelData
                    objectName: "memoryStat_" + modelData.name
                    background: Rectangle {
                radius: 12
                color: page.Material.theme === Material.Dark ? "#2a2725" : "#ffffff"
                border.color: page.Material.theme === Material.Dark ? "#3a3633" : "#e6dfd8"
            }
                    padding: 10
                    RowLayout {
                        spacing: 8
                        Rectangle {
                            visible: modelData.color !== "transparent"
                            width: 14; height: 14; radius: 3
                            color: modelData.color
                            border.width: modelData.name === qsTr("Free blocks") ? 1 : 0
                            border.color: Qt.rgba(0.5, 0.5, 0.5, 0.5)
                            Rectangle {
                                visible: modelData.mark !== ""
                                anchors.centerIn: parent
                                width: modelData.mark === "dot" ? 5 : 3; height: width; radius: width / 2
                                color: "white"
                            }
                        }
                        Label { text: modelData.name; color: page.subtleText }
                        Label { objectName: "memoryStatValue"; text: modelData.value; font.weight: Font.DemiBold }
                    }
                }
            }
        }

        // How much the pinned prefixes (personas kept warm, with their documents) may take;
        // a persona past it is served from the disk tier.
        RowLayout {
            visible: !!page.settings
            Layout.fillWidth: true
            spacing: 12
            Label { text: qsTr("Pinned prompts may take"); color: page.subtleText }
            Slider {
                id: pinnedSlider
                objectName: "memoryPinnedShare"
                Accessible.name: qsTr("Share of the KV cache for pinned prompts")
                from: 0; to: 0.9; stepSize: 0.05
                value: page.settings ? page.settings.pinnedShare : 0
                onMoved: page.settings.pinnedShare = value
                Layout.preferredWidth: 180
            }
            Label {
                objectName: "memoryPinnedBudget"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: page.subtleText
                font.pixelSize: 12
                readonly property int share: Math.round((page.settings ? page.settings.pinnedShare : 0) * 100)
                text: page.bridge.loaded
                      ? qsTr("%1 % of the cache (%2 blocks); %3 in use. A persona kept warm past it is read back from the disk when a chat needs it. Applies when the model is opened again.")
                            .arg(share).arg(Math.floor(grid.blockCount * share / 100)).arg(grid.pinnedBlocks)
                      : qsTr("%1 % of the cache").arg(share)
            }
        }

        // The grid.
        Pane {
            Layout.fillWidth: true
            Layout.fillHeight: true
            background: Rectangle {
                radius: 12
                color: page.Material.theme === Material.Dark ? "#2a2725" : "#ffffff"
                border.color: page.Material.theme === Material.Dark ? "#3a3633" : "#e6dfd8"
            }
            padding: 16
            Flickable {
                anchors.fill: parent
                clip: true
                contentWidth: width
                contentHeight: grid.implicitHeight
                ScrollBar.vertical: ScrollBar {}
                KvBlockGrid {
                    id: grid
                    objectName: "kvGrid"
                    width: parent.width
                    height: implicitHeight
                    bridge: page.bridge
                    active: page.active && page.visible
                    interval: 250
                    cellSize: 14
                    cellSpacing: 3
                    freeColor: page.dark ? "#2c2a28" : "#ece8e4"
                    cachedColor: page.dark ? "#6b6560" : "#bdb5ae"
                    pinnedColor: "#e0703f"
                    sharedColor: "#8e5cc8"
                    markColor: "white"
                    pinColors: page.pinColors
                }
            }
        }

        // Who holds what.
        Flow {
            objectName: "memoryLegend"
            Layout.fillWidth: true
            spacing: 14
            Repeater {
                model: grid.pins
                delegate: RowLayout {
                    required property var modelData
                    spacing: 6
                    Rectangle { width: 12; height: 12; radius: 3; color: grid.pinColorFor(modelData.owner) }
                    Label { text: qsTr("%1 (kept warm): %n block(s)", "", modelData.blocks).arg(page.personaName(modelData.owner)); font.pixelSize: 12 }
                }
            }
            Repeater {
                model: grid.conversations
                delegate: RowLayout {
                    required property var modelData
                    spacing: 6
                    Rectangle { width: 12; height: 12; radius: 3; color: grid.colorFor(modelData.owner) }
                    Label { text: qsTr("%1: %n block(s)", "", modelData.blocks).arg(page.conversationTitle(modelData.owner)); font.pixelSize: 12 }
                }
            }
        }
    }
}
