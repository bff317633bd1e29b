// Each model source's reader on a folder laid out as its app lays it out. The layouts,
// with where each app decides them:
//  - Ollama (ollama/ollama): manifests/<host>/<namespace>/<model>/<tag>, a manifest of
//    layers whose "application/vnd.ollama.image.model" layer names blobs/sha256-<hex>
//    (manifest/paths.go PathForName and BlobsPath, manifest/manifest.go Manifests(),
//    types/model/name.go DisplayShortest(); older versions wrote "sha256:<hex>",
//    renamed by server/fixblobs.go).
//  - LM Studio: <models>/<publisher>/<repo>/<file>.gguf (lmstudio-ai/lms,
//    src/subcommands/importCmd.ts; docs 0_app/5_advanced/import-model.md).
//  - GPT4All (nomic-ai/gpt4all): *.gguf in the model folder and below, "incomplete-…"
//    partial downloads (gpt4all-chat/src/modellist.cpp processModelDirectory).
//  - Jan (janhq/jan): llamacpp/models/<id>/model.yml with model_path relative to the data
//    folder (extensions/llamacpp-extension/src/index.ts); models/<id>/model.json
//    (core/src/types/model/modelEntity.ts); the Cortex-era models/<host>/<org>/<repo>/*.yml
//    with model and files (index.ts migrateLegacyModels).
//  - llama.cpp (ggml-org/llama.cpp): the flat cache "<user>_<repo>_<file>.gguf" with
//    "manifest=<user>=<repo>=<tag>.json" (common/download.cpp) and "<file>.json" holding
//    the URL (2024–25), and the hub layout since PR #20775.
//  - Hugging Face's hub cache (huggingface_hub, docs guides/manage-cache.md):
//    models--<owner>--<repo>/{blobs/<hash>, refs/main, snapshots/<commit>/<file> → blob}.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include "gguf/gguf_writer.h"
#include "model/synthetic_model.h"
#include "models/model_scan.h"
#include "models/model_sources.h"
#include "models/scan_util.h"
#include "models/source_roots.h"

#include "library_files.h"

using namespace hearth::models;

namespace {

// A GGUF-looking file of `size` bytes (the readers look at the magic only).
// The Ollama desktop app's settings database, as its schema has it (one row, id 1).
bool write_ollama_settings(const QString& path, const char* models) {
    QDir().mkpath(QFileInfo(path).path());
    QFile::remove(path);
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(QFile::encodeName(path).constData(), &db) == SQLITE_OK &&
              sqlite3_exec(db,
                           "CREATE TABLE settings (id INTEGER PRIMARY KEY CHECK (id = 1), "
                           "device_id TEXT NOT NULL DEFAULT '', models TEXT NOT NULL DEFAULT '');"
                           "INSERT INTO settings (id) VALUES (1);",
                           nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_stmt* update = nullptr;
    ok = ok &&
         sqlite3_prepare_v2(db, "UPDATE settings SET models = ? WHERE id = 1", -1, &update,
                            nullptr) == SQLITE_OK &&
         sqlite3_bind_text(update, 1, models, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
         sqlite3_step(update) == SQLITE_DONE;
    sqlite3_finalize(update);
    sqlite3_close(db);
    return ok;
}

QByteArray gguf_bytes(int size = 64) {
    QByteArray b("GGUF");
    b.append(QByteArray(size - 4, 'x'));
    return b;
}

QByteArray json(const QJsonObject& o) {
    return QJsonDocument(o).toJson();
}

const FoundModel* find(const SourceScan& s, const QString& name) {
    for (const FoundModel& m : s.models)
        if (m.name == name) return &m;
    return nullptr;
}

QString names(const SourceScan& s) {
    QStringList out;
    for (const FoundModel& m : s.models) out << m.name + QLatin1Char('|') + m.file_name;
    return out.join(QLatin1String(", "));
}

QString hex(char c) {
    return QString(64, QLatin1Char(c));
}

QJsonObject ollama_manifest(const QString& digest_hex, qint64 size) {
    QJsonArray layers{QJsonObject{{"mediaType", "application/vnd.ollama.image.model"},
                                  {"digest", "sha256:" + digest_hex},
                                  {"size", size}},
                      QJsonObject{{"mediaType", "application/vnd.ollama.image.template"},
                                  {"digest", "sha256:" + hex('9')},
                                  {"size", 10}}};
    return {{"schemaVersion", 2},
            {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
            {"config", QJsonObject{{"mediaType", "application/vnd.docker.container.image.v1+json"},
                                   {"digest", "sha256:" + hex('8')},
                                   {"size", 5}}},
            {"layers", layers}};
}

}  // namespace

class TestModelSources : public QObject {
    Q_OBJECT

  private slots:
    void splitNames() {
        const auto s = split_name(QStringLiteral("Qwen3-14B-Q4_K_M-00002-of-00003.gguf"));
        QVERIFY(s);
        QCOMPARE(s->prefix, QStringLiteral("Qwen3-14B-Q4_K_M"));
        QCOMPARE(s->index, 2);
        QCOMPARE(s->count, 3);
        QVERIFY(!split_name(QStringLiteral("model-00004-of-00003.gguf")));
        QVERIFY(!split_name(QStringLiteral("model.gguf")));
        QVERIFY(is_auxiliary(QStringLiteral("mmproj-model-f16.gguf")));
        QVERIFY(is_auxiliary(QStringLiteral("model.gguf.part")));
        QVERIFY(is_auxiliary(QStringLiteral("incomplete-model.gguf")));
        QVERIFY(is_auxiliary(QStringLiteral("model.gguf.downloadInProgress")));
        QVERIFY(!is_auxiliary(QStringLiteral("Llama-3.2-1B-Instruct-Q4_K_M.gguf")));
    }

    void ollama() {
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        const QByteArray blob = gguf_bytes(100);
        write(root.filePath("blobs/sha256-" + hex('a')), blob);
        write(root.filePath("blobs/sha256-" + hex('9')), "{{ .Prompt }}");
        // Two tags of one blob: one model, named by "latest".
        write(root.filePath("manifests/registry.ollama.ai/library/llama3.2/3b"),
              json(ollama_manifest(hex('a'), blob.size())));
        write(root.filePath("manifests/registry.ollama.ai/library/llama3.2/latest"),
              json(ollama_manifest(hex('a'), blob.size())));
        // Another namespace, another registry (hf.co pulls).
        write(root.filePath("blobs/sha256-" + hex('b')), gguf_bytes(80));
        write(root.filePath("manifests/registry.ollama.ai/alice/tiny/latest"),
              json(ollama_manifest(hex('b'), 80)));
        write(root.filePath("blobs/sha256-" + hex('c')), gguf_bytes(70));
        write(root.filePath("manifests/hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF/Q4_K_M"),
              json(ollama_manifest(hex('c'), 70)));
        // What is passed over, each with its reason.
        write(root.filePath("manifests/registry.ollama.ai/library/broken/latest"), "{not json");
        write(root.filePath("manifests/registry.ollama.ai/library/gone/latest"),
              json(ollama_manifest(hex('d'), 10)));
        write(root.filePath("blobs/sha256-" + hex('e')), gguf_bytes(40));
        write(root.filePath("manifests/registry.ollama.ai/library/short/latest"),
              json(ollama_manifest(hex('e'), 41)));
        write(root.filePath("blobs/sha256-" + hex('f')), QByteArray(30, 's'));  // safetensors
        write(root.filePath("manifests/registry.ollama.ai/library/notgguf/latest"),
              json(ollama_manifest(hex('f'), 30)));
        QJsonObject cloud = ollama_manifest(hex('a'), 1);
        cloud["layers"] = QJsonArray{};
        write(root.filePath("manifests/registry.ollama.ai/library/cloud/latest"), json(cloud));

        const SourceScan s = scan_ollama(tmp.path());
        QVERIFY(s.present);
        QCOMPARE(s.models.size(), 3);
        const FoundModel* llama = find(s, "llama3.2:latest");
        QVERIFY2(llama, qPrintable(names(s)));
        QCOMPARE(llama->aliases, QStringList{"llama3.2:3b"});
        QCOMPARE(llama->path, root.filePath("blobs/sha256-" + hex('a')));
        QCOMPARE(llama->size, qint64(100));
        QCOMPARE(llama->source, Source::Ollama);
        QVERIFY2(find(s, "alice/tiny:latest"), qPrintable(names(s)));
        QVERIFY2(find(s, "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"),
                 qPrintable(names(s)));
        const QString problems = s.problems.join('\n');
        QCOMPARE(s.problems.size(), 5);
        QVERIFY2(problems.contains("broken/latest: not a JSON manifest"), qPrintable(problems));
        QVERIFY2(problems.contains("gone/latest: its model blob is missing"), qPrintable(problems));
        QVERIFY2(
            problems.contains("short/latest: its model blob is 40 bytes, the manifest says 41"),
            qPrintable(problems));
        QVERIFY2(problems.contains("notgguf/latest: its model blob is not a GGUF file"),
                 qPrintable(problems));
        QVERIFY2(problems.contains("cloud/latest: no model layer"), qPrintable(problems));

        QVERIFY(!scan_ollama(root.filePath("nothing")).present);
    }

    void ollamaOldBlobNames() {
#ifdef Q_OS_WIN
        QSKIP("Windows cannot name a file sha256:<hex>");
#else
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        write(root.filePath("blobs/sha256:" + hex('a')), gguf_bytes(50));
        write(root.filePath("manifests/registry.ollama.ai/library/old/v1"),
              json(ollama_manifest(hex('a'), 50)));
        const SourceScan s = scan_ollama(tmp.path());
        QCOMPARE(s.models.size(), 1);
        QCOMPARE(s.models[0].name, QStringLiteral("old:v1"));
        QCOMPARE(s.models[0].path, root.filePath("blobs/sha256:" + hex('a')));
#endif
    }

    void lmstudio() {
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        write(root.filePath("lmstudio-community/Qwen3-4B-GGUF/Qwen3-4B-Q4_K_M.gguf"),
              gguf_bytes(60));
        write(root.filePath("lmstudio-community/Qwen3-4B-GGUF/Qwen3-4B-Q8_0.gguf"), gguf_bytes(90));
        write(root.filePath("ggml-org/gemma-3-4b-it-GGUF/mmproj-model-f16.gguf"), gguf_bytes(20));
        write(root.filePath("ggml-org/gemma-3-4b-it-GGUF/gemma-3-4b-it-Q4_K_M.gguf"),
              gguf_bytes(70));
        // A split model, one part short; and one whose first part is missing.
        write(root.filePath("unsloth/Big-GGUF/Big-Q4_K_M-00001-of-00003.gguf"), gguf_bytes(30));
        write(root.filePath("unsloth/Big-GGUF/Big-Q4_K_M-00002-of-00003.gguf"), gguf_bytes(30));
        write(root.filePath("unsloth/Other-GGUF/Other-00002-of-00002.gguf"), gguf_bytes(30));

        const SourceScan s = scan_lmstudio(tmp.path());
        QCOMPARE(s.models.size(), 4);
        QStringList files;
        for (const FoundModel& m : s.models) files << m.file_name;
        QCOMPARE(files, (QStringList{"gemma-3-4b-it-Q4_K_M.gguf", "Qwen3-4B-Q4_K_M.gguf",
                                     "Qwen3-4B-Q8_0.gguf", "Big-Q4_K_M-00001-of-00003.gguf"}));
        QCOMPARE(s.models[1].name, QStringLiteral("lmstudio-community/Qwen3-4B-GGUF"));
        QCOMPARE(s.models[1].repo, QStringLiteral("lmstudio-community/Qwen3-4B-GGUF"));
        const FoundModel& big = s.models[3];
        QCOMPARE(big.parts, 3);
        QCOMPARE(big.size, qint64(60));
        QVERIFY(!big.complete);
        QCOMPARE(s.problems.size(), 1);
        QVERIFY2(s.problems[0].contains("the first part of a split model is missing"),
                 qPrintable(s.problems[0]));
    }

    void gpt4all() {
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        write(root.filePath("Meta-Llama-3-8B-Instruct.Q4_0.gguf"), gguf_bytes());
        write(root.filePath("incomplete-Phi-3-mini-4k-instruct.Q4_0.gguf"), gguf_bytes());
        write(root.filePath("gpt4all-1234.chat"), "chat");
        write(root.filePath("gpt4all-nomic-embed-text-v1.rmodel"), "{}");
        write(root.filePath("mine/qwen2.5-1.5b-instruct-q4_k_m.gguf"), gguf_bytes());
        const SourceScan s = scan_gpt4all(tmp.path());
        QCOMPARE(
            names(s),
            QStringLiteral("Meta-Llama-3-8B-Instruct.Q4_0.gguf|Meta-Llama-3-8B-Instruct.Q4_0.gguf, "
                           "qwen2.5-1.5b-instruct-q4_k_m.gguf|qwen2.5-1.5b-instruct-q4_k_m.gguf"));
        QVERIFY(s.problems.isEmpty());
    }

    void jan() {
        QTemporaryDir tmp;
        const QDir data(tmp.path() + "/data");
        QTemporaryDir elsewhere;
        // 0.6: a download (relative path), a file imported in place (absolute), an
        // embedding model (left out), one whose file is gone.
        write(data.filePath("llamacpp/models/janhq/Jan-v1-4B-GGUF/Jan-v1-4B-Q4_K_M.gguf"),
              gguf_bytes());
        write(data.filePath("llamacpp/models/janhq/Jan-v1-4B-GGUF/model.yml"),
              "model_path: llamacpp/models/janhq/Jan-v1-4B-GGUF/Jan-v1-4B-Q4_K_M.gguf\n"
              "name: Jan-v1-4B-GGUF\nsize_bytes: 64\nembedding: false\n");
        const QString imported = elsewhere.path() + "/my-model.gguf";
        write(imported, gguf_bytes());
        write(data.filePath("llamacpp/models/my-model/model.yml"),
              "model_path: \"" + imported.toUtf8() + "\"\nsize_bytes: 64\n");
        write(data.filePath("llamacpp/models/nomic-embed/model.gguf"), gguf_bytes());
        write(data.filePath("llamacpp/models/nomic-embed/model.yml"),
              "model_path: llamacpp/models/nomic-embed/model.gguf\nname: nomic-embed\nembedding: "
              "true\n");
        write(data.filePath("llamacpp/models/gone/model.yml"),
              "model_path: llamacpp/models/gone/model.gguf\nname: gone\n");
        // 0.4: model.json beside its file; a catalog entry never downloaded is not listed.
        write(data.filePath("models/llama3-8b-instruct/Meta-Llama-3-8B-Instruct-Q4_K_M.gguf"),
              gguf_bytes());
        write(data.filePath("models/llama3-8b-instruct/model.json"),
              json({{"id", "llama3-8b-instruct"},
                    {"name", "Llama 3 8B Q4"},
                    {"sources", QJsonArray{QJsonObject{
                                    {"filename", "Meta-Llama-3-8B-Instruct-Q4_K_M.gguf"},
                                    {"url", "https://huggingface.co/x/y/resolve/main/z.gguf"}}}},
                    {"settings",
                     QJsonObject{{"llama_model_path", "Meta-Llama-3-8B-Instruct-Q4_K_M.gguf"}}}}));
        write(data.filePath("models/tinyllama/model.json"),
              json({{"name", "TinyLlama"},
                    {"sources", QJsonArray{QJsonObject{{"filename", "tinyllama.gguf"}}}}}));
        // 0.5: <name>.yml naming its file (data-folder relative); one that 0.6 migrated,
        // so its file is described twice and listed once.
        write(data.filePath("models/huggingface.co/bartowski/Qwen2.5-GGUF/Qwen2.5-3B-Q4_K_M.gguf"),
              gguf_bytes());
        write(data.filePath("models/huggingface.co/bartowski/Qwen2.5-GGUF/Qwen2.5-3B-Q4_K_M.yml"),
              "model: bartowski:Qwen2.5-3B\nfiles:\n  - "
              "models/huggingface.co/bartowski/Qwen2.5-GGUF/Qwen2.5-3B-Q4_K_M.gguf\n");
        write(data.filePath("llamacpp/models/bartowski:Qwen2.5-3B/model.yml"),
              "model_path: "
              "models/huggingface.co/bartowski/Qwen2.5-GGUF/Qwen2.5-3B-Q4_K_M.gguf\nname: Qwen2.5 "
              "3B\n");

        const SourceScan s = scan_jan(data.path());
        QVERIFY(s.present);
        QCOMPARE(s.models.size(), 4);
        QVERIFY2(find(s, "Jan-v1-4B-GGUF"), qPrintable(names(s)));
        const FoundModel* mine = find(s, "my-model");  // no name: its id
        QVERIFY2(mine, qPrintable(names(s)));
        QCOMPARE(mine->path, imported);
        QVERIFY2(find(s, "Llama 3 8B Q4"), qPrintable(names(s)));
        QVERIFY2(find(s, "Qwen2.5 3B"), qPrintable(names(s)));  // the 0.6 description first
        QVERIFY(!find(s, "nomic-embed"));
        QVERIFY(!find(s, "TinyLlama"));
        QCOMPARE(s.problems.size(), 1);
        QVERIFY2(s.problems[0].contains("gone/model.yml: its model file"),
                 qPrintable(s.problems[0]));
    }

    void llamacpp() {
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        // -hf with a manifest, -hf from 2024 with its .json, --model-url with nothing.
        write(root.filePath("ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf"), gguf_bytes());
        write(root.filePath("manifest=ggml-org=gemma-3-1b-it-GGUF=latest.json"),
              json({{"ggufFile", QJsonObject{{"rfilename", "gemma-3-1b-it-Q4_K_M.gguf"}}}}));
        write(root.filePath("bartowski_Qwen_2.5_Qwen2.5-1.5B-Q8_0.gguf"), gguf_bytes());
        write(
            root.filePath("bartowski_Qwen_2.5_Qwen2.5-1.5B-Q8_0.gguf.json"),
            json({{"url",
                   "https://huggingface.co/bartowski/Qwen_2.5/resolve/main/Qwen2.5-1.5B-Q8_0.gguf"},
                  {"etag", "\"abc\""}}));
        write(root.filePath("plain.gguf"), gguf_bytes());
        write(root.filePath("partial.gguf.downloadInProgress"), gguf_bytes());
        // The hub layout, where $LLAMA_CACHE is the hub folder.
        write(root.filePath("models--unsloth--Qwen3-0.6B-GGUF/refs/main"), "c0ffee\n");
        write(root.filePath(
                  "models--unsloth--Qwen3-0.6B-GGUF/snapshots/c0ffee/Qwen3-0.6B-Q4_K_M.gguf"),
              gguf_bytes());

        const SourceScan s = scan_llamacpp(tmp.path());
        QCOMPARE(s.models.size(), 4);
        const FoundModel* gemma = find(s, "ggml-org/gemma-3-1b-it-GGUF:latest");
        QVERIFY2(gemma, qPrintable(names(s)));
        QCOMPARE(gemma->repo, QStringLiteral("ggml-org/gemma-3-1b-it-GGUF"));
        QVERIFY2(find(s, "bartowski/Qwen_2.5"), qPrintable(names(s)));
        QVERIFY2(find(s, "plain.gguf"), qPrintable(names(s)));
        const FoundModel* hub = find(s, "unsloth/Qwen3-0.6B-GGUF");
        QVERIFY2(hub, qPrintable(names(s)));
        QCOMPARE(hub->source, Source::LlamaCpp);
    }

    void huggingFaceCache() {
        QTemporaryDir tmp;
        const QDir hub(tmp.path());
        const QString repo = hub.filePath("models--bartowski--Llama-3.2-1B-Instruct-GGUF");
        write(repo + "/refs/main", "1111\n");
        write(repo + "/blobs/" + hex('a'), gguf_bytes(64));
        write(repo + "/blobs/" + hex('b'), gguf_bytes(96));
        write(repo + "/blobs/readme", "# card");
        QDir().mkpath(repo + "/snapshots/1111");
        QDir().mkpath(repo + "/snapshots/0000");
        // Windows keeps copies where it cannot link: the same file as a plain file.
#ifdef Q_OS_WIN
        write(repo + "/snapshots/1111/Llama-3.2-1B-Instruct-Q4_K_M.gguf", gguf_bytes(64));
        write(repo + "/snapshots/0000/Llama-3.2-1B-Instruct-Q8_0.gguf", gguf_bytes(96));
#else
        QVERIFY(QFile::link("../../blobs/" + hex('a'),
                            repo + "/snapshots/1111/Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
        QVERIFY(QFile::link("../../blobs/" + hex('b'),
                            repo + "/snapshots/0000/Llama-3.2-1B-Instruct-Q8_0.gguf"));
        // Also in the older snapshot: listed once, from refs/main's.
        QVERIFY(QFile::link("../../blobs/" + hex('a'),
                            repo + "/snapshots/0000/Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
        // An interrupted download leaves a link to nothing.
        QVERIFY(QFile::link("../../blobs/" + hex('c'),
                            repo + "/snapshots/1111/Llama-3.2-1B-Instruct-F16.gguf"));
#endif
        write(hub.filePath("datasets--someone--data/refs/main"), "x");

        const SourceScan s = scan_hf_cache(tmp.path());
        QCOMPARE(s.models.size(), 2);
        QCOMPARE(s.models[0].file_name, QStringLiteral("Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
        QCOMPARE(s.models[0].size, qint64(64));
        QVERIFY(s.models[0].path.contains("/snapshots/1111/"));
        QCOMPARE(s.models[0].repo, QStringLiteral("bartowski/Llama-3.2-1B-Instruct-GGUF"));
        QCOMPARE(s.models[1].file_name, QStringLiteral("Llama-3.2-1B-Instruct-Q8_0.gguf"));
        QCOMPARE(s.models[1].size, qint64(96));
#ifndef Q_OS_WIN
        QCOMPARE(s.problems.size(), 1);
        QVERIFY2(s.problems[0].contains("a link to a missing file"), qPrintable(s.problems[0]));
#endif
    }

    void rootsFollowEachAppsSettings() {
        QTemporaryDir tmp;
        const QDir home(tmp.path());
        RootContext c{tmp.path(), {}, Os::Linux, "/hearth/models", {"/mine"}};
        const auto path_of = [&](Source source) {
            for (const SourceRoot& r : source_roots(c))
                if (r.source == source) return r.path;
            return QString();
        };
        // Defaults on Linux.
        QCOMPARE(path_of(Source::Hearth), QStringLiteral("/hearth/models"));
        QCOMPARE(path_of(Source::Folder), QStringLiteral("/mine"));
        QCOMPARE(path_of(Source::Ollama), home.filePath(".ollama/models"));
        QCOMPARE(path_of(Source::LmStudio), home.filePath(".lmstudio/models"));
        QCOMPARE(path_of(Source::Gpt4All), home.filePath(".local/share/nomic.ai/GPT4All"));
        QCOMPARE(path_of(Source::Jan), home.filePath(".local/share/Jan/data"));
        QCOMPARE(path_of(Source::LlamaCpp), home.filePath(".cache/llama.cpp"));
        QCOMPARE(path_of(Source::HuggingFace), home.filePath(".cache/huggingface/hub"));

        // Environment variables.
        c.env.insert("OLLAMA_MODELS", " \"/big/ollama\" ");
        c.env.insert("LLAMA_CACHE", "/big/llama");
        c.env.insert("HF_HOME", "/big/hf");
        c.env.insert("XDG_DATA_HOME", "/xdg/data");
        QCOMPARE(path_of(Source::Ollama), QStringLiteral("/big/ollama"));
        QCOMPARE(path_of(Source::LlamaCpp), QStringLiteral("/big/llama"));
        QCOMPARE(path_of(Source::HuggingFace), QStringLiteral("/big/hf/hub"));
        QCOMPARE(path_of(Source::Gpt4All), QStringLiteral("/xdg/data/nomic.ai/GPT4All"));
        c.env.insert("HF_HUB_CACHE", "/big/hub");
        QCOMPARE(path_of(Source::HuggingFace), QStringLiteral("/big/hub"));
        c.env.clear();

        // Each app's own settings file.
        write(home.filePath(".lmstudio-home-pointer"), (home.filePath("lms-home") + "\n").toUtf8());
        QCOMPARE(path_of(Source::LmStudio), home.filePath("lms-home/models"));
        write(home.filePath("lms-home/settings.json"), json({{"downloadsFolder", "/disk/lms"}}));
        QCOMPARE(path_of(Source::LmStudio), QStringLiteral("/disk/lms"));
        write(home.filePath(".config/nomic.ai/GPT4All.ini"),
              "[General]\nmodelPath=/disk/gpt4all/\n");
        QCOMPARE(path_of(Source::Gpt4All), QStringLiteral("/disk/gpt4all"));
        write(home.filePath(".local/share/Jan/settings.json"),
              json({{"data_folder", "/disk/jan"}}));
        QCOMPARE(path_of(Source::Jan), QStringLiteral("/disk/jan"));
        c.env.insert("JAN_DATA_FOLDER", "/env/jan");
        QCOMPARE(path_of(Source::Jan), QStringLiteral("/env/jan"));
        c.env.clear();

        // Other systems' defaults.
        QTemporaryDir other;
        c.home = other.path();
        c.os = Os::MacOs;
        QCOMPARE(path_of(Source::Gpt4All),
                 other.path() + "/Library/Application Support/nomic.ai/GPT4All");
        QCOMPARE(path_of(Source::LlamaCpp), other.path() + "/Library/Caches/llama.cpp");
        QCOMPARE(path_of(Source::HuggingFace), other.path() + "/.cache/huggingface/hub");
        c.os = Os::Windows;
        c.env.insert("APPDATA", other.path() + "/Roaming");
        c.env.insert("LOCALAPPDATA", other.path() + "/Local");
        QCOMPARE(path_of(Source::Gpt4All), other.path() + "/Local/nomic.ai/GPT4All");
        QCOMPARE(path_of(Source::Jan), other.path() + "/Roaming/Jan/data");
        QCOMPARE(path_of(Source::LlamaCpp), other.path() + "/Local/llama.cpp");
        QCOMPARE(path_of(Source::Ollama), other.path() + "/.ollama/models");

        // The Ollama desktop app's "Model location": its settings database (app/store/
        // schema.sql's settings table, "models" column; store.go's defaultDBPath), before
        // the folder a server started without it uses.
        QVERIFY(write_ollama_settings(other.path() + "/Local/Ollama/db.sqlite", "D:/ollama"));
        QCOMPARE(path_of(Source::Ollama), QStringLiteral("D:/ollama"));
        c.os = Os::MacOs;
        QVERIFY(write_ollama_settings(
            other.path() + "/Library/Application Support/Ollama/db.sqlite", ""));  // the default
        QCOMPARE(path_of(Source::Ollama), other.path() + "/.ollama/models");
        c.os = Os::Linux;
        c.home = tmp.path();
        write(home.filePath(".ollama/db.sqlite"), "not a database");  // unreadable: passed over
        QCOMPARE(path_of(Source::Ollama), home.filePath(".ollama/models"));
    }

    void scanListsEachFileOnce() {
        QTemporaryDir tmp;
        const QDir root(tmp.path());
        write(root.filePath("hearth/tiny.gguf"), gguf_bytes());
        write(root.filePath("mine/other.gguf"), gguf_bytes());
#ifndef Q_OS_WIN
        QVERIFY(
            QFile::link(root.filePath("hearth/tiny.gguf"), root.filePath("mine/tiny-link.gguf")));
#endif
        const QList<SourceRoot> roots{{Source::Hearth, root.filePath("hearth")},
                                      {Source::Folder, root.filePath("mine")},
                                      {Source::Folder, root.filePath("mine/")},
                                      {Source::Ollama, root.filePath("no-ollama")}};
        const LibraryScan scan = scan_roots(roots);
        QCOMPARE(scan.models.size(), 2);
        QCOMPARE(scan.models[0].source, Source::Hearth);
        QCOMPARE(scan.models[1].file_name, QStringLiteral("other.gguf"));
        QCOMPARE(scan.sources.size(), 3);  // the folder named twice is read once
        QVERIFY(!scan.sources[2].present);
    }

    void factsFromTheHeader() {
        QTemporaryDir tmp;
        hearth::SyntheticModelSpec spec;
        spec.architecture = "qwen3";
        spec.context_length = 2048;
        auto bytes = hearth::make_synthetic_model(spec);
        QVERIFY(bytes);
        const QString path = tmp.path() + "/Qwen3-Tiny-Instruct-F32.gguf";
        write(path,
              QByteArray(reinterpret_cast<const char*>(bytes->data()), qsizetype(bytes->size())));
        FoundModel m;
        m.path = path;
        ModelFacts f = read_facts(m);
        QVERIFY2(f.supported, qPrintable(f.why_not));
        QCOMPARE(f.architecture, QStringLiteral("qwen3"));
        QCOMPARE(f.context_length, qint64(2048));
        QCOMPARE(f.quantisation, QStringLiteral("F32"));
        QVERIFY(f.parameters > 0);
        QVERIFY(!f.title.isEmpty());

        // A split model is read through its parts (tst_gguf_split): one short says which.
        hearth::gguf::GgufWriter first;
        first.add_u16("split.no", 0);
        first.add_u16("split.count", 2);
        first.add_i32("split.tensors.count", 0);
        m.path = tmp.path() + "/Big-00001-of-00002.gguf";
        m.parts = 2;
        QVERIFY(first.write(m.path.toStdString()));
        f = read_facts(m);
        QVERIFY(!f.supported);
        QVERIFY2(f.why_not.contains("part 2 of 2"), qPrintable(f.why_not));

        write(tmp.path() + "/bad.gguf", gguf_bytes());
        m.path = tmp.path() + "/bad.gguf";
        m.parts = 1;
        f = read_facts(m);
        QVERIFY(!f.supported);
        QVERIFY(!f.why_not.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestModelSources)
#include "tst_model_sources.moc"
