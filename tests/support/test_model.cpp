#include "support/test_model.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QtGlobal>

#include "common/paths.h"

namespace hearth::test {

QString default_model_path_if_present() {
    const QString path = QString::fromStdString(paths::default_model_path());
    return QFileInfo(path).isFile() ? path : QString();
}

QString gemma3_model_path_if_present() {
    QString path = qEnvironmentVariable("HEARTH_GEMMA3_MODEL");
    if (path.isEmpty())
        path = QString::fromStdString(paths::data_dir()) + "/models/gemma-3-270m-q4_k_m.gguf";
    return QFileInfo(path).isFile() ? path : QString();
}

bool in_ci() {
    return qEnvironmentVariable("CI") == QLatin1String("true");
}

QString source_dir() {
    return QStringLiteral(HEARTH_SOURCE_DIR);
}

QString sha256_of_file(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    return QString::fromLatin1(hash.result().toHex());
}

}  // namespace hearth::test
