#!/usr/bin/env python3
"""Chat-template goldens: real models' Jinja templates rendered as llama.cpp renders them,
and the prompt tokenized by llama.cpp (via llama-cpp-python) on the matching vocabulary.

  chat_templates.py [--vocab-files build/vocab-files] --out tests/data/chat/template-goldens.json

The templates and vocabulary-only GGUF files come from llama-cpp-python 0.3.36's source
archive (scripts/vocab-files extracts them):

  Phi-3.5-mini-instruct   models/templates/microsoft-Phi-3.5-mini-instruct.jinja, phi-3 vocab
  Qwen2.5-7B-Instruct     models/templates/Qwen-Qwen2.5-7B-Instruct.jinja,        qwen2 vocab
  Qwen3-0.6B              models/templates/Qwen-Qwen3-0.6B.jinja,                 qwen2 vocab
  Gemma-2-2b-it           models/templates/google-gemma-2-2b-it.jinja,            text only

Rendering follows llama.cpp's Jinja path (common/chat.cpp, common_chat_templates_apply_jinja
and common_chat_template_direct_apply_impl): trim_blocks and lstrip_blocks; bos_token and
eos_token are the vocabulary's BOS/EOS texts; add_generation_prompt is passed only when
true; a template that ignores a system message (Gemma 2 raises on one) gets it merged into
the next message as system + "\\n" + content (workaround::system_message_not_supported);
a leading bos_token is cut from the text when the vocabulary adds BOS itself (and a
trailing eos_token when it adds EOS); the text is tokenized with add_special (BOS) and
parse_special on. llama.cpp always passes enable_thinking (true unless asked otherwise),
which Qwen3's template treats like leaving it unset; cases with enable_thinking = false
are recorded separately.

Per case the file holds the conversation, the template's raw output (text), the prompt
llama.cpp tokenizes (prompt_text), its ids (none for Gemma: llama.cpp ships no Gemma 2
vocabulary), and llama.cpp's built-in rendering of the same messages for the template's
family (builtin_text: llama_chat_apply_template, the non-Jinja path Hearth's families
follow; none for enable_thinking = false, which it does not know).

Run it with the reference venv that scripts/goldens/setup-reference builds (it has jinja2).
"""

import argparse
import ctypes
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokenizer import write_lines  # noqa: E402

TEMPLATES = [
    # name, template file, vocabulary file (None: text only), llama.cpp built-in name,
    # and for text-only templates the BOS/EOS texts and flags of the model's vocabulary.
    {"name": "phi3.5", "file": "microsoft-Phi-3.5-mini-instruct.jinja",
     "vocab": "ggml-vocab-phi-3.gguf", "builtin": "phi3"},
    {"name": "qwen2.5", "file": "Qwen-Qwen2.5-7B-Instruct.jinja",
     "vocab": "ggml-vocab-qwen2.gguf", "builtin": "chatml"},
    {"name": "qwen3", "file": "Qwen-Qwen3-0.6B.jinja",
     "vocab": "ggml-vocab-qwen2.gguf", "builtin": "chatml", "thinking_switch": True},
    # Gemma 2's GGUF files: <bos> (2), <eos> (1), add_bos_token true, add_eos_token false.
    {"name": "gemma2", "file": "google-gemma-2-2b-it.jinja", "vocab": None, "builtin": "gemma",
     "bos_token": "<bos>", "eos_token": "<eos>", "add_bos": True, "add_eos": False},
]

SYSTEM = "You are a helpful assistant. Answer briefly."
CONVERSATIONS = {
    "system_user": [("system", SYSTEM), ("user", "Hello! Who are you?")],
    "user_only": [("user", "What is the capital of France?")],
    "multi_turn": [("system", SYSTEM), ("user", "What is 2 + 2?"), ("assistant", "2 + 2 = 4."),
                   ("user", "And 3 + 3?")],
    "no_system_multi_turn": [("user", "Hi!"), ("assistant", "Hello! How can I help you today?"),
                             ("user", "Tell me a joke.")],
    "unicode_code": [("system", "Réponds en français."),
                     ("user", "Combien font 12 × 34 ? 😊\n```python\nprint(12 * 34)\n```")],
    # Whitespace at both ends of the content: templates that trim (Gemma) and tokenizers
    # that strip after a control token (llama.cpp's Phi-3 rule) see it differently.
    "content_whitespace": [("system", SYSTEM), ("user", "\n  indented line\n  second line  \n")],
    # An earlier reply with a reasoning block: Qwen3's template drops the reasoning of
    # replies before the last user message and writes only the answer.
    "reasoning_in_history": [("user", "Hi!"),
                             ("assistant", "<think>\nThe user greets me. I greet back.\n</think>\n\nHello! How can I help?"),
                             ("user", "What is 2 + 2?")],
}
# (conversation, add_generation_prompt); every template renders each one.
RENDERINGS = [(name, True) for name in CONVERSATIONS] + [("multi_turn", False)]


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def jinja_env():
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    return env


def template_uses_system(env, source):
    """llama.cpp's capability probe (common/jinja/caps.cpp): does the template write a
    system message's content? Gemma 2's raises instead."""
    marker = "System message 7c1b"
    try:
        out = env.from_string(source).render(
            messages=[{"role": "system", "content": marker}, {"role": "user", "content": "User message"}],
            bos_token="", eos_token="")
    except Exception:
        return False
    return marker in out


def builtin_render(name, messages, add_ass):
    import llama_cpp

    arr = (llama_cpp.llama_chat_message * len(messages))(
        *[llama_cpp.llama_chat_message(role=r.encode(), content=c.encode()) for r, c in messages])
    n = llama_cpp.llama_chat_apply_template(name.encode(), arr, len(messages), add_ass, None, 0)
    if n < 0:
        raise SystemExit(f"llama_chat_apply_template({name}) failed: {n}")
    buf = ctypes.create_string_buffer(n + 1)
    n2 = llama_cpp.llama_chat_apply_template(name.encode(), arr, len(messages), add_ass, buf, n + 1)
    assert n2 == n, (n, n2)
    return buf.raw[:n].decode("utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-files", default="build/vocab-files",
                    help="the folder scripts/vocab-files writes (default build/vocab-files)")
    ap.add_argument("--out", required=True, help="goldens JSON to write")
    args = ap.parse_args()

    import llama_cpp
    from llama_cpp import Llama

    env = jinja_env()
    vocabs = {}  # file -> (Llama, bos text, eos text, add_bos, add_eos)
    head_templates = {}
    cases = []
    for t in TEMPLATES:
        path = os.path.join(args.vocab_files, "templates", t["file"])
        with open(path, encoding="utf-8") as f:
            source = f.read()
        if t["vocab"]:
            if t["vocab"] not in vocabs:
                llm = Llama(model_path=os.path.join(args.vocab_files, t["vocab"]), vocab_only=True, verbose=False)
                v = llm._model.vocab

                def text_of(tok, llm=llm):
                    return llm.detokenize([tok], special=True).decode("utf-8") if tok >= 0 else ""
                vocabs[t["vocab"]] = (llm, text_of(llama_cpp.llama_vocab_bos(v)), text_of(llama_cpp.llama_vocab_eos(v)),
                                      bool(llama_cpp.llama_vocab_get_add_bos(v)),
                                      bool(llama_cpp.llama_vocab_get_add_eos(v)))
            llm, bos, eos, add_bos, add_eos = vocabs[t["vocab"]]
        else:
            llm, bos, eos, add_bos, add_eos = None, t["bos_token"], t["eos_token"], t["add_bos"], t["add_eos"]
        uses_system = template_uses_system(env, source)
        head_templates[t["name"]] = {
            "file": t["file"], "sha256": sha256_of(path),
            "vocab": t["vocab"], "vocab_sha256": sha256_of(os.path.join(args.vocab_files, t["vocab"])) if t["vocab"] else None,
            "bos_token": bos, "eos_token": eos, "add_bos": add_bos, "add_eos": add_eos,
            "supports_system_role": uses_system, "builtin": t["builtin"], "source": source,
        }
        tmpl = env.from_string(source)
        thinking_values = [None, False] if t.get("thinking_switch") else [None]
        for conv_name, add_gen in RENDERINGS:
            conv = CONVERSATIONS[conv_name]
            msgs = [{"role": r, "content": c} for r, c in conv]
            if not uses_system and msgs and msgs[0]["role"] == "system":
                if len(msgs) > 1:
                    msgs[1] = {"role": msgs[1]["role"], "content": msgs[0]["content"] + "\n" + msgs[1]["content"]}
                msgs = msgs[1:]
            for thinking in thinking_values:
                if thinking is False and not add_gen:
                    continue
                ctx = {"messages": msgs, "bos_token": bos, "eos_token": eos}
                if add_gen:
                    ctx["add_generation_prompt"] = True
                if thinking is not None:
                    ctx["enable_thinking"] = thinking
                text = tmpl.render(**ctx)
                prompt = text
                if add_bos and bos and prompt.startswith(bos):
                    prompt = prompt[len(bos):]
                if add_eos and eos and prompt.endswith(eos):
                    prompt = prompt[:-len(eos)]
                case = {"template": t["name"], "conversation": conv_name, "add_generation_prompt": add_gen,
                        "enable_thinking": thinking, "messages": [[r, c] for r, c in conv],
                        "text": text, "prompt_text": prompt}
                if llm is not None:
                    case["ids"] = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
                case["builtin_text"] = builtin_render(t["builtin"], conv, add_gen) if thinking is None else None
                cases.append(case)

    head = {
        "generator": "scripts/goldens/chat_templates.py",
        "llama_cpp_python": llama_cpp.__version__,
        "templates": head_templates,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    write_lines(args.out, head, "cases", cases)
    print(f"{args.out}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
