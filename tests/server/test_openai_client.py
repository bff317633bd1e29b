#!/usr/bin/env python3
"""OpenAI's official Python client against `hearth-cli serve` on the default model:
listing models, chat completions streamed and not (the same greedy text both ways),
usage with cached prompt tokens, stop strings, text completions, errors as the client
raises them (bad request, unknown model, context overflow, bad key), parallel clients
(their greedy replies equal the sequential ones: batching does not change results) and
a client that disconnects mid-stream (its request is cancelled and its KV blocks freed).

    python tests/server/test_openai_client.py --hearth-cli build/app/hearth-cli
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import openai

KEY = "test-key-8f3a"
SYSTEM = ("You are Hearth's test persona. You answer briefly and plainly, in one or two "
          "sentences, and you never use lists or headings. You like geography, cooking "
          "and the history of small towns.")
QUESTIONS = ["What is the capital of France?", "Name a fruit that is yellow.",
             "How many legs does a spider have?", "What colour is the sky?",
             "What do bees make?", "Where is Mount Fuji?", "What is ice made of?",
             "Who wrote Hamlet?"]

ARGS = None
SERVER = None  # (process, base url)


def start_server():
    cmd = [ARGS.hearth_cli, "serve", "--port", "0", "--threads", "2", "--kv-disk-mb", "0",
           "--api-key", KEY]
    if ARGS.model:
        cmd += ["--model", ARGS.model]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError("hearth-cli serve exited: %s" % proc.wait())
        sys.stderr.write(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [sys.stderr.write(l) for l in proc.stderr],
                             daemon=True).start()
            return proc, m.group(1)
    raise RuntimeError("hearth-cli serve did not start")


def client(key=KEY, **kw):
    return openai.OpenAI(base_url=SERVER[1] + "/v1", api_key=key, max_retries=0, **kw)


def stats():
    req = urllib.request.Request(SERVER[1] + "/stats",
                                 headers={"Authorization": "Bearer " + KEY})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def ask(c, question, **kw):
    return c.chat.completions.create(
        model=MODEL, temperature=0, max_tokens=kw.pop("max_tokens", 40),
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        **kw)


class OpenAIClient(unittest.TestCase):
    def test_models(self):
        models = client().models.list().data
        self.assertEqual([m.id for m in models], [MODEL])

    def test_chat_streamed_equals_whole_and_reports_usage(self):
        c = client()
        whole = ask(c, QUESTIONS[0])
        text = whole.choices[0].message.content
        self.assertTrue(text)
        self.assertIn(whole.choices[0].finish_reason, ("stop", "length"))
        self.assertGreater(whole.usage.prompt_tokens, 40)
        self.assertEqual(whole.usage.total_tokens,
                         whole.usage.prompt_tokens + whole.usage.completion_tokens)

        pieces, usage, finish = [], None, None
        for chunk in ask(c, QUESTIONS[0], stream=True, stream_options={"include_usage": True}):
            if chunk.usage:
                usage = chunk.usage
            for ch in chunk.choices:
                if ch.delta.content:
                    pieces.append(ch.delta.content)
                if ch.finish_reason:
                    finish = ch.finish_reason
        self.assertEqual("".join(pieces), text)
        self.assertEqual(finish, whole.choices[0].finish_reason)
        self.assertIsNotNone(usage)
        self.assertEqual(usage.prompt_tokens, whole.usage.prompt_tokens)
        # The same prompt again: everything but the partly filled last block is cached.
        self.assertGreaterEqual(usage.prompt_tokens_details.cached_tokens,
                                usage.prompt_tokens - 16)

    def test_shared_system_prompt_is_cached_across_requests(self):
        c = client()
        ask(c, QUESTIONS[1], max_tokens=2)
        other = ask(c, QUESTIONS[2], max_tokens=2)
        self.assertGreaterEqual(other.usage.prompt_tokens_details.cached_tokens, 32)

    def test_stop_string(self):
        c = client()
        text = ask(c, QUESTIONS[0], max_tokens=30).choices[0].message.content
        words = text.split()
        self.assertGreater(len(words), 2, text)
        stop = words[2]
        cut = ask(c, QUESTIONS[0], max_tokens=30, stop=[stop])
        self.assertEqual(cut.choices[0].finish_reason, "stop")
        self.assertEqual(cut.choices[0].message.content, text[:text.index(stop)])

    def test_text_completion(self):
        c = client()
        r = c.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=12,
                                 temperature=0)
        self.assertTrue(r.choices[0].text)
        self.assertEqual(r.usage.completion_tokens, 12)
        streamed = "".join(ch.choices[0].text for ch in c.completions.create(
            model=MODEL, prompt="Once upon a time", max_tokens=12, temperature=0,
            stream=True) if ch.choices)
        self.assertEqual(streamed, r.choices[0].text)

    def test_errors(self):
        c = client()
        with self.assertRaises(openai.BadRequestError) as e:
            c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}],
                                      temperature="hot")
        self.assertEqual(e.exception.body["param"], "temperature")
        # Any model name is served by the loaded model, whose name the reply gives (as
        # llama-server; `serve --strict-model` refuses other names).
        r = c.chat.completions.create(model="gpt-9", max_tokens=4,
                                      messages=[{"role": "user", "content": "x"}])
        self.assertEqual(r.model, MODEL)
        with self.assertRaises(openai.BadRequestError) as e:
            c.chat.completions.create(model=MODEL, messages=[
                {"role": "user", "content": "word " * 20000}])
        self.assertEqual(e.exception.code, "context_length_exceeded")
        with self.assertRaises(openai.BadRequestError):
            c.chat.completions.create(model=MODEL, n=2,
                                      messages=[{"role": "user", "content": "hi"}])
        with self.assertRaises(openai.AuthenticationError):
            client(key="wrong").models.list()

    def test_parallel_clients_get_their_sequential_replies(self):
        c = client()
        sequential = [ask(c, q).choices[0].message.content for q in QUESTIONS]
        with ThreadPoolExecutor(len(QUESTIONS)) as pool:
            parallel = list(pool.map(lambda q: ask(client(), q), QUESTIONS))
        self.assertEqual([r.choices[0].message.content for r in parallel], sequential)
        self.assertTrue(all(r.usage.prompt_tokens_details.cached_tokens >= 32 for r in parallel))

    def test_disconnect_mid_stream_frees_the_request(self):
        before = stats()
        c = client()
        stream = ask(c, QUESTIONS[3], max_tokens=4000, stream=True,
                     extra_body={"ignore_eos": True})
        got = 0
        for chunk in stream:
            got += 1
            if got == 5:
                break
        stream.close()  # the client goes away mid-reply
        deadline = time.time() + 15
        while time.time() < deadline:
            s = stats()
            if (s["requests_running"] == 0 and s["server"]["active"] == 0 and
                    s["server"]["cancelled"] > before["server"]["cancelled"]):
                break
            time.sleep(0.1)
        s = stats()
        self.assertEqual(s["requests_running"], 0, s)
        self.assertEqual(s["server"]["active"], 0, s)
        self.assertGreater(s["server"]["cancelled"], before["server"]["cancelled"], s)
        # Stateless: nothing parked, no block held once no request runs.
        self.assertEqual(s["conversations_parked"], 0, s)
        self.assertEqual(s["kv"]["blocks_used"], 0, s)


def main():
    global ARGS, SERVER, MODEL
    p = argparse.ArgumentParser()
    p.add_argument("--hearth-cli", required=True)
    p.add_argument("--model")
    ARGS, rest = p.parse_known_args()
    SERVER = start_server()
    try:
        MODEL = client().models.list().data[0].id
        ok = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
        sys.exit(0 if ok.wasSuccessful() else 1)
    finally:
        SERVER[0].terminate()
        SERVER[0].wait(30)


if __name__ == "__main__":
    main()
