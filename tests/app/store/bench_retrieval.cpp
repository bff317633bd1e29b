// hearth-retrieval-bench: looking up passages (Store::retrieve, store/retrieval.cpp) in a
// collection far too long for any context: every document of a folder is added to one
// persona (cut into passages and indexed), then each question of a set is looked up and
// the top passages checked for the paragraph known to answer it.
//
//   hearth-retrieval-bench --corpus DIR --questions FILE [--top N] [--repeat N]
//
// DIR: *.txt documents (scripts/bench/retrieval-corpus makes 994 of them, ~8 MB).
// FILE: [{"question", "file", "answer"}] (tests/data/retrieval-questions.json): a question
// is answered in the top N (default 5) when a passage of `file` there contains `answer`.
// Prints the index time, the index's size, the query latency (each question asked
// --repeat times, default 20) and recall at 1 and at N, with the questions missed.
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "store/store.h"

using namespace hearth::store;

namespace {

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "hearth-retrieval-bench: %s\n", what.c_str());
    std::exit(2);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto at = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(at, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QString corpus, questions_path;
    int top = 5, repeat = 20;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString a = args[i];
        const auto next = [&] {
            if (i + 1 >= args.size()) die("missing value after " + a.toStdString());
            return args[++i];
        };
        if (a == QLatin1String("--corpus"))
            corpus = next();
        else if (a == QLatin1String("--questions"))
            questions_path = next();
        else if (a == QLatin1String("--top"))
            top = next().toInt();
        else if (a == QLatin1String("--repeat"))
            repeat = next().toInt();
        else
            die("unknown argument " + a.toStdString() +
                " (usage: --corpus DIR --questions FILE [--top N] [--repeat N])");
    }
    if (corpus.isEmpty() || questions_path.isEmpty() || top < 1 || repeat < 1)
        die("usage: --corpus DIR --questions FILE [--top N] [--repeat N]");

    QFile qf(questions_path);
    if (!qf.open(QIODevice::ReadOnly)) die("cannot read " + questions_path.toStdString());
    const QJsonArray questions = QJsonDocument::fromJson(qf.readAll()).array();
    if (questions.isEmpty()) die(questions_path.toStdString() + " holds no questions");

    QTemporaryDir dir;
    auto store = Store::open(dir.filePath(QStringLiteral("retrieval.sqlite3")));
    if (!store) die(store.message());
    Persona p;
    p.name = QStringLiteral("Archive");
    auto persona = store->create_persona(p);
    if (!persona) die(persona.message());

    const QStringList files =
        QDir(corpus).entryList({QStringLiteral("*.txt")}, QDir::Files, QDir::Name);
    if (files.isEmpty()) die("no .txt files in " + corpus.toStdString());
    std::map<QString, Id> id_of;
    std::vector<Id> ids;
    qint64 bytes = 0;
    QElapsedTimer timer;
    qint64 index_ns = 0;
    for (const QString& name : files) {
        QFile f(QDir(corpus).filePath(name));
        if (!f.open(QIODevice::ReadOnly)) die("cannot read " + name.toStdString());
        const QByteArray raw = f.readAll();
        bytes += raw.size();
        Document d;
        d.persona_id = persona->id;
        d.name = name;
        d.format = QStringLiteral("text");
        d.text = QString::fromUtf8(raw);
        d.lookup = true;
        timer.start();
        auto added = store->add_document(d);  // cut into passages and indexed, committed
        index_ns += timer.nsecsElapsed();
        if (!added) die(name.toStdString() + ": " + added.message());
        id_of[name] = added->id;
        ids.push_back(added->id);
    }
    auto chunks = store->database().query_int("SELECT count(*) FROM document_chunks");
    if (!chunks) die(chunks.message());
    (void)store->database().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const double db_mb = static_cast<double>(QFileInfo(store->path()).size()) / (1024.0 * 1024.0);

    std::vector<double> latency_ms;
    int at1 = 0, atn = 0;
    QStringList missed;
    for (const QJsonValue& v : questions) {
        const QJsonObject q = v.toObject();
        const QString question = q.value(QStringLiteral("question")).toString();
        const QString file = q.value(QStringLiteral("file")).toString();
        const QString answer = q.value(QStringLiteral("answer")).toString();
        if (!id_of.count(file)) die(file.toStdString() + " is not in the corpus");
        std::vector<Source> found;
        for (int r = 0; r < repeat; ++r) {
            timer.start();
            auto got = store->retrieve(ids, question, top);
            latency_ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            if (!got) die(got.message());
            found = std::move(*got);
        }
        int rank = -1;
        for (std::size_t i = 0; i < found.size() && rank < 0; ++i)
            if (found[i].document_id == id_of[file] &&
                found[i].text.contains(answer, Qt::CaseInsensitive))
                rank = static_cast<int>(i);
        if (rank == 0) ++at1;
        if (rank >= 0)
            ++atn;
        else
            missed << QStringLiteral("  %1 (%2)").arg(question, file);
    }
    const double n = static_cast<double>(questions.size());
    std::printf("corpus: %lld documents, %.1f MB of text, %lld passages\n",
                static_cast<long long>(files.size()), static_cast<double>(bytes) / 1e6,
                static_cast<long long>(*chunks));
    std::printf("index: %.1f s in all (%.1f ms per document, %.2f s per MB), database %.1f MiB\n",
                static_cast<double>(index_ns) / 1e9,
                static_cast<double>(index_ns) / 1e6 / static_cast<double>(files.size()),
                static_cast<double>(index_ns) / 1e9 / (static_cast<double>(bytes) / 1e6), db_mb);
    std::printf(
        "query (top %d of all %lld documents, %zu lookups): median %.2f ms, p95 %.2f ms, "
        "max %.2f ms\n",
        top, static_cast<long long>(files.size()), latency_ms.size(), percentile(latency_ms, 0.5),
        percentile(latency_ms, 0.95), percentile(latency_ms, 1.0));
    std::printf("recall: %d/%d at 1 (%.0f %%), %d/%d at %d (%.0f %%)\n", at1, static_cast<int>(n),
                100.0 * at1 / n, atn, static_cast<int>(n), top, 100.0 * atn / n);
    if (!missed.isEmpty())
        std::printf("missed:\n%s\n", missed.join(QLatin1Char('\n')).toUtf8().constData());
    return 0;
}
