// Export to Markdown and JSON, import of JSON (round trip, and refusing bad input without
// changing anything), and validation of the paths a person chooses.
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <functional>
#include <limits>

#include "store/path_check.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {

QJsonObject without_export_time(const QByteArray& json) {
    QJsonObject o = QJsonDocument::fromJson(json).object();
    o.remove(QStringLiteral("exported_at"));
    return o;
}

using Mutation = std::function<void(QJsonObject&)>;

// Applies `edit` to the messages array of `root`.
void edit_message(QJsonObject& root, int index, const std::function<void(QJsonObject&)>& edit) {
    QJsonArray list = root[QStringLiteral("messages")].toArray();
    QJsonObject m = list[index].toObject();
    edit(m);
    list[index] = m;
    root[QStringLiteral("messages")] = list;
}

}  // namespace

Q_DECLARE_METATYPE(Mutation)

class TestStoreExchange : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    Id conv_ = 0;
    QByteArray json_;
    QString active_text_, inactive_text_;

    hearth::Result<Id> build() {
        Persona p;
        p.name = QStringLiteral("Ada");
        p.system_prompt = QStringLiteral("You are Ada.\nAnswer briefly.");
        p.color = QStringLiteral("#336699");
        p.avatar = QStringLiteral("A");
        p.sampling.temperature = 0.5;
        p.sampling.frequency_penalty = 0.25;
        p.sampling.seed = -7;
        p.sampling.max_tokens = 300;
        auto persona = store_->create_persona(p);
        if (!persona) return persona.error();
        auto model = store_->upsert_model(QStringLiteral("/models/ada.gguf"),
                                          QStringLiteral("00ff00ff"), QStringLiteral("Ada 1B"));
        if (!model) return model.error();
        Conversation c = titled(QStringLiteral("R\u00e9sum\u00e9 \U0001F4DD tips"));
        c.persona_id = persona->id;
        c.model_id = model->id;
        c.pinned = true;
        c.sampling.temperature = 0.1 + 0.2;  // not exactly representable in short decimal
        c.sampling.seed = (1LL << 62) + 1;   // beyond a double's exact integers
        c.sampling.top_k = 50;
        c.sampling.frequency_penalty = 0.5;
        c.sampling.presence_penalty = -0.25;
        c.sampling.thinking = false;
        c.sampling.stop = std::vector<QString>{QStringLiteral("\n###"), QStringLiteral("Énd")};
        auto conv = store_->create_conversation(c);
        if (!conv) return conv.error();
        auto u = store_->append_message(
            conv->id,
            draft(Role::User,
                  QStringLiteral("How do I write a *r\u00e9sum\u00e9*?\n\n```\ncode\n```"),
                  {std::numeric_limits<std::int32_t>::min(), 0, 77}, QStringLiteral("00ff00ff")));
        if (!u) return u.error();
        inactive_text_ = QStringLiteral("An older reply nobody sees.");
        if (auto a1 = store_->append_message(conv->id, draft(Role::Assistant, inactive_text_)); !a1)
            return a1.error();
        auto r = store_->begin_reply(conv->id, u->id, QStringLiteral("00ff00ff"));
        if (!r) return r.error();
        active_text_ = QStringLiteral("Keep it to one page.");
        if (auto w = store_->update_reply(*r, active_text_, std::vector<std::int32_t>{5, 6, 7}); !w)
            return w.error();
        GenerationStats stats;
        stats.ttft_ms = 87.125;
        stats.tokens_per_second = 31.4159;
        stats.prompt_tokens_cached = 12;
        stats.prompt_tokens_computed = 30;
        stats.generated_tokens = 3;
        stats.seed = 0xfffffffffffffff0ULL;  // past int64 and past a double's integers
        stats.finish_reason = FinishReason::Cancelled;
        stats.reasoning_ms = 1234.5;
        stats.messages_dropped = 6;
        stats.prompt_tokens_shifted = 2048;
        stats.prompt_tokens_loaded = 9;
        stats.draft_tokens = 70;
        stats.draft_accepted = 52;
        stats.error = QStringLiteral("the forward pass failed: \"quoted\", ünïcode");
        if (auto f = store_->finish_reply(*r, stats, MessageState::Interrupted); !f)
            return f.error();
        return conv->id;
    }

  private slots:
    void initTestCase() {
        auto store = Store::open(dir_.filePath(QStringLiteral("exchange.sqlite3")));
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
        auto conv = build();
        HEARTH_CHECK(conv);
        conv_ = *conv;
        auto json = store_->export_conversation(conv_, ExportFormat::Json);
        HEARTH_CHECK(json);
        json_ = *json;
    }
    void cleanupTestCase() { store_.reset(); }

    void markdown_shows_the_thread_on_screen() {
        auto md = store_->export_conversation(conv_, ExportFormat::Markdown);
        HEARTH_CHECK(md);
        const QString text = QString::fromUtf8(*md);
        QVERIFY(text.startsWith(QStringLiteral("# R\u00e9sum\u00e9 \U0001F4DD tips\n")));
        QVERIFY(text.contains(QStringLiteral("Persona: Ada")));
        QVERIFY(text.contains(QStringLiteral("Model: Ada 1B")));
        QVERIFY(text.contains(QStringLiteral("> You are Ada.\n> Answer briefly.")));
        QVERIFY(text.contains(QStringLiteral("```\ncode\n```")));
        QVERIFY(text.contains(active_text_));
        QVERIFY(!text.contains(inactive_text_));
        QVERIFY(text.contains(QStringLiteral("variant 2 of 2")));
        QVERIFY(text.contains(QStringLiteral("31.4 tokens/s")));
        QVERIFY(text.contains(QStringLiteral("*(reply interrupted)*")));
    }

    void json_round_trips() {
        const QJsonObject exported = without_export_time(json_);
        QCOMPARE(exported[QStringLiteral("messages")].toArray().size(), 3);
        auto imported = store_->import_json(json_);
        HEARTH_CHECK(imported);
        QVERIFY(*imported != conv_);
        auto again = store_->export_conversation(*imported, ExportFormat::Json);
        HEARTH_CHECK(again);
        QCOMPARE(without_export_time(*again), exported);

        // The same records, not only the same JSON: exact token ids, seed, thread and persona.
        auto original = store_->conversation(conv_);
        auto copy = store_->conversation(*imported);
        HEARTH_CHECK(original);
        HEARTH_CHECK(copy);
        QCOMPARE(copy->sampling, original->sampling);
        QCOMPARE(copy->sampling.presence_penalty, std::optional(-0.25));
        QCOMPARE(copy->sampling.thinking, std::optional(false));
        QCOMPARE(copy->sampling.stop->size(), std::size_t{2});
        QCOMPARE(copy->persona_id, original->persona_id);  // an identical persona is reused
        QCOMPARE(copy->model_id, original->model_id);      // a known fingerprint is linked
        QCOMPARE(copy->created_at, original->created_at);
        auto a = store_->active_thread(conv_);
        auto b = store_->active_thread(*imported);
        HEARTH_CHECK(a);
        HEARTH_CHECK(b);
        QCOMPARE(b->size(), a->size());
        for (std::size_t i = 0; i < a->size(); ++i) {
            QCOMPARE(b->at(i).message.text, a->at(i).message.text);
            QCOMPARE(b->at(i).message.token_ids, a->at(i).message.token_ids);
            QCOMPARE(b->at(i).message.stats, a->at(i).message.stats);
            QCOMPARE(b->at(i).message.state, a->at(i).message.state);
            QCOMPARE(b->at(i).variant_index, a->at(i).variant_index);
        }
        QCOMPARE(b->back().message.stats.seed, std::optional(0xfffffffffffffff0ULL));
        QCOMPARE(b->back().message.stats.finish_reason, std::optional(FinishReason::Cancelled));
        QCOMPARE(b->back().message.stats.reasoning_ms, std::optional(1234.5));
        QCOMPARE(b->back().message.stats.messages_dropped, std::optional<std::int64_t>(6));
        QCOMPARE(b->back().message.stats.prompt_tokens_shifted, std::optional<std::int64_t>(2048));
        QCOMPARE(b->back().message.stats.prompt_tokens_loaded, std::optional<std::int64_t>(9));
        QCOMPARE(b->back().message.stats.draft_tokens, std::optional<std::int64_t>(70));
        QCOMPARE(b->back().message.stats.draft_accepted, std::optional<std::int64_t>(52));
        QCOMPARE(b->back().message.stats.error,
                 std::optional(QStringLiteral("the forward pass failed: \"quoted\", ünïcode")));
        auto personas = store_->personas();
        HEARTH_CHECK(personas);
        QCOMPARE(personas->size(), std::size_t{1});
        // In the file: the seed as a decimal string, the reason by name.
        const QJsonObject stats =
            exported[QStringLiteral("messages")][2][QStringLiteral("stats")].toObject();
        QCOMPARE(stats[QStringLiteral("seed")].toString(), QStringLiteral("18446744073709551600"));
        QCOMPARE(stats[QStringLiteral("finish_reason")].toString(), QStringLiteral("cancelled"));
    }

    // An export from before schema v5 has no penalties, persona sampling, seed or finish
    // reason: it imports, and they read as empty.
    void old_exports_without_the_new_fields_import() {
        QJsonObject root = QJsonDocument::fromJson(json_).object();
        QJsonObject conv = root[QStringLiteral("conversation")].toObject();
        QJsonObject sampling = conv[QStringLiteral("sampling")].toObject();
        sampling.remove(QStringLiteral("frequency_penalty"));
        sampling.remove(QStringLiteral("presence_penalty"));
        conv[QStringLiteral("sampling")] = sampling;
        root[QStringLiteral("conversation")] = conv;
        QJsonObject persona = root[QStringLiteral("persona")].toObject();
        persona.remove(QStringLiteral("sampling"));
        persona[QStringLiteral("name")] = QStringLiteral("Old Ada");  // not reused: a new one
        root[QStringLiteral("persona")] = persona;
        edit_message(root, 2, [](QJsonObject& m) {
            QJsonObject stats = m[QStringLiteral("stats")].toObject();
            stats.remove(QStringLiteral("seed"));
            stats.remove(QStringLiteral("finish_reason"));
            m[QStringLiteral("stats")] = stats;
        });
        auto id = store_->import_json(QJsonDocument(root).toJson());
        HEARTH_CHECK(id);
        auto c = store_->conversation(*id);
        HEARTH_CHECK(c);
        QVERIFY(!c->sampling.frequency_penalty && !c->sampling.presence_penalty);
        QCOMPARE(c->sampling.top_k, std::optional(50));
        auto p = store_->persona(c->persona_id.value_or(0));
        HEARTH_CHECK(p);
        QCOMPARE(p->name, QStringLiteral("Old Ada"));
        QCOMPARE(p->sampling, SamplingSettings{});
        auto thread = store_->active_thread(*id);
        HEARTH_CHECK(thread);
        QVERIFY(!thread->back().message.stats.seed);
        QVERIFY(!thread->back().message.stats.finish_reason);
        QCOMPARE(thread->back().message.stats.generated_tokens, std::optional<std::int64_t>(3));
        HEARTH_CHECK(store_->delete_conversation(*id));
        HEARTH_CHECK(store_->delete_persona(p->id));
    }

    // A seed written by hand as a number is taken too.
    void a_numeric_seed_imports() {
        QJsonObject root = QJsonDocument::fromJson(json_).object();
        edit_message(root, 2, [](QJsonObject& m) {
            QJsonObject stats = m[QStringLiteral("stats")].toObject();
            stats[QStringLiteral("seed")] = 42;
            m[QStringLiteral("stats")] = stats;
        });
        auto id = store_->import_json(QJsonDocument(root).toJson());
        HEARTH_CHECK(id);
        auto thread = store_->active_thread(*id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->back().message.stats.seed, std::optional<std::uint64_t>(42));
        HEARTH_CHECK(store_->delete_conversation(*id));
    }

    void import_into_another_history() {
        auto other = Store::open(dir_.filePath(QStringLiteral("other.sqlite3")));
        HEARTH_CHECK(other);
        auto id = other->import_json(json_);
        HEARTH_CHECK(id);
        auto c = other->conversation(*id);
        HEARTH_CHECK(c);
        QVERIFY(!c->model_id);  // unknown here: no model record is invented from a file
        auto models = other->models();
        HEARTH_CHECK(models);
        QVERIFY(models->empty());
        auto p = other->persona(c->persona_id.value_or(0));
        HEARTH_CHECK(p);
        QCOMPARE(p->system_prompt, QStringLiteral("You are Ada.\nAnswer briefly."));
        // A persona created by the import carries its sampling settings.
        QCOMPARE(p->sampling.temperature, std::optional(0.5));
        QCOMPARE(p->sampling.frequency_penalty, std::optional(0.25));
        QCOMPARE(p->sampling.seed, std::optional<std::int64_t>(-7));
        QCOMPARE(p->sampling.max_tokens, std::optional(300));
        QVERIFY(!p->sampling.top_p);
        auto hits = other->search(QStringLiteral("page"));
        HEARTH_CHECK(hits);
        QCOMPARE(hits->size(), std::size_t{1});
    }

    void bad_imports_are_refused_data() {
        QTest::addColumn<Mutation>("mutate");
        QTest::addColumn<QString>("expected");
        const auto set = [](const char* key, QJsonValue v) {
            return Mutation([key, v](QJsonObject& o) { o[QLatin1String(key)] = v; });
        };
        const auto msg = [](int i, const char* key, QJsonValue v) {
            return Mutation([i, key, v](QJsonObject& o) {
                edit_message(o, i, [&](QJsonObject& m) { m[QLatin1String(key)] = v; });
            });
        };
        QTest::addRow("wrong format") << set("format", QStringLiteral("something.else"))
                                      << "not a Hearth conversation export";
        QTest::addRow("newer version") << set("version", 2) << "newer version of Hearth";
        QTest::addRow("fractional version") << set("version", 1.5) << "version";
        QTest::addRow("no conversation")
            << Mutation([](QJsonObject& o) { o.remove(QStringLiteral("conversation")); })
            << "conversation is missing";
        QTest::addRow("messages not a list")
            << set("messages", QStringLiteral("none")) << "messages must be an array";
        QTest::addRow("forward parent") << msg(0, "parent", 2) << "messages[0].parent";
        QTest::addRow("self parent") << msg(1, "parent", 1) << "messages[1].parent";
        QTest::addRow("negative parent") << msg(1, "parent", -1) << "messages[1].parent";
        QTest::addRow("unknown role")
            << msg(1, "role", QStringLiteral("tool")) << "messages[1].role";
        QTest::addRow("text not a string")
            << msg(1, "text", 5) << "messages[1].text must be a string";
        QTest::addRow("bad time") << msg(0, "created_at", QStringLiteral("yesterday"))
                                  << "messages[0].created_at";
        QTest::addRow("token too big")
            << msg(0, "tokens",
                   QJsonObject{{"fingerprint", "ab"}, {"ids", QJsonArray{2147483648.0}}})
            << "32 bits";
        QTest::addRow("token fraction")
            << msg(0, "tokens", QJsonObject{{"fingerprint", "ab"}, {"ids", QJsonArray{1.5}}})
            << "32 bits";
        QTest::addRow("token not a number")
            << msg(0, "tokens", QJsonObject{{"ids", QJsonArray{"1"}}}) << "32 bits";
        QTest::addRow("bad fingerprint")
            << msg(0, "tokens", QJsonObject{{"fingerprint", "$(rm -rf ~)"}}) << "hexadecimal";
        QTest::addRow("negative stats")
            << msg(2, "stats", QJsonObject{{"ttft_ms", -1}}) << "negative";
        const auto stat = [&](const char* key, QJsonValue v) {
            return Mutation([key, v](QJsonObject& o) {
                edit_message(o, 2, [&](QJsonObject& m) {
                    QJsonObject s = m[QStringLiteral("stats")].toObject();
                    s[QLatin1String(key)] = v;
                    m[QStringLiteral("stats")] = s;
                });
            });
        };
        QTest::addRow("unknown finish reason")
            << stat("finish_reason", QStringLiteral("bored")) << "messages[2].stats.finish_reason";
        QTest::addRow("negative seed") << stat("seed", QStringLiteral("-1")) << "stats.seed";
        QTest::addRow("negative reasoning time") << stat("reasoning_ms", -5) << "messages[2].stats";
        QTest::addRow("negative shifted tokens")
            << stat("prompt_tokens_shifted", -5) << "messages[2].stats";
        QTest::addRow("error not a string") << stat("error", 42) << "messages[2].stats.error";
        QTest::addRow("thinking not a bool") << Mutation([](QJsonObject& o) {
            QJsonObject c = o[QStringLiteral("conversation")].toObject();
            c[QStringLiteral("sampling")] = QJsonObject{{"thinking", "no"}};
            o[QStringLiteral("conversation")] = c;
        }) << "sampling.thinking";
        QTest::addRow("stop not a list") << Mutation([](QJsonObject& o) {
            QJsonObject c = o[QStringLiteral("conversation")].toObject();
            c[QStringLiteral("sampling")] = QJsonObject{{"stop", "###"}};
            o[QStringLiteral("conversation")] = c;
        }) << "sampling.stop";
        QTest::addRow("empty stop string") << Mutation([](QJsonObject& o) {
            QJsonObject c = o[QStringLiteral("conversation")].toObject();
            c[QStringLiteral("sampling")] = QJsonObject{{"stop", QJsonArray{QString()}}};
            o[QStringLiteral("conversation")] = c;
        }) << "stop string";
        QTest::addRow("seed not digits") << stat("seed", QStringLiteral("0x10")) << "stats.seed";
        QTest::addRow("seed past 64 bits")
            << stat("seed", QStringLiteral("18446744073709551616")) << "stats.seed";
        QTest::addRow("fractional seed") << stat("seed", 1.5) << "stats.seed";
        QTest::addRow("big penalty") << Mutation([](QJsonObject& o) {
            QJsonObject c = o[QStringLiteral("conversation")].toObject();
            c[QStringLiteral("sampling")] = QJsonObject{{"presence_penalty", 3}};
            o[QStringLiteral("conversation")] = c;
        }) << "presence penalty";
        QTest::addRow("persona sampling") << Mutation([](QJsonObject& o) {
            QJsonObject p = o[QStringLiteral("persona")].toObject();
            p[QStringLiteral("sampling")] = QJsonObject{{"top_p", 2}};
            o[QStringLiteral("persona")] = p;
        }) << "persona.sampling";
        QTest::addRow("hot sampling") << Mutation([](QJsonObject& o) {
            QJsonObject c = o[QStringLiteral("conversation")].toObject();
            c[QStringLiteral("sampling")] = QJsonObject{{"temperature", 99}};
            o[QStringLiteral("conversation")] = c;
        }) << "temperature";
        QTest::addRow("avatar path") << Mutation([](QJsonObject& o) {
            QJsonObject p = o[QStringLiteral("persona")].toObject();
            p[QStringLiteral("avatar")] = QStringLiteral("/etc/passwd");
            o[QStringLiteral("persona")] = p;
        }) << "avatar";
        QTest::addRow("model fingerprint")
            << set("model", QJsonObject{{"fingerprint", "zz"}}) << "model.fingerprint";
        QTest::addRow("leaf out of range") << set("active_leaf", 3) << "active_leaf";
    }
    void bad_imports_are_refused() {
        QFETCH(Mutation, mutate);
        QFETCH(QString, expected);
        QJsonObject root = QJsonDocument::fromJson(json_).object();
        mutate(root);
        auto before = store_->database().query_int(
            "SELECT (SELECT count(*) FROM conversations) * 1000000 + (SELECT count(*) FROM "
            "messages) + (SELECT count(*) FROM personas) * 1000");
        HEARTH_CHECK(before);
        HEARTH_CHECK_ERROR(store_->import_json(QJsonDocument(root).toJson()), expected);
        auto after = store_->database().query_int(
            "SELECT (SELECT count(*) FROM conversations) * 1000000 + (SELECT count(*) FROM "
            "messages) + (SELECT count(*) FROM personas) * 1000");
        HEARTH_CHECK(after);
        QCOMPARE(*after, *before);
    }

    void not_json_at_all() {
        HEARTH_CHECK_ERROR(store_->import_json("{\"format\": "), "not valid JSON");
        HEARTH_CHECK_ERROR(store_->import_json("[1, 2]"), "must be an object");
        HEARTH_CHECK_ERROR(store_->import_json(QByteArray(kMaxImportBytes + 1, ' ')), "too large");
    }

    void streaming_is_imported_as_interrupted() {
        QJsonObject root = QJsonDocument::fromJson(json_).object();
        edit_message(root, 2, [](QJsonObject& m) {
            m[QStringLiteral("state")] = QStringLiteral("streaming");
        });
        auto id = store_->import_json(QJsonDocument(root).toJson());
        HEARTH_CHECK(id);
        auto thread = store_->active_thread(*id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->back().message.state, MessageState::Interrupted);
    }

    void export_paths_are_validated() {
        const QString db = store_->path();
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Json, dir_.path(), false),
                           "is a folder");
        HEARTH_CHECK_ERROR(
            store_->export_to_file(conv_, ExportFormat::Json,
                                   dir_.filePath(QStringLiteral("no/such/dir/x.json")), false),
            "does not exist");
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Json, db, true),
                           "database itself");
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Json, db + "-wal", true),
                           "database itself");
        const QString link = dir_.filePath(QStringLiteral("sneaky.json"));
        QVERIFY(QFile::link(db, link));
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Json, link, true),
                           "database itself");
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Markdown,
                                                  QStringLiteral("/dev/null"), true),
                           "not a regular file");
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Json, QString(), false),
                           "no file");
        const QString dangling = dir_.filePath(QStringLiteral("dangling.md"));
        QVERIFY(QFile::link(dir_.filePath(QStringLiteral("nowhere")), dangling));
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Markdown, dangling, true),
                           "not a regular file");

        const QString target = dir_.filePath(QStringLiteral("out.json"));
        HEARTH_CHECK(store_->export_to_file(conv_, ExportFormat::Json, target, false));
        QCOMPARE(without_export_time(read_all(target)), without_export_time(json_));
        HEARTH_CHECK_ERROR(store_->export_to_file(conv_, ExportFormat::Markdown, target, false),
                           "already exists");
        QVERIFY(read_all(target).startsWith('{'));  // untouched by the refused export
        HEARTH_CHECK(store_->export_to_file(conv_, ExportFormat::Markdown, target, true));
        QVERIFY(read_all(target).startsWith('#'));

        // Relative paths are taken from the current folder.
        const QString cwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(dir_.path()));
        auto relative = validate_export_path(QStringLiteral("sub/../rel.md"), db, false);
        QDir::setCurrent(cwd);
        HEARTH_CHECK(relative);
        QCOMPARE(*relative, dir_.filePath(QStringLiteral("rel.md")));
    }

    void import_paths_are_validated() {
        HEARTH_CHECK_ERROR(store_->import_file(dir_.filePath(QStringLiteral("missing.json"))),
                           "does not exist");
        HEARTH_CHECK_ERROR(store_->import_file(dir_.path()), "not a regular file");
        HEARTH_CHECK_ERROR(store_->import_file(store_->path()), "database itself");
        HEARTH_CHECK_ERROR(store_->import_file(QStringLiteral("/dev/zero")), "not a regular file");
        const QString huge = dir_.filePath(QStringLiteral("huge.json"));
        {
            QFile f(huge);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(kMaxImportBytes + 1));  // sparse: costs no disk
        }
        HEARTH_CHECK_ERROR(store_->import_file(huge), "too large");
        const QString good = dir_.filePath(QStringLiteral("good.json"));
        QVERIFY(write_all(good, json_));
        auto id = store_->import_file(good);
        HEARTH_CHECK(id);
        const QString bad = dir_.filePath(QStringLiteral("bad.json"));
        QVERIFY(write_all(bad, "not json"));
        HEARTH_CHECK_ERROR(store_->import_file(bad), "bad.json");
    }
};

QTEST_GUILESS_MAIN(TestStoreExchange)
#include "tst_store_exchange.moc"
