// PNG charts for hearth-cli bench: a line chart (series of (x, y) points) or a grouped bar
// chart (categories × series), drawn with QPainter. Needs a QGuiApplication (any
// platform, offscreen included) for fonts.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "common/result.h"

namespace hearth::cli {

struct PlotSeries {
    QString name;
    std::vector<double> x;  // line charts only
    std::vector<double> y;  // one per point (line) or per category (bars)
};

struct Plot {
    QString title;
    QString x_label;
    QString y_label;
    QStringList categories;  // non-empty: a grouped bar chart
    std::vector<PlotSeries> series;
};

// A grid of charts side by side (one row), written as one PNG.
Result<void> write_plots(const QString& path, const std::vector<Plot>& plots);

}  // namespace hearth::cli
