// The interface's language. Hearth's own strings come from ui/i18n/hearth_<code>.ts,
// compiled into the resources as :/i18n/hearth_<code>.qm; Qt's own (a dialog's standard
// buttons) from Qt's translations folder where the system has them. English is the
// source language: it needs no file. apply() takes effect at once: every qsTr binding
// of the window is evaluated again (QQmlEngine::retranslate).
#pragma once

#include <QObject>
#include <QStringList>

#include <memory>
#include <vector>

class QQmlEngine;
class QTranslator;

namespace hearth::ui {

class UiTranslator : public QObject {
    Q_OBJECT
    // The languages there is a translation for, as codes ("de"), English ("en") first.
    Q_PROPERTY(QStringList available READ available CONSTANT)
    Q_PROPERTY(QString current READ current NOTIFY currentChanged)

  public:
    explicit UiTranslator(QQmlEngine* engine, QObject* parent = nullptr);
    ~UiTranslator() override;

    static QStringList available();
    QString current() const { return current_; }

    // language: a code, or "" for the system's (the first of its UI languages with a
    // translation, else English). Returns the code in effect.
    Q_INVOKABLE QString apply(const QString& language);
    // The language's own name ("Deutsch"), for the setting's list.
    Q_INVOKABLE static QString nativeName(const QString& code);
    // A key sequence ("Ctrl+N") as the keyboard of the language in effect names it
    // ("Strg+N"), through Qt's own translation.
    Q_INVOKABLE static QString keyText(const QString& portable);

  signals:
    void currentChanged();

  private:
    void remove_installed();

    QQmlEngine* engine_;
    std::vector<std::unique_ptr<QTranslator>> installed_;
    QString current_ = QStringLiteral("en");
};

}  // namespace hearth::ui
