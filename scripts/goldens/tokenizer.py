#!/usr/bin/env python3
"""Tokenizer goldens: what llama.cpp (via llama-cpp-python) makes of a fixed corpus.

  tokenizer.py --write-corpus tests/data/tokenizer/corpus.json
      writes the corpus (deterministic: the same file on every run and machine)
  tokenizer.py --model MODEL.gguf --corpus tests/data/tokenizer/corpus.json \
               --out tests/data/tokenizer/smollm2-goldens.json \
               [--variants-out tests/data/tokenizer/smollm2-variants.json]
      records llama.cpp's token ids (special tokens off and on), its detokenized text,
      and the vocabulary facts the C++ test checks (attributes, end-of-generation set).
      --variants-out also runs llama.cpp on vocabulary-only GGUF files derived from the
      model: the same vocabulary under the other BPE pre-tokenizers, and a SentencePiece
      vocabulary made from it (see spm_vocabulary; the C++ test derives the same files).
  tokenizer.py --model build/vocab-files/ggml-vocab-phi-3.gguf --extra phi3 \
               --corpus tests/data/tokenizer/corpus.json --out tests/data/tokenizer/phi3-goldens.json
      the same goldens for another vocabulary (here llama.cpp's own vocabulary-only files,
      scripts/vocab-files); --extra appends that vocabulary's strings (EXTRA_STRINGS: its
      control, user-defined and unknown-type tokens) to the corpus.

Run it with the reference venv that scripts/goldens/setup-reference builds.
"""

import argparse
import ctypes
import hashlib
import json
import os
import struct
import sys
import tempfile

# ---------------------------------------------------------------------------- corpus

PROSE = [
    "Hello world",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
    "Call me Ishmael. Some years ago - never mind how long precisely - I went to sea.",
    "In 1969, Neil Armstrong became the first person to walk on the Moon.",
    "She sells sea shells by the sea shore; the shells she sells are surely seashells.",
    "Why? Because I said so! Really... are you sure?!",
    "\"Quoted text,\" she said, 'and single quotes too.'",
    "Mr. Smith went to Washington D.C. on Jan. 5th at 3 p.m.",
    "e.g. i.e. etc. vs. cf. a.k.a. U.S.A.",
    "ALL CAPS SENTENCE WITH SHOUTING",
    "camelCaseIdentifier and snake_case_identifier and kebab-case-identifier",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "ababababababababababababab",
    "Tokenization is the process of splitting text into smaller units called tokens.",
    "A large language model predicts the next token given the previous ones.",
    "Hearth runs the model locally; nothing leaves your computer.",
    "Can you summarize this article in three bullet points?",
    "Write a haiku about autumn leaves falling on a quiet pond.",
    "Translate 'good morning' into French, Spanish and German.",
    "What is 2 + 2? And what is 12 * 12?",
    "I'm not sure; maybe we'll find out tomorrow.",
    "The end.",
    " leading space",
    "trailing space ",
    "  two leading spaces",
    "x",
    "",
    " ",
    "?",
    "...",
    "---",
    "!!!???",
    "a-b_c.d,e;f:g!h?i",
    "(parentheses) [brackets] {braces} <angles>",
    "@user #hashtag $100 %50 ^caret &amp *star",
    "~tilde `backtick` |pipe| \\backslash/ forward/slash",
    "Smart quotes: \u201cdouble\u201d and \u2018single\u2019 and it\u2019s",
    "Dashes \u2013 en and \u2014 em, ellipsis\u2026 and bullet \u2022 point",
    "\u00a9 2024 Company\u2122 \u00ae registered \u00a7 section \u00b6 pilcrow",
]

CODE = [
    "def add(a, b):\n    return a + b\n",
    "for i in range(10):\n\tprint(i ** 2)",
    "class Foo(Bar):\n    def __init__(self):\n        super().__init__()\n        self.x = None\n",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)",
    "#include <iostream>\nint main() {\n    std::cout << \"hi\" << std::endl;\n    return 0;\n}\n",
    "template <typename T>\nauto max(T a, T b) -> T { return a > b ? a : b; }",
    "std::vector<std::unique_ptr<Node>> nodes; nodes.emplace_back(new Node{});",
    "const f = (x) => x * 2;\nconsole.log([1, 2, 3].map(f));",
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }",
    "let s: String = String::from(\"hello\");\nprintln!(\"{}\", s);",
    "fn main() -> Result<(), Box<dyn Error>> {\n    Ok(())\n}",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC LIMIT 10;",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do echo \"$f\"; done",
    "<!DOCTYPE html>\n<html><head><title>Test</title></head><body><p class=\"x\">Hi</p></body></html>",
    "body { margin: 0; padding: 0 1rem; font-family: sans-serif; }\n.btn:hover { color: #ff0000; }",
    "public static void main(String[] args) { System.out.println(\"Hello\"); }",
    "if (x != null && x.length > 0) { return x[0]; } else { throw new Error(); }",
    "x+=1; y-=2; z*=3; w/=4; a%=5; b<<=1; c>>=2; d&&=e; f||=g; h??=i;",
    "a == b != c <= d >= e === f !== g => h -> i :: j",
    "    indented with four spaces\n        and eight\n\t\tand two tabs",
    "// comment\n/* block\n   comment */\n# hash comment\n-- sql comment",
    "printf(\"%d %s %5.2f\\n\", n, str, val);",
    "regex = r'^(?:[a-z0-9!#$%&*+/=?^_`{|}~-]+)@(?:[a-z0-9-]+\\.)+[a-z]{2,}$'",
    "0x1F 0xDEADBEEF 0b1010 0o755 1e-9 3.14f 100_000 42u64",
    "    def f(self):\n        pass\n\n\n\n    def g(self):\n        pass",
    "\\documentclass{article}\n\\begin{equation} E = mc^2 \\end{equation}",
    "$$\\int_0^\\infty e^{-x^2} dx = \\frac{\\sqrt{\\pi}}{2}$$",
    "git commit -m \"Fix bug #123\" && git push origin main",
    "C:\\Users\\Admin\\Documents\\file.txt and /usr/local/bin/python3",
]

NUMBERS = [
    "0", "7", "42", "123", "1234", "12345", "123456", "1234567", "12345678",
    "123456789", "1234567890", "12345678901234567890", "3.14159265358979",
    "0.5", ".5", "5.", "-1", "-0.001", "+42", "1,000", "1,234,567", "1.234.567,89",
    "10 000 000", "1e10", "6.022e23", "2.5E-3", "100%", "$1,299.99", "\u20ac50",
    "\u00a3100", "\u00a51000", "3/4", "1:30", "12:45:59", "2024-01-15", "01/15/2024",
    "+1 (555) 123-4567", "v1.2.3", "192.168.0.1", "ISBN 978-3-16-148410-0",
    "Pi is 3.14159 and e is 2.71828", "1st 2nd 3rd 4th 21st 100th",
    "1 2 3 4 5 6 7 8 9 10", "In 2023 there were 8,045,311,447 people.",
    "\u00bd \u00bc \u00be \u2153 \u00b2 \u00b3 \u00b9 \u2070", "\u2160 \u2161 \u216b \u2460 \u2461 \u2469",
    "\uff11\uff12\uff13 fullwidth", "\u0663\u0664\u0665 Arabic-Indic",
    "\u096a\u0968 Devanagari digits", "\u0e51\u0e52\u0e53 Thai digits",
]

WHITESPACE = [
    "a b", "a  b", "a   b", "a    b", "a     b", "a          b",
    "a\tb", "a\t\tb", "a \tb", "a\t b", "a\nb", "a\n\nb", "a\n\n\nb",
    "a\r\nb", "a\r\n\r\nb", "a\rb", "a \nb", "a\n b", "a \n b", "a  \n  b",
    "line one\nline two\r\nline three\rline four",
    "\n", "\n\n", "\r\n", "\t", "  ", "   ", "\t\t\t", " \n ", "\n \n",
    "   leading and trailing   ", "word\n", "\nword", "word \n", " \t \n \r\n ",
    "end with spaces   ", "end with newline\n", "end with tabs\t\t",
    "non\u00a0breaking\u00a0space", "ideographic\u3000space", "em\u2003space thin\u2009space",
    "line\u2028separator", "mongolian\u180evowel\u180e\u180e!", "zero\u200bwidth\u200cnon\u200djoiner",
    "narrow\u202fno-break", "medium\u205fmath", "next\u0085line", "ogham\u1680space",
    "vertical\x0btab and form\x0cfeed", "control \x01\x02\x03 chars \x7f del",
    "!  !", "?\n?", ".  \n  .", "a!\n\nb", "x.\r\n\r\ny",
]

EMOJI = [
    "\U0001f600", "\U0001f600\U0001f603\U0001f604", "I love \U0001f355 and \U0001f37a!",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 family",
    "\U0001f469\u200d\U0001f4bb coder \U0001f3f3\ufe0f\u200d\U0001f308 flag",
    "\U0001f1fa\U0001f1f8 \U0001f1ef\U0001f1f5 \U0001f1e9\U0001f1ea flags",
    "\U0001f44d\U0001f3fb \U0001f44d\U0001f3ff skin tones", "1\ufe0f\u20e3 #\ufe0f\u20e3 keycaps",
    "\u2764\ufe0f \u2728 \u2b50 \u2600\ufe0f", "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",
    "Great job!\U0001f389\U0001f389\U0001f389", "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scotland",
]

SCRIPTS = [
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01", "\u6211\u559c\u6b22\u5b66\u4e60\u4eba\u5de5\u667a\u80fd\u548c\u673a\u5668\u5b66\u4e60\u3002",
    "\u4eca\u65e5\u306f\u3044\u3044\u5929\u6c17\u3067\u3059\u306d\u3002", "\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3068\u6f22\u5b57",
    "\u30b3\u30f3\u30d4\u30e5\u30fc\u30bf\u30fc\u30fb\u30b5\u30a4\u30a8\u30f3\u30b9", "\uff8a\uff9d\uff76\uff78\uff76\uff80\uff76\uff85 halfwidth",
    "\uc548\ub155\ud558\uc138\uc694, \uc138\uacc4!", "\ud55c\uad6d\uc5b4\ub294 \uc544\ub984\ub2e4\uc6b4 \uc5b8\uc5b4\uc785\ub2c8\ub2e4.",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645", "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u062c\u0645\u064a\u0644\u0629\u060c \u0623\u0644\u064a\u0633 \u0643\u0630\u0644\u0643\u061f",
    "\u0634\u064e\u0643\u0652\u0631\u064b\u0627 with harakat", "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u05e2\u05b4\u05d1\u05b0\u05e8\u05b4\u05d9\u05ea with niqqud", "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e \u092c\u0939\u0941\u0924 \u0938\u0941\u0902\u0926\u0930 \u0939\u0948\u0964", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01",
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07\u0e23\u0e30\u0e2b\u0e27\u0e48\u0e32\u0e07\u0e04\u0e33", "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!",
    "\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u044f\u0437\u044b\u043a \u2014 \u043e\u0434\u0438\u043d \u0438\u0437 \u0432\u043e\u0441\u0442\u043e\u0447\u043d\u043e\u0441\u043b\u0430\u0432\u044f\u043d\u0441\u043a\u0438\u0445.", "\u0423\u043a\u0440\u0430\u0457\u043d\u0441\u044c\u043a\u0430 \u043c\u043e\u0432\u0430: \u0457\u0436\u0430\u043a, \u0491\u0430\u043d\u043e\u043a",
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5", "\u0391\u03b8\u03ae\u03bd\u03b1, \u0398\u03b5\u03c3\u03c3\u03b1\u03bb\u03bf\u03bd\u03af\u03ba\u03b7; \u03a9\u03bc\u03ad\u03b3\u03b1",
    "\u0986\u09ae\u09bf \u09ac\u09be\u0982\u09b2\u09be\u09af\u09bc \u0997\u09be\u09a8 \u0997\u09be\u0987", "\u0bb5\u0ba3\u0b95\u0bcd\u0b95\u0bae\u0bcd \u0b89\u0bb2\u0b95\u0bae\u0bcd",
    "\u10d2\u10d0\u10db\u10d0\u10e0\u10ef\u10dd\u10d1\u10d0 \u10e1\u10d0\u10e5\u10d0\u10e0\u10d7\u10d5\u10d4\u10da\u10dd", "\u0532\u0561\u0580\u0565\u0582 \u0561\u0577\u056d\u0561\u0580\u0570",
    "Xin ch\u00e0o th\u1ebf gi\u1edbi, ti\u1ebfng Vi\u1ec7t c\u00f3 d\u1ea5u", "\u0130stanbul'da \u011f\u00fczel bir g\u00fcn, \u0131\u015f\u0131k",
    "Za\u017c\u00f3\u0142\u0107 g\u0119\u015bl\u0105 ja\u017a\u0144", "Stra\u00dfe, Gr\u00fc\u00dfe, \u00e4\u00f6\u00fc \u00c4\u00d6\u00dc \u1e9e",
    "Fran\u00e7ais: \u00e9l\u00e8ve, na\u00efve, c\u0153ur, No\u00ebl", "Espa\u00f1ol: \u00bfC\u00f3mo est\u00e1s? \u00a1Muy bien!",
    "Portugu\u00eas: a\u00e7\u00e3o, cora\u00e7\u00e3o, p\u00e3o", "\u00cdslenska: \u00fe\u00f3rn, \u00f0\u00e6tt, \u00e6\u00f0i",
    "\u12a0\u121b\u122d\u129b Amharic", "\u1797\u17b6\u179f\u17b6\u1781\u17d2\u1798\u17c2\u179a Khmer",
    "\u0ea5\u0eb2\u0ea7 Lao \u1019\u103c\u1014\u103a\u1019\u102c Burmese", "\u0d2e\u0d32\u0d2f\u0d3e\u0d33\u0d02 \u0c24\u0c46\u0c32\u0c41\u0c17\u0c41 \u0c95\u0ca8\u0ccd\u0ca8\u0ca1",
    "\u0f56\u0f7c\u0f51\u0f0b\u0f66\u0f90\u0f51 Tibetan", "\ua000\ua001 Yi \u1403\u14c4\u1483 Cree",
    "Mixed: English \u4e2d\u6587 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u05e2\u05d1\u05e8\u05d9\u05ea \u0939\u093f\u0928\u094d\u0926\u0940",
    "\U00020000\U0002a6d6 CJK extension B", "\U0001d400\U0001d401\U0001d402 math bold",
]

COMBINING = [
    "e\u0301 a\u0300 o\u0302 n\u0303 u\u0308", "cafe\u0301 vs caf\u00e9", "Z\u0351\u036b\u0343a\u0334\u0327l\u035fg\u0315o\u0337\u0328",
    "\u1e9b\u0323 \u0073\u0323\u0307", "A\u030a\u212b\u00c5", "x\u0332y\u0332z\u0332 underline",
    "\u0915\u094d\u0937 conjunct", "\ufb01\ufb02 ligatures \ufb00",
]

CONTRACTIONS = [
    "don't", "Don't", "DON'T", "I'LL", "I'll", "we've", "WE'VE", "they're", "THEY'RE",
    "she'd", "He's", "HE'S", "I'm", "I'M", "it's its it is", "'tis the season",
    "rock'n'roll", "O'Neil's", "y'all'd've", "can't won't shouldn't", "the dog's bone",
    "' s", "'", "''", "'''", "'hello'", "don\u2019t (curly)", "l'homme, aujourd'hui",
    "He said 'I'd rather not' and left.", "1990's", "'S 'T 'RE 'VE 'M 'LL 'D",
    "ain't isn't aren't", " 's 'm 're 've", "hello ' world", "it ' s",
]

SPECIAL = [
    "<|im_start|>user\nhi<|im_end|>",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|><|im_end|>", "<|im_end|><|im_end|><|im_end|>", "<|endoftext|>",
    "text<|endoftext|>more text", " <|im_start|> spaced <|im_end|> ",
    "<|im_start", "im_end|>", "<|im_end|", "<|im_start|", "|im_start|>", "<|im_>",
    "<|<|im_start|>|>", "<<|im_end|>>", "<|im_start|><|im_start|>user",
    "<reponame>repo<file_sep>path/to/file.py<filename>x", "<gh_stars>100",
    "<jupyter_code>print(1)<jupyter_output>1<empty_output>",
    "<|endoftext|><|im_start|>assistant\nSure!<|im_end|><|endoftext|>",
    "<s>Llama style</s> [INST] inst [/INST]", "<|eot_id|><|start_header_id|>user<|end_header_id|>",
    "<issue_start>bug<issue_comment>fix<issue_closed>", "abc<|im_end|>def<|im_start|>ghi",
]

MARKUP = [
    "https://www.example.com/path/to/page?query=1&other=two#section",
    "http://localhost:8080/api/v1/users/42", "ftp://files.example.org/pub/file.tar.gz",
    "Contact: john.doe+tag@example.co.uk", "mailto:someone@example.com",
    "{\"name\": \"Alice\", \"age\": 30, \"tags\": [\"a\", \"b\"], \"nested\": {\"ok\": true, \"v\": null}}",
    "[{\"id\":1},{\"id\":2}]", "{\n  \"key\": \"value\",\n  \"list\": [1, 2, 3]\n}",
    "| Name | Age | City |\n|------|----:|:----:|\n| Bob  | 25  | NYC  |\n| Ann  | 31  | LA   |",
    "# Heading\n\n## Subheading\n\n- item one\n- item two\n  - nested\n\n1. first\n2. second",
    "**bold** *italic* `code` ~~strike~~ [link](https://x.y) ![img](a.png)",
    "```python\nprint('hi')\n```", "> quoted line\n>> nested quote",
    "<div id=\"main\" style=\"color: red;\">&lt;escaped&gt; &amp; &quot;</div>",
    "key=value; other_key = \"quoted value\"; path=/a/b/c", "name: test\nversion: 1.0\ndeps:\n  - a\n  - b",
    "[section]\nkey = 1\nother = \"two\"", "550e8400-e29b-41d4-a716-446655440000",
    "SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lg==", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "user@host:~/projects$ ls -la | grep '.cpp' > out.txt 2>&1",
    "=SUM(A1:A10) / COUNT(B2:B20)", "#FF5733 rgb(255, 87, 51) hsl(11, 100%, 60%)",
    "@media (max-width: 600px) { .col { width: 100%; } }",
]


class Lcg:
    """A tiny deterministic generator (Python's random is not stable across versions)."""

    def __init__(self, seed):
        self.state = seed

    def next(self, n):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 33) % n


def generated():
    """Mixtures of the pools above, digit runs of every length and whitespace runs."""
    out = []
    for n in range(1, 26):
        out.append("".join(str((i * 7 + 3) % 10) for i in range(n)))
        out.append("x" + " " * (n % 9 + 1) + "".join(str(i % 10) for i in range(n)))
    for spaces in range(1, 9):
        for tail in ["word", "42", "!", "\n", "\u4e2d"]:
            out.append(" " * spaces + tail)
            out.append("a" + " " * spaces + tail)
    pools = [PROSE, CODE, NUMBERS, WHITESPACE, EMOJI, SCRIPTS, COMBINING, CONTRACTIONS, SPECIAL, MARKUP]
    seps = ["", " ", "  ", "\n", "\t", "\r\n", " \n", ", ", "'s ", "<|im_end|>"]
    rng = Lcg(20240101)
    for _ in range(80):
        parts = []
        for _ in range(1 + rng.next(4)):
            pool = pools[rng.next(len(pools))]
            parts.append(pool[rng.next(len(pool))])
            parts.append(seps[rng.next(len(seps))])
        out.append("".join(parts))
    # A long text, as a chat message can be.
    out.append("\n\n".join(PROSE[2:20] + CODE[:6] + SCRIPTS[:8]) * 3)
    out.append("All printable ASCII: " + "".join(chr(c) for c in range(0x20, 0x7F)))
    out.append("Latin-1: " + "".join(chr(c) for c in range(0xA0, 0x100)))
    return out


def corpus():
    seen, out = set(), []
    for s in PROSE + CODE + NUMBERS + WHITESPACE + EMOJI + SCRIPTS + COMBINING + CONTRACTIONS + SPECIAL + MARKUP + generated():
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


# Strings for one vocabulary's own special tokens (the corpus uses SmolLM2's), appended to
# the corpus with --extra. Phi-3: <s> and the chat markers are control tokens, </s> is
# user-defined (split out even with special tokens off), [PAD32011]... have type unknown
# (split out only with them on). Qwen2 (the Qwen2/Qwen1.5 vocabulary llama.cpp ships):
# three control tokens, [PAD151646]... user-defined; <think> and <tool_call> are text.
EXTRA_STRINGS = {
    "phi3": [
        "<|user|>\nHello<|end|>\n<|assistant|>\n",
        "<|system|>\nYou are helpful.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|endoftext|>",
        "<s><|user|>\nhi<|end|>\n<|assistant|>", " <|user|> spaced <|end|> ", "<|user|><|end|><|end|>",
        "</s>", "text</s>more</s>", "a </s> b", "<unk>", "x<unk>y", "<|placeholder1|><|placeholder6|> z",
        "[PAD32011]", "a[PAD32063]b [PAD32040] c", "<|user|", "|end|>", "<|assistant|>\n\n\nHi",
        "<|end|>\n<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n4<|end|>",
        "\n<|user|>", "  <|end|>", "<|end|>  ", "\u2581<|end|>\u2581\u2581x",
    ],
    "qwen2": [
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>assistant\n<think>\n\n</think>\n\nHello<|im_end|>\n",
        "<think>\nreasoning\n</think>\n\nanswer", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
        "[PAD151646]", "a[PAD151702]b [PAD151650] c", "[PAD151646][PAD151647]", "<|endoftext|><|im_end|>",
        " <|im_start|> <|im_end|> ", "<|im_start|>user\n\n\n<|im_end|>", "\n\n<|im_start|>", "<|im_end|>\n\n\n",
    ],
    # Gemma 3 (262,144 tokens, byte fallback, no space prefix): <pad> <eos> <bos> <unk>
    # <mask>, <start_of_turn>, <end_of_turn>, <start_of_image>, <unusedN> are control
    # tokens; [multimodal], runs of 1-31 newlines, spaces and tabs and a set of HTML tags
    # (<table>, <h1>, <strong>, <s>...) are user-defined (split out even with special
    # tokens off); </s> is text but an end-of-generation token.
    "gemma3": [
        "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
        "<bos><start_of_turn>user\nYou are helpful.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n",
        " <start_of_turn> spaced <end_of_turn> ", "<start_of_turn><end_of_turn><end_of_turn>",
        "<eos>", "text<eos>more", "<pad><unk><mask>", "<bos>", "x<unk>y",
        "[multimodal]", "a[multimodal]b", "<unused0><unused99> z", "<unused6241>",
        "<start_of_image><end_of_image>", "<start_of_turn", "end_of_turn>", "<start_of_turn>model\n\n\nHi",
        "<table><tr><td>1</td></tr></table>", "<h1>Title</h1>\n<strong>bold</strong> <em>it</em>",
        "<s>struck</s>", "x</s>y", "</s>", "<div><span>a</span></div><br>",
        "\t\tindent\t", "line\n\n\nbreaks\n\n\n\n\n", "a" + " " * 40 + "b", "\t" * 40, "\n" * 33,
        "code:\n    if x:\n        return 1\n", "\u00a0nbsp\u00a0", "\r\n\r\n", "\u2581\u2581x \u2581",
        "\U00020000\U0002a6a5\U0003134a", "\u0001\u007f\u0080",
        # A BOM inside the text (Qt's JSON reader drops one that opens a string).
        "a\ufeffBOM \ufeff",
    ],
}

# Malformed UTF-8 (hex), which a JSON string cannot hold: stray continuation bytes,
# truncated sequences, overlong forms, surrogates, bytes that start nothing.
INVALID_UTF8 = [
    "61ff62", "c3", "c328", "c080", "e08080", "eda080", "edbfbf", "e282", "e28261",
    "8080", "bf", "f888808080", "fe", "ff", "f09f98", "f09f9880", "f09f98804142",
    "e4bda0e5a5bd80", "3c7c696d5f656e647c3eff", "ff3c7c696d5f656e647c3e", "20ff20",
    "c3a9c3", "78c0af79", "e1a08e2078", "000102",
]

# ------------------------------------------------------------------ llama.cpp access


def write_lines(path, head, key, items):
    """JSON with one item per line, so diffs of regenerated files stay readable."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("{\n")
        for k, v in head.items():
            f.write(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n")
        f.write(f"  {json.dumps(key)}: [\n")
        for i, item in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            f.write("    " + json.dumps(item, ensure_ascii=False) + sep + "\n")
        f.write("  ]\n}\n")


def attr_name(mask):
    # llama_token_attr bits; CONTROL wins over UNUSED etc., as Hearth keeps one attribute.
    for bit, name in [(8, "control"), (16, "user_defined"), (1, "unknown"), (32, "byte"),
                      (2, "unused"), (4, "normal")]:
        if mask & bit:
            return name
    return "undefined"


def run_llama(path, strings, with_detok):
    import llama_cpp
    from llama_cpp import Llama

    llm = Llama(model_path=path, vocab_only=True, verbose=False)
    vocab = llm._model.vocab

    def detok(ids, special):
        arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
        need = llama_cpp.llama_detokenize(vocab, arr, len(ids), None, 0, False, special)
        size = -need if need < 0 else need
        buf = ctypes.create_string_buffer(size + 1)
        n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size + 1, False, special)
        # The size query counts bytes before the space clean-up, so n may be smaller.
        assert 0 <= n <= size, (n, size)
        return buf.raw[:n]

    out = []
    for raw in strings:
        ids = llm.tokenize(raw, add_bos=False, special=False)
        ids_special = llm.tokenize(raw, add_bos=False, special=True)
        item = {"ids": ids, "ids_special": ids_special}
        if with_detok:
            item["detok"] = detok(ids, False)
            item["special_detok"] = detok(ids_special, True)
        out.append(item)
    return llm, vocab, out


def goldens(model_path, corpus_path, out_path, extra=None):
    import llama_cpp

    with open(corpus_path, encoding="utf-8") as f:
        strings = json.load(f)["strings"]
    n_corpus = len(strings)
    if extra:
        strings = strings + EXTRA_STRINGS[extra]
    invalid_raw = [bytes.fromhex(h) for h in INVALID_UTF8]
    _, vocab, got = run_llama(model_path, [s.encode("utf-8") for s in strings] + invalid_raw, True)

    def as_text(key, b):
        try:
            return {key: b.decode("utf-8")}
        except UnicodeDecodeError:
            return {key + "_hex": b.hex()}

    cases = []
    for s, g in zip(strings, got):
        case = {"text": s, "ids": g["ids"], "ids_special": g["ids_special"]}
        case.update(as_text("special_detok", g["special_detok"]))
        case.update(as_text("detok", g["detok"]))
        cases.append(case)
    invalid = [{"hex": h, "ids": g["ids"], "ids_special": g["ids_special"]}
               for h, g in zip(INVALID_UTF8, got[len(strings):])]

    n = llama_cpp.llama_vocab_n_tokens(vocab)
    attrs = {}
    for i in range(n):
        name = attr_name(llama_cpp.llama_vocab_get_attr(vocab, i))
        if name != "normal":
            attrs[str(i)] = name
    with open(model_path, "rb") as f:
        sha = hashlib.file_digest(f, "sha256").hexdigest() if hasattr(hashlib, "file_digest") \
            else hashlib.sha256(f.read()).hexdigest()
    head = {
        "generator": "scripts/goldens/tokenizer.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": os.path.basename(model_path),
        "model_sha256": sha,
        **({"extra": extra, "corpus_strings": n_corpus} if extra else {}),
        "vocab": {
            "n_tokens": n,
            "bos": llama_cpp.llama_vocab_bos(vocab),
            "eos": llama_cpp.llama_vocab_eos(vocab),
            "eot": llama_cpp.llama_vocab_eot(vocab),
            "add_bos": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
            "eog": [i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i)],
            "attrs": attrs,
        },
        "invalid_utf8": invalid,
    }
    write_lines(out_path, head, "cases", cases)
    print(f"{out_path}: {len(cases)} strings ({len(cases) - n_corpus} extra), {len(invalid)} malformed inputs")
    return cases


# ------------------------------------------------------- vocabulary-only GGUF files

GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
GGUF_STRING, GGUF_ARRAY, GGUF_U32, GGUF_I32, GGUF_F32 = 8, 9, 4, 5, 6


def read_metadata(path):
    """The key/value section of a GGUF file as [(key, type, value)]; arrays are (type, list)."""
    with open(path, "rb") as f:
        def rd(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]

        def value(t):
            if t == GGUF_STRING:
                return f.read(rd("Q"))
            if t == GGUF_ARRAY:
                et, n = rd("I"), rd("Q")
                return (et, [value(et) for _ in range(n)])
            return rd(GGUF_SCALARS[t])

        if f.read(4) != b"GGUF":
            raise SystemExit(f"{path}: not a GGUF file")
        rd("I"), rd("Q")
        out = []
        for _ in range(rd("Q")):
            key = f.read(rd("Q")).decode()
            t = rd("I")
            out.append((key, t, value(t)))
        return out


def write_metadata(path, kvs):
    """A GGUF v3 file with these keys and no tensors (enough for vocab_only=True)."""
    def enc(t, v):
        if t == GGUF_STRING:
            return struct.pack("<Q", len(v)) + v
        if t == GGUF_ARRAY:
            return struct.pack("<IQ", v[0], len(v[1])) + b"".join(enc(v[0], x) for x in v[1])
        return struct.pack("<" + GGUF_SCALARS[t], v)
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    for key, t, v in kvs:
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", t) + enc(t, v)
    with open(path, "wb") as f:
        f.write(out + b"\0" * ((-len(out)) % 32))


def byte_decoder():
    """GPT-2's byte-level alphabet, character -> byte."""
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def spm_vocabulary(tokens, types):
    """A SentencePiece vocabulary made from a byte-level one, by a rule the C++ test repeats:
    <unk>, <s>, </s>, the 256 <0xNN> byte tokens, <|im_start|> and <|im_end|> (control),
    then every normal token whose bytes are valid UTF-8 without NUL, spaces written as
    U+2581, first occurrence only, scored -id so that earlier (more frequent) merges win.
    (llama.cpp reads token texts as C strings, so a NUL would cut a token short there.)"""
    dec = byte_decoder()
    out = [("<unk>", 2, 0.0), ("<s>", 3, 0.0), ("</s>", 3, 0.0)]
    out += [(f"<0x{b:02X}>", 6, 0.0) for b in range(256)]
    out += [("<|im_start|>", 3, 0.0), ("<|im_end|>", 3, 0.0)]
    seen = {t for t, _, _ in out}
    for i, (text, kind) in enumerate(zip(tokens, types)):
        if kind != 1:
            continue
        try:
            piece = bytes(dec[c] for c in text).decode("utf-8").replace(" ", "\u2581")
        except (KeyError, UnicodeDecodeError):
            continue
        if "\0" not in piece and piece not in seen:
            seen.add(piece)
            out.append((piece, 1, -float(i)))
    return out


def variants(model_path, strings, base_cases, out_path):
    kvs = read_metadata(model_path)
    tok_kvs = [kv for kv in kvs if kv[0].startswith("tokenizer.ggml.")]
    arch = [kv for kv in kvs if kv[0] == "general.architecture"]
    raws = [s.encode("utf-8") for s in strings]
    invalid = [bytes.fromhex(h) for h in INVALID_UTF8]
    head = {"generator": "scripts/goldens/tokenizer.py", "model": os.path.basename(model_path)}
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        # The same vocabulary under other pre-tokenizers: only the strings whose ids differ
        # from the smollm goldens are stored ([index, ids, ids_special]).
        for pre in ["llama-bpe", "qwen2", "gpt-2", "default"]:
            path = os.path.join(tmp, pre + ".gguf")
            write_metadata(path, arch + [(k, t, pre.encode() if k == "tokenizer.ggml.pre" else v)
                                         for k, t, v in tok_kvs])
            _, _, got = run_llama(path, raws, True)
            diff = [[i, g["ids"], g["ids_special"]] for i, (g, b) in enumerate(zip(got, base_cases))
                    if g["ids"] != b["ids"] or g["ids_special"] != b["ids_special"]]
            # Detokenized text where it is not the input (llama.cpp's space clean-up).
            detok = [[i, g["detok"].hex() if g["detok"] != raw else None,
                      g["special_detok"].hex() if g["special_detok"] != raw else None]
                     for i, (g, raw) in enumerate(zip(got, raws))
                     if g["detok"] != raw or g["special_detok"] != raw]
            lines.append({"bpe_pre": pre, "differs_from_smollm": diff, "detok_differs": detok})
            print(f"  {pre}: {len(diff)} of {len(raws)} strings tokenize differently than smollm")
        # SentencePiece: everything is stored; detok only where it is not the text itself.
        values = dict((k, v) for k, _, v in tok_kvs)
        vocab = spm_vocabulary([t.decode() for t in values["tokenizer.ggml.tokens"][1]],
                               values["tokenizer.ggml.token_type"][1])
        path = os.path.join(tmp, "spm.gguf")
        write_metadata(path, arch + [
            ("tokenizer.ggml.model", GGUF_STRING, b"llama"),
            ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, [t.encode() for t, _, _ in vocab])),
            ("tokenizer.ggml.token_type", GGUF_ARRAY, (GGUF_I32, [k for _, k, _ in vocab])),
            ("tokenizer.ggml.scores", GGUF_ARRAY, (GGUF_F32, [s for _, _, s in vocab])),
        ])
        import llama_cpp
        _, lv, got = run_llama(path, raws + invalid, True)
        n = llama_cpp.llama_vocab_n_tokens(lv)
        spm_head = {"spm_vocab_size": n, "spm_eog": [i for i in range(n) if llama_cpp.llama_vocab_is_eog(lv, i)]}
        for i, g in enumerate(got):
            item = {"i": i, "ids": g["ids"]}
            if g["ids_special"] != g["ids"]:
                item["ids_special"] = g["ids_special"]
            text = (raws + invalid)[i]
            for key in ("detok", "special_detok"):
                if g[key] != text:
                    item[key + "_hex"] = g[key].hex()
            lines.append({"spm": item})
    head.update(spm_head)
    write_lines(out_path, head, "variants", lines)
    print(f"{out_path}: {len(lines)} lines")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-corpus", metavar="PATH", help="write the corpus JSON and exit")
    ap.add_argument("--model", help="GGUF file whose vocabulary to use")
    ap.add_argument("--corpus", help="corpus JSON (from --write-corpus)")
    ap.add_argument("--out", help="goldens JSON to write")
    ap.add_argument("--variants-out", help="also write the pre-tokenizer and SentencePiece variants")
    ap.add_argument("--extra", choices=sorted(EXTRA_STRINGS),
                    help="append this vocabulary's special-token strings to the corpus")
    args = ap.parse_args()
    if args.write_corpus:
        strings = corpus()
        head = {"description": "Tokenizer golden corpus; regenerate with scripts/goldens/tokenizer.py --write-corpus"}
        write_lines(args.write_corpus, head, "strings", strings)
        print(f"{args.write_corpus}: {len(strings)} strings")
        return 0
    if not (args.model and args.corpus and args.out):
        ap.error("--model, --corpus and --out are required (or --write-corpus)")
    cases = goldens(args.model, args.corpus, args.out, args.extra)
    if args.variants_out:
        if args.extra:
            ap.error("--variants-out compares against the corpus alone: leave out --extra")
        with open(args.corpus, encoding="utf-8") as f:
            strings = json.load(f)["strings"]
        variants(args.model, strings, cases, args.variants_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
