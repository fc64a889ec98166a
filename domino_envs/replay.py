"""Replays: whole games saved as JSON lines, loaded, verified and stepped back into the engine.

Format (``domino-replay/1``): one whole game (one episode: a hand, or a whole match in match mode)
per line, so an evaluation can append thousands of games to one file. Each line is an object:

    format         "domino-replay/1"
    package        the domino_envs version that recorded it
    game           registered name ("draw_v0", ...)
    config         the game's full resolved config (every key of its Config dataclass)
    seed           the engine seed of the episode: ``game.reset(row, seed)`` deals it
    dealt          "seed" (the engine dealt from `seed`) or "deal" (the deal was set by hand:
                   ``game.reset(row, seed)`` then ``game.set_deal(row, deal)``, as the AEC env does
                   for ``reset(options={"deal": ...})``)
    deal           the deal of the first hand in the one deal format `set_deal` takes (tiles as
                   [a, b]; Magic-7 cards by name, jokers by id), as ``game.deal_of`` reads it at the
                   first decision. With "dealt": "seed" it is a record to read and check (the seed
                   deals it); starting a game from it with `set_deal` gives the same first decision
    start_rewards  each seat's reward already in the row when the first decision comes (forced
                   moves of the deal can score; 0s mostly)
    steps          [{"seat", "action", "name", "rewards"}, ...]: every decision in order - the seat
                   that acted, its action id, ``describe_action(action)`` (for reading only) and
                   every seat's reward from that step (floats, as the fronts give them); optionally
                   "info", an object the agent gave about its decision (a language model's tokens,
                   tries and cost: agents/llm.py), read back as is and never checked; written only
                   where there is one, so older lines and readers are unchanged
    returns        each seat's return: start_rewards plus every step's rewards
    hands          match mode: [{"hand": h, "step": i, "deal": {...}}, ...] the deal of every later
                   hand that has a decision (the engine deals it from the row's stream; seed +
                   actions determine it, this is a record to read and check) and the index of the
                   first step played in it; [] otherwise
    agents         optional: the agent spec in each seat (evaluation, `domino play`)
    (any other key is kept in ``Replay.extra`` and written back)

API: ``load(path) -> list[Replay]``; ``Replay.positions()`` yields a copy of the state row at the
start and after every recorded step, checking each step as it goes; ``Replay.verify()`` replays
the whole game; ``Recorder`` records a game as it is played (``start``, ``step``, ``finish``);
``save(path, replays)`` / ``append(path, replay)`` write lines. ``domino replay`` (printing a file
move by move) is domino_training/tools/replay_view.py.

Verification: the game and config must build, the deal read from the dealt row must equal the
recorded one, and at every step the seat to act must be the recorded seat, the action legal, and
the step's rewards the recorded ones; at the end the game must be over with the recorded returns.
In match mode each later hand's recorded deal is checked too when it is dealt.
The first thing that does not match raises `ReplayError` naming it (step index, expected vs
recorded). A replay recorded by another package version is played all the same (a version that
plays identically is not an error); when something does not match, the error names both versions.
A malformed line (bad JSON, a missing or ill-typed key) is a `ReplayError` naming the line and key.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .core import H_DONE, H_HAND, H_TURN, Game
from .errors import DominoError, ReplayError
from .version import __version__

FORMAT = "domino-replay/1"
REQUIRED = ("format", "package", "game", "config", "seed", "deal", "steps", "returns")


def package_version() -> str:
    return __version__


def _plain(value):
    """JSON's view of a value (tuples become lists), for comparing a recorded deal with a fresh one."""
    return json.loads(json.dumps(value))


@dataclass
class Step:
    seat: int
    action: int
    name: str
    rewards: list[float]
    info: dict | None = None  # what the agent said of its decision (agents/llm.py); not checked

    def to_json(self) -> dict:
        out = {"seat": self.seat, "action": self.action, "name": self.name, "rewards": self.rewards}
        if self.info is not None:
            out["info"] = self.info
        return out


@dataclass
class Replay:
    """One recorded game (see module doc for the fields)."""

    game: str
    config: dict
    seed: int
    deal: dict
    steps: list[Step]
    returns: list[float]
    start_rewards: list[float] | None = None
    dealt: str = "seed"
    package: str = field(default_factory=package_version)
    hands: list[dict] = field(default_factory=list)
    agents: list[str] | None = None
    extra: dict = field(default_factory=dict)
    where: str = "replay"  # where it came from, for messages ("replays.jsonl line 3")

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> dict:
        out = {"format": FORMAT, "package": self.package, "game": self.game, "config": self.config,
               "seed": self.seed, "dealt": self.dealt, "deal": self.deal,
               "start_rewards": self.start_rewards, "steps": [s.to_json() for s in self.steps],
               "returns": self.returns, "hands": self.hands}
        if self.agents is not None:
            out["agents"] = self.agents
        out.update(self.extra)
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    @classmethod
    def from_json(cls, obj, where: str = "replay") -> Replay:
        """A Replay from one decoded line; ReplayError naming `where` and the key for anything
        missing or of the wrong type."""
        def bad(key, what):
            return ReplayError(f"{where}: key {key!r} {what}")

        if not isinstance(obj, dict):
            raise ReplayError(f"{where}: a replay line is a JSON object; got {type(obj).__name__}")
        for key in REQUIRED:
            if key not in obj:
                raise bad(key, "is missing")
        if obj["format"] != FORMAT:
            raise bad("format", f"is {obj['format']!r}; this package reads {FORMAT!r}")
        for key, kind in (("package", str), ("game", str), ("config", dict), ("deal", dict),
                          ("steps", list), ("returns", list)):
            if not isinstance(obj[key], kind):
                raise bad(key, f"must be a {kind.__name__}; got {obj[key]!r:.80}")
        if not _is_int(obj["seed"]):
            raise bad("seed", f"must be an integer; got {obj['seed']!r}")
        dealt = obj.get("dealt", "seed")
        if dealt not in ("seed", "deal"):
            raise bad("dealt", f"must be 'seed' or 'deal'; got {dealt!r}")
        steps = []
        for i, st in enumerate(obj["steps"]):
            if not isinstance(st, dict):
                raise bad("steps", f"step {i} must be an object; got {st!r:.80}")
            for key in ("seat", "action", "rewards"):
                if key not in st:
                    raise bad("steps", f"step {i} lacks key {key!r}")
            if not (_is_int(st["seat"]) and _is_int(st["action"]) and _numbers(st["rewards"])):
                raise bad("steps", f"step {i}: seat and action must be integers and rewards a list of "
                                   f"numbers; got {st!r:.120}")
            info = st.get("info")
            if info is not None and not isinstance(info, dict):
                raise bad("steps", f"step {i}: info must be an object; got {info!r:.80}")
            steps.append(Step(st["seat"], st["action"], str(st.get("name", "")), [float(r) for r in st["rewards"]],
                              info))
        if not _numbers(obj["returns"]):
            raise bad("returns", f"must be a list of numbers; got {obj['returns']!r:.80}")
        start = obj.get("start_rewards")
        if start is not None and not _numbers(start):
            raise bad("start_rewards", f"must be a list of numbers; got {start!r:.80}")
        hands = obj.get("hands", [])
        if not isinstance(hands, list):
            raise bad("hands", f"must be a list; got {hands!r:.80}")
        agents = obj.get("agents")
        if agents is not None and not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
            raise bad("agents", f"must be a list of agent specs; got {agents!r:.80}")
        known = set(REQUIRED) | {"dealt", "start_rewards", "hands", "agents"}
        return cls(obj["game"], obj["config"], int(obj["seed"]), obj["deal"], steps,
                   [float(r) for r in obj["returns"]], None if start is None else [float(r) for r in start],
                   dealt, obj["package"], hands, agents, {k: v for k, v in obj.items() if k not in known}, where)

    # ---------------------------------------------------------------- replaying
    def _error(self, what: str) -> ReplayError:
        mine = package_version()
        version = ("" if self.package == mine else
                   f" (recorded with domino-envs {self.package}, replayed with {mine}: the rules may differ)")
        return ReplayError(f"{self.where} ({self.game}): {what}{version}")

    def make_game(self) -> Game:
        """The recorded game with the recorded config; ReplayError if either no longer exists."""
        from .registry import make_game

        try:
            return make_game(self.game, **self.config)
        except (DominoError, TypeError) as err:
            raise self._error(f"the game and config do not build: {err}") from None

    def start(self) -> tuple[Game, np.ndarray]:
        """(game, row) dealt as recorded, the deal checked against the recorded one."""
        game = self.make_game()
        row = game.new_state()
        try:
            game.reset(row, self.seed)
            if self.dealt == "deal":
                game.set_deal(row, self.deal)
        except DominoError as err:
            raise self._error(f"the deal cannot be dealt: {err}") from None
        if self.dealt == "seed":
            dealt = _plain(game.deal_of(row))
            if dealt != _plain(self.deal):
                raise self._error(f"deal: seed {self.seed} deals {dealt}, recorded {self.deal}")
        return game, row

    def positions(self) -> Iterator[np.ndarray]:
        """A copy of the state row at the start and after every recorded step, each step checked
        (seat, legality, rewards) before it is taken: ReplayError at the first that does not match.
        The end (game over, returns) is checked by `verify`."""
        game, row = self.start()
        n = game.num_players
        if self.start_rewards is not None and _plain(game.rewards(row).tolist()) != self.start_rewards:
            raise self._error(f"start rewards: expected {game.rewards(row).tolist()}, recorded {self.start_rewards}")
        yield row.copy()
        later_hands = {h.get("step"): h for h in self.hands if isinstance(h, dict)}
        for i, st in enumerate(self.steps):
            if row[H_DONE]:
                raise self._error(f"step {i}: the game is over already, recorded seat {st.seat} plays "
                                  f"action {st.action} ({st.name})")
            seat = int(row[H_TURN])
            if st.seat != seat:
                raise self._error(f"step {i}: seat {seat} is to act, recorded seat {st.seat} "
                                  f"(action {st.action}, {st.name})")
            if not 0 <= st.action < game.num_actions or not game.legal_mask(row)[st.action]:
                legal = game.legal_actions(row)
                raise self._error(f"step {i}: recorded action {st.action} ({game.describe_action(st.action)}) "
                                  f"is illegal for seat {seat}; legal: {legal}")
            game.step(row, st.action)
            rewards = game.rewards(row).tolist()
            if len(st.rewards) != n or rewards != st.rewards:
                raise self._error(f"step {i} (seat {seat}, action {st.action}): rewards expected {rewards}, "
                                  f"recorded {st.rewards}")
            noted = later_hands.get(i + 1)
            if noted is not None and not row[H_DONE]:
                dealt = _plain(game.deal_of(row))
                if dealt != _plain(noted.get("deal")):
                    raise self._error(f"step {i}: hand {noted.get('hand')} is dealt {dealt}, "
                                      f"recorded {noted.get('deal')}")
            yield row.copy()

    def verify(self) -> np.ndarray:
        """Replay the whole game (see `positions`), then check it is over with the recorded
        returns; returns the final row. ReplayError naming the first thing that does not match."""
        row = None
        for row in self.positions():  # noqa: B007 - each position is checked as it is made; the last one is kept
            pass
        if not row[H_DONE]:
            raise self._error(f"step {len(self.steps)}: the game goes on (seat {int(row[H_TURN])} to act) but "
                              f"the recording ends after {len(self.steps)} steps (truncated?)")
        returns = self.computed_returns()
        if returns != self.returns:
            raise self._error(f"returns: the steps add up to {returns}, recorded {self.returns}")
        return row

    def computed_returns(self) -> list[float]:
        total = np.array(self.start_rewards or [0.0] * len(self.returns), dtype=np.float64)
        for st in self.steps:
            total = total + np.array(st.rewards, dtype=np.float64)
        return total.tolist()


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _numbers(xs) -> bool:
    return isinstance(xs, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)


# ------------------------------------------------------------------------------ recording
class Recorder:
    """Records one game as it is played on an engine row:

        rec = Recorder(game, agents=specs)       # once
        rec.start(row, seed)                     # after game.reset(row, seed) [+ set_deal(row, deal)]
        rec.step(seat, action, row[, info])      # after each game.step(row, action)
        replay = rec.finish(row)                 # once the row is over

    `start` reads the deal (``game.deal_of``) and the rewards already in the row; a hand-set deal
    is passed as ``start(row, seed, deal=...)``. In match mode every new hand's deal is noted too.
    """

    def __init__(self, game: Game, agents: list[str] | None = None, extra: dict | None = None):
        self.game = game
        self.agents = None if agents is None else list(agents)
        self.extra = dict(extra or {})
        self._config = game.config_dict()
        self._steps: list[Step] = []
        self._seed: int | None = None  # set by start()

    def start(self, row: np.ndarray, seed: int, deal: dict | None = None) -> None:
        g = self.game
        self._seed = int(seed)
        self._dealt = "seed" if deal is None else "deal"
        self._deal = _plain(g.deal_of(row) if deal is None else deal)
        self._start_rewards = g.rewards(row).tolist()
        self._hand = int(row[H_HAND])
        self._hands: list[dict] = []
        self._steps = []

    def _check_started(self, what: str) -> None:
        if self._seed is None:
            raise DominoError(f"{self.game.name}: Recorder.{what}() before Recorder.start(row, seed)")

    def step(self, seat: int, action: int, row: np.ndarray, info: dict | None = None) -> None:
        """Record a step taken; `info`: what the agent said of its decision (kept in the step's "info")."""
        if self._seed is None:
            self._check_started("step")
        g = self.game
        self._steps.append(Step(int(seat), int(action), g.describe_action(int(action)), g.rewards(row).tolist(),
                                info))
        if row[H_HAND] != self._hand:
            self._hand = int(row[H_HAND])
            if not row[H_DONE]:
                self._hands.append({"hand": self._hand + 1, "step": len(self._steps),
                                    "deal": _plain(g.deal_of(row))})

    def finish(self, row: np.ndarray | None = None) -> Replay:
        self._check_started("finish")
        if row is not None and not row[H_DONE]:
            raise DominoError(f"{self.game.name}: Recorder.finish() before the game is over")
        rep = Replay(self.game.name, self._config, self._seed, self._deal, self._steps, [],
                     self._start_rewards, self._dealt, package_version(), self._hands, self.agents,
                     dict(self.extra))
        rep.returns = rep.computed_returns()
        return rep


# ------------------------------------------------------------------------------ files
def append(path, replay: Replay) -> None:
    """Append one replay as a line of the file `path` (created if missing)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(replay.to_line() + "\n")


def save(path, replays) -> None:
    """Write replays to `path`, one line each (the file is replaced)."""
    with open(path, "w", encoding="utf-8") as fh:
        for r in replays:
            fh.write(r.to_line() + "\n")


def load(path) -> list[Replay]:
    """Every replay in a JSON-lines file (blank lines skipped). ReplayError naming the line for a
    line that is not JSON or lacks a key; OSError's own message for a file that cannot be read."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for no, text in enumerate(fh, 1):
            if not text.strip():
                continue
            where = f"{path} line {no}"
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as err:
                raise ReplayError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
            out.append(Replay.from_json(obj, where))
    return out
