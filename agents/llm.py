"""Language-model agents: `LLMAgent` over any `complete(messages) -> reply` callable, and the spec
``llm:model=M,base_url=URL,api_key_env=VAR,...`` over an OpenAI-compatible /chat/completions endpoint.

What the model sees: the game's rules (`domino_envs.text.rules_text`) and the seat's text view
(`seat_text`: the seat's decoded observation and the public move log kept by `SeatLog` from the seat's
own observations), with the legal moves numbered 1..k; nothing else. The agent needs its seat for the
log: it declares ``searches = True`` so every harness calls ``observe_state(state, seat, returns)``
before its decisions, and reads only `seat` from that call (never the row); or pass ``seat=`` when
building it by hand.

The reply contract (`extract_move`): the last ``{"move": N}`` JSON object in the reply, or a last
line ``MOVE: N``, N the move's number or its name; nothing else is read into a move. Each reply is
one of: ok, illegal (a number or name that is no legal move), unparsable (no contract found), empty,
truncated (finish_reason "length"), network (the endpoint failed after its own retries: 429, 5xx,
timeouts, retried with backoff and counted apart). A failed reply gets up to `retries` more tries,
each told why and shown the legal moves again; then ``on_fail="random"`` plays a legal move drawn
from the agent's seeded generator, or ``on_fail="forfeit"`` gives the hand up: the agent plays on
with seeded random moves and no more calls, and the harness scores the hand as a loss for that seat.
A single legal move makes no call (forced moves never reach an agent).

What each decision cost is `step_info()` after `act` (None when no call was made): the categories of
its replies, fallback, prompt / completion / reasoning tokens, seconds, price (``price_in``,
``price_out`` in currency per million tokens) and the endpoint's fingerprint; domino evaluate keeps
it in the replay's step info and sums it. A `ReplyCache` (sqlite) keyed by model, endpoint, messages,
parameters and sample index makes a rerun call nothing and record the same replay, seconds included.
`CallMeter` stops an evaluation before the call past ``--max-calls`` or the cost ``--budget``.

The key is read from the environment only (``api_key_env=VAR``): a spec carrying a key (``api_key=``,
or any value that looks like one) is refused, and the key is never in a message, a replay or a cache.
Fake models (``model=fake:heuristic|random|garbage|illegal-then-legal|truncated``) answer in-process.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np

from domino_envs.errors import ConfigError, DominoError
from domino_envs.rng import mix_seed

CATEGORIES = ("ok", "illegal", "unparsable", "empty", "truncated", "network")
FAILURES = CATEGORIES[1:]
ON_FAIL = ("random", "forfeit")
FAKE_MODELS = ("fake:heuristic", "fake:random", "fake:garbage", "fake:illegal-then-legal", "fake:truncated")
CONTRACT = ('Think if you like, then end your reply with your move as a JSON object {"move": N} or as a last line '
            '"MOVE: N", N the number of a legal move from the list (or its name). Only the last such object or '
            'line is read.')


class LLMConfigError(ConfigError):
    """A language-model agent spec that cannot be used: an unknown parameter, a key in the spec, a bad URL,
    a missing key variable, a bad value. Raised when the agent is built, before any call."""


class LLMCallError(DominoError):
    """The endpoint refused a request in a way retrying cannot mend (401, 404, 400: a wrong model, URL or
    key); the message names the status and the endpoint, never the key."""


class NetworkFailure(Exception):
    """The endpoint still failed after the network retries (429, 5xx, timeouts): `errors` failed attempts."""

    def __init__(self, reason: str, errors: int):
        super().__init__(reason)
        self.reason, self.errors = reason, errors


class BudgetExhausted(Exception):
    """The evaluation's --max-calls or --budget is reached: raised before the call that would pass it."""


# ------------------------------------------------------------------------------ replies
@dataclass
class Reply:
    """What a model answered: its text plus what the endpoint says of it (usage, finish reason, fingerprint).
    `seconds` is the call's own time (kept in the cache, so a rerun records the same, as `network_errors`)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    finish_reason: str | None = None
    fingerprint: str | None = None
    seconds: float = 0.0
    network_errors: int = 0  # failed attempts (429, 5xx, timeouts) before this reply came

    @classmethod
    def of(cls, value) -> Reply:
        """A Reply from a complete() result: a Reply, or a str (no usage)."""
        if isinstance(value, Reply):
            return value
        if isinstance(value, str):
            return cls(value)
        raise TypeError(f"complete(messages) must return a str or a Reply; got {type(value).__name__}")


_MOVE_LINE = re.compile(r"^\s*MOVE\s*:\s*(.+?)\s*$", re.IGNORECASE)


def extract_move(text: str) -> str | None:
    """The move a reply names by the contract, as text (a number or a name), or None where it names none:
    a last non-blank line ``MOVE: N``, else the last JSON object in the reply with a "move" key."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines:
        m = _MOVE_LINE.match(lines[-1])
        if m:
            return m[1].strip("\"'` ")
    decoder = json.JSONDecoder()
    found = None
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        try:
            obj, _ = decoder.raw_decode(text, i)
        except ValueError:
            continue
        if isinstance(obj, dict) and "move" in obj:
            found = obj["move"]
    if found is None or isinstance(found, bool) or not isinstance(found, (int, str)):
        return None
    return str(found).strip()


# ------------------------------------------------------------------------------ the HTTP client
def _check_url(url: str) -> str:
    parts = urllib.parse.urlsplit(str(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMConfigError(f"llm: base_url={url!r} is not an http(s) URL with a host; e.g. "
                             f"base_url=http://127.0.0.1:8000/v1 (vLLM, llama.cpp) or https://api.openai.com/v1")
    if parts.username or parts.password:
        raise LLMConfigError("llm: base_url carries a user or password; give the key by api_key_env=VAR instead")
    return str(url).rstrip("/")


class ChatClient:
    """POST {base_url}/chat/completions (OpenAI's format) over httpx: 429, 5xx and timeouts retried
    `network_retries` times with exponential backoff (Retry-After honoured up to 30 s); any other 4xx is an
    LLMCallError. The key comes from the environment variable `api_key_env` when given."""

    takes_seed = True

    def __init__(self, model: str, base_url: str, api_key_env: str | None = None, temperature: float = 0.0,
                 max_tokens: int | None = None, timeout: float = 60.0, network_retries: int = 4,
                 backoff: float = 1.0):
        try:
            import httpx
        except ImportError as err:  # before any call, one line: the extra is what is missing
            raise LLMConfigError(f"llm: model={model} over {base_url} needs the llm extra ({err.name} is missing): "
                                 "pip install 'domino-envs[llm]'") from err

        self.model, self.base_url = model, _check_url(base_url)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.network_retries, self.backoff = network_retries, backoff
        self._headers = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise LLMConfigError(f"llm: the environment variable {api_key_env} (api_key_env) is not set; "
                                     f"export {api_key_env}=... first, or leave api_key_env out for a local server")
            self._headers["Authorization"] = f"Bearer {key}"
        self._http = _shared_client(float(timeout))
        self._httpx = httpx

    def params(self) -> dict:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}

    def _scrub(self, text: str) -> str:
        """An endpoint's error text without the key: hosted APIs quote a wrong key back (masked or not)."""
        key = self._headers.get("Authorization", "").removeprefix("Bearer ")

        def masked(m: re.Match) -> str:
            word = m[0]
            quoted = "**" in word or (key and (key[:8] in word or key[-4:] in word))
            return "[key]" if quoted or _KEYLIKE.search(word) else word

        return re.sub(r"[A-Za-z0-9_\-*.]{6,}", masked, text.replace(key, "[key]") if key else text)

    def __call__(self, messages: list[dict], seed: int | None = None) -> Reply:
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if seed is not None:
            body["seed"] = seed
        url = self.base_url + "/chat/completions"
        errors, reason = 0, ""
        for attempt in range(self.network_retries + 1):
            wait = self.backoff * 2 ** attempt
            t0 = time.perf_counter()
            try:
                r = self._http.post(url, json=body, headers=self._headers)
            except self._httpx.TimeoutException:
                reason = "timed out"
            except self._httpx.TransportError as err:
                reason = f"{type(err).__name__}"
            else:
                if r.status_code == 429 or r.status_code >= 500:
                    reason = f"HTTP {r.status_code}"
                    after = r.headers.get("retry-after", "")
                    if after.replace(".", "", 1).isdigit():
                        wait = min(float(after), 30.0)
                elif r.status_code >= 400:
                    said = self._scrub(r.text[:300])
                    raise LLMCallError(f"llm: {url} answered HTTP {r.status_code} for model {self.model!r}: {said!r}")
                else:
                    reply = _reply_of(r.json(), time.perf_counter() - t0)
                    reply.network_errors = errors
                    return reply
            errors += 1
            if attempt < self.network_retries:
                time.sleep(wait)
        raise NetworkFailure(f"{url}: {reason} ({errors} attempts)", errors)



_CLIENTS: dict[float, object] = {}
_CLIENTS_LOCK = threading.Lock()


def _shared_client(timeout: float):
    """One httpx.Client per timeout for the process (thread-safe, pooled connections): building one costs
    tens of milliseconds (its TLS context), too much for every agent of a concurrent evaluation. It holds
    no key: the Authorization header goes with each request."""
    import httpx

    with _CLIENTS_LOCK:
        if timeout not in _CLIENTS:
            _CLIENTS[timeout] = httpx.Client(timeout=timeout, limits=httpx.Limits(max_connections=256))
        return _CLIENTS[timeout]


def _reply_of(data: dict, seconds: float) -> Reply:
    """A Reply from an OpenAI chat completion's JSON (usage and fingerprint where the endpoint sends them)."""
    choice = (data.get("choices") or [{}])[0]
    usage = data.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    return Reply(text=(choice.get("message") or {}).get("content") or "",
                 prompt_tokens=int(usage.get("prompt_tokens") or 0),
                 completion_tokens=int(usage.get("completion_tokens") or 0),
                 reasoning_tokens=int(details.get("reasoning_tokens") or 0),
                 finish_reason=choice.get("finish_reason"), fingerprint=data.get("system_fingerprint"),
                 seconds=round(seconds, 4))


# ------------------------------------------------------------------------------ cache and meter
class ReplyCache:
    """Replies kept in an sqlite file by a key (`key`): model, endpoint, messages, parameters, sample index.
    Thread-safe (one connection, a lock)."""

    def __init__(self, path):
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.Error as err:
            raise LLMConfigError(f"llm: cache={self.path!r} is not a usable sqlite file: {err}") from None

    @staticmethod
    def key(model: str, endpoint: str, messages: list[dict], params: dict, sample: int) -> str:
        blob = json.dumps({"model": model, "endpoint": endpoint, "messages": messages, "params": params,
                           "sample": sample}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> Reply | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else Reply(**json.loads(row[0]))

    def put(self, key: str, reply: Reply) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, json.dumps(asdict(reply))))
            self._db.commit()


class CallMeter:
    """Calls made and money spent by every language-model agent of an evaluation (shared by its threads):
    `before_call` raises BudgetExhausted once `max_calls` calls are made or `budget` is spent. Calls in flight
    when the budget runs out still finish, so spending can pass the budget by at most those calls."""

    def __init__(self, max_calls: int | None = None, budget: float | None = None):
        self.max_calls, self.budget = max_calls, budget
        self.calls, self.cached, self.spent = 0, 0, 0.0
        self._lock = threading.Lock()

    def before_call(self) -> None:
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                raise BudgetExhausted(f"--max-calls {self.max_calls} reached")
            if self.budget is not None and self.spent >= self.budget:
                raise BudgetExhausted(f"--budget {self.budget:g} reached ({self.spent:.4f} spent)")
            self.calls += 1

    def after_call(self, cost: float) -> None:
        with self._lock:
            self.spent += cost

    def hit(self) -> None:
        with self._lock:
            self.cached += 1


# ------------------------------------------------------------------------------ fake models
class FakeModel:
    """An in-process model for tests and trials: sees the observation and legal moves the agent sees
    (`see`, called before each call), writes a reply by its `kind` (see FAKE_MODELS)."""

    takes_seed = False

    def __init__(self, game, kind: str):
        self.game, self.kind = game, kind
        self._heuristic = None
        if kind == "fake:heuristic":
            from .heuristics import make_heuristic

            self._heuristic = make_heuristic(game)
        self._rng = np.random.default_rng()
        self._seen = (None, None, [])
        self._tries = 0

    def reset(self, seed: int | None) -> None:
        self._rng = np.random.default_rng(seed)
        if self._heuristic is not None:
            self._heuristic.reset(seed)

    def see(self, observation, mask, legal: list[int]) -> None:
        self._seen = (observation, mask, legal)
        self._tries = 0

    def params(self) -> dict:
        return {}

    def __call__(self, messages: list[dict]) -> Reply:
        obs, mask, legal = self._seen
        self._tries += 1
        k = len(legal)
        usage = {"prompt_tokens": sum(len(m["content"]) for m in messages) // 4, "completion_tokens": 12}
        if self.kind == "fake:heuristic":
            n = legal.index(int(self._heuristic.act(obs, mask))) + 1
            return Reply(f'The heuristic picks move {n}.\n{{"move": {n}}}', **usage)
        if self.kind == "fake:random":
            return Reply(f'{{"move": {int(self._rng.integers(k)) + 1}}}', **usage)
        if self.kind == "fake:garbage":
            return Reply("I like dominoes. The tiles are pretty.", **usage)
        if self.kind == "fake:illegal-then-legal":
            n = k + 1 if self._tries == 1 else 1
            return Reply(f'{{"move": {n}}}', **usage)
        return Reply('Let me think about every move in turn: first {"mo', finish_reason="length", **usage)


# ------------------------------------------------------------------------------ the agent
class LLMAgent:
    """A seat played by a language model through `complete(messages) -> str | Reply` (see module doc).

    seed: the fallback's generator and the seed sent to the endpoint; retries: more tries after a failed
    reply; on_fail: "random" or "forfeit"; price_in / price_out: price per million prompt / completion
    tokens; cache: a ReplyCache (or a path); meter: a CallMeter (domino evaluate sets it); seat: where no
    harness calls observe_state; model / endpoint / params: what the cache key names."""

    searches = True  # to be told its seat by observe_state (only the seat is read)

    def __init__(self, game, complete, seed: int | None = None, retries: int = 2, on_fail: str = "random",
                 price_in: float = 0.0, price_out: float = 0.0, cache=None, meter: CallMeter | None = None,
                 seat: int | None = None, model: str = "callable", endpoint: str = "", params: dict | None = None):
        from domino_envs import text

        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise LLMConfigError(f"llm: retries={retries!r} must be an integer >= 0")
        if on_fail not in ON_FAIL:
            raise LLMConfigError(f"llm: on_fail={on_fail!r} is not one of {list(ON_FAIL)}")
        for name, v in (("price_in", price_in), ("price_out", price_out)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise LLMConfigError(f"llm: {name}={v!r} must be a number >= 0 (price per million tokens)")
        self.game, self.complete, self._text = game, complete, text
        self.retries, self.on_fail = retries, on_fail
        self.price_in, self.price_out = float(price_in), float(price_out)
        self.cache = ReplyCache(cache) if isinstance(cache, (str, os.PathLike)) else cache
        self.meter = meter
        self.model, self.endpoint = model, endpoint
        self.params = dict(params if params is not None else getattr(complete, "params", dict)())
        self.seat = seat
        self._system = text.rules_text(game) + "\n\n" + CONTRACT
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._asked: Counter = Counter()
        self._log = None
        self._lines: list[str] = []
        self._forfeited = False
        self._info = None
        if hasattr(self.complete, "reset"):
            self.complete.reset(seed)

    def observe_state(self, state, seat: int, returns=None) -> None:
        """The harness's hook before each decision: only `seat` is read (the row is never looked at)."""
        self.seat = int(seat)

    def step_info(self) -> dict | None:
        """What the last decision cost (see module doc); None where no call was made."""
        return self._info

    @property
    def forfeited(self) -> bool:
        return self._forfeited

    # ---------------------------------------------------------------- one decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self.seat is None:
            raise DominoError("LLMAgent.act: the agent does not know its seat: the harness calls "
                              "observe_state(state, seat) first, or build it with seat=")
        if self._log is None:
            self._log = self._text.SeatLog(self.game, self.seat)
        self._lines += self._log.observe(observation)
        legal = np.flatnonzero(action_mask).tolist()
        self._info = None
        if not legal:
            raise ValueError("LLMAgent.act: the action mask has no legal action")
        if len(legal) == 1:
            return int(legal[0])
        if self._forfeited:
            return int(legal[self._rng.integers(len(legal))])
        view = self._text.seat_text(self.game, observation, action_mask, list(self._lines), seat=self.seat)
        messages = [{"role": "system", "content": self._system}, {"role": "user", "content": view}]
        info = {"replies": [], "fallback": None, "tokens_in": 0, "tokens_out": 0, "tokens_reasoning": 0,
                "seconds": 0.0, "cost": 0.0, "network_errors": 0, "fingerprint": None}
        if hasattr(self.complete, "see"):
            self.complete.see(observation, action_mask, legal)
        for _ in range(self.retries + 1):
            try:
                reply = self._ask(messages)
            except NetworkFailure as fail:
                info["network_errors"] += fail.errors
                category, reason, text = "network", f"the call failed ({fail.reason})", None
            else:
                self._count(info, reply)
                category, action, reason = self._judge(reply, legal)
                text = reply.text
            info["replies"].append(category)
            if category == "ok":
                self._info = _rounded(info)
                return action
            if text is not None:
                messages = messages + [{"role": "assistant", "content": text}]
            messages = messages + [{"role": "user", "content": f"Your reply was not accepted: {reason}. Try again."
                                                                  f"\n\n{view}\n\n{CONTRACT}"}]
        info["fallback"] = self.on_fail
        self._forfeited = self.on_fail == "forfeit"
        self._info = _rounded(info)
        return int(legal[self._rng.integers(len(legal))])

    def _judge(self, reply: Reply, legal: list[int]) -> tuple[str, int | None, str]:
        """(category, action, why not) of one reply under the contract."""
        if reply.finish_reason == "length":
            return "truncated", None, "it was cut off (finish_reason 'length') before it ended"
        if not reply.text.strip():
            return "empty", None, "it was empty"
        token = extract_move(reply.text)
        if token is None:
            return "unparsable", None, 'it has no {"move": N} object and no last line "MOVE: N"'
        try:
            return "ok", int(self._text.parse_move(self.game, token, legal)), ""
        except DominoError as err:
            return "illegal", None, f"{token!r} names no legal move ({getattr(err, 'problem', err)})"

    def _ask(self, messages: list[dict]) -> Reply:
        """One reply: from the cache where it holds this request, else from `complete` (counted by the meter)."""
        params = dict(self.params)
        seed = None if self._seed is None else mix_seed(self._seed, 0) & 0x7FFFFFFF
        takes_seed = getattr(self.complete, "takes_seed", False)
        if takes_seed:
            params["seed"] = seed
        request = json.dumps([messages, params], sort_keys=True)
        sample = self._asked[request]
        self._asked[request] += 1
        key = None
        if self.cache is not None:
            key = ReplyCache.key(self.model, self.endpoint, messages, params, sample)
            hit = self.cache.get(key)
            if hit is not None:
                if self.meter is not None:
                    self.meter.hit()
                return hit
        if self.meter is not None:
            self.meter.before_call()
        t0 = time.perf_counter()
        reply = Reply.of(self.complete(messages, seed=seed) if takes_seed else self.complete(messages))
        if not reply.seconds:
            reply.seconds = round(time.perf_counter() - t0, 4)
        if self.meter is not None:
            self.meter.after_call(self._price(reply))
        if key is not None:
            self.cache.put(key, reply)
        return reply

    def _price(self, reply: Reply) -> float:
        return (reply.prompt_tokens * self.price_in + reply.completion_tokens * self.price_out) / 1e6

    def _count(self, info: dict, reply: Reply) -> None:
        info["tokens_in"] += reply.prompt_tokens
        info["tokens_out"] += reply.completion_tokens
        info["tokens_reasoning"] += reply.reasoning_tokens
        info["seconds"] += reply.seconds
        info["cost"] += self._price(reply)
        info["network_errors"] += reply.network_errors
        if reply.fingerprint:
            info["fingerprint"] = reply.fingerprint


def _rounded(info: dict) -> dict:
    info["seconds"] = round(info["seconds"], 4)
    info["cost"] = round(info["cost"], 8)
    return {"llm": info}


# ------------------------------------------------------------------------------ the spec
# a key's look: a known prefix (OpenAI sk-, Groq gsk_, xAI, Hugging Face hf_, Google AIza) or a run of 24+
# letters and digits with no separator (model names, paths and URLs have separators)
_KEYLIKE = re.compile(r"^(sk|pk|rk|gsk|xai|hf)[-_][A-Za-z0-9_\-]{8,}|^AIza[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{24,}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEY_PARAMS = ("api_key", "key", "token", "apikey", "secret", "password", "authorization")


def refuse_keys(items) -> None:
    """LLMConfigError, never echoing the value, where a (key, value) pair of a spec carries a key: a key-like
    parameter name (api_key=, token=, ...) or a value that looks like a key (sk-..., a long random word)."""
    for name, value in items:
        if str(name).strip().lower() in _KEY_PARAMS:
            raise LLMConfigError(f"llm: the spec carries a key ({str(name).strip()}=...): refused; put the key in an "
                                 f"environment variable and name it with api_key_env=VAR")
        if any(isinstance(x, str) and _KEYLIKE.search(x.strip()) for x in (name, value)):
            raise LLMConfigError(f"llm: the value of {str(name).strip() or 'an item'} looks like a key: refused (a spec "
                                 f"never carries a key); put it in an environment variable and name it with "
                                 f"api_key_env=VAR")


def spec_items(spec: str) -> list[tuple[str, str]]:
    """The raw (key, value) items of an ``llm:`` spec, before anything echoes them."""
    rest = spec.strip().partition(":")[2]
    return [(k, v) for k, _, v in (item.partition("=") for item in rest.split(",")) if rest]


def llm_agent(game, seed: int | None = None, model: str | None = None, base_url: str | None = None,
              api_key_env: str | None = None, temperature: float = 0.0, max_tokens: int | None = None,
              retries: int = 2, on_fail: str = "random", cache: str | None = None, price_in: float = 0.0,
              price_out: float = 0.0, timeout: float = 60.0, network_retries: int = 4,
              backoff: float = 1.0) -> LLMAgent:
    """The ``llm:`` spec (agents/registry.py): model=M (an endpoint's model name, or fake:heuristic|random|
    garbage|illegal-then-legal|truncated, answered in-process), base_url=URL (OpenAI-compatible, ending
    before /chat/completions), api_key_env=VAR (the variable holding the key; never the key), temperature,
    max_tokens, retries, on_fail=random|forfeit, cache=FILE (sqlite), price_in / price_out (per million
    tokens), timeout (seconds a call), network_retries, backoff (seconds, doubled each retry).
    LLMConfigError, before any call, for an unknown parameter, a key in the spec, a bad URL or value, or
    an unset key variable."""
    refuse_keys({"model": model, "base_url": base_url, "api_key_env": api_key_env, "cache": cache}.items())
    if not isinstance(model, str) or not model:
        raise LLMConfigError(f"llm: model= is required (an endpoint's model name, or one of {list(FAKE_MODELS)})")
    if api_key_env is not None and not (isinstance(api_key_env, str) and _ENV_NAME.match(api_key_env)):
        raise LLMConfigError(f"llm: api_key_env={api_key_env!r} is not an environment variable name (e.g. "
                             f"api_key_env=OPENAI_API_KEY)")
    for name, v, lo in (("temperature", temperature, 0), ("timeout", timeout, 1e-9), ("backoff", backoff, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo:
            raise LLMConfigError(f"llm: {name}={v!r} must be a number >= {lo:g}")
    for name, v in (("max_tokens", max_tokens), ("network_retries", network_retries)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < (1 if name == "max_tokens" else 0)):
            raise LLMConfigError(f"llm: {name}={v!r} must be a whole number ({'>= 1' if name == 'max_tokens' else '>= 0'})")
    if model.startswith("fake:"):
        if model not in FAKE_MODELS:
            raise LLMConfigError(f"llm: model={model!r} is no fake model; fake models: {list(FAKE_MODELS)}")
        if base_url is not None or api_key_env is not None:
            raise LLMConfigError(f"llm: model={model} answers in-process; give it no base_url or api_key_env")
        complete, endpoint = FakeModel(game, model), "fake"
    else:
        if base_url is None:
            raise LLMConfigError(f"llm: model={model} needs base_url=URL (an OpenAI-compatible endpoint, e.g. "
                                 f"http://127.0.0.1:8000/v1)")
        complete = ChatClient(model, base_url, api_key_env, float(temperature), max_tokens, float(timeout),
                              network_retries, float(backoff))
        endpoint = complete.base_url
    return LLMAgent(game, complete, seed=seed, retries=retries, on_fail=on_fail, price_in=price_in,
                    price_out=price_out, cache=cache, model=model, endpoint=endpoint)
