// Where each app keeps its models; each rule cites where the app decides it (the readers'
// files cite the layouts).
#include "models/source_roots.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>

#include <sqlite3.h>

namespace hearth::models {
namespace {

QString env_path(const RootContext& c, const char* name) {
    // Ollama strips spaces and quotes from its variables (envconfig/config.go, Var()).
    QString v = c.env.value(QLatin1String(name)).trimmed();
    while (!v.isEmpty() && (v.front() == QLatin1Char('"') || v.front() == QLatin1Char('\'')))
        v.remove(0, 1);
    while (!v.isEmpty() && (v.back() == QLatin1Char('"') || v.back() == QLatin1Char('\'')))
        v.chop(1);
    return v.trimmed();
}

QString join(const QString& a, const QString& b) {
    return QDir::cleanPath(a + QLatin1Char('/') + b);
}

QString json_string(const QString& file, const char* key) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly) || f.size() > (1 << 20)) return {};
    return QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String(key)).toString();
}

// The OS's per-user data folder: $XDG_DATA_HOME or ~/.local/share, %APPDATA%,
// ~/Library/Application Support.
QString data_home(const RootContext& c) {
    switch (c.os) {
        case Os::Windows: {
            const QString appdata = env_path(c, "APPDATA");
            return appdata.isEmpty() ? join(c.home, QStringLiteral("AppData/Roaming")) : appdata;
        }
        case Os::MacOs:
            return join(c.home, QStringLiteral("Library/Application Support"));
        case Os::Linux:
            break;
    }
    const QString xdg = env_path(c, "XDG_DATA_HOME");
    return xdg.isEmpty() ? join(c.home, QStringLiteral(".local/share")) : xdg;
}

QString local_data_home(const RootContext& c) {
    if (c.os != Os::Windows) return data_home(c);
    const QString local = env_path(c, "LOCALAPPDATA");
    return local.isEmpty() ? join(c.home, QStringLiteral("AppData/Local")) : local;
}

QString cache_home(const RootContext& c) {
    const QString xdg = env_path(c, "XDG_CACHE_HOME");
    return xdg.isEmpty() ? join(c.home, QStringLiteral(".cache")) : xdg;
}

QString config_home(const RootContext& c) {
    const QString xdg = env_path(c, "XDG_CONFIG_HOME");
    return xdg.isEmpty() ? join(c.home, QStringLiteral(".config")) : xdg;
}

// Ollama: $OLLAMA_MODELS, else ~/.ollama/models (envconfig/config.go, Models()); the Linux
// installer's service runs as the user "ollama" whose home is /usr/share/ollama
// (scripts/install.sh).
// The Ollama desktop app's "Model location" (its Settings page): the "models" column of
// the one row of its database's settings table (app/store/schema.sql), "" for the default;
// the database is %LOCALAPPDATA%\Ollama\db.sqlite, ~/Library/Application
// Support/Ollama/db.sqlite, else ~/.ollama/db.sqlite (app/store/store.go, defaultDBPath).
// Read only; "" when there is no such database or it cannot be read.
QString ollama_app_models(const RootContext& c) {
    QString db;
    switch (c.os) {
        case Os::Windows:
            db = join(local_data_home(c), QStringLiteral("Ollama/db.sqlite"));
            break;
        case Os::MacOs:
            db = join(c.home, QStringLiteral("Library/Application Support/Ollama/db.sqlite"));
            break;
        case Os::Linux:
            db = join(c.home, QStringLiteral(".ollama/db.sqlite"));
            break;
    }
    if (!QFileInfo(db).isFile()) return {};
    sqlite3* handle = nullptr;
    QString models;
    if (sqlite3_open_v2(QFile::encodeName(db).constData(), &handle, SQLITE_OPEN_READONLY,
                        nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(handle, 200);  // the app may be writing
        sqlite3_stmt* select = nullptr;
        if (sqlite3_prepare_v2(handle, "SELECT models FROM settings WHERE id = 1", -1, &select,
                               nullptr) == SQLITE_OK &&
            sqlite3_step(select) == SQLITE_ROW) {
            if (const unsigned char* text = sqlite3_column_text(select, 0))
                models = QString::fromUtf8(reinterpret_cast<const char*>(text)).trimmed();
        }
        sqlite3_finalize(select);
    }
    sqlite3_close(handle);
    return models;
}

void ollama(const RootContext& c, QList<SourceRoot>& out) {
    // The desktop app's choice first; the folder a server started otherwise uses too.
    if (const QString app = ollama_app_models(c); !app.isEmpty())
        out << SourceRoot{Source::Ollama, QDir::cleanPath(app)};
    const QString models = env_path(c, "OLLAMA_MODELS");
    out << SourceRoot{Source::Ollama,
                      models.isEmpty() ? join(c.home, QStringLiteral(".ollama/models")) : models};
    if (c.os == Os::Linux)
        out << SourceRoot{Source::Ollama, QStringLiteral("/usr/share/ollama/.ollama/models")};
}

// LM Studio's home: ~/.lmstudio-home-pointer's contents, else ~/.cache/lm-studio when it
// exists, else ~/.lmstudio (lmstudio-js, findLMStudioHome.ts); its models folder:
// settings.json's "downloadsFolder", else <home>/models (lms, importCmd.ts).
void lmstudio(const RootContext& c, QList<SourceRoot>& out) {
    QString home;
    if (QFile pointer(join(c.home, QStringLiteral(".lmstudio-home-pointer")));
        pointer.open(QIODevice::ReadOnly))
        home = QString::fromUtf8(pointer.read(4096)).trimmed();
    if (home.isEmpty()) {
        const QString legacy = join(c.home, QStringLiteral(".cache/lm-studio"));
        home = QFileInfo(legacy).isDir() ? legacy : join(c.home, QStringLiteral(".lmstudio"));
    }
    const QString downloads =
        json_string(join(home, QStringLiteral("settings.json")), "downloadsFolder");
    out << SourceRoot{Source::LmStudio,
                      downloads.isEmpty() ? join(home, QStringLiteral("models")) : downloads};
}

// GPT4All: GPT4All.ini's "modelPath" (mysettings.cpp, MySettings::modelPath), else Qt's
// AppLocalDataLocation for nomic.ai/GPT4All (defaultLocalModelsPath).
void gpt4all(const RootContext& c, QList<SourceRoot>& out) {
    QString ini;
    switch (c.os) {
        case Os::Linux:
            ini = join(config_home(c), QStringLiteral("nomic.ai/GPT4All.ini"));
            break;
        case Os::Windows:
            ini = join(data_home(c), QStringLiteral("nomic.ai/GPT4All.ini"));
            break;
        case Os::MacOs:
            ini = join(c.home, QStringLiteral(".config/gpt4all.io/GPT4All.ini"));
            break;
    }
    QString path;
    if (QFileInfo::exists(ini)) {
        const QSettings settings(ini, QSettings::IniFormat);
        path = settings.value(QStringLiteral("modelPath")).toString();
        if (path.isEmpty()) path = settings.value(QStringLiteral("modelPaths")).toString();
    }
    out << SourceRoot{Source::Gpt4All,
                      path.isEmpty() ? join(local_data_home(c), QStringLiteral("nomic.ai/GPT4All"))
                                     : QDir::cleanPath(path)};
}

// Jan: $JAN_DATA_FOLDER, else settings.json's "data_folder" in <data>/Jan (or the older
// <data>/jan.ai.app and, on Linux, ~/.config/Jan), else <data>/Jan/data, where <data> is
// $JAN_DATA_ROOT or the OS's data folder (src-tauri/src/core/app/commands.rs and paths.rs);
// Jan 0.4 kept ~/jan.
void jan(const RootContext& c, QList<SourceRoot>& out) {
    QString data = env_path(c, "JAN_DATA_FOLDER");
    const QString root =
        env_path(c, "JAN_DATA_ROOT").isEmpty() ? data_home(c) : env_path(c, "JAN_DATA_ROOT");
    if (data.isEmpty()) {
        QStringList settings{join(root, QStringLiteral("Jan/settings.json")),
                             join(root, QStringLiteral("jan.ai.app/settings.json"))};
        if (c.os == Os::Linux)
            settings << join(config_home(c), QStringLiteral("Jan/settings.json"));
        for (const QString& file : settings) {
            data = json_string(file, "data_folder");
            if (!data.isEmpty()) break;
        }
    }
    if (data.isEmpty()) data = join(root, QStringLiteral("Jan/data"));
    out << SourceRoot{Source::Jan, data};
    if (c.os == Os::Linux)
        out << SourceRoot{Source::Jan, join(config_home(c), QStringLiteral("Jan/data"))};
    out << SourceRoot{Source::Jan, join(c.home, QStringLiteral("jan"))};
}

// llama.cpp's flat cache: $LLAMA_CACHE, else ~/.cache/llama.cpp, ~/Library/Caches/llama.cpp,
// %LOCALAPPDATA%\llama.cpp (common/common.cpp, fs_get_cache_directory).
void llamacpp(const RootContext& c, QList<SourceRoot>& out) {
    QString dir = env_path(c, "LLAMA_CACHE");
    if (dir.isEmpty()) {
        switch (c.os) {
            case Os::Linux:
                dir = join(cache_home(c), QStringLiteral("llama.cpp"));
                break;
            case Os::MacOs:
                dir = join(c.home, QStringLiteral("Library/Caches/llama.cpp"));
                break;
            case Os::Windows:
                dir = join(local_data_home(c), QStringLiteral("llama.cpp"));
                break;
        }
    }
    out << SourceRoot{Source::LlamaCpp, dir};
}

// Hugging Face's hub cache: $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub on every OS
// (huggingface_hub's constants.py).
void hf(const RootContext& c, QList<SourceRoot>& out) {
    QString dir = env_path(c, "HF_HUB_CACHE");
    if (dir.isEmpty()) dir = env_path(c, "HUGGINGFACE_HUB_CACHE");
    if (dir.isEmpty() && !env_path(c, "HF_HOME").isEmpty())
        dir = join(env_path(c, "HF_HOME"), QStringLiteral("hub"));
    if (dir.isEmpty()) dir = join(cache_home(c), QStringLiteral("huggingface/hub"));
    out << SourceRoot{Source::HuggingFace, dir};
}

}  // namespace

Os this_os() {
#if defined(Q_OS_WIN)
    return Os::Windows;
#elif defined(Q_OS_MACOS)
    return Os::MacOs;
#else
    return Os::Linux;
#endif
}

RootContext this_computer(const QString& hearth_models, const QStringList& user_folders) {
    return RootContext{QDir::homePath(), QProcessEnvironment::systemEnvironment(), this_os(),
                       hearth_models, user_folders};
}

QList<SourceRoot> source_roots(const RootContext& c) {
    QList<SourceRoot> out;
    if (!c.hearth_models.isEmpty()) out << SourceRoot{Source::Hearth, c.hearth_models};
    for (const QString& folder : c.user_folders) out << SourceRoot{Source::Folder, folder};
    ollama(c, out);
    lmstudio(c, out);
    gpt4all(c, out);
    jan(c, out);
    llamacpp(c, out);
    hf(c, out);
    for (SourceRoot& r : out) r.path = QDir::cleanPath(r.path);
    return out;
}

}  // namespace hearth::models
