#include "generation/text_stream.h"

#include <algorithm>

namespace hearth {

std::size_t complete_utf8_prefix(std::string_view s) {
    // Walk back over at most 3 continuation bytes to the last lead byte; keep it only if
    // its whole sequence is present.
    const size_t n = s.size();
    size_t i = n;
    int back = 0;
    while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i, ++back;
    if (i == 0) return back == 0 ? 0 : n;  // only continuation bytes: invalid, emit them
    const auto lead = static_cast<unsigned char>(s[i - 1]);
    size_t need = 1;
    if (lead >= 0xF0 && lead < 0xF8)
        need = 4;
    else if (lead >= 0xE0)
        need = lead < 0xF0 ? 3 : 1;
    else if (lead >= 0xC0)
        need = 2;
    const size_t have = n - (i - 1);
    return have < need ? i - 1 : n;
}

TextStream::TextStream(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string TextStream::push(std::string_view piece) {
    if (stopped_) return {};
    pending_.append(piece);
    // A complete stop string ends the text just before it.
    size_t cut = std::string::npos;
    for (const std::string& stop : stops_) cut = std::min(cut, pending_.find(stop));
    if (cut != std::string::npos) {
        pending_.resize(cut);
        stopped_ = true;
        std::string out = std::move(pending_);
        pending_.clear();
        emitted_ += out;
        return out;
    }
    // Hold back the longest tail that could begin a stop string.
    size_t hold = 0;
    for (const std::string& stop : stops_)
        for (size_t k = std::min(stop.size() - 1, pending_.size()); k > hold; --k)
            if (pending_.compare(pending_.size() - k, k, stop, 0, k) == 0) {
                hold = k;
                break;
            }
    size_t ready =
        complete_utf8_prefix(std::string_view(pending_).substr(0, pending_.size() - hold));
    std::string out = pending_.substr(0, ready);
    pending_.erase(0, ready);
    emitted_ += out;
    return out;
}

std::string TextStream::flush() {
    std::string out = pending_;
    pending_.clear();
    const size_t ok = complete_utf8_prefix(out);
    if (ok < out.size()) {
        out.resize(ok);
        out += "\xEF\xBF\xBD";
    }
    emitted_ += out;
    return out;
}

}  // namespace hearth
