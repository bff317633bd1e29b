#include "frame_probe.h"

#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickWindow>

#include <algorithm>
#include <cstdio>
#include <utility>

FrameProbe::FrameProbe(QQuickWindow* window, QQmlEngine* engine) : window_(window) {
    clock_.start();
    QQmlComponent ticker(engine);
    ticker.setData("import QtQuick\nRectangle { width: 6; height: 6; color: \"#c0c0c0\" }", QUrl());
    tick_item_ = qobject_cast<QQuickItem*>(ticker.create());
    if (!tick_item_) {
        std::fprintf(stderr, "FrameProbe: %s\n", qPrintable(ticker.errorString()));
        return;
    }
    tick_item_->setParentItem(window_->contentItem());
    vsync_.setTimerType(Qt::PreciseTimer);
    vsync_.setInterval(16);  // 16.7 ms: close enough with a precise timer
    QObject::connect(&vsync_, &QTimer::timeout, tick_item_, [this] {
        tick_item_->setRotation(tick_item_->rotation() + 6);
        const qint64 now = clock_.nsecsElapsed();
        if (recording_ && last_tick_ns_ >= 0)
            ticks_.push_back(static_cast<double>(now - last_tick_ns_) / 1e6);
        last_tick_ns_ = now;
    });
    QObject::connect(
        window_, &QQuickWindow::beforeSynchronizing, tick_item_,
        [this] {
            if (frame_start_ns_ < 0) frame_start_ns_ = clock_.nsecsElapsed();
        },
        Qt::DirectConnection);
    QObject::connect(
        window_, &QQuickWindow::frameSwapped, tick_item_,
        [this] {
            const qint64 now = clock_.nsecsElapsed();
            if (recording_ && last_frame_ns_ >= 0)
                frames_.push_back(static_cast<double>(now - last_frame_ns_) / 1e6);
            if (recording_ && frame_start_ns_ >= 0)
                costs_.push_back(static_cast<double>(now - frame_start_ns_) / 1e6);
            last_frame_ns_ = now;
            frame_start_ns_ = -1;
        },
        Qt::DirectConnection);
    vsync_.start();
}

FrameProbe::~FrameProbe() {
    vsync_.stop();
    delete tick_item_;
}

void FrameProbe::start_recording() {
    last_frame_ns_ = last_tick_ns_ = -1;
    recording_ = true;
}

void FrameProbe::stop_recording() {
    recording_ = false;
}

std::vector<double> FrameProbe::take_frames() {
    return std::exchange(frames_, {});
}
std::vector<double> FrameProbe::take_ticks() {
    return std::exchange(ticks_, {});
}
std::vector<double> FrameProbe::take_frame_costs() {
    return std::exchange(costs_, {});
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(
        v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5));
    return v[i];
}
