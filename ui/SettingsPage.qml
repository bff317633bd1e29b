import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// Preferences: the look, replies (sampling, length) and the engine. Values are the
// user's AppSettings (app/core/app_settings.h), saved as they change; engine values take
// effect when the model is opened again.
Page {
    id: page
    required property var bridge
    required property var chat
    required property var settings
    required property var window
    required property var connections  // ConnectionSettings
    required property var remote       // RemoteBackend
    required property var apiServer    // LocalApiServer
    required property var history      // HistoryStore
    required property var personas     // PersonaListModel
    required property var catalog      // ModelCatalog
    background: Rectangle { color: page.Material.background }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        ColumnLayout {
            width: Math.min(parent.width - 48, 720)
            x: 24
            spacing: 16
            Item { implicitHeight: 8 }
            Label { text: qsTr("Settings"); font.pixelSize: 20; font.weight: Font.DemiBold }

            SettingsSection {
                title: qsTr("Appearance")
                SettingRow {
                    label: qsTr("Theme")
                    ComboBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "themeCombo"
                        implicitContentWidthPolicy: ComboBox.WidestText
                        model: [qsTr("Follow the system"), qsTr("Light"), qsTr("Dark")]
                        currentIndex: ["", "light", "dark"].indexOf(page.window.themeName)
                        onActivated: i => {
                            const name = ["", "light", "dark"][i]
                            page.settings.theme = name
                            page.window.themeName = name  // also over a forced theme
                        }
                    }
                }
                SettingRow {
                    label: qsTr("Language")
                    tip: qsTr("The language of Hearth's own words; the models answer in whatever language they are written to")
                    ComboBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "languageCombo"
                        readonly property var codes: [""].concat(uiTranslator.available)
                        implicitContentWidthPolicy: ComboBox.WidestText
                        model: codes.map(c => c === "" ? qsTr("Follow the system") : uiTranslator.nativeName(c))
                        currentIndex: Math.max(0, codes.indexOf(page.settings.language))
                        onActivated: i => {
                            page.settings.language = codes[i]
                            uiTranslator.apply(codes[i])
                        }
                    }
                }
            }

            SettingsSection {
                title: qsTr("Replies")
                SettingRow {
                    label: qsTr("Temperature")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        from: 0; to: 2; stepSize: 0.05
                        value: page.settings.temperature
                        onMoved: page.settings.temperature = value
                        Layout.fillWidth: true
                    }
                    Label { objectName: "temperatureValue"; text: Format.decimal(page.settings.temperature, 2); Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Top-p")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        from: 0.01; to: 1; stepSize: 0.01
                        value: page.settings.topP
                        onMoved: page.settings.topP = value
                        Layout.fillWidth: true
                    }
                    Label { text: Format.decimal(page.settings.topP, 2); Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Repeat penalty")
                    tip: qsTr("Makes tokens used in the last 64 less likely (1 is off). Small models loop without it.")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "repeatPenaltySlider"
                        from: 1; to: 2; stepSize: 0.01
                        value: page.settings.repeatPenalty
                        onMoved: page.settings.repeatPenalty = value
                        Layout.fillWidth: true
                    }
                    Label { text: Format.decimal(page.settings.repeatPenalty, 2); Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Frequency penalty")
                    tip: qsTr("Subtracted from a token's score for every time it was used recently")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "frequencyPenaltySlider"
                        from: 0; to: 2; stepSize: 0.05
                        value: page.settings.frequencyPenalty
                        onMoved: page.settings.frequencyPenalty = value
                        Layout.fillWidth: true
                    }
                    Label { text: Format.decimal(page.settings.frequencyPenalty, 2); Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Presence penalty")
                    tip: qsTr("Subtracted once from the score of any token used recently")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "presencePenaltySlider"
                        from: 0; to: 2; stepSize: 0.05
                        value: page.settings.presencePenalty
                        onMoved: page.settings.presencePenalty = value
                        Layout.fillWidth: true
                    }
                    Label { text: Format.decimal(page.settings.presencePenalty, 2); Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Top-k")
                    SpinBox { from: 0; to: 1000; editable: true; value: page.settings.topK; onValueModified: page.settings.topK = value; Accessible.name: parent.label }
                }
                SettingRow {
                    label: qsTr("Longest reply (tokens)")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "maxReplyTokensSpin"
                        from: 1; to: 32768; stepSize: 64; editable: true
                        value: page.settings.maxReplyTokens
                        onValueModified: page.settings.maxReplyTokens = value
                    }
                }
                Label {
                    text: qsTr("Defaults for every chat; a persona (Personas, Edit) or a chat (Reply settings, above it) can set its own.")
                    wrapMode: Text.Wrap
                    opacity: 0.7
                    font.pixelSize: 12
                    Layout.fillWidth: true
                }
                Button { text: qsTr("Reset replies to defaults"); flat: true; onClicked: page.settings.resetSampling() }
            }

            SettingsSection {
                objectName: "contextSection"
                title: qsTr("Long chats")
                SettingRow {
                    label: qsTr("Context (tokens)")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "contextLengthSpin"
                        // 0: the model's own; at most what it was trained for.
                        from: 0
                        to: page.bridge.trainedContextLength > 0 ? page.bridge.trainedContextLength : 1048576
                        stepSize: 512; editable: true
                        value: page.settings.contextLength
                        onValueModified: page.settings.contextLength = value === 0 ? 0 : Math.max(256, value)
                        textFromValue: v => v === 0 ? qsTr("the model's own") : String(v)
                        valueFromText: t => t === qsTr("the model's own") ? 0 : Number(t)
                    }
                    Label {
                        text: page.bridge.loaded
                            ? qsTr("serving %1 of the %2 tokens the model was trained for; a smaller context takes less memory (applies when the model is opened again)")
                                .arg(page.bridge.contextLength).arg(page.bridge.trainedContextLength)
                            : qsTr("a smaller context takes less memory")
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
                SettingRow {
                    label: qsTr("When a chat outgrows it")
                    ComboBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "contextOverflowCombo"
                        implicitContentWidthPolicy: ComboBox.WidestText
                        readonly property var policies: ["drop", "shift", "ask"]
                        model: [qsTr("Leave the oldest messages out"), qsTr("Shift the rest (faster, not exact)"), qsTr("Ask me")]
                        currentIndex: Math.max(0, policies.indexOf(page.settings.contextOverflow))
                        onActivated: i => page.settings.contextOverflow = policies[i]
                    }
                }
                Label {
                    objectName: "contextOverflowNote"
                    text: page.settings.contextOverflow === "shift"
                        ? qsTr("The oldest messages leave in steps and the model's memory of the rest is moved, not read again: the next reply starts at once, though the model sees the rest a little differently than if it read it anew.")
                        : page.settings.contextOverflow === "ask"
                            ? qsTr("The chat asks, the first time it no longer fits, whether to leave its oldest messages out or to shift.")
                            : qsTr("The oldest messages leave in steps, so that the next many replies only read the new message; on the step itself the rest is read again, exactly as the model reads a new prompt.")
                    wrapMode: Text.Wrap
                    opacity: 0.7
                    font.pixelSize: 12
                    Layout.fillWidth: true
                }
                SettingRow {
                    label: qsTr("A step keeps")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "contextKeepSlider"
                        from: 0.1; to: 0.9; stepSize: 0.05
                        value: page.settings.contextKeep
                        onMoved: page.settings.contextKeep = value
                        Layout.fillWidth: true
                    }
                    Label { text: Math.round(page.settings.contextKeep * 100) + " %"; Layout.preferredWidth: 40 }
                }
                Label {
                    text: qsTr("Settings of this model (%1).").arg(page.bridge.loaded ? page.bridge.modelName : qsTr("none loaded"))
                    opacity: 0.6
                    font.pixelSize: 11
                    Layout.fillWidth: true
                }
            }

            HistoryBackupSection { history: page.history; personas: page.personas }

            SettingsSection {
                title: qsTr("Model catalog")
                SettingRow {
                    label: qsTr("Newer lists")
                    tip: qsTr("The Model page's recommended models come with Hearth; a newer list can be fetched from %1 once a day. Nothing else is sent.").arg(page.catalog.updateUrl)
                    Switch {
                        objectName: "catalogUpdatesSwitch"
                        Accessible.name: qsTr("Check for a newer list of recommended models once a day")
                        text: qsTr("Check once a day")
                        checked: page.settings.catalogUpdates
                        onToggled: page.settings.catalogUpdates = checked
                    }
                    Button {
                        objectName: "catalogCheckNow"
                        text: qsTr("Check now")
                        enabled: !page.catalog.checking
                        onClicked: page.catalog.checkForUpdate()
                    }
                }
                Label {
                    objectName: "catalogSettingsStatus"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    opacity: 0.7
                    font.pixelSize: 12
                    text: (page.catalog.fromUpdate ? qsTr("In use: the list of %1, fetched from %2.").arg(page.catalog.updated).arg(page.catalog.updateUrl)
                                                   : qsTr("In use: the list built into Hearth (%1).").arg(page.catalog.updated))
                          + (page.catalog.status !== "" ? " " + page.catalog.status : "")
                }
            }

            SettingsSection {
                title: qsTr("Engine")
                SettingRow {
                    label: qsTr("CPU threads")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        from: 0; to: page.settings.maxThreads; editable: true
                        value: page.settings.threads
                        onValueModified: page.settings.threads = value
                        textFromValue: v => v === 0 ? qsTr("automatic") : String(v)
                    }
                    Label {
                        text: qsTr("automatic: all cores but one (kept for the window) when there are more than two")
                        visible: page.settings.threads === 0
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
                SettingRow {
                    label: qsTr("Speculative decoding")
                    tip: qsTr("The model checks several guessed tokens at once, guessed from text already in the conversation. A reply that repeats what is there (code being edited, a quoted passage) comes faster; the reply is the same either way.")
                    Switch {
                        objectName: "speculateSwitch"
                        Accessible.name: qsTr("Speculative decoding")
                        text: checked ? qsTr("on") : qsTr("off")
                        checked: page.settings.speculate
                        onToggled: page.settings.speculate = checked
                    }
                }
                SettingRow {
                    label: qsTr("KV cache (MiB)")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        from: 0; to: 65536; stepSize: 64; editable: true
                        value: page.settings.kvCacheMb
                        onValueModified: page.settings.kvCacheMb = value
                        textFromValue: v => v === 0 ? qsTr("automatic") : String(v)
                    }
                }
                SettingRow {
                    label: qsTr("KV cache on disk (MiB)")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "kvDiskSpin"
                        from: 0; to: 1048576; stepSize: 256; editable: true
                        value: page.settings.kvDiskMb
                        onValueModified: page.settings.kvDiskMb = value
                        textFromValue: v => v === 0 ? qsTr("off") : String(v)
                    }
                    Label {
                        text: qsTr("conversations continue after a restart without reading their history again")
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        objectName: "diskCacheSummary"
                        text: {
                            const b = page.bridge
                            if (!b.loaded) return qsTr("The disk cache is in %1.").arg(page.settings.kvDiskDir)
                            if (!b.diskCacheOn)
                                return b.diskCacheStatus.length > 0
                                    ? qsTr("Disk cache off: %1").arg(b.diskCacheStatus)
                                    : qsTr("Disk cache off.")
                            let t = qsTr("%1 of %2 MiB used: %3 blocks, %4 of them for this model; %5 read back since the model was opened.")
                                .arg(Format.decimal(b.diskCacheBytes / 1048576, 1))
                                .arg(Math.round(b.diskCacheBudget / 1048576))
                                .arg(b.diskCacheBlocks).arg(b.diskCacheModelBlocks)
                                .arg(b.diskCacheLoadedBlocks)
                            if (b.diskCacheStatus.length > 0) t += " " + b.diskCacheStatus
                            return t
                        }
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                    Button {
                        objectName: "clearDiskCacheButton"
                        text: qsTr("Clear")
                        enabled: page.bridge.diskCacheOn && page.bridge.diskCacheBlocks > 0
                        onClicked: page.bridge.clearDiskCache()
                    }
                }
                SettingRow {
                    label: qsTr("KV cache in RAM under the GPU's (MiB)")
                    SpinBox {
                        Accessible.name: parent.label  // the row's label names it
                        from: 0; to: 1048576; stepSize: 256; editable: true
                        value: page.settings.kvHostMb
                        onValueModified: page.settings.kvHostMb = value
                        textFromValue: v => v === 0 ? qsTr("off") : String(v)
                    }
                    Label {
                        text: qsTr("blocks pushed out of GPU memory come back from RAM; unused on the CPU")
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
                SettingRow {
                    label: qsTr("Pinned prompts (share of the KV cache)")
                    Slider {
                        Accessible.name: parent.label  // the row's label names it
                        objectName: "pinnedShareSlider"
                        from: 0; to: 0.9; stepSize: 0.05
                        value: page.settings.pinnedShare
                        onMoved: page.settings.pinnedShare = value
                        Layout.fillWidth: true
                    }
                    Label { text: Math.round(page.settings.pinnedShare * 100) + " %"; Layout.preferredWidth: 40 }
                }
                SettingRow {
                    label: qsTr("Backend")
                    ComboBox {
                        Accessible.name: parent.label  // the row's label names it
                        implicitContentWidthPolicy: ComboBox.WidestText
                        model: ["auto", "cpu", "cuda"]
                        currentIndex: Math.max(0, model.indexOf(page.settings.backend))
                        onActivated: i => page.settings.backend = model[i]
                    }
                    Label {
                        text: page.settings.backendNote
                        wrapMode: Text.Wrap
                        opacity: 0.7
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
                Label {
                    objectName: "engineSettingsNote"
                    text: qsTr("Engine settings apply when the model is next opened.")
                    wrapMode: Text.Wrap
                    opacity: 0.7
                    font.pixelSize: 12
                    Layout.fillWidth: true
                }
                RowLayout {
                    Button {
                        text: qsTr("Reopen the model with these settings")
                        enabled: page.bridge.loaded && !page.bridge.loading
                        onClicked: page.bridge.load(page.bridge.modelPath)
                    }
                    Button { text: qsTr("Reset engine to defaults"); flat: true; onClicked: page.settings.resetEngine() }
                }
                Label {
                    text: qsTr("Saved in %1").arg(page.settings.fileName)
                    opacity: 0.6
                    font.pixelSize: 11
                    wrapMode: Text.WrapAnywhere
                    Layout.fillWidth: true
                }
            }
            ConnectionSettingsView {
                connections: page.connections
                remote: page.remote
                apiServer: page.apiServer
                Layout.fillWidth: true
            }
            Item { implicitHeight: 16 }
        }
    }
}
