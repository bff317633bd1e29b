import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// The model page: what the open model is, and its tokenizer at work on any text.
Page {
    id: page
    required property var inspector
    required property var bridge
    required property var library
    required property var catalog
    required property var connections
    property var settings  // AppSettings (a model's own defaults)
    property var personas  // PersonaListModel
    property color subtleText: Material.hintTextColor
    signal openFileRequested()
    // The tabs, by name: "this" (the open model), "library" (on this computer),
    // "recommended" (the catalog), "get" (search Hugging Face).
    function showTab(name) { tabs.currentIndex = Math.max(0, ["this", "library", "recommended", "get"].indexOf(name)) }
    padding: 24
    background: Rectangle { color: page.Material.background }

    function humanBytes(n) {
        if (n >= 1e9) return Format.decimal(n / 1e9, 2) + " GB"
        if (n >= 1e6) return Format.decimal(n / 1e6, 1) + " MB"
        return n + " bytes"
    }
    function humanCount(n) {
        if (n >= 1e9) return Format.decimal(n / 1e9, 2) + " B"
        if (n >= 1e6) return Format.decimal(n / 1e6, 1) + " M"
        return n
    }

    header: Pane {
        padding: 0
        topPadding: 16
        leftPadding: 24
        rightPadding: 24
        background: Rectangle { color: page.Material.background }
        RowLayout {
            width: parent.width
            ColumnLayout {
                spacing: 0
                Layout.fillWidth: true
                Label {
                    text: qsTr("Model")
                    font.pixelSize: 20
                    font.weight: Font.DemiBold
                }
                Label {
                    text: page.bridge.loaded ? page.bridge.modelPath : qsTr("No model is open")
                    opacity: 0.7
                    font.pixelSize: 12
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
            }
            BusyIndicator { visible: page.bridge.loading; running: visible; implicitWidth: 32; implicitHeight: 32 }
            AccentButton {
                objectName: "openModelFileButton"
                text: qsTr("Open a GGUF file…")
                enabled: !page.bridge.loading
                onClicked: page.openFileRequested()
            }
        }
    }

    // The list is read while it or the search is on screen (and again each time it comes
    // back); the search's fit labels use the memory speed its first reading measures.
    Binding {
        target: page.library
        property: "active"
        value: page.visible && tabs.currentIndex >= 1
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 12
        TabBar {
            id: tabs
            objectName: "modelTabs"
            Layout.fillWidth: true
            TabButton { objectName: "modelTabThis"; text: qsTr("This model"); width: implicitWidth }
            TabButton { objectName: "modelTabLibrary"; text: qsTr("On this computer"); width: implicitWidth }
            TabButton { objectName: "modelTabRecommended"; text: qsTr("Recommended"); width: implicitWidth }
            TabButton { objectName: "modelTabGet"; text: qsTr("Search Hugging Face"); width: implicitWidth }
        }
        StackLayout {
            currentIndex: tabs.currentIndex
            Layout.fillWidth: true
            Layout.fillHeight: true

            ColumnLayout {
                spacing: 16

                // No model yet, or it failed to load: say what to do.
                Pane {
                    visible: page.inspector.status === "error" || page.inspector.status === "empty"
                    Layout.fillWidth: true
                    Material.elevation: 2
                    ColumnLayout {
                        width: parent.width
                        Label {
                            text: qsTr("No model loaded")
                            font.pixelSize: 18
                            font.bold: true
                        }
                        Label {
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            textFormat: Text.PlainText
                            text: page.inspector.errorText
                        }
                        Label {
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            text: qsTr("No model is open. Get the default model (SmolLM2-135M-Instruct, 98 MB) on the Chats page, or open a GGUF file. The default model is looked for at:\n%1").arg(page.inspector.defaultModelPath)
                        }
                    }
                }

                BusyIndicator {
                    visible: page.inspector.status === "loading"
                    running: visible
                    Layout.alignment: Qt.AlignHCenter
                }

                Pane {
                    visible: page.inspector.status === "ready"
                    Layout.fillWidth: true
                    Material.elevation: 2
                    ColumnLayout {
                        width: parent.width
                        spacing: 6
                        Label {
                            text: page.inspector.facts.name || page.inspector.facts.fileName || ""
                            font.pixelSize: 18
                            font.bold: true
                        }
                        FactRow { label: qsTr("Architecture"); value: page.inspector.facts.architecture || "" }
                        FactRow { label: qsTr("Backend"); value: page.bridge.backendName }
                        FactRow {
                            objectName: "deviceNote"
                            visible: page.bridge.deviceNote !== ""
                            label: qsTr("Why the CPU")
                            value: page.bridge.deviceNote
                        }
                        FactRow {
                            objectName: "gpuMemory"
                            visible: page.bridge.gpuMemoryNote !== ""
                            label: qsTr("GPU memory")
                            value: page.bridge.gpuMemoryNote
                        }
                        FactRow {
                            visible: page.bridge.gpuMemoryNote === ""
                            label: qsTr("Memory")
                            value: page.bridge.loaded ? qsTr("%1 weights (mapped) + %2 KV cache (%3 blocks of %4 tokens)")
                                                        .arg(page.humanBytes(page.bridge.modelFileBytes)).arg(page.humanBytes(page.bridge.kvCacheBytes))
                                                        .arg(page.bridge.kvBlocksTotal).arg(page.bridge.kvBlockSize) : ""
                        }
                        FactRow {
                            // What the estimate said before the model was opened (the list on
                            // "On this computer" has it for each file).
                            objectName: "fitEstimate"
                            readonly property var estimate: page.library.count >= 0 && page.bridge.loaded ? page.library.estimateFor(page.bridge.modelPath) : ({})
                            visible: estimate.text !== undefined
                            label: qsTr("Estimated")
                            value: estimate.text === undefined ? ""
                                   : qsTr("%1 (%2 in memory)").arg(estimate.text).arg(Format.bytes(estimate.bytes))
                                     + (page.bridge.tokensPerSecond > 0
                                        ? " · " + qsTr("the last reply ran at %1 tokens/s").arg(Math.round(page.bridge.tokensPerSecond)) : "")
                        }
                        FactRow { label: qsTr("Parameters"); value: page.humanCount(page.inspector.facts.parameters || 0) }
                        FactRow { label: qsTr("Quantisation"); value: page.inspector.facts.quantization || "" }
                        FactRow { label: qsTr("File size"); value: page.humanBytes(page.inspector.facts.fileSize || 0) }
                        FactRow {
                            label: qsTr("Context length")
                            value: page.inspector.facts.supported ? qsTr("%1 tokens").arg(page.inspector.facts.contextLength)
                                                                   : (page.inspector.facts.unsupportedReason || "")
                        }
                        FactRow { label: qsTr("Layers"); value: page.inspector.facts.layers ? qsTr("%1 × %2 wide, heads %3").arg(page.inspector.facts.layers).arg(page.inspector.facts.embedding).arg(page.inspector.facts.heads) : "" }
                        FactRow { label: qsTr("Tokenizer"); value: page.inspector.facts.tokenizer || "" }
                        FactRow { label: qsTr("Chat template"); value: page.inspector.facts.templateFamily || "" }
                        FactRow { label: qsTr("Fingerprint"); value: page.inspector.facts.fingerprint || "" }
                    }
                }

                // The tokenizer at work: type any text and see its tokens.
                Pane {
                    visible: page.inspector.status === "ready"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Material.elevation: 2
                    ColumnLayout {
                        anchors.fill: parent
                        RowLayout {
                            Label {
                                text: qsTr("Tokenizer")
                                font.bold: true
                                Layout.fillWidth: true
                            }
                            Switch {
                                id: specialSwitch
                                text: qsTr("Control tokens")
                                checked: true
                            }
                            Label {
                                text: qsTr("%1 tokens").arg(tokens.count)
                                opacity: 0.7
                            }
                        }
                        TextArea {
                            id: input
                            Accessible.name: qsTr("Text to tokenize")
                            Layout.fillWidth: true
                            placeholderText: qsTr("Type text to see how the model reads it")
                            text: page.inspector.facts.sampleText || "Hello, Hearth! 你好 👋"
                            wrapMode: TextEdit.Wrap
                        }
                        ScrollView {
                            id: tokenScroll
                            objectName: "tokenScroll"
                            Layout.fillWidth: true
                            Layout.fillHeight: true
                            clip: true
                            contentWidth: availableWidth
                            // The view's width, not its content item's: that one was 0 while the
                            // page was hidden for a model switch, and the chips stayed one column.
                            Flow {
                                objectName: "tokenFlow"
                                width: tokenScroll.availableWidth
                                spacing: 4
                                Repeater {
                                    id: tokens
                                    model: page.inspector.status === "ready" ? page.inspector.tokenize(input.text, specialSwitch.checked) : []
                                    delegate: Rectangle {
                                        required property var modelData
                                        radius: 4
                                        color: modelData.special ? Qt.rgba(0.9, 0.4, 0.2, 0.35) : Qt.rgba(0.5, 0.5, 0.5, 0.18)
                                        implicitWidth: tokenLabel.implicitWidth + 10
                                        implicitHeight: tokenLabel.implicitHeight + 6
                                        Label {
                                            id: tokenLabel
                                            anchors.centerIn: parent
                                            textFormat: Text.PlainText
                                            text: modelData.piece.replace(/\n/g, "⏎").replace(/ /g, "·") + "  " + modelData.id
                                            font.family: "monospace"
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }

            ModelLibraryView {
                library: page.library
                bridge: page.bridge
                settings: page.settings
                personas: page.personas
                subtleText: page.subtleText
                onOpenRequested: path => page.bridge.load(path)
            }
            CatalogView {
                catalog: page.catalog
                downloads: downloads
                bridge: page.bridge
                subtleText: page.subtleText
            }
            HubSearchView {
                library: page.library
                bridge: page.bridge
                connections: page.connections
                downloads: downloads
                subtleText: page.subtleText
            }
        }
        // Downloads started from either of the last two tabs, and unfinished ones.
        ModelDownloads {
            id: downloads
            visible: tabs.currentIndex >= 2
            Layout.fillWidth: true
            library: page.library
            bridge: page.bridge
            token: page.connections.huggingFaceToken
        }
    }
}
