#include "ui_translator.h"

#include <QCoreApplication>
#include <QDir>
#include <QKeySequence>
#include <QLibraryInfo>
#include <QLocale>
#include <QQmlEngine>
#include <QTranslator>

#include "common/log.h"

namespace hearth::ui {

namespace {

const QString kResourceDir = QStringLiteral(":/i18n");

bool has_translation(const QString& code) {
    return QFile::exists(kResourceDir + QStringLiteral("/hearth_") + code + QStringLiteral(".qm"));
}

// The code to use for a request: itself when there is a file for it (or its language
// without the country: "de_AT" -> "de"); for "": the first of the system's languages
// that has one; else English.
QString resolve(const QString& language) {
    QStringList wanted;
    if (language.isEmpty())
        wanted = QLocale::system().uiLanguages();  // not the default: apply() sets that
    else
        wanted << language;
    for (QString w : wanted) {
        w.replace(QLatin1Char('-'), QLatin1Char('_'));
        if (w.startsWith(QLatin1String("en"))) return QStringLiteral("en");
        if (has_translation(w)) return w;
        const QString base = w.section(QLatin1Char('_'), 0, 0);
        if (has_translation(base)) return base;
    }
    return QStringLiteral("en");
}

}  // namespace

UiTranslator::UiTranslator(QQmlEngine* engine, QObject* parent)
    : QObject(parent), engine_(engine) {}

UiTranslator::~UiTranslator() {
    remove_installed();
}

QStringList UiTranslator::available() {
    QStringList codes{QStringLiteral("en")};
    const QStringList files =
        QDir(kResourceDir).entryList({QStringLiteral("hearth_*.qm")}, QDir::Files, QDir::Name);
    for (const QString& f : files) codes << f.mid(7, f.size() - 7 - 3);  // hearth_<code>.qm
    return codes;
}

QString UiTranslator::nativeName(const QString& code) {
    const QLocale locale(code);
    QString name = locale.nativeLanguageName();
    if (name.isEmpty()) return code;
    name[0] = name[0].toUpper();  // "deutsch" reads as a menu entry: "Deutsch"
    return name;
}

QString UiTranslator::keyText(const QString& portable) {
    const QKeySequence keys(portable, QKeySequence::PortableText);
    return keys.isEmpty() ? portable : keys.toString(QKeySequence::NativeText);
}

void UiTranslator::remove_installed() {
    for (auto& t : installed_) QCoreApplication::removeTranslator(t.get());
    installed_.clear();
}

QString UiTranslator::apply(const QString& language) {
    const QString code = resolve(language);
    remove_installed();
    if (code != QLatin1String("en")) {
        auto own = std::make_unique<QTranslator>();
        if (own->load(QStringLiteral("hearth_") + code, kResourceDir) &&
            QCoreApplication::installTranslator(own.get()))
            installed_.push_back(std::move(own));
        else
            log::get("app")->warn("the {} translation could not be loaded", code.toStdString());
        // Qt's own strings (Ok, Cancel, Close of a dialog's standard buttons).
        const QString qt_dir = QLibraryInfo::path(QLibraryInfo::TranslationsPath);
        for (const QString& part : {QStringLiteral("qtbase_"), QStringLiteral("qtdeclarative_")}) {
            auto qt = std::make_unique<QTranslator>();
            if (qt->load(part + code, qt_dir) && QCoreApplication::installTranslator(qt.get()))
                installed_.push_back(std::move(qt));
        }
    }
    // Numbers and dates follow the language shown (2,5 in German; Qt.locale() is the
    // default locale): the system's own locale when it speaks that language (en_GB keeps
    // its dates), else the language's.
    const QLocale shown(code);
    QLocale::setDefault(QLocale::system().language() == shown.language() ? QLocale::system()
                                                                         : shown);
    if (code != current_) {
        current_ = code;
        emit currentChanged();
    }
    if (engine_) {
        engine_->setUiLanguage(code);  // Qt.uiLanguage: bindings that format numbers
        engine_->retranslate();
    }
    return code;
}

}  // namespace hearth::ui
