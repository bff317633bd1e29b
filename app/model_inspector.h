// ModelInspector: loads a GGUF model off the GUI thread and exposes what it is (name,
// architecture, size, quantisation, context, tokenizer, chat template family) and its
// tokenizer to QML. The chat engine builds on the same loading path later.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace hearth {
class LoadedModelInfo;
}

class ModelInspector : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY changed)
    Q_PROPERTY(QString status READ status NOTIFY changed)  // "empty", "loading", "ready", "error"
    Q_PROPERTY(QString errorText READ errorText NOTIFY changed)
    Q_PROPERTY(QVariantMap facts READ facts NOTIFY changed)
    Q_PROPERTY(QString defaultModelPath READ defaultModelPath CONSTANT)

public:
    explicit ModelInspector(QObject* parent = nullptr);
    ~ModelInspector() override;

    QString modelPath() const { return model_path_; }
    QString status() const { return status_; }
    QString errorText() const { return error_; }
    QVariantMap facts() const { return facts_; }
    QString defaultModelPath() const;

    // Loads the file (a path or a file:// URL) in the background.
    Q_INVOKABLE void load(const QString& pathOrUrl);
    // Token ids and their pieces: a list of {id, piece, special}.
    Q_INVOKABLE QVariantList tokenize(const QString& text, bool parseSpecial) const;

signals:
    void changed();

private:
    void finish_load();

    QString model_path_;
    QString status_ = QStringLiteral("empty");
    QString error_;
    QVariantMap facts_;
    std::shared_ptr<const hearth::LoadedModelInfo> loaded_;
    QFutureWatcher<std::shared_ptr<const hearth::LoadedModelInfo>> watcher_;
};
