import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// A persona's or a chat's own reply settings: each row is either "as below it" (the
// inherited value, shown greyed) or a value of its own. load(own, inherited) fills it;
// values() gives the map to store (sampling_settings_map.h: only the rows set here).
ColumnLayout {
    id: form
    spacing: 4

    // name, label, kind ("slider" | "spin" | "seed" | "switch" | "lines"), from, to, step, decimals
    readonly property var rows: [
        {name: "temperature", label: qsTr("Temperature"), kind: "slider", from: 0, to: 2, step: 0.05, decimals: 2},
        {name: "topP", label: qsTr("Top-p"), kind: "slider", from: 0.01, to: 1, step: 0.01, decimals: 2},
        {name: "minP", label: qsTr("Min-p"), kind: "slider", from: 0, to: 0.99, step: 0.01, decimals: 2},
        {name: "topK", label: qsTr("Top-k (0: off)"), kind: "spin", from: 0, to: 1000, step: 1, decimals: 0},
        {name: "repeatPenalty", label: qsTr("Repeat penalty"), kind: "slider", from: 1, to: 2, step: 0.01, decimals: 2},
        {name: "frequencyPenalty", label: qsTr("Frequency penalty"), kind: "slider", from: 0, to: 2, step: 0.05, decimals: 2},
        {name: "presencePenalty", label: qsTr("Presence penalty"), kind: "slider", from: 0, to: 2, step: 0.05, decimals: 2},
        {name: "maxTokens", label: qsTr("Longest reply (tokens)"), kind: "spin", from: 1, to: 32768, step: 64, decimals: 0},
        {name: "seed", label: qsTr("Fixed seed"), kind: "seed", from: 0, to: 0, step: 0, decimals: 0},
        {name: "thinking", label: qsTr("Think before answering"), kind: "switch", from: 0, to: 0, step: 0, decimals: 0},
        {name: "stop", label: qsTr("Stop at these texts"), kind: "lines", from: 0, to: 0, step: 0, decimals: 0}
    ]
    // The loaded model can turn its reasoning off (Qwen3): the "thinking" row is shown.
    property bool thinkingSwitch: false
    property var inherited: ({})
    property var own: ({})

    function load(ownValues, inheritedValues) {
        own = ownValues || {}
        inherited = inheritedValues || {}
        for (let i = 0; i < repeater.count; ++i) repeater.itemAt(i).reset()
    }
    function values() {
        const out = {}
        for (let i = 0; i < repeater.count; ++i) {
            const row = repeater.itemAt(i)
            if (row.set) out[row.spec.name] = row.current()
        }
        return out
    }

    Repeater {
        id: repeater
        model: form.rows
        delegate: RowLayout {
            id: row
            required property var modelData
            readonly property var spec: modelData
            property bool set: false
            objectName: "replySetting_" + spec.name
            visible: spec.kind !== "switch" || form.thinkingSwitch
            Layout.fillWidth: true
            spacing: 8

            function shown(v) {
                if (spec.kind === "switch") return v === false ? qsTr("off") : qsTr("on")
                if (spec.kind === "lines") return v === undefined ? "" : v === "" ? qsTr("none") : v.split("\n").join("  ·  ")
                return v === undefined ? "" : spec.kind === "slider" ? Format.decimal(v, spec.decimals) : String(v)
            }
            function reset() {
                set = form.own[spec.name] !== undefined
                const v = set ? form.own[spec.name] : form.inherited[spec.name]
                if (spec.kind === "slider") slider.value = v !== undefined ? v : spec.from
                else if (spec.kind === "spin") spin.value = v !== undefined ? v : 512
                else if (spec.kind === "switch") toggle.checked = v !== false
                else if (spec.kind === "lines") linesField.text = set ? v : ""
                else seedField.text = set ? String(v) : ""
            }
            function current() {
                return spec.kind === "slider" ? slider.value : spec.kind === "spin" ? spin.value
                     : spec.kind === "switch" ? toggle.checked
                     : spec.kind === "lines" ? linesField.text : seedField.text.trim()
            }

            CheckBox {
                objectName: "own_" + row.spec.name
                checked: row.set
                onToggled: row.set = checked
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Set here (otherwise: %1)").arg(row.shown(form.inherited[row.spec.name]) || qsTr("the default"))
            }
            Label {
                text: row.spec.label
                opacity: row.set ? 0.9 : 0.5
                Layout.preferredWidth: 170
                wrapMode: Text.WordWrap
            }
            Slider {
                id: slider
                visible: row.spec.kind === "slider"
                enabled: row.set
                from: row.spec.from; to: row.spec.to; stepSize: row.spec.step
                Layout.fillWidth: true
            }
            Label {
                visible: row.spec.kind === "slider"
                text: row.set ? Format.decimal(slider.value, row.spec.decimals) : row.shown(form.inherited[row.spec.name])
                opacity: row.set ? 0.9 : 0.5
                Layout.preferredWidth: 40
            }
            SpinBox {
                id: spin
                visible: row.spec.kind === "spin"
                enabled: row.set
                from: row.spec.from; to: row.spec.to; stepSize: row.spec.step; editable: true
            }
            TextField {
                id: seedField
                visible: row.spec.kind === "seed"
                enabled: row.set
                placeholderText: row.set ? qsTr("a number") : qsTr("a new one for every reply")
                validator: RegularExpressionValidator { regularExpression: /[0-9]{0,20}/ }
                Layout.fillWidth: true
            }
            TextArea {
                id: linesField
                objectName: "lines_" + row.spec.name
                visible: row.spec.kind === "lines"
                enabled: row.set
                wrapMode: TextEdit.NoWrap
                font.family: "monospace"
                placeholderText: row.set ? qsTr("One per line; %1 for a line break. Empty: none.").arg("\\n")
                                         : row.shown(form.inherited[row.spec.name]) || qsTr("none")
                Accessible.name: row.spec.label
                Layout.fillWidth: true
                Layout.maximumHeight: 120
            }
            Switch {
                id: toggle
                objectName: "toggle_" + row.spec.name
                visible: row.spec.kind === "switch"
                enabled: row.set
            }
            Item { visible: row.spec.kind === "spin" || row.spec.kind === "switch"; Layout.fillWidth: true }
        }
    }
}
