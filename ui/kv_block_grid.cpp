#include "kv_block_grid.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <map>

using hearth::BlockCell;

namespace {

bool same_cells(const std::vector<BlockCell>& a, const std::vector<BlockCell>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].state != b[i].state || a[i].owner != b[i].owner || a[i].holders != b[i].holders ||
            a[i].pin != b[i].pin)
            return false;
    return true;
}

QVariantList by_count(const std::map<qint64, int>& m) {
    std::vector<std::pair<qint64, int>> v(m.begin(), m.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    QVariantList out;
    for (const auto& [owner, n] : v)
        out.append(QVariantMap{{QStringLiteral("owner"), QVariant::fromValue<qint64>(owner)},
                               {QStringLiteral("blocks"), n}});
    return out;
}

}  // namespace

KvBlockGrid::KvBlockGrid(QQuickItem* parent) : QQuickPaintedItem(parent) {
    setAntialiasing(true);
    timer_.setInterval(250);
    connect(&timer_, &QTimer::timeout, this, &KvBlockGrid::refresh);
    connect(this, &KvBlockGrid::styleChanged, this, [this] {
        update_implicit_height();
        update();
    });
    connect(this, &QQuickItem::visibleChanged, this, &KvBlockGrid::update_timer);
}

void KvBlockGrid::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    if (bridge_) connect(bridge_, &EngineBridge::modelChanged, this, &KvBlockGrid::refresh);
    emit bridgeChanged();
    update_timer();
    refresh();
}

void KvBlockGrid::setActive(bool active) {
    if (active == active_) return;
    active_ = active;
    emit activeChanged();
    update_timer();
}

void KvBlockGrid::setInterval(int ms) {
    if (ms == timer_.interval()) return;
    timer_.setInterval(std::max(16, ms));
    emit activeChanged();
}

void KvBlockGrid::update_timer() {
    const bool run = active_ && bridge_ && isVisible();
    if (run && !timer_.isActive()) {
        timer_.start();
        refresh();
    } else if (!run) {
        timer_.stop();
    }
}

void KvBlockGrid::itemChange(ItemChange change, const ItemChangeData& value) {
    QQuickPaintedItem::itemChange(change, value);
    if (change == ItemSceneChange || change == ItemVisibleHasChanged) update_timer();
}

void KvBlockGrid::refresh() {
    hearth::BlockMap map = bridge_ ? bridge_->blockMapSnapshot() : hearth::BlockMap{};
    if (map.block_size == block_size_ && same_cells(map.blocks, cells_)) return;
    cells_ = std::move(map.blocks);
    block_size_ = map.block_size;
    std::fill(std::begin(counts_), std::end(counts_), 0);
    std::map<qint64, int> conv, pins;
    for (const BlockCell& c : cells_) {
        const int s = static_cast<int>(c.state);
        if (s >= 0 && s < 5) ++counts_[s];
        if (c.state == BlockCell::State::Conversation) ++conv[c.owner];
        if (c.pin >= 0) ++pins[c.pin];  // pinned, alone or shared
    }
    conversations_ = by_count(conv);
    pinned_count_ = 0;
    for (const auto& [pin, n] : pins) pinned_count_ += n;
    pins_ = by_count(pins);
    update_implicit_height();
    update();
    emit mapChanged();
}

int KvBlockGrid::columns() const {
    const int step = std::max(1, cell_ + spacing_);
    return std::max(1, static_cast<int>((width() + spacing_) / step));
}

void KvBlockGrid::update_implicit_height() {
    const int n = static_cast<int>(cells_.size());
    const int cols = columns();
    const int rows = (n + cols - 1) / cols;
    setImplicitHeight(rows > 0 ? rows * (cell_ + spacing_) - spacing_ : 0);
}

void KvBlockGrid::geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) {
    QQuickPaintedItem::geometryChange(newGeometry, oldGeometry);
    if (newGeometry.width() != oldGeometry.width()) update_implicit_height();
}

QColor KvBlockGrid::colorFor(qint64 id) const {
    // Golden-ratio hues: neighbouring ids get far-apart colours.
    const double hue = std::fmod(0.07 + static_cast<double>(id) * 0.618033988749895, 1.0);
    return QColor::fromHslF(static_cast<float>(hue), 0.55f, 0.55f);
}

QColor KvBlockGrid::pinColorFor(qint64 key) const {
    const QVariant v = pin_colors_.value(QString::number(key));
    const QColor c = v.value<QColor>();
    return c.isValid() ? c : pinned_;
}

void KvBlockGrid::paint(QPainter* p) {
    const int cols = columns();
    const int step = cell_ + spacing_;
    const qreal r = std::max(1.0, cell_ / 5.0);
    p->setPen(Qt::NoPen);
    std::map<qint64, QColor> conv_colors, pin_colors;
    for (size_t i = 0; i < cells_.size(); ++i) {
        const BlockCell& c = cells_[i];
        const int x = static_cast<int>(i % static_cast<size_t>(cols)) * step;
        const int y = static_cast<int>(i / static_cast<size_t>(cols)) * step;
        if (y > height() + step) break;
        QColor color;
        switch (c.state) {
            case BlockCell::State::Free:
                color = free_;
                break;
            case BlockCell::State::Cached:
                color = cached_;
                break;
            case BlockCell::State::Pinned: {
                auto it = pin_colors.find(c.owner);
                if (it == pin_colors.end())
                    it = pin_colors.emplace(c.owner, pinColorFor(c.owner)).first;
                color = it->second;
                break;
            }
            case BlockCell::State::Conversation: {
                auto it = conv_colors.find(c.owner);
                if (it == conv_colors.end())
                    it = conv_colors.emplace(c.owner, colorFor(c.owner)).first;
                color = it->second;
                break;
            }
            case BlockCell::State::Shared:
                color = shared_;
                break;
        }
        p->setBrush(color);
        p->drawRoundedRect(QRectF(x, y, cell_, cell_), r, r);
        if (c.state == BlockCell::State::Pinned || c.state == BlockCell::State::Shared) {
            // Pinned: a ring; shared: a dot (held by several at once).
            p->setBrush(mark_);
            const qreal dot = cell_ * (c.state == BlockCell::State::Shared ? 0.36 : 0.22);
            p->drawEllipse(QPointF(x + cell_ / 2.0, y + cell_ / 2.0), dot / 2, dot / 2);
        }
    }
}
