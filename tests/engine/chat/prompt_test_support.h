// Helpers for the PromptBuilder tests: family vocabularies for the test tokenizer, random
// conversation parts, and checks on prompts.
#pragma once

#include <QTest>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "chat/prompt_builder.h"
#include "test_tokenizer.h"

namespace hearth::test {

using Ids = std::vector<TokenId>;

// The seed of the random conversations: HEARTH_TEST_SEED, or a fixed default.
uint32_t seed();

// The BOS and EOS texts a real vocabulary of the family has.
std::pair<std::string, std::string> bos_eos(chat::TemplateFamily f);
TestTokenizer make_tokenizer(chat::TemplateFamily f, bool space_prefix, bool add_bos = false);

bool starts_with(const Ids& ids, const Ids& prefix);
Ids concat(Ids a, const Ids& b);
Ids slice(const chat::Prompt& p, const chat::SegmentSpan& s);
// Non-overlapping occurrences of needle in ids.
size_t count_of(const Ids& ids, const Ids& needle);
chat::Prompt build_ok(const chat::PromptBuilder& b, const std::vector<chat::Message>& m,
                      chat::PromptEnd end = chat::PromptEnd::GenerationPrompt);
// The segments cover the ids exactly, in order.
bool spans_tile(const chat::Prompt& p);
const chat::SegmentSpan* span_of(const chat::Prompt& p, int64_t message);

// Text with the things that break naive prompt code: control-token text, spaces at the
// ends, newlines, multi-byte UTF-8, words of the test vocabulary.
std::string random_text(std::mt19937& rng, bool allow_empty = true);

enum class ReplyEnd : int { EndOfTurn, Cancelled, Eos, Empty };

// What a sampler could have produced: text tokens, now and then a stray control token
// (never one it stops on), ended as `how` says.
chat::Message make_reply(const TestTokenizer& tok, const chat::PromptBuilder& b, std::mt19937& rng,
                         ReplyEnd how);

// Data rows family x vocabulary (byte-level, and space-prefix when asked).
void add_family_rows(bool with_space_prefix = true);

}  // namespace hearth::test
