// Layouts that change with the window and the language, in the real window offscreen
// (software renderer, synthetic model): a narrow window (700 and 560 px) keeps the chat
// list out of the way until asked for and fits its status bar; the interface in German,
// chosen in Settings, changes at once and its longer words fit (decimals written 0,70); a
// control's hover highlight never lands at the window's top-left corner (Qt's software
// renderer put Material's ripple there: window_setup.cpp).
#include <QGuiApplication>
#include <QQmlContext>
#include <QSettings>
#include <QTest>

#include "core/conversation_list_model.h"
#include "ui_harness.h"

class TestUiLayout : public QObject {
    Q_OBJECT
    UiHarness ui_;

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        QVERIFY2(ui_.start(QStringLiteral("light"), &error), qPrintable(error));
    }

    // A narrow window (700 px, 560 px): the chat list stays out of the way until asked for
    // (☰, Ctrl+B) and goes once a chat is chosen; the status bar's items all fit (they
    // were cut at the window's edge: "3 co…").
    void narrowWindow() {
        const QSize wide = ui_.window->size();
        ui_.show_page(QStringLiteral("chat"));
        if (ui_.conversations->count() == 0) {
            ui_.conversations->createConversation(-1, QStringLiteral("Narrow"));
            QTRY_VERIFY(ui_.conversations->count() > 0);
        }
        QQuickItem* sidebar = ui_.item(QStringLiteral("sidebar"));
        QVERIFY(sidebar && sidebar->isVisible());
        QVERIFY(!ui_.visible_item(QStringLiteral("sidebarToggle")));
        for (int width : {700, 560}) {
            ui_.window->resize(width, 600);
            QTRY_VERIFY(!sidebar->isVisible());
            QQuickItem* bar = ui_.item(QStringLiteral("statusBar"));
            QVERIFY(bar);
            QTRY_COMPARE(bar->width(), qreal(width));
            QVERIFY(ui_.settle());
            for (const char* name : {"statusModel", "statusSpeed", "statusKv", "statusHits",
                                     "statusResident", "statusApiServer"}) {
                QQuickItem* it = ui_.item(QLatin1String(name));
                if (!it || !it->isVisible()) continue;
                const qreal right = it->mapToItem(bar, QPointF(it->width(), 0)).x();
                // (The model's name may be elided: its tooltip has it whole.)
                const bool elidable = QLatin1String(name) == QLatin1String("statusModel");
                QVERIFY2(
                    right <= bar->width() && (elidable || it->width() >= it->implicitWidth() - 0.5),
                    qPrintable(QStringLiteral("%1 at %2 px: right edge %3, width %4 of %5")
                                   .arg(QLatin1String(name))
                                   .arg(width)
                                   .arg(right)
                                   .arg(it->width())
                                   .arg(it->implicitWidth())));
            }
            QVERIFY(ui_.screenshot(QStringLiteral("narrow-%1").arg(width)));
        }
        QVERIFY(ui_.click(QStringLiteral("sidebarToggle")));
        QTRY_VERIFY(sidebar->isVisible());
        QVERIFY(ui_.click(QStringLiteral("conversationRow_0")));
        QTRY_VERIFY(!sidebar->isVisible());
        ui_.key(Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(sidebar->isVisible());
        ui_.key(Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(!sidebar->isVisible());
        ui_.window->resize(wide);
        QTRY_VERIFY(sidebar->isVisible());
        // In a wide window Ctrl+B hides it and brings it back.
        ui_.key(Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(!sidebar->isVisible());
        QVERIFY(ui_.visible_item(QStringLiteral("sidebarToggle")));
        ui_.key(Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(sidebar->isVisible());
    }

    // Dark theme, the pointer over the theme ComboBox: the window's top-left corner does not
    // change (a light copy of the control's ripple appeared there behind "Hearth").
    void hoverHighlightStaysOnItsControl() {
        ui_.set_theme(QStringLiteral("dark"));
        ui_.show_page(QStringLiteral("settings"));
        QQuickItem* combo = ui_.visible_item(QStringLiteral("themeCombo"));
        QVERIFY(combo);
        QTest::mouseMove(ui_.window, QPoint(ui_.window->width() / 2, ui_.window->height() - 4));
        QVERIFY(ui_.settle());
        const QRect corner(0, 0, 220, 64);
        const QImage before = ui_.window->grabWindow().copy(corner);
        const QPointF centre = combo->mapToScene(QPointF(combo->width() / 2, combo->height() / 2));
        QTest::mouseMove(ui_.window, centre.toPoint());
        QTRY_VERIFY(combo->property("hovered").toBool());
        QVERIFY(ui_.settle());
        QVERIFY(ui_.screenshot(QStringLiteral("hover-dark")));
        const QImage after = ui_.window->grabWindow().copy(corner);
        int changed = 0;
        for (int y = 0; y < corner.height(); ++y)
            for (int x = 0; x < corner.width(); ++x)
                changed += before.pixel(x, y) != after.pixel(x, y);
        QCOMPARE(changed, 0);
        QTest::mouseMove(ui_.window, QPoint(ui_.window->width() / 2, ui_.window->height() - 4));
        ui_.set_theme(QStringLiteral("light"));
    }

    // German, chosen in Settings: the words change at once (no restart), the choice is
    // saved, keys are named as a German keyboard names them, and the longer words fit
    // (the rail widens for "Einstellungen", the status bar still fits at 700 px).
    void germanInterface() {
        ui_.show_page(QStringLiteral("settings"));
        QObject* translator =
            qvariant_cast<QObject*>(ui_.engine->rootContext()->contextProperty("uiTranslator"));
        QVERIFY(translator);
        QVERIFY(prop(translator, "available").toStringList().contains(QStringLiteral("de")));
        QQuickItem* combo = ui_.item(QStringLiteral("languageCombo"));
        QVERIFY(combo && combo->isVisible());
        const QStringList codes = prop(combo, "codes").toStringList();
        const int german = static_cast<int>(codes.indexOf(QStringLiteral("de")));
        QVERIFY(german > 0);
        QCOMPARE(prop(combo, "model").toStringList().value(german), QStringLiteral("Deutsch"));
        QMetaObject::invokeMethod(combo, "activated", Q_ARG(int, german));
        QTRY_COMPARE(prop(translator, "current").toString(), QStringLiteral("de"));
        QObject* settings = ui_.window->findChild<QObject*>(QStringLiteral("settings"));
        QVERIFY(settings);
        QCOMPARE(prop(settings, "language").toString(), QStringLiteral("de"));
        QCOMPARE(QSettings(prop(settings, "fileName").toString(), QSettings::IniFormat)
                     .value(QStringLiteral("appearance/language"))
                     .toString(),
                 QStringLiteral("de"));
        QQuickItem* settings_nav = ui_.item(QStringLiteral("navSettings"));
        QQuickItem* caption = ui_.visible_item(QStringLiteral("navCaption"), settings_nav);
        QTRY_COMPARE(prop(caption, "text").toString(), QStringLiteral("Einstellungen"));
        QVERIFY(ui_.settle());
        // Every caption inside its button, every button inside the rail.
        QQuickItem* rail = ui_.item(QStringLiteral("navRail"));
        for (QQuickItem* c : ui_.items(QStringLiteral("navCaption"))) {
            QQuickItem* button = c->parentItem()->parentItem();
            const QRectF in_button =
                c->mapRectToItem(button, QRectF(0, 0, c->width(), c->height()));
            QVERIFY2(in_button.left() >= 0 && in_button.right() <= button->width(),
                     qPrintable(prop(c, "text").toString()));
            const QRectF in_rail =
                button->mapRectToItem(rail, QRectF(0, 0, button->width(), button->height()));
            QVERIFY2(in_rail.left() >= 0 && in_rail.right() <= rail->width(),
                     qPrintable(prop(c, "text").toString()));
        }
        QString keys;
        QMetaObject::invokeMethod(translator, "keyText", Q_RETURN_ARG(QString, keys),
                                  Q_ARG(QString, QStringLiteral("Ctrl+N")));
        QCOMPARE(keys, QStringLiteral("Strg+N"));
        // Decimals as German writes them ("0,70", not "0.70").
        const QString temperature =
            prop(ui_.item(QStringLiteral("temperatureValue")), "text").toString();
        QVERIFY2(temperature.contains(QLatin1Char(',')) && !temperature.contains(QLatin1Char('.')),
                 qPrintable(temperature));
        QVERIFY(ui_.screenshot(QStringLiteral("settings-de")));
        ui_.show_page(QStringLiteral("chat"));
        QVERIFY(ui_.screenshot(QStringLiteral("chat-de")));
        // The status bar's short German forms fit a narrow window.
        const QSize wide = ui_.window->size();
        ui_.window->resize(700, 600);
        QQuickItem* bar = ui_.item(QStringLiteral("statusBar"));
        QTRY_COMPARE(bar->width(), qreal(700));
        QVERIFY(ui_.settle());
        for (const char* name : {"statusSpeed", "statusKv", "statusHits", "statusResident"}) {
            QQuickItem* it = ui_.item(QLatin1String(name));
            if (!it || !it->isVisible()) continue;
            QVERIFY2(it->mapToItem(bar, QPointF(it->width(), 0)).x() <= bar->width(), name);
        }
        QVERIFY(ui_.screenshot(QStringLiteral("narrow-de")));
        ui_.window->resize(wide);
        // Back to English.
        QMetaObject::invokeMethod(translator, "apply", Q_RETURN_ARG(QString, keys),
                                  Q_ARG(QString, QStringLiteral("en")));
        settings->setProperty("language", QString());
        QTRY_COMPARE(prop(caption, "text").toString(), QStringLiteral("Settings"));
        QTRY_VERIFY(prop(ui_.item(QStringLiteral("temperatureValue")), "text")
                        .toString()
                        .contains(QLatin1Char('.')));
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    // Controls follow the pointer as on a desktop (off by default without a mouse device).
    qputenv("QT_QUICK_CONTROLS_HOVER_ENABLED", "1");
    QGuiApplication app(argc, argv);
    TestUiLayout t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui_layout.moc"
