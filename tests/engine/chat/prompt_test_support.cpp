#include "prompt_test_support.h"

#include <algorithm>

namespace hearth::test {

using chat::ChatTemplate;
using chat::Message;
using chat::Prompt;
using chat::PromptBuilder;
using chat::PromptEnd;
using chat::Role;
using chat::SegmentKind;
using chat::SegmentSpan;
using chat::TemplateFamily;

// The BOS and EOS texts a real vocabulary of the family has.
std::pair<std::string, std::string> bos_eos(TemplateFamily f) {
    switch (f) {
        case TemplateFamily::ChatML:
        case TemplateFamily::Phi4:
        case TemplateFamily::Phi3:
        case TemplateFamily::Zephyr:
            return {"<s>", "<|endoftext|>"};
        case TemplateFamily::Gemma:
            return {"<bos>", "<eos>"};
        case TemplateFamily::Llama3:
            return {"<|begin_of_text|>", "<|end_of_text|>"};
        default:
            return {"<s>", "</s>"};
    }
}

TestTokenizer make_tokenizer(TemplateFamily f, bool space_prefix, bool add_bos) {
    const auto [bos, eos] = bos_eos(f);
    const std::string eot(ChatTemplate(f).end_of_turn());
    return TestTokenizer(
        {TestTokenizer::all_family_controls(), bos, eos, {eos, eot}, add_bos, space_prefix});
}

uint32_t seed() {
    static const uint32_t s = [] {
        bool ok = false;
        const uint32_t env = qEnvironmentVariable("HEARTH_TEST_SEED").toUInt(&ok);
        return ok ? env : 20241202u;
    }();
    return s;
}

bool starts_with(const Ids& ids, const Ids& prefix) {
    return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

Ids concat(Ids a, const Ids& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Ids slice(const Prompt& p, const SegmentSpan& s) {
    return Ids(p.ids.begin() + static_cast<std::ptrdiff_t>(s.begin),
               p.ids.begin() + static_cast<std::ptrdiff_t>(s.begin + s.size));
}

Prompt build_ok(const PromptBuilder& b, const std::vector<Message>& m, PromptEnd end) {
    auto p = b.build(m, end);
    if (!p) qFatal("build failed: %s", p.message().c_str());
    return std::move(p).value();
}

// The segments cover the ids exactly, in order.
bool spans_tile(const Prompt& p) {
    size_t at = 0;
    for (const SegmentSpan& s : p.segments) {
        if (s.begin != at) return false;
        at += s.size;
    }
    return at == p.ids.size();
}

// Non-overlapping occurrences of needle in ids.
size_t count_of(const Ids& ids, const Ids& needle) {
    size_t n = 0;
    for (auto it = ids.begin();; it += static_cast<std::ptrdiff_t>(needle.size()), ++n) {
        it = std::search(it, ids.end(), needle.begin(), needle.end());
        if (it == ids.end()) return n;
    }
}

const SegmentSpan* span_of(const Prompt& p, int64_t message) {
    for (const SegmentSpan& s : p.segments)
        if (s.kind == SegmentKind::Message && s.message == message) return &s;
    return nullptr;
}

// Text with the things that break naive prompt code: control-token text, spaces at the
// ends, newlines, multi-byte UTF-8, words of the test vocabulary.
std::string random_text(std::mt19937& rng, bool allow_empty) {
    static const char* const kBits[] = {
        "Hello",      " the",    "you",       "\n",  "\n\n",          " ",          "  ",
        "é",          "日本",    "a",         "?",   "ing",           " is",        "<|im_start|>",
        "<|im_end|>", "[INST]",  "</s>",      "<s>", "<end_of_turn>", "<|eot_id|>", "<|user|>",
        "user",       "<<SYS>>", "assistant",
    };
    const size_t n = (allow_empty ? 0 : 1) + rng() % 6;
    std::string s;
    for (size_t i = 0; i < n; ++i) s += kBits[rng() % std::size(kBits)];
    if (!allow_empty && s.find_first_not_of(" \n") == std::string::npos) s += "x";
    return s;
}

// What a sampler could have produced: text tokens, now and then a stray control token
// (never one it stops on), ended as `how` says.
Message make_reply(const TestTokenizer& tok, const PromptBuilder& b, std::mt19937& rng,
                   ReplyEnd how) {
    Ids ids;
    if (how != ReplyEnd::Empty) {
        ids = tok.encode(random_text(rng, false), false);
        for (int i = static_cast<int>(rng() % 3); i > 0; --i) {
            const TokenId id =
                static_cast<TokenId>(rng() % static_cast<uint32_t>(tok.vocab_size()));
            if (!std::binary_search(b.stop_tokens().begin(), b.stop_tokens().end(), id))
                ids.insert(ids.begin() + static_cast<std::ptrdiff_t>(rng() % (ids.size() + 1)), id);
        }
    }
    if (how == ReplyEnd::EndOfTurn)
        ids.insert(ids.end(), b.end_of_turn_ids().begin(), b.end_of_turn_ids().end());
    if (how == ReplyEnd::Eos) ids.push_back(tok.eos());
    return {Role::Assistant, tok.decode(ids, false), ids};
}

void add_family_rows(bool with_space_prefix) {
    QTest::addColumn<TemplateFamily>("family");
    QTest::addColumn<bool>("space_prefix");
    for (TemplateFamily f : hearth::chat::kAllFamilies) {
        const std::string name(hearth::chat::family_name(f));
        QTest::newRow((name + "/bytes").c_str()) << f << false;
        if (with_space_prefix) QTest::newRow((name + "/space-prefix").c_str()) << f << true;
    }
}

}  // namespace hearth::test
