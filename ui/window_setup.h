// Setting up the main window (qrc:/Hearth/Main.qml): what app/main.cpp and the UI tests
// share. The window reads these as context properties: which model to open, where the
// chat history lives, the log folder, a forced theme and the engine's settings (and
// documentsFolder, where exports are offered first).
#pragma once

#include <QString>

class QObject;
class QQmlApplicationEngine;

namespace hearth::ui {

struct WindowOptions {
    QString modelPath;         // opened at start; empty: none (the first-run page)
    QString storePath;         // the chat history database; empty: the default location
    QString logFolder;         // "Open log folder"
    QString theme;             // "light", "dark" or empty (follow the system)
    QString language;          // a code ("de"); empty: the system's; null: the setting's
    int threads = 0;           // engine CPU threads; 0: all cores
    int kvMegabytes = 0;       // KV cache budget; 0: the engine's default
    bool seedPersonas = true;  // seed the default personas into an empty history
};

// o with $HEARTH_STORE (storePath), $HEARTH_THEME (theme) and $HEARTH_LANGUAGE (language)
// applied where set.
WindowOptions with_environment(WindowOptions o);

// The model the window opens at start: the command line's, else $HEARTH_MODEL, else the
// one open when the app last ran (AppSettings::lastModelPath) while its file is there,
// else the default model's path.
QString startup_model_path(const QString& argument, const QString& last_model);

// Sets the context properties and loads Main.qml; returns the window, or nullptr (logged).
QObject* load_main_window(QQmlApplicationEngine& engine, const WindowOptions& options);

}  // namespace hearth::ui
