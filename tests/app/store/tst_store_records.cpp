// Personas, models, settings and conversations: saving, listing, validation, deletion.
#include <QTest>

#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

class TestStoreRecords : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    int n_ = 0;

  private slots:
    void init() {
        auto store = Store::open(dir_.filePath(QStringLiteral("records-%1.sqlite3").arg(++n_)));
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
    }
    void cleanup() { store_.reset(); }

    void personas_round_trip() {
        Persona p;
        p.name = QStringLiteral("  Zed  ");
        p.system_prompt = QStringLiteral("You are terse.\nVery terse.");
        p.keep_warm = true;
        p.color = QStringLiteral("#A0B1C2");
        p.avatar = QStringLiteral("\U0001F98A");
        auto zed = store_->create_persona(p);
        HEARTH_CHECK(zed);
        QCOMPARE(zed->name, QStringLiteral("Zed"));  // trimmed
        QCOMPARE(zed->color, QStringLiteral("#a0b1c2"));
        QVERIFY(zed->keep_warm);
        QCOMPARE(zed->avatar, p.avatar);
        QVERIFY(zed->created_at.isValid());
        p.name = QStringLiteral("amy");
        p.keep_warm = false;
        HEARTH_CHECK(store_->create_persona(p));
        auto all = store_->personas();
        HEARTH_CHECK(all);
        QCOMPARE(all->size(), std::size_t{2});
        QCOMPARE(all->at(0).name, QStringLiteral("amy"));  // by name, ignoring case

        zed->system_prompt = QStringLiteral("changed");
        HEARTH_CHECK(store_->update_persona(*zed));
        auto again = store_->persona(zed->id);
        HEARTH_CHECK(again);
        QCOMPARE(again->system_prompt, QStringLiteral("changed"));
        HEARTH_CHECK(store_->delete_persona(zed->id));
        HEARTH_CHECK_ERROR(store_->persona(zed->id), "no persona");
        HEARTH_CHECK_ERROR(store_->delete_persona(zed->id), "no persona");
    }

    // A persona's own sampling settings: every field, created, read, updated and cleared.
    void persona_sampling_round_trip() {
        Persona p;
        p.name = QStringLiteral("Tuned");
        auto plain = store_->create_persona(p);
        HEARTH_CHECK(plain);
        QCOMPARE(plain->sampling, SamplingSettings{});  // nothing set: the app's defaults
        SamplingSettings s;
        s.temperature = 0.3;
        s.top_p = 0.8;
        s.min_p = 0.1;
        s.top_k = 20;
        s.repeat_penalty = 1.1;
        s.frequency_penalty = 0.4;
        s.presence_penalty = -0.6;
        s.seed = -(1LL << 62);
        s.max_tokens = 128;
        p.name = QStringLiteral("Tuned too");
        p.sampling = s;
        auto tuned = store_->create_persona(p);
        HEARTH_CHECK(tuned);
        QCOMPARE(tuned->sampling, s);
        auto all = store_->personas();
        HEARTH_CHECK(all);
        QCOMPARE(all->back().sampling, s);  // "Tuned too" sorts after "Tuned"
        plain->sampling.presence_penalty = 1.5;
        plain->sampling.max_tokens = 64;
        HEARTH_CHECK(store_->update_persona(*plain));
        auto back = store_->persona(plain->id);
        HEARTH_CHECK(back);
        QCOMPARE(back->sampling, plain->sampling);
        tuned->sampling = {};
        HEARTH_CHECK(store_->update_persona(*tuned));
        back = store_->persona(tuned->id);
        HEARTH_CHECK(back);
        QCOMPARE(back->sampling, SamplingSettings{});
        QCOMPARE(back->name, QStringLiteral("Tuned too"));
    }

    void persona_validation() {
        Persona p;
        HEARTH_CHECK_ERROR(store_->create_persona(p), "needs a name");
        p.name = QStringLiteral("x");
        p.color = QStringLiteral("red");
        HEARTH_CHECK_ERROR(store_->create_persona(p), "colour");
        p.color.clear();
        p.avatar = QStringLiteral("../../etc/passwd");
        HEARTH_CHECK_ERROR(store_->create_persona(p), "avatar");
        p.avatar.clear();
        p.sampling.frequency_penalty = 2.5;
        HEARTH_CHECK_ERROR(store_->create_persona(p), "persona's sampling settings");
        HEARTH_CHECK_ERROR(store_->create_persona(p), "frequency penalty");
        p.sampling.frequency_penalty.reset();
        p.sampling.top_p = 1.5;
        HEARTH_CHECK_ERROR(store_->create_persona(p), "top-p");
    }

    void models_upsert_and_order() {
        auto a = store_->upsert_model(QStringLiteral("/m/a.gguf"), QStringLiteral("AA11"),
                                      QStringLiteral("A"));
        HEARTH_CHECK(a);
        QCOMPARE(a->fingerprint, QStringLiteral("aa11"));
        auto b = store_->upsert_model(QStringLiteral("/m/b.gguf"), QStringLiteral("bb22"),
                                      QStringLiteral("B"));
        HEARTH_CHECK(b);
        // The same fingerprint at a new path is the same model, moved.
        auto moved = store_->upsert_model(QStringLiteral("/new/a.gguf"), QStringLiteral("aa11"),
                                          QStringLiteral("A2"));
        HEARTH_CHECK(moved);
        QCOMPARE(moved->id, a->id);
        QCOMPARE(moved->path, QStringLiteral("/new/a.gguf"));
        HEARTH_CHECK(store_->touch_model(b->id));
        auto all = store_->models();
        HEARTH_CHECK(all);
        QCOMPARE(all->size(), std::size_t{2});
        QCOMPARE(all->at(0).id, b->id);  // used most recently
        QVERIFY(all->at(0).last_used_at.has_value());
        QVERIFY(!all->at(1).last_used_at.has_value());
        HEARTH_CHECK_ERROR(
            store_->upsert_model(QStringLiteral("/m/c"), QStringLiteral("not hex!"), {}),
            "hexadecimal");
        auto found = store_->model_by_fingerprint(QStringLiteral("BB22"));
        HEARTH_CHECK(found);
        QVERIFY(found->has_value());

        Conversation c = titled(QStringLiteral("uses b"));
        c.model_id = b->id;
        auto conv = store_->create_conversation(c);
        HEARTH_CHECK(conv);
        HEARTH_CHECK(store_->delete_model(b->id));
        auto after = store_->conversation(conv->id);
        HEARTH_CHECK(after);
        QVERIFY(!after->model_id);  // SET NULL: the conversation stays
    }

    void settings() {
        auto missing = store_->setting(QStringLiteral("k"));
        HEARTH_CHECK(missing);
        QVERIFY(!missing->has_value());
        HEARTH_CHECK(store_->set_setting(QStringLiteral("k"), QStringLiteral("1")));
        HEARTH_CHECK(store_->set_setting(QStringLiteral("k"), QStringLiteral("2")));
        auto value = store_->setting(QStringLiteral("k"));
        HEARTH_CHECK(value);
        QCOMPARE(value->value_or(QString()), QStringLiteral("2"));
        HEARTH_CHECK(store_->remove_setting(QStringLiteral("k")));
        value = store_->setting(QStringLiteral("k"));
        HEARTH_CHECK(value);
        QVERIFY(!value->has_value());
        HEARTH_CHECK_ERROR(store_->set_setting({}, QStringLiteral("x")), "needs a name");
    }

    void conversation_settings_round_trip() {
        Conversation c = titled(QStringLiteral("tuned"));
        c.sampling.temperature = 0.25;
        c.sampling.top_k = 40;
        c.sampling.seed = -9'000'000'000'000LL;
        c.sampling.max_tokens = 512;
        c.sampling.frequency_penalty = 0.75;
        c.sampling.presence_penalty = -1.25;
        auto made = store_->create_conversation(c);
        HEARTH_CHECK(made);
        QCOMPARE(made->sampling, c.sampling);
        QVERIFY(!made->pinned);
        made->sampling.top_p = 0.9;
        made->pinned = true;
        HEARTH_CHECK(store_->update_conversation(*made));
        auto back = store_->conversation(made->id);
        HEARTH_CHECK(back);
        QCOMPARE(back->sampling.top_p, std::optional<double>(0.9));
        QCOMPARE(back->sampling.frequency_penalty, std::optional<double>(0.75));
        QCOMPARE(back->sampling.presence_penalty, std::optional<double>(-1.25));
        QCOMPARE(back->sampling, made->sampling);
        QVERIFY(back->pinned);
        made->sampling.presence_penalty = -2.5;
        HEARTH_CHECK_ERROR(store_->update_conversation(*made), "presence penalty");
        made->sampling.presence_penalty.reset();
        made->sampling.frequency_penalty = std::nan("");
        HEARTH_CHECK_ERROR(store_->update_conversation(*made), "frequency penalty");
        made->sampling.frequency_penalty.reset();
        made->sampling.temperature = 11;
        HEARTH_CHECK_ERROR(store_->update_conversation(*made), "temperature");
        made->sampling.temperature = std::nan("");
        HEARTH_CHECK_ERROR(store_->update_conversation(*made), "temperature");
        HEARTH_CHECK_ERROR(store_->rename_conversation(made->id, QString(501, QLatin1Char('x'))),
                           "500");
        Conversation orphan = titled(QStringLiteral("bad persona"));
        orphan.persona_id = 999;
        HEARTH_CHECK_ERROR(store_->create_conversation(orphan), "persona or model");
    }

    void list_order_and_filters() {
        std::vector<Id> ids;
        qint64 last_created = 0;
        for (int i = 0; i < 4; ++i) {
            auto c = store_->create_conversation(titled(QStringLiteral("c%1").arg(i)));
            HEARTH_CHECK(c);
            ids.push_back(c->id);
            last_created = c->updated_at.toMSecsSinceEpoch();
        }
        // Updated order: a message makes c0 the most recent; c2 is pinned; c3 archived.
        // Times are in milliseconds: the message must come after the clock has moved on.
        QTRY_VERIFY(QDateTime::currentMSecsSinceEpoch() > last_created);
        HEARTH_CHECK(store_->append_message(ids[0], draft(Role::User, QStringLiteral("hi"))));
        HEARTH_CHECK(store_->set_pinned(ids[2], true));
        HEARTH_CHECK(store_->set_archived(ids[3], true));
        auto list = store_->conversations();
        HEARTH_CHECK(list);
        QCOMPARE(list->size(), std::size_t{3});
        QCOMPARE(list->at(0).id, ids[2]);
        QCOMPARE(list->at(1).id, ids[0]);
        QCOMPARE(list->at(2).id, ids[1]);
        ConversationFilter only;
        only.archived = ConversationFilter::Archived::Only;
        list = store_->conversations(only);
        HEARTH_CHECK(list);
        QCOMPARE(list->size(), std::size_t{1});
        QCOMPARE(list->at(0).id, ids[3]);
        ConversationFilter page;
        page.archived = ConversationFilter::Archived::Include;
        page.limit = 2;
        page.offset = 1;
        list = store_->conversations(page);
        HEARTH_CHECK(list);
        QCOMPARE(list->size(), std::size_t{2});
        QCOMPARE(list->at(0).id, ids[0]);
    }

    void deleting_a_conversation_removes_its_messages() {
        auto c = store_->create_conversation(titled(QStringLiteral("doomed")));
        HEARTH_CHECK(c);
        HEARTH_CHECK(store_->append_message(
            c->id, draft(Role::User, QStringLiteral("unforgettable aardvark"))));
        HEARTH_CHECK(
            store_->append_message(c->id, draft(Role::Assistant, QStringLiteral("noted"))));
        auto count = store_->message_count(c->id);
        HEARTH_CHECK(count);
        QCOMPARE(*count, 2);
        HEARTH_CHECK(store_->delete_conversation(c->id));
        auto left = store_->database().query_int("SELECT count(*) FROM messages");
        HEARTH_CHECK(left);
        QCOMPARE(*left, 0);
        auto hits = store_->search(QStringLiteral("aardvark"));
        HEARTH_CHECK(hits);
        QVERIFY(hits->empty());
        HEARTH_CHECK_ERROR(store_->delete_conversation(c->id), "no conversation");
    }

    void deleting_a_persona_keeps_its_conversations() {
        Persona p;
        p.name = QStringLiteral("temp");
        auto persona = store_->create_persona(p);
        HEARTH_CHECK(persona);
        Conversation c = titled(QStringLiteral("with persona"));
        c.persona_id = persona->id;
        auto conv = store_->create_conversation(c);
        HEARTH_CHECK(conv);
        HEARTH_CHECK(store_->append_message(conv->id, draft(Role::User, QStringLiteral("kept"))));
        HEARTH_CHECK(store_->delete_persona(persona->id));
        auto after = store_->conversation(conv->id);
        HEARTH_CHECK(after);
        QVERIFY(!after->persona_id);
        auto count = store_->message_count(conv->id);
        HEARTH_CHECK(count);
        QCOMPARE(*count, 1);
    }
};

QTEST_GUILESS_MAIN(TestStoreRecords)
#include "tst_store_records.moc"
