// RowListModel: the part the app's list models share. Each keeps its rows in a
// std::vector and refreshes them by reading the store again; merge_rows() brings a fresh
// read in with the fewest model signals, so that views keep their delegates, scroll
// position and hover state for rows that did not change:
//   - the rows before the first change and after the last one stay (matched by key);
//     a kept row whose content changed gets dataChanged;
//   - the rows between are removed and the new ones inserted in one step each.
// So a conversation added at the top is one insert, a message appended is one insert,
// and a row edited in place is one dataChanged.
#pragma once

#include <QAbstractListModel>

#include <algorithm>
#include <vector>

class RowListModel : public QAbstractListModel {
  public:
    using QAbstractListModel::QAbstractListModel;

  protected:
    // same_key(a, b): the same record (the row may stay); same_content(a, b): nothing a
    // view shows differs. Returns true when the number of rows changed.
    template <typename Row, typename SameKey, typename SameContent>
    bool merge_rows(std::vector<Row>& rows, std::vector<Row> next, SameKey same_key,
                    SameContent same_content) {
        const size_t old_n = rows.size(), new_n = next.size();
        size_t head = 0;
        while (head < old_n && head < new_n && same_key(rows[head], next[head])) ++head;
        size_t tail = 0;
        while (tail < old_n - head && tail < new_n - head &&
               same_key(rows[old_n - 1 - tail], next[new_n - 1 - tail]))
            ++tail;
        const auto changed = [&](size_t old_i, size_t new_i) {
            if (same_content(rows[old_i], next[new_i])) return;
            rows[old_i] = std::move(next[new_i]);
            const QModelIndex i = index(static_cast<int>(old_i));
            emit dataChanged(i, i);
        };
        for (size_t i = 0; i < head; ++i) changed(i, i);
        for (size_t k = 0; k < tail; ++k) changed(old_n - 1 - k, new_n - 1 - k);
        const auto first = static_cast<std::ptrdiff_t>(head);
        if (old_n - tail > head) {
            beginRemoveRows({}, static_cast<int>(head), static_cast<int>(old_n - tail) - 1);
            rows.erase(rows.begin() + first,
                       rows.begin() + static_cast<std::ptrdiff_t>(old_n - tail));
            endRemoveRows();
        }
        if (new_n - tail > head) {
            beginInsertRows({}, static_cast<int>(head), static_cast<int>(new_n - tail) - 1);
            rows.insert(
                rows.begin() + first, std::make_move_iterator(next.begin() + first),
                std::make_move_iterator(next.begin() + static_cast<std::ptrdiff_t>(new_n - tail)));
            endInsertRows();
        }
        return old_n != new_n;
    }
};
