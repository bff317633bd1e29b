#include "cli/plot.h"

#include <QImage>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace hearth::cli {

namespace {

constexpr int kChartW = 640;
constexpr int kChartH = 440;
const QColor kColours[] = {QColor(0xd9, 0x5f, 0x0e), QColor(0x31, 0x82, 0xbd),
                           QColor(0x31, 0xa3, 0x54), QColor(0x75, 0x6b, 0xb1),
                           QColor(0x63, 0x63, 0x63)};

// A "nice" tick step giving about n ticks over [0, hi].
double nice_step(double hi, int n) {
    if (hi <= 0) return 1;
    const double raw = hi / n;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

QString tick_label(double v) {
    if (v == 0) return "0";
    if (std::fabs(v) >= 100 || v == std::round(v)) return QString::number(v, 'f', 0);
    if (std::fabs(v) >= 1) return QString::number(v, 'f', 1);
    return QString::number(v, 'g', 2);
}

void draw_chart(QPainter& p, const QRect& area, const Plot& plot) {
    const QRect frame = area.adjusted(70, 50, -20, -60);
    QFont title_font = p.font();
    title_font.setPointSize(11);
    title_font.setBold(true);
    p.setFont(title_font);
    p.setPen(Qt::black);
    p.drawText(QRect(area.left(), area.top() + 8, area.width(), 30), Qt::AlignCenter, plot.title);
    QFont f = p.font();
    f.setPointSize(9);
    f.setBold(false);
    p.setFont(f);

    const bool bars = !plot.categories.isEmpty();
    double x_hi = 0, y_hi = 0;
    for (const auto& s : plot.series) {
        for (double v : s.y)
            if (std::isfinite(v)) y_hi = std::max(y_hi, v);
        for (double v : s.x) x_hi = std::max(x_hi, v);
    }
    const double y_step = nice_step(y_hi * 1.05, 5);
    const double y_top = std::max(y_step, std::ceil(y_hi * 1.05 / y_step) * y_step);
    const auto ymap = [&](double v) { return frame.bottom() - v / y_top * frame.height(); };

    // Axes and horizontal grid.
    p.setPen(QColor(0xdd, 0xdd, 0xdd));
    for (double v = 0; v <= y_top + 1e-9; v += y_step)
        p.drawLine(QPointF(frame.left(), ymap(v)), QPointF(frame.right(), ymap(v)));
    p.setPen(Qt::black);
    p.drawLine(frame.bottomLeft(), frame.bottomRight());
    p.drawLine(frame.bottomLeft(), frame.topLeft());
    for (double v = 0; v <= y_top + 1e-9; v += y_step)
        p.drawText(QRectF(frame.left() - 66, ymap(v) - 8, 60, 16),
                   Qt::AlignRight | Qt::AlignVCenter, tick_label(v));
    p.save();
    p.translate(area.left() + 14, frame.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-frame.height() / 2.0, -10, frame.height(), 20), Qt::AlignCenter,
               plot.y_label);
    p.restore();
    p.drawText(QRect(frame.left(), frame.bottom() + 26, frame.width(), 20), Qt::AlignCenter,
               plot.x_label);

    const auto n_series = static_cast<int>(plot.series.size());
    if (bars) {
        const int n_cat = static_cast<int>(plot.categories.size());
        const double slot = static_cast<double>(frame.width()) / n_cat;
        const double bar = slot * 0.8 / std::max(1, n_series);
        for (int c = 0; c < n_cat; ++c) {
            p.setPen(Qt::black);
            p.drawText(QRectF(frame.left() + c * slot, frame.bottom() + 4, slot, 18),
                       Qt::AlignCenter, plot.categories[c]);
            for (int s = 0; s < n_series; ++s) {
                const auto& ys = plot.series[static_cast<std::size_t>(s)].y;
                if (static_cast<std::size_t>(c) >= ys.size() ||
                    !std::isfinite(ys[static_cast<std::size_t>(c)]))
                    continue;
                const double v = ys[static_cast<std::size_t>(c)];
                const QRectF r(frame.left() + c * slot + slot * 0.1 + s * bar, ymap(v), bar - 2,
                               frame.bottom() - ymap(v));
                p.fillRect(r, kColours[s % 5]);
                p.drawText(QRectF(r.left() - 10, r.top() - 16, r.width() + 20, 14), Qt::AlignCenter,
                           tick_label(v));
            }
        }
    } else {
        const double x_step = nice_step(x_hi, 6);
        const double x_right = std::max(x_step, std::ceil(x_hi / x_step) * x_step);
        const auto xmap = [&](double v) { return frame.left() + v / x_right * frame.width(); };
        for (double v = 0; v <= x_right + 1e-9; v += x_step)
            p.drawText(QRectF(xmap(v) - 30, frame.bottom() + 4, 60, 18), Qt::AlignCenter,
                       tick_label(v));
        for (int s = 0; s < n_series; ++s) {
            const auto& ser = plot.series[static_cast<std::size_t>(s)];
            QPainterPath path;
            bool started = false;
            for (std::size_t i = 0; i < ser.y.size() && i < ser.x.size(); ++i) {
                if (!std::isfinite(ser.y[i])) continue;
                const QPointF pt(xmap(ser.x[i]), ymap(ser.y[i]));
                if (!started)
                    path.moveTo(pt);
                else
                    path.lineTo(pt);
                started = true;
            }
            p.setPen(QPen(kColours[s % 5], 2.5));
            p.setRenderHint(QPainter::Antialiasing, true);
            p.drawPath(path);
            p.setBrush(kColours[s % 5]);
            for (std::size_t i = 0; i < ser.y.size() && i < ser.x.size(); ++i)
                if (std::isfinite(ser.y[i]))
                    p.drawEllipse(QPointF(xmap(ser.x[i]), ymap(ser.y[i])), 3.5, 3.5);
            p.setBrush(Qt::NoBrush);
        }
    }
    // Legend, top left inside the frame.
    for (int s = 0; s < n_series; ++s) {
        const QRectF swatch(frame.left() + 12, frame.top() + 8 + s * 18, 14, 10);
        p.fillRect(swatch, kColours[s % 5]);
        p.setPen(Qt::black);
        p.drawText(QPointF(swatch.right() + 6, swatch.bottom()),
                   plot.series[static_cast<std::size_t>(s)].name);
    }
}

}  // namespace

Result<void> write_plots(const QString& path, const std::vector<Plot>& plots) {
    if (plots.empty()) return make_error("nothing to plot");
    QImage img(kChartW * static_cast<int>(plots.size()), kChartH, QImage::Format_RGB32);
    img.fill(Qt::white);
    {
        QPainter p(&img);
        for (std::size_t i = 0; i < plots.size(); ++i)
            draw_chart(p, QRect(static_cast<int>(i) * kChartW, 0, kChartW, kChartH), plots[i]);
    }
    if (!img.save(path, "PNG")) return make_error("cannot write " + path.toStdString());
    return {};
}

}  // namespace hearth::cli
