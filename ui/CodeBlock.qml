import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts

// One fenced code block of a message (a code segment of MessageListModel's `segments`):
// a header with its language and a Copy button (copies the block's code, no fences,
// through the model), and the code in monospace, selectable. An open block (a reply
// still streaming its code) says so in the header.
Rectangle {
    id: root
    objectName: "codeBlock"

    property var chat
    property var messageId
    property int segmentIndex: -1
    property string code
    property string language
    property bool open: false
    property color subtleText

    readonly property color tone: root.Material.foreground
    implicitWidth: Math.max(header.implicitWidth, codeText.implicitWidth + 24)
    implicitHeight: header.height + codeText.implicitHeight + 16
    radius: 8
    color: Qt.rgba(tone.r, tone.g, tone.b, 0.06)
    border.width: 1
    border.color: Qt.rgba(tone.r, tone.g, tone.b, 0.12)

    RowLayout {
        id: header
        width: parent.width
        height: 30
        spacing: 4

        Label {
            objectName: "codeLanguage"
            Layout.leftMargin: 12
            Layout.fillWidth: true
            text: (root.language !== "" ? root.language : qsTr("code")) + (root.open ? " …" : "")
            color: root.subtleText
            font.pixelSize: 11
            font.family: "monospace"
            elide: Text.ElideRight
        }
        ToolButton {
            id: copyButton
            objectName: "codeCopyButton"
            property bool copied: false
            text: copied ? qsTr("Copied") : qsTr("Copy")
            font.pixelSize: 12
            implicitHeight: 28
            padding: 6
            opacity: copied ? 1.0 : 0.75
            Layout.rightMargin: 4
            onClicked: {
                if (root.chat && root.chat.copyCode(root.messageId, root.segmentIndex)) {
                    copied = true
                    copiedTimer.restart()
                }
            }
            Timer { id: copiedTimer; interval: 1500; onTriggered: copyButton.copied = false }
        }
    }

    TextEdit {
        id: codeText
        objectName: "codeText"
        x: 12
        y: header.height + 4
        width: root.width - 24
        readOnly: true
        selectByMouse: true
        wrapMode: TextEdit.WrapAnywhere
        textFormat: TextEdit.PlainText
        // Set only when the code changed (a streaming reply's segments are new on every
        // update; setting the same text would lay it out again).
        property string shownCode
        function show() {
            if (root.code === shownCode) return
            shownCode = root.code
            text = root.code
        }
        Connections { target: root; function onCodeChanged() { codeText.show() } }
        Component.onCompleted: show()
        color: root.Material.foreground
        selectionColor: root.Material.accent
        selectedTextColor: "white"
        font.family: "monospace"
        font.pixelSize: 13
    }
}
