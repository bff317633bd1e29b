import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import QtQuick.Dialogs
import Hearth.Core
import Hearth

// The main window: a navigation rail, the conversations, the page on screen (chat,
// personas, memory, model, settings), the status bar, and the window-wide dialogs.
// Context properties (ui/window_setup.cpp): initialModelPath, initialStorePath, logFolder,
// forcedTheme, engineThreads, engineKvMegabytes, seedPersonas, defaultModelPath,
// appVersion, qtVersion.
ApplicationWindow {
    id: window
    objectName: "mainWindow"
    width: 1200
    height: 780
    minimumWidth: 560  // half of a 1,366-pixel laptop screen, and less
    minimumHeight: 480
    visible: true
    title: chat.conversationId >= 0 && chat.title !== "" ? qsTr("%1 — Hearth").arg(chat.title) : qsTr("Hearth")

    // "light", "dark" or "" (follow the system): the user's setting (saved), unless the
    // window set-up forces one (tests, --theme).
    property string themeName: forcedTheme !== "" ? forcedTheme : settings.theme
    Material.theme: themeName === "dark" ? Material.Dark : themeName === "light" ? Material.Light : Material.System
    // The accent keeps WCAG AA contrast (4.5:1) both as text on the window and under the
    // filled buttons' labels (AccentButton): a burnt orange with white labels in the light
    // theme (Material's DeepOrange 500 under white is 3.2:1), a light orange with dark
    // labels in the dark theme (its pale DeepOrange 200 under white was 1.9:1).
    Material.accent: dark ? "#ff8a65" : "#b53d0e"
    Material.primary: Material.BlueGrey

    readonly property bool dark: Material.theme === Material.Dark
    readonly property color sidebarColor: dark ? "#1f1d1b" : "#f6f2ee"
    readonly property color railColor: dark ? "#181614" : "#ece6e0"
    readonly property color dividerColor: dark ? "#33302c" : "#e2dbd3"
    readonly property color subtleText: dark ? "#a59d95" : "#6e655e"

    // "chat", "personas", "memory", "model", "settings"
    property string page: "chat"
    property string pendingSend: ""      // text to send once a new chat is open
    property int lastPersonaId: -1       // the persona of the chat on screen (Ctrl+N)
    property bool openedFirst: false
    // A narrow window has no room for the chat list beside the chat: it is shown on
    // request (the header's ☰ button, Ctrl+B) and hides again once a chat is chosen. In a
    // wide window Ctrl+B hides and shows it.
    readonly property bool narrow: width < 960
    property bool sidebarWanted: false  // narrow: shown on request
    property bool sidebarHidden: false  // wide: hidden on request
    readonly property bool sidebarShown: page === "chat" && (narrow ? sidebarWanted : !sidebarHidden)
    function toggleSidebar() {
        page = "chat"
        if (narrow) sidebarWanted = !sidebarWanted
        else sidebarHidden = !sidebarHidden
    }

    // messageId (optional): a message to scroll to (a search hit).
    function openConversation(id, messageId) {
        chat.conversationId = id
        page = "chat"
        sidebarWanted = false
        if (messageId !== undefined && messageId >= 0) chat.revealMessage(messageId)
        chatPage.focusComposer()
    }
    // Text typed with no chat open is sent once the new chat is ready.
    function flushPendingSend() {
        if (pendingSend === "" || !chat.canSend) return
        const text = pendingSend
        pendingSend = ""
        chat.send(text)
    }
    // A new chat's persona where none is picked: the open model's own (Model page → Defaults…)
    // while it exists, else the chat on screen's.
    function newChat(personaId) {
        page = "chat"
        const own = activeBackend.remote ? -1 : settings.openModelPersona
        conversations.createConversation(personaId !== undefined ? personaId
                                         : own >= 0 && personas.rowOf(own) >= 0 ? own : lastPersonaId)
    }
    function sendFromComposer(text) {
        if (chat.conversationId < 0) {
            pendingSend = text
            newChat()
            return true
        }
        return chat.send(text)
    }
    function personaById(id) {
        const row = personas.rowOf(id)
        return row >= 0 ? personas.get(row) : null
    }
    function fileUrl(path) {
        return path.startsWith("/") ? "file://" + path : "file:///" + path
    }
    // The file dialog, in the loaded model's folder (where the next one usually is).
    function openModelDialog() {
        const path = bridge.modelPath
        const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))
        if (cut > 0)
            modelDialog.currentFolder = window.fileUrl(path.substring(0, cut))
        modelDialog.open()
    }

    HistoryStore {
        id: history
        objectName: "history"
        Component.onCompleted: openPath(initialStorePath)
    }
    // The user's preferences (saved as they change); the window set-up may override the
    // engine's (tests).
    AppSettings {
        id: settings
        objectName: "settings"
    }
    EngineBridge {
        id: bridge
        objectName: "bridge"
        // The user's engine settings (threads, KV cache, pinned share) apply when a
        // model is next opened; the window set-up's values override them (tests).
        settings: settings
        threads: engineThreads
        kvMegabytes: engineKvMegabytes
        Component.onCompleted: if (initialModelPath !== "") load(initialModelPath)
        onModelChanged: if (modelPath !== "") settings.lastModelPath = modelPath
    }
    // Who answers in the chat: a remote endpoint when it is switched on and chosen, else
    // this computer's engine.
    ConnectionSettings {
        id: connections
        objectName: "connections"
    }
    LocalBackend {
        id: localBackend
        objectName: "localBackend"
        bridge: bridge
    }
    RemoteBackend {
        id: remoteBackend
        objectName: "remoteBackend"
        baseUrl: connections.remoteUrl
        apiKey: connections.remoteKey
        model: connections.remoteModel
        onConfigChanged: if (model !== connections.remoteModel) connections.remoteModel = model
        Component.onCompleted: if (connections.remoteEnabled && connections.remoteUrl !== "") refreshModels()
    }
    readonly property var activeBackend: connections.remoteEnabled && remoteBackend.ready ? remoteBackend : localBackend
    LocalApiServer {
        id: apiServer
        objectName: "apiServer"
        settings: connections
        bridge: bridge
        personas: personas  // "persona:NAME" as a request's model
    }
    ModelLibrary {
        id: library
        objectName: "library"
        settings: settings
        bridge: bridge
        openPath: bridge.loaded ? bridge.modelPath : ""
    }
    // The Model page's recommended models; the fit uses the memory speed the list measures.
    ModelCatalog { id: catalog; objectName: "catalog"; updatesEnabled: settings.catalogUpdates
                   readBandwidth: library.readBandwidth; kvCacheMb: settings.kvCacheMb }
    ModelInspector {
        id: inspector
        objectName: "inspector"
        bridge: bridge
    }
    PersonaListModel {
        id: personas
        objectName: "personas"
        seedDefaults: seedPersonas
        store: history
        bridge: bridge
    }
    ConversationListModel {
        id: conversations
        objectName: "conversations"
        store: history
        onConversationCreated: id => window.openConversation(id)
        onLoaded: {
            if (!window.openedFirst && !searching && chat.conversationId < 0 && count > 0) {
                window.openedFirst = true
                chat.conversationId = get(0).conversationId
            }
        }
        onAboutToDelete: id => chat.forgetKv(id)
        onDeleted: id => { if (chat.conversationId === id) chat.conversationId = -1 }
    }
    MessageListModel {
        id: chat
        objectName: "chat"
        store: history
        backend: window.activeBackend
        settings: settings
        onConversationLoaded: {
            // The chat's own record once loaded, else the list's row (both may be missing
            // for a moment right after a chat is created).
            const c = conversations.get(conversations.rowOf(conversationId))
            window.lastPersonaId = personaId >= 0 ? personaId : (c && c.personaId !== undefined ? c.personaId : -1)
            window.flushPendingSend()
        }
        onCanSendChanged: window.flushPendingSend()
    }

    // ---- Keyboard ----
    Shortcut {
        sequence: "Ctrl+N"
        context: Qt.ApplicationShortcut
        onActivated: window.newChat()
    }
    Shortcut {
        sequence: "Ctrl+F"
        context: Qt.ApplicationShortcut
        onActivated: {
            window.page = "chat"
            if (window.narrow) window.sidebarWanted = true
            else window.sidebarHidden = false
            sidebar.focusSearch()
        }
    }
    Shortcut {
        sequence: "Ctrl+B"
        context: Qt.ApplicationShortcut
        onActivated: window.toggleSidebar()
    }
    Shortcut {
        sequence: "Ctrl+K"
        context: Qt.ApplicationShortcut
        onActivated: quickSwitcher.open()
    }
    Shortcut {
        sequence: "Ctrl+Q"
        context: Qt.ApplicationShortcut
        onActivated: Qt.quit()
    }
    // The chat's actions (not while a menu or dialog has the keyboard).
    Shortcut {
        sequence: "Ctrl+R"
        context: Qt.ApplicationShortcut
        enabled: window.page === "chat" && chat.count > 0 && !chat.generating && !window.inPopup(window.activeFocusItem)
        onActivated: chat.regenerate()
    }
    Shortcut {
        sequence: "Ctrl+Shift+C"
        context: Qt.ApplicationShortcut
        enabled: window.page === "chat" && chat.count > 0
        onActivated: window.copyLastReply()
    }
    Shortcut {
        sequence: "Ctrl+."
        context: Qt.ApplicationShortcut
        enabled: chat.generating
        onActivated: chat.stop()
    }
    // The pages, in the rail's order.
    Repeater {
        model: ["chat", "personas", "memory", "model", "settings"]
        delegate: Item {
            required property int index
            required property string modelData
            Shortcut {
                sequence: "Ctrl+" + (index + 1)
                context: Qt.ApplicationShortcut
                onActivated: window.page = modelData
            }
        }
    }
    Shortcut {
        sequence: "Ctrl+,"
        context: Qt.ApplicationShortcut
        onActivated: window.page = "settings"
    }
    Shortcut {
        sequences: ["F1", "Ctrl+/"]
        context: Qt.ApplicationShortcut
        onActivated: shortcutsDialog.open()
    }
    function copyLastReply() {
        for (let row = chat.count - 1; row >= 0; --row) {
            const m = chat.get(row)
            if (m.role === "assistant") { chat.copyText(m.messageId); return }
        }
    }
    // Esc stops a reply only when the keyboard is not in a popup (the switcher, a menu, a
    // dialog): there it closes the popup first.
    function inPopup(item) {
        for (let p = item; p; p = p.parent)
            if (p === Overlay.overlay) return true
        return false
    }
    Shortcut {
        sequence: "Esc"
        context: Qt.ApplicationShortcut
        enabled: chat.generating && !window.inPopup(window.activeFocusItem)
        onActivated: chat.stop()
    }

    // ---- Layout ----
    RowLayout {
        anchors.fill: parent
        spacing: 0

        // Navigation rail (as wide as its widest caption needs)
        Rectangle {
            id: rail
            objectName: "navRail"
            Layout.fillHeight: true
            Layout.preferredWidth: Math.max(76, railColumn.implicitWidth + 12)
            color: window.railColor
            ColumnLayout {
                id: railColumn
                anchors.fill: parent
                anchors.topMargin: 12
                anchors.bottomMargin: 8
                spacing: 2
                Label {
                    text: "Hearth"
                    font.pixelSize: 13
                    font.bold: true
                    color: Material.accent
                    Layout.alignment: Qt.AlignHCenter
                    Layout.bottomMargin: 10
                }
                NavButton { objectName: "navChat"; glyph: "❝"; label: qsTr("Chats"); checked: window.page === "chat"; onClicked: window.page = "chat" }
                NavButton { objectName: "navPersonas"; glyph: "☺"; label: qsTr("Personas"); checked: window.page === "personas"; onClicked: window.page = "personas" }
                NavButton { objectName: "navMemory"; glyph: "▦"; label: qsTr("Memory"); checked: window.page === "memory"; onClicked: window.page = "memory" }
                NavButton { objectName: "navModel"; glyph: "◈"; label: qsTr("Model"); checked: window.page === "model"; onClicked: window.page = "model" }
                NavButton { objectName: "navSettings"; glyph: "⚙"; label: qsTr("Settings"); checked: window.page === "settings"; onClicked: window.page = "settings" }
                Item { Layout.fillHeight: true }
                NavButton {
                    objectName: "navHelp"
                    glyph: "?"
                    label: qsTr("Help")
                    onClicked: helpMenu.popup(this, width, 0)
                    Menu {
                        id: helpMenu
                        MenuItem { text: qsTr("Keyboard shortcuts"); onTriggered: shortcutsDialog.open() }
                        MenuItem { text: qsTr("Open log folder"); onTriggered: Qt.openUrlExternally(window.fileUrl(logFolder)) }
                        MenuSeparator {}
                        MenuItem { text: qsTr("About Hearth"); onTriggered: aboutDialog.open() }
                    }
                }
            }
        }
        Rectangle { Layout.fillHeight: true; Layout.preferredWidth: 1; color: window.dividerColor }

        Sidebar {
            id: sidebar
            objectName: "sidebar"
            visible: window.sidebarShown
            Layout.fillHeight: true
            Layout.preferredWidth: 290
            conversations: conversations
            personas: personas
            currentId: chat.conversationId
            busyIds: chat.busyConversations
            background: window.sidebarColor
            dividerColor: window.dividerColor
            subtleText: window.subtleText
            onOpenRequested: (id, messageId) => window.openConversation(id, messageId)
            onNewChatRequested: personaId => window.newChat(personaId)
        }
        Rectangle { visible: sidebar.visible; Layout.fillHeight: true; Layout.preferredWidth: 1; color: window.dividerColor }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            // Readable errors: a bad model file, a damaged history, a failed action.
            Banner {
                objectName: "modelErrorBanner"
                Layout.fillWidth: true
                text: bridge.loaded && bridge.errorString !== "" ? qsTr("The model could not be opened: %1").arg(bridge.errorString) : ""
            }
            Banner {
                objectName: "storeErrorBanner"
                Layout.fillWidth: true
                text: history.errorString !== "" ? qsTr("The chat history could not be opened: %1").arg(history.errorString) : ""
            }
            Banner {
                objectName: "corruptBanner"
                Layout.fillWidth: true
                kind: "warning"
                text: history.corruptBackupPath !== ""
                      ? qsTr("The chat history was damaged and has been set aside as %1; a new one was started.").arg(history.corruptBackupPath) : ""
            }
            Banner {
                objectName: "actionErrorBanner"
                Layout.fillWidth: true
                text: chat.errorString || conversations.errorString || personas.errorString || ""
            }

            StackLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: ["chat", "personas", "memory", "model", "settings"].indexOf(window.page)

                Item {
                    ChatPage {
                        id: chatPage
                        objectName: "chatPage"
                        anchors.fill: parent
                        visible: window.activeBackend.ready
                        chat: chat
                        bridge: bridge
                        backend: window.activeBackend
                        personas: personas
                        subtleText: window.subtleText
                        dividerColor: window.dividerColor
                        // The persona as the chat's own record has it, in the colour the
                        // sidebar shows it with (one lookup: PersonaListModel.colorOf).
                        personaColor: { personas.count; return personas.colorOf(chat.personaId) }
                        personaAvatar: {
                            const p = window.personaById(chat.personaId)
                            return p && p.avatar ? p.avatar : ""
                        }
                        settings: settings
                        sendHandler: text => window.sendFromComposer(text)
                        onNewChatRequested: personaId => window.newChat(personaId)
                        onForkRequested: messageId => conversations.forkConversation(messageId)
                        onOriginRequested: (conversationId, messageId) => window.openConversation(conversationId, messageId)
                        sidebarToggleVisible: !sidebar.visible
                        onSidebarToggled: window.toggleSidebar()
                    }
                    WelcomePage {
                        anchors.fill: parent
                        visible: !window.activeBackend.ready
                        bridge: bridge
                        subtleText: window.subtleText
                        onOpenFileRequested: window.openModelDialog()
                    }
                }
                PersonasPage {
                    objectName: "personasPage"
                    personas: personas
                    settings: settings
                    subtleText: window.subtleText
                    dividerColor: window.dividerColor
                    onNewChatRequested: personaId => window.newChat(personaId)
                }
                MemoryPage {
                    objectName: "memoryPage"
                    active: window.page === "memory"
                    bridge: bridge
                    conversations: conversations
                    personas: personas
                    settings: settings
                    subtleText: window.subtleText
                    dark: window.dark
                }
                ModelPage {
                    objectName: "modelPage"
                    inspector: inspector
                    bridge: bridge
                    library: library
                    catalog: catalog
                    connections: connections
                    settings: settings
                    personas: personas
                    subtleText: window.subtleText
                    onOpenFileRequested: window.openModelDialog()
                }
                SettingsPage {
                    objectName: "settingsPage"
                    bridge: bridge
                    chat: chat
                    settings: settings
                    window: window
                    connections: connections
                    remote: remoteBackend
                    apiServer: apiServer
                    history: history
                    personas: personas
                    catalog: catalog
                }
            }
        }
    }

    footer: StatusBar {
        objectName: "statusBar"
        bridge: bridge
        backend: window.activeBackend
        apiServer: apiServer
        color: window.railColor
        dividerColor: window.dividerColor
        subtleText: window.subtleText
    }

    // A short notice at the bottom (an export written).
    Pane {
        id: notice
        objectName: "noticeSnackbar"
        property string text
        visible: text !== "" && !snackbar.visible
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 20
        Material.elevation: 6
        Material.theme: window.dark ? Material.Light : Material.Dark
        padding: 12
        z: 10
        Label { objectName: "noticeText"; text: notice.text; textFormat: Text.PlainText }
        Timer { id: noticeTimer; interval: 5000; onTriggered: notice.text = "" }
        function show(message) {
            text = message
            noticeTimer.restart()
        }
        Connections {
            target: conversations
            function onExported(path) { notice.show(qsTr("Saved to %1").arg(path)) }
        }
    }

    // Deleted conversations can be brought back for a few seconds.
    Pane {
        id: snackbar
        objectName: "undoSnackbar"
        visible: conversations.canUndo
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 20
        Material.elevation: 6
        Material.theme: window.dark ? Material.Light : Material.Dark
        padding: 8
        leftPadding: 16
        z: 10
        RowLayout {
            spacing: 12
            Label { text: qsTr("Deleted “%1”").arg(conversations.undoTitle) }
            Button {
                objectName: "undoButton"
                text: qsTr("Undo")
                flat: true
                Material.foreground: Material.accent
                onClicked: conversations.undo()
            }
        }
    }

    FileDialog {
        id: modelDialog
        objectName: "modelDialog"
        title: qsTr("Open a GGUF model")
        nameFilters: [qsTr("GGUF models (*.gguf)"), qsTr("All files (*)")]
        onAccepted: bridge.load(selectedFile.toString())
    }
    QuickSwitcher {
        id: quickSwitcher
        objectName: "quickSwitcher"
        store: history
        subtleText: window.subtleText
        onChosen: (id, messageId) => window.openConversation(id, messageId)
    }
    AboutDialog {
        id: aboutDialog
        bridge: bridge
        onOpenLogFolder: Qt.openUrlExternally(window.fileUrl(logFolder))
    }
    ShortcutsDialog { id: shortcutsDialog }
}
