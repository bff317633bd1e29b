// Turns generated token pieces into text a UI can show as it streams: emits only whole
// UTF-8 characters, holds back text that might be the start of a stop string, and
// reports when a stop string appears (the stop string itself is not emitted).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hearth {

class TextStream {
  public:
    explicit TextStream(std::vector<std::string> stop_strings = {});

    // Adds a token's bytes; returns the text that is now safe to show.
    std::string push(std::string_view piece);
    // Everything still held back (at the end of generation), minus a partial UTF-8 tail
    // which is emitted as U+FFFD.
    std::string flush();

    bool stopped() const { return stopped_; }
    const std::string& text() const { return emitted_; }  // all text emitted so far

  private:
    std::vector<std::string> stops_;
    std::string pending_;
    std::string emitted_;
    bool stopped_ = false;
};

// Length of the longest prefix of s that ends on a UTF-8 character boundary, treating
// invalid bytes as single characters.
std::size_t complete_utf8_prefix(std::string_view s);

}  // namespace hearth
