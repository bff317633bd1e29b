// ModelDownloader and AppSettings are QML types of Hearth.Core (registered through
// QML_ELEMENT although app/CMakeLists.txt adds their sources after qt_add_qml_module).
#include <QQmlComponent>
#include <QQmlEngine>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>

#include <memory>

#include "core/app_settings.h"
#include "core/model_downloader.h"

Q_IMPORT_QML_PLUGIN(HearthCorePlugin)

class TestCoreQmlTypes : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.path());
        QCoreApplication::setApplicationName(QStringLiteral("HearthQmlTypesTest"));
    }

    void downloader() {
        QQmlEngine engine;
        QQmlComponent component(&engine);
        component.setData(
            QByteArrayLiteral("import QtQml\n"
                              "import Hearth.Core\n"
                              "ModelDownloader {\n"
                              "  modelsDir: \"") +
                dir_.path().toUtf8() +
                QByteArrayLiteral(
                    "\"\n"
                    "  property bool idle: state === ModelDownloader.Idle\n"
                    "  property string name: fileNameFor(\"https://x.org/a/m.gguf?y=1\")\n"
                    "}\n"),
            QUrl(QStringLiteral("qrc:/test.qml")));
        std::unique_ptr<QObject> object(component.create());
        QVERIFY2(object, qPrintable(component.errorString()));
        auto* d = qobject_cast<ModelDownloader*>(object.get());
        QVERIFY(d);
        QCOMPARE(d->modelsDir(), dir_.path());
        QCOMPARE(object->property("idle").toBool(), true);
        QCOMPARE(object->property("name").toString(), QStringLiteral("m.gguf"));
        QCOMPARE(object->property("progress").toDouble(), 0.0);
    }

    void settings() {
        QQmlEngine engine;
        QQmlComponent component(&engine);
        component.setData(
            "import QtQml\n"
            "import Hearth.Core\n"
            "AppSettings { temperature: 7; backend: \"cuda\" }\n",
            QUrl(QStringLiteral("qrc:/settings.qml")));
        std::unique_ptr<QObject> object(component.create());
        QVERIFY2(object, qPrintable(component.errorString()));
        auto* s = qobject_cast<AppSettings*>(object.get());
        QVERIFY(s);
        QCOMPARE(s->temperature(), 2.0);  // clamped
        QCOMPARE(s->backend(), QStringLiteral("cuda"));
        QCOMPARE(object->property("effectiveBackend").toString(), QStringLiteral("cpu"));
        QVERIFY(s->fileName().startsWith(dir_.path()));
    }

  private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestCoreQmlTypes)
#include "tst_core_qml_types.moc"
