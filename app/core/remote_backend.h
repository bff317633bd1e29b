// RemoteBackend: replies from an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp's
// server, another Hearth's `hearth-cli serve`), for a model bigger than this machine
// runs. Sends each turn's messages as text (POST {base}/chat/completions, streamed as
// server-sent events with usage), and reports what the server tells: the text as it
// streams, the finish reason, prompt and cached tokens. TTFT and tokens per second are
// measured here, from the request to the first text and between the first and last.
//
// Errors (no answer, a refused key, a server error) end the reply as failed with the
// server's own message; what the user typed is already stored. The base URL may be given
// with or without its /v1.
#pragma once

#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QPointer>
#include <QStringList>

#include <map>

#include "core/chat_backend.h"

class QNetworkReply;

class RemoteBackend : public ChatBackend {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString baseUrl READ baseUrl WRITE setBaseUrl NOTIFY configChanged)
    Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY configChanged)
    Q_PROPERTY(QString model READ model WRITE setModel NOTIFY configChanged)
    // The endpoint's models (refreshModels()), and how the last refresh went.
    Q_PROPERTY(QStringList models READ models NOTIFY modelsChanged)
    Q_PROPERTY(QString status READ status NOTIFY modelsChanged)
    Q_PROPERTY(bool refreshing READ refreshing NOTIFY modelsChanged)

  public:
    explicit RemoteBackend(QObject* parent = nullptr);
    ~RemoteBackend() override;

    QString baseUrl() const { return base_url_; }
    void setBaseUrl(const QString& url);
    QString apiKey() const { return api_key_; }
    void setApiKey(const QString& key);
    QString model() const { return model_; }
    void setModel(const QString& model);
    QStringList models() const { return models_; }
    QString status() const { return status_; }
    bool refreshing() const;

    // Asks the endpoint for its models (GET {base}/models); picks the first when the
    // chosen one is not among them.
    Q_INVOKABLE void refreshModels();

    bool ready() const override;
    QString displayName() const override;
    bool remote() const override { return true; }
    QString fingerprint() const override { return {}; }  // text only
    std::vector<int32_t> encode_content(hearth::chat::Role, const QString&) const override {
        return {};
    }
    hearth::Result<Started> start(const TurnRequest& request) override;
    void cancel(RequestId id) override;

    // {base}/v1 from what a person typed ("host:8000", "http://host:8000/v1/").
    static QString api_root(const QString& base_url);

  signals:
    void configChanged();
    void modelsChanged();

  private:
    struct Call {
        QPointer<QNetworkReply> reply;
        QByteArray buffer;  // bytes of an event not yet complete
        std::string text;
        std::optional<hearth::StopReason> stop;
        hearth::sched::RequestStats stats;
        QElapsedTimer clock;
        double first_ms = -1, last_ms = -1;  // text arrived, since the request
        int pieces = 0;
        bool usage = false;
        bool cancelled = false;
        QString error;
    };
    void on_ready_read(RequestId id);
    void on_finished(RequestId id);
    // One server-sent event's data; false when the stream says it failed.
    void on_data(RequestId id, Call& call, const QByteArray& data);
    QNetworkRequest request_for(const QString& path) const;

    QNetworkAccessManager net_;
    QString base_url_, api_key_, model_, status_;
    QStringList models_;
    std::map<QString, int> contexts_;  // a model's context length, where the server says
    QPointer<QNetworkReply> models_reply_;
    std::map<RequestId, Call> calls_;
    RequestId next_id_ = 1;
};
