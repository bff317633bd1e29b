#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "gguf/gguf_file.h"
#include "tokenizer/bpe.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"

namespace hearth {
namespace {

// llama.cpp's detokenizer clean-up (clean_spaces), the three passes in order, including
// their quirks (the second pass blanks the space after a lone apostrophe, which the
// following characters then see as their predecessor).
void clean_up_spaces(std::string& text) {
    if (text.size() < 2) return;
    // " ?", " !", " .", " ," lose the space.
    size_t total = 1;
    for (size_t i = 1; i < text.size(); ++i) {
        const char x = text[i];
        if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
        text[total++] = x;
    }
    text.resize(total);
    // " ' " becomes "'".
    total = text.empty() ? 0 : 1;
    for (size_t i = 1; i < text.size(); ++i) {
        const char x = text[i];
        if (x == '\'' && i + 1 < text.size() && text[i - 1] == ' ' && text[i + 1] == ' ') {
            --total;
            text[++i] = '\0';
        }
        text[total++] = x;
    }
    text.resize(total);
    // " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
    total = text.empty() ? 0 : 1;
    for (size_t i = 1; i < text.size(); ++i) {
        const char x = text[i];
        if (text[i - 1] == ' ' && x == '\'' && i + 1 < text.size()) {
            const char x1 = text[i + 1];
            if (x1 == 's' || x1 == 'm') {
                --total;
            } else if (i + 2 < text.size()) {
                const char x2 = text[i + 2];
                if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
            }
        }
        text[total++] = x;
    }
    text.resize(total);
}

}  // namespace

Tokenizer::Tokenizer(TokenizerKind kind, std::unique_ptr<tok::Vocab> vocab)
    : kind_(kind), vocab_(std::move(vocab)) {}

Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const gguf::GgufFile& file) {
    constexpr std::string_view kModel = "tokenizer.ggml.model";
    const gguf::Value* value = file.find(kModel);
    if (!value) return make_error(std::string(kModel) + " is missing");
    const auto model = value->as_string();
    if (!model) return make_error(std::string(kModel) + " is not a string");
    if (*model == "gpt2") return tok::BpeTokenizer::create(file);
    if (*model == "llama") return tok::SpmTokenizer::create(file);
    return make_error("unsupported tokenizer model '" + std::string(*model) + "' (" +
                      std::string(kModel) + "); Hearth reads 'gpt2' and 'llama'");
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool parse_special) const {
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 4);
    bool follows_special = true;
    for (const tok::Fragment& f : tok::split_special_tokens(*vocab_, text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            follows_special = true;
        } else {
            encode_text(f.text, follows_special, out);
            follows_special = false;
        }
    }
    return out;
}

std::string Tokenizer::token_to_piece(TokenId id, bool render_special) const {
    if (!vocab_->valid(id)) return {};
    const TokenAttr attr = vocab_->attrs[id];
    if (!render_special && (attr == TokenAttr::Control || attr == TokenAttr::Unknown)) return {};
    return vocab_->pieces[id];
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool render_special) const {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
        std::string piece = token_to_piece(ids[i], render_special);
        // The space SentencePiece put in front of the text goes again (only the very
        // first token is looked at, as in llama.cpp).
        if (i == 0 && vocab_->add_space_prefix && !piece.empty() && piece[0] == ' ')
            piece.erase(0, 1);
        text += piece;
    }
    if (vocab_->clean_spaces) clean_up_spaces(text);
    return text;
}

std::string_view Tokenizer::pre_tokenizer() const {
    return vocab_->pre_name;
}
int32_t Tokenizer::vocab_size() const {
    return static_cast<int32_t>(vocab_->texts.size());
}

const std::string& Tokenizer::token_text(TokenId id) const {
    static const std::string empty;
    return vocab_->valid(id) ? vocab_->texts[id] : empty;
}

TokenAttr Tokenizer::token_attr(TokenId id) const {
    return vocab_->valid(id) ? vocab_->attrs[id] : TokenAttr::Undefined;
}

TokenId Tokenizer::find_token(std::string_view text) const {
    return vocab_->find(text);
}
TokenId Tokenizer::bos() const {
    return vocab_->bos;
}
TokenId Tokenizer::eos() const {
    return vocab_->eos;
}
TokenId Tokenizer::eot() const {
    return vocab_->eot;
}
TokenId Tokenizer::unknown() const {
    return vocab_->unk;
}
TokenId Tokenizer::padding() const {
    return vocab_->pad;
}
bool Tokenizer::add_bos() const {
    return vocab_->add_bos;
}
bool Tokenizer::add_space_prefix() const {
    return vocab_->add_space_prefix;
}

bool Tokenizer::is_end_of_generation(TokenId id) const {
    return std::binary_search(vocab_->eog.begin(), vocab_->eog.end(), id);
}

const std::vector<TokenId>& Tokenizer::end_of_generation_tokens() const {
    return vocab_->eog;
}

}  // namespace hearth
