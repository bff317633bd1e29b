// FrameProbe: times a window's frames while a benchmark runs. A precise 60 Hz timer asks
// for a frame (an offscreen window has no vsync, and Qt's animation timer there ticks every
// ~21 ms) by turning a small item in a corner a little, so a frame is wanted every display
// interval whether or not anything else changed; the intervals between swapped frames then
// show whether the GUI thread keeps up. The timer's own tick intervals show how long the
// event loop was unable to run (16.7 ms when it never is). Shared by the UI benchmarks.
#pragma once

#include <QElapsedTimer>
#include <QTimer>

#include <vector>

class QQmlEngine;
class QQuickItem;
class QQuickWindow;

class FrameProbe {
  public:
    // Starts ticking at once; records only between start_recording() and stop_recording().
    FrameProbe(QQuickWindow* window, QQmlEngine* engine);
    ~FrameProbe();
    bool ok() const { return tick_item_ != nullptr; }

    void start_recording();
    void stop_recording();
    // The intervals recorded so far (ms), and clears them.
    std::vector<double> take_frames();
    std::vector<double> take_ticks();
    // How long each recorded frame took on the GUI thread, from the start of its
    // polish/sync to its swap (ms): the window's own cost per frame.
    std::vector<double> take_frame_costs();

  private:
    QQuickWindow* window_;
    QQuickItem* tick_item_ = nullptr;
    QTimer vsync_;
    QElapsedTimer clock_;
    bool recording_ = false;
    qint64 last_frame_ns_ = -1;
    qint64 last_tick_ns_ = -1;
    qint64 frame_start_ns_ = -1;
    std::vector<double> costs_;
    std::vector<double> frames_;
    std::vector<double> ticks_;
};

// The p-th percentile (nearest rank) of v; 0 when empty.
double percentile(std::vector<double> v, double p);
