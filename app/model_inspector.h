// ModelInspector: what the open model is (name, architecture, size, quantisation, context,
// tokenizer, chat template family) and its tokenizer at work, for the Model page.
//
// It reads the model EngineBridge has loaded (the same mapped file and tokenizer, nothing
// opened twice). Only when a load failed does it open that file on its own, off the GUI
// thread, to say what the file is and why it cannot run (an unknown architecture, say).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QVariantList>

#include <memory>
#include <string_view>

class EngineBridge;

namespace hearth {
class LoadedModelInfo;
}

class ModelInspector : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY changed)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY changed)
    Q_PROPERTY(QString status READ status NOTIFY changed)  // "empty", "loading", "ready", "error"
    Q_PROPERTY(QString errorText READ errorText NOTIFY changed)
    Q_PROPERTY(QVariantMap facts READ facts NOTIFY changed)
    Q_PROPERTY(QString defaultModelPath READ defaultModelPath CONSTANT)

  public:
    explicit ModelInspector(QObject* parent = nullptr);
    ~ModelInspector() override;

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    QString modelPath() const { return model_path_; }
    QString status() const { return status_; }
    QString errorText() const { return error_; }
    QVariantMap facts() const { return facts_; }
    QString defaultModelPath() const;

    // Token ids and their pieces (the loaded model's tokenizer): a list of {id, piece,
    // special}. A piece that is not whole UTF-8 (a byte of a character split over
    // tokens) shows those bytes as <0xNN>.
    Q_INVOKABLE QVariantList tokenize(const QString& text, bool parseSpecial) const;

    // A token's bytes as text a person can read: valid UTF-8 as it is, other bytes <0xNN>.
    static QString readable_piece(std::string_view bytes);

  signals:
    void changed();

  private:
    void follow_bridge();
    void inspect_failed(const QString& path);
    void finish_inspection();

    QPointer<EngineBridge> bridge_;
    QString model_path_;
    QString status_ = QStringLiteral("empty");
    QString error_;
    QVariantMap facts_;
    // Only for a file that failed to load.
    QFutureWatcher<std::shared_ptr<const hearth::LoadedModelInfo>> watcher_;
};
