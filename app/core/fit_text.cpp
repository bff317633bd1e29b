#include "core/fit_text.h"

#include <QCoreApplication>

#include "core/download_http.h"

namespace hearth::app {
namespace {

QString size(std::uint64_t b) {
    return hearth::download::human_size(static_cast<qint64>(b));
}

}  // namespace

QVariantMap fit_map(const FitEstimate& e, const MachineFacts& machine) {
    QString fit, text;
    switch (e.verdict) {
        case FitVerdict::Fits:
            fit = QStringLiteral("fits");
            // Past a thousand, a tiny model's speed is its overheads', not its bandwidth.
            text = e.tokens_per_s > 1000
                       ? QCoreApplication::translate("FitText",
                                                     "Fits in memory; runs on the CPU, very fast")
                   : e.tokens_per_s > 0
                       ? QCoreApplication::translate(
                             "FitText", "Fits in memory; runs on the CPU at about %1 tokens/s")
                             .arg(e.tokens_per_s >= 10 ? QString::number(qRound(e.tokens_per_s))
                                                       : QString::number(e.tokens_per_s, 'f', 1))
                       : QCoreApplication::translate("FitText", "Fits in memory; runs on the CPU");
            break;
        case FitVerdict::Tight:
            fit = QStringLiteral("tight");
            text = QCoreApplication::translate(
                       "FitText",
                       "Takes most of the free memory (%1 of %2): other programs may slow down")
                       .arg(size(e.total_bytes), size(machine.ram_available));
            break;
        case FitVerdict::TooBig:
            fit = QStringLiteral("too-big");
            text = QCoreApplication::translate(
                       "FitText",
                       "Too big for this computer now: needs %1, %2 is free (a shorter context "
                       "needs less)")
                       .arg(size(e.total_bytes), size(machine.ram_available));
            break;
    }
    const QString detail =
        QCoreApplication::translate(
            "FitText",
            "Weights %1 + KV cache %2 (%3 tokens of context) + activations %4 + the app %5 = %6. "
            "Free memory: %7 of %8. Memory read at %9 GB/s; decoding a token reads the weights "
            "once.")
            .arg(size(e.weight_bytes), size(e.kv_bytes), QString::number(e.context),
                 size(e.activation_bytes), size(e.overhead_bytes), size(e.total_bytes),
                 size(machine.ram_available), size(machine.ram_total),
                 QString::number(machine.read_bytes_per_s / 1e9, 'f', 1));
    return {{QStringLiteral("fit"), fit},
            {QStringLiteral("text"), text},
            {QStringLiteral("detail"), detail},
            {QStringLiteral("bytes"), static_cast<qint64>(e.total_bytes)},
            {QStringLiteral("tokensPerSecond"), e.tokens_per_s}};
}

}  // namespace hearth::app
