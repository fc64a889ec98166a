"""A local OpenAI-compatible chat server for tests and the concurrency benchmark (standard library only).

``with FakeLLMServer() as server:`` serves POST /v1/chat/completions on 127.0.0.1 (a free port) in a
thread; ``server.base_url`` is what an ``llm:`` spec's base_url takes. Each request takes the next entry
of ``server.script`` (a list, consumed from the front) or, when it is empty, ``server.default``:

    "429", "500", "401"        answer with that HTTP status
    ("status", code, message)  answer with that status and error message
    ("sleep", s)               wait s seconds before answering (a client timeout below s sees a timeout)
    ("reply", text)            a completion with that text (usage and system_fingerprint "fp_fake")
    ("length", text)           a completion cut off: finish_reason "length"
    callable(body) -> text     a completion with what it returns for the request's JSON body

Every request's JSON body and Authorization header are kept in ``server.requests`` (calls counted there);
``latency`` seconds are waited before every answer (the benchmark's 50 ms model).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "completion_tokens_details": {"reasoning_tokens": 5}}


def first_move(body: dict) -> str:
    return 'I pick the first move.\n{"move": 1}'


class FakeLLMServer:
    def __init__(self, default=first_move, latency: float = 0.0):
        self.default, self.latency = default, latency
        self.script: list = []
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                size = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(size) or b"{}")
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "authorization": self.headers.get("Authorization")})
                    step = outer.script.pop(0) if outer.script else outer.default
                if outer.latency:
                    time.sleep(outer.latency)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": f"no route {self.path}"})
                if isinstance(step, tuple) and step[0] == "sleep":
                    time.sleep(step[1])
                    step = outer.default
                if isinstance(step, str) and step.isdigit():
                    return self._send(int(step), {"error": {"message": f"fake {step}"}})
                if isinstance(step, tuple) and step[0] == "status":
                    return self._send(step[1], {"error": {"message": step[2]}})
                finish, text = "stop", None
                if isinstance(step, tuple):
                    finish = "length" if step[0] == "length" else "stop"
                    text = step[1]
                else:
                    text = step(body)
                self._send(200, {"id": "fake", "object": "chat.completion", "model": body.get("model"),
                                 "system_fingerprint": "fp_fake", "usage": USAGE,
                                 "choices": [{"index": 0, "finish_reason": finish,
                                              "message": {"role": "assistant", "content": text}}]})

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: list[str] | None = None) -> None:
    """`python -m tests.agents.fake_llm_server --latency 0.05`: serve in a process of its own (the benchmark's
    server, off the client's GIL) until killed; the first line on stdout is the base URL."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m tests.agents.fake_llm_server")
    p.add_argument("--latency", type=float, default=0.0)
    args = p.parse_args(argv)
    with FakeLLMServer(latency=args.latency) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
