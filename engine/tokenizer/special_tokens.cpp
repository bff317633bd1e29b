#include "tokenizer/special_tokens.h"

namespace hearth::tok {

std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text,
                                           bool parse_special) {
    std::vector<Fragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({-1, text});

    std::vector<Fragment> next;
    for (const TokenId id : vocab.specials) {
        const TokenAttr attr = vocab.attrs[id];
        if (!parse_special && (attr == TokenAttr::Control || attr == TokenAttr::Unknown)) continue;
        const std::string_view special = vocab.texts[id];
        const bool strip = vocab.strips_right(id);
        // Cheap pre-check: most tokens occur nowhere, so avoid rebuilding the list.
        bool found = false;
        for (const Fragment& f : fragments) {
            if (f.token < 0 && f.text.find(special) != std::string_view::npos) {
                found = true;
                break;
            }
        }
        if (!found) continue;

        next.clear();
        for (const Fragment& f : fragments) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (size_t at; (at = rest.find(special)) != std::string_view::npos;) {
                if (at > 0) next.push_back({-1, rest.substr(0, at)});
                next.push_back({id, {}});
                rest.remove_prefix(at + special.size());
                if (strip) {
                    // llama.cpp's isspace() in the C locale.
                    const size_t kept = rest.find_first_not_of(" \t\n\v\f\r");
                    rest.remove_prefix(kept == std::string_view::npos ? rest.size() : kept);
                }
            }
            if (!rest.empty()) next.push_back({-1, rest});
        }
        fragments.swap(next);
    }
    return fragments;
}

}  // namespace hearth::tok
