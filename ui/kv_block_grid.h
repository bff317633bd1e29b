// KvBlockGrid: the KV cache as a grid of blocks, coloured by what holds them (the Memory
// page). It polls EngineBridge::blockMapSnapshot() (~4 Hz while visible), repaints only when
// the picture changed, and sizes itself (implicitHeight) to the grid at its width.
//
// Colours: a persona's pinned prefix in the persona's colour (pinColors, by pin key =
// persona id) or pinnedColor; each conversation its own hue (colorFor); shared blocks in
// sharedColor with a dot; cached-but-evictable blocks cachedColor; free blocks freeColor.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QColor>
#include <QPointer>
#include <QQuickPaintedItem>
#include <QTimer>
#include <QVariantList>
#include <QVariantMap>

#include <vector>

#include "core/engine_bridge.h"

class KvBlockGrid : public QQuickPaintedItem {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)
    Q_PROPERTY(bool active READ active WRITE setActive NOTIFY activeChanged)
    Q_PROPERTY(int interval READ interval WRITE setInterval NOTIFY activeChanged)
    Q_PROPERTY(int cellSize MEMBER cell_ NOTIFY styleChanged)
    Q_PROPERTY(int cellSpacing MEMBER spacing_ NOTIFY styleChanged)
    Q_PROPERTY(QColor freeColor MEMBER free_ NOTIFY styleChanged)
    Q_PROPERTY(QColor cachedColor MEMBER cached_ NOTIFY styleChanged)
    Q_PROPERTY(QColor pinnedColor MEMBER pinned_ NOTIFY styleChanged)
    Q_PROPERTY(QColor sharedColor MEMBER shared_ NOTIFY styleChanged)
    Q_PROPERTY(QColor markColor MEMBER mark_ NOTIFY styleChanged)
    Q_PROPERTY(QVariantMap pinColors MEMBER pin_colors_ NOTIFY styleChanged)  // "<key>": colour
    Q_PROPERTY(int blockCount READ blockCount NOTIFY mapChanged)
    Q_PROPERTY(int blockSize READ blockSize NOTIFY mapChanged)
    Q_PROPERTY(int freeBlocks READ freeBlocks NOTIFY mapChanged)
    Q_PROPERTY(int cachedBlocks READ cachedBlocks NOTIFY mapChanged)
    Q_PROPERTY(int pinnedBlocks READ pinnedBlocks NOTIFY mapChanged)
    Q_PROPERTY(int conversationBlocks READ conversationBlocks NOTIFY mapChanged)
    Q_PROPERTY(int sharedBlocks READ sharedBlocks NOTIFY mapChanged)
    // [{owner, blocks}] of the conversations and of the pins holding blocks, most first.
    Q_PROPERTY(QVariantList conversations READ conversations NOTIFY mapChanged)
    Q_PROPERTY(QVariantList pins READ pins NOTIFY mapChanged)

  public:
    explicit KvBlockGrid(QQuickItem* parent = nullptr);

    void paint(QPainter* painter) override;

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    bool active() const { return active_; }
    void setActive(bool active);
    int interval() const { return timer_.interval(); }
    void setInterval(int ms);
    int blockCount() const { return static_cast<int>(cells_.size()); }
    int blockSize() const { return block_size_; }
    int freeBlocks() const { return counts_[0]; }
    int cachedBlocks() const { return counts_[1]; }
    int pinnedBlocks() const { return pinned_count_; }  // pinned, shared or not
    int conversationBlocks() const { return counts_[3]; }
    int sharedBlocks() const { return counts_[4]; }
    QVariantList conversations() const { return conversations_; }
    QVariantList pins() const { return pins_; }

    // The colour of a conversation's blocks (a hue of its own, stable for the id).
    Q_INVOKABLE QColor colorFor(qint64 conversationId) const;
    Q_INVOKABLE QColor pinColorFor(qint64 key) const;
    Q_INVOKABLE void refresh();

  signals:
    void bridgeChanged();
    void activeChanged();
    void styleChanged();
    void mapChanged();

  protected:
    void geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) override;
    void itemChange(ItemChange change, const ItemChangeData& value) override;

  private:
    void update_timer();
    void update_implicit_height();
    int columns() const;

    QPointer<EngineBridge> bridge_;
    QTimer timer_;
    bool active_ = true;
    std::vector<hearth::BlockCell> cells_;
    int block_size_ = 0;
    int counts_[5] = {0, 0, 0, 0, 0};  // by BlockCell::State
    int pinned_count_ = 0;
    QVariantList conversations_;
    QVariantList pins_;
    int cell_ = 14;
    int spacing_ = 3;
    QColor free_ = QColor(0, 0, 0, 20);
    QColor cached_ = QColor(150, 150, 160);
    QColor pinned_ = QColor(230, 140, 40);
    QColor shared_ = QColor(140, 90, 200);
    QColor mark_ = QColor(255, 255, 255);
    QVariantMap pin_colors_;
};
