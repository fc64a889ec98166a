"""One live game for a front that is not a terminal (the web app, the MCP server): `LiveGame`.

A `LiveGame` holds one engine row on the server, human seats and agent seats, and answers only from
a seat's view: the table (`table(seat)`), the seat's text (`text(seat)`), its legal moves, and the
public events of each move. Nothing here imports a web framework.

Why it looks like this:
- Agents come from a menu by id (`MENU`, `menu_with`): a request names an id, never a spec, a path or
  code; the operator adds specs at start (``--agent``), checked then with `make_agent`.
- Rules are ``--set`` keys read as the command line reads them (`config_from_pairs`), so a form and
  ``domino play --set`` accept and refuse the same values.
- Deals: a seed alone deals as ``domino play`` does (``deal_to_decision(mix_seed(seed, 0))``); a deal
  number d deals ``mix_seed(seed, d)`` as ``domino evaluate`` does (seed 0 unless given), and
  ``rotation`` r seats ``seats[(k - r) % n]`` in seat k, so the same deal can be played again with the
  seats rotated and its luck cancels.
- Refusals leave the row untouched: `NotYourTurn` / `StaleMove` (a double click: the form's
  `version` is old) and `IllegalMove` (naming the legal moves) are raised before anything changes.
- Events are public: a human seat reads another seat's move as `domino_envs.text.public_events`
  tells it from its own observations (tiles newly played, draws, kills, passes, scores), never by
  the action's name, which in Magic-7 names a killed tile nobody else sees. The actor (or a watcher
  of an all-agent game) reads the full name.
- A finished game is appended once to ``data_dir/games.jsonl`` as a replay line (domino_envs.replay)
  that ``domino replay`` verifies; its ``live`` key holds seed, deal, rotation and the human seats.
"""
from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path

import numpy as np

from domino_envs.core import H_DONE, H_HAND, H_TURN
from domino_envs.errors import ConfigError, DominoError
from domino_envs.fronts import deal_to_decision
from domino_envs.replay import Recorder, append
from domino_envs.rng import check_seed, entropy_seed, mix_seed
from domino_envs.text import public_events, seat_changes, seat_text

# menu id -> agent spec: what a browser or an MCP client may ask for, by id only
MENU = {
    "random": "random",
    "greedy": "greedy",
    "heuristic": "heuristic",
    "trained": "trained",
    "pimc16": "pimc:n=16",
    "pimc64": "pimc:n=64",
    "guided": "pimc:n=64,rollout=policy,policy=trained",
}
HUMAN = "human"
GAMES_FILE = "games.jsonl"  # under data_dir: one replay line per finished live game
_AGENT_STREAM = 0x11FE_5EED


class NotYourTurn(DominoError):
    """A move from a seat that is not to act (or a game that is over): HTTP 409."""


class StaleMove(DominoError):
    """A move made against an older position (its version is behind): HTTP 409."""


class IllegalMove(DominoError):
    """A move the rules do not allow now; the message names the legal ones: HTTP 422."""


def menu_with(extra_specs: list[str] | None = None) -> dict[str, str]:
    """`MENU` plus the operator's specs as ids agent1, agent2, ... (each checked with make_agent on
    every game it builds for: a bad spec is a ConfigError before the server starts)."""
    from domino_agents.registry import parse_spec

    menu = dict(MENU)
    for i, spec in enumerate(extra_specs or [], 1):
        try:
            parse_spec(spec)
        except ValueError as err:
            raise ConfigError(f"--agent {spec!r}: {err}") from None
        menu[f"agent{i}"] = spec
    return menu


def check_agents(menu: dict[str, str], game_names: list[str]) -> None:
    """Build every menu agent that is not a baseline for each game once: a bad --agent fails at start."""
    from domino_agents.registry import make_agent
    from domino_envs.registry import make_game

    for ident, spec in menu.items():
        if ident in MENU:
            continue
        for name in game_names:
            try:
                make_agent(spec, make_game(name))
            except (ValueError, TypeError) as err:
                raise ConfigError(f"--agent {spec!r} cannot play {name}: {err}") from None


def make_config(game_name: str, rules: dict):
    """The game built from rule flags as ``--set KEY=VALUE`` reads them; ConfigError naming a bad game,
    key or value."""
    from domino_envs.registry import config_from_pairs, game_names, make_game

    if game_name not in game_names():
        raise ConfigError(f"game {game_name!r} is unknown; games: {', '.join(game_names())}")
    pairs = [f"{k}={v}" for k, v in (rules or {}).items() if str(v).strip() != ""]
    try:
        return make_game(game_name, **config_from_pairs(pairs))
    except TypeError as err:
        raise ConfigError(f"{game_name}: {err}") from None


def public_lines(game, before: dict, after: dict, seat: int) -> list[str]:
    """What every seat saw `seat`'s move do (from seat 0's decoded observations before and after it:
    only public pieces), then what the engine did by itself for the seats after it: one line each,
    seats by number (the watcher's log, after the move's full name)."""
    n = game.num_players
    changes, _ = seat_changes(game, before, after, 0)
    out = []
    for d in range(n):
        k = (seat + d) % n
        c = changes[k]
        parts = ([f"played {', '.join(c['played'])}"] if c["played"] else []) + \
            (["played a joker"] if c["jokers"] else []) + (["killed a tile"] if c["killed"] else []) + \
            ([f"drew {c['drew']}"] if c["drew"] else [])
        if parts:
            out.append(f"seat {k} {' and '.join(parts)}" + ("" if d == 0 else " (forced)"))
        elif d == 0:
            out.append(f"seat {k} passed")
    return out


class LiveGame:
    """One game on the server: seats[k] is "human" or a menu id (module doc)."""

    def __init__(self, game_name: str, rules: dict | None, seats: list[str], seed: int | None = None,
                 deal: int | None = None, rotation: int = 0, menu: dict[str, str] | None = None,
                 data_dir: str | Path | None = None):
        from domino_agents.registry import make_agent

        menu = MENU if menu is None else menu
        self.game = make_config(game_name, rules or {})
        self.rules = {str(k): str(v) for k, v in (rules or {}).items() if str(v).strip() != ""}  # as given
        g = self.game
        n = g.num_players
        if not isinstance(seats, (list, tuple)) or len(seats) != n:
            raise ConfigError(f"{game_name}: {n} seats are needed (one per player); got {seats!r:.120}")
        for s in seats:
            if s != HUMAN and s not in menu:
                raise ConfigError(f"seat {s!r:.60} is not allowed; a seat is {HUMAN!r} or a menu id: "
                                  f"{', '.join(menu)}")
        if deal is not None and (isinstance(deal, bool) or not isinstance(deal, int) or not 0 <= deal < 2**32):
            raise ConfigError(f"deal={deal!r} is not allowed; a deal number is an integer 0..2**32-1")
        if isinstance(rotation, bool) or not isinstance(rotation, int) or not 0 <= rotation < n:
            raise ConfigError(f"rotation={rotation!r} is not allowed; 0..{n - 1}")
        seed = check_seed(seed, "seed")
        self.seed = (0 if deal is not None else entropy_seed()) if seed is None else seed
        self.deal = deal
        self.rotation = rotation
        self.seats_asked = list(seats)
        self.seats = [seats[(k - rotation) % n] for k in range(n)]  # who sits in seat k
        self.specs = [HUMAN if s == HUMAN else menu[s] for s in self.seats]
        self.humans = [k for k in range(n) if self.seats[k] == HUMAN]
        self.id = secrets.token_urlsafe(16)
        self.lock = threading.Lock()
        self.version = 0
        self.touched = time.monotonic()
        self.data_dir = None if data_dir is None else Path(data_dir)
        self.saved = False
        self.events: list[dict] = []  # {"seat", "full", "public"}: every move in order
        self.state = g.new_state()
        if deal is None:
            engine_seed = deal_to_decision(g, self.state, mix_seed(self.seed, 0))
        else:
            engine_seed = mix_seed(self.seed, deal)
            g.reset(self.state, engine_seed)
        base = mix_seed(self.seed ^ _AGENT_STREAM, (deal or 0) * n + rotation)
        self.agents = [None if spec == HUMAN else make_agent(spec, g, seed=mix_seed(base, k))
                       for k, spec in enumerate(self.specs)]
        self.totals = np.array(g.rewards(self.state), dtype=np.float64)
        live = {"seed": self.seed, "deal": deal, "rotation": rotation, "humans": self.humans,
                "seats": self.seats}
        self.recorder = Recorder(g, agents=self.specs, extra={"live": live})
        self.recorder.start(self.state, engine_seed)
        self._finish()

    # ------------------------------------------------------------------ reading
    @property
    def over(self) -> bool:
        return bool(self.state[H_DONE])

    @property
    def turn(self) -> int | None:
        return None if self.over else int(self.state[H_TURN])

    @property
    def watch_only(self) -> bool:
        """No human seat: every hand may be shown."""
        return not self.humans

    def viewer(self, seat) -> int | str | None:
        """A seat's view (an int), "full" (every hand: an all-agent game only) or None (a spectator)."""
        n = self.game.num_players
        if seat == "full":
            if not self.watch_only:
                raise ConfigError("every hand open is for games of agents only")
            return "full"
        if seat is None:
            return None
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ConfigError(f"seat={seat!r} is not a seat: 0..{n - 1}")
        if not self.watch_only and int(seat) not in self.humans:
            raise ConfigError(f"seat {seat} is not yours; your seat(s): {self.humans}")
        return int(seat)

    def legal(self, seat: int) -> list[tuple[int, str]]:
        """(action, name) of each legal move of `seat`; [] when it is not to act."""
        if self.turn != seat:
            return []
        g = self.game
        return [(a, g.describe_action(a)) for a in g.legal_actions(self.state)]

    def table(self, seat=None):
        """The pictures Table from `seat`'s view (domino_envs.pictures.describe)."""
        from domino_envs.pictures import describe

        return describe(self.game, self.state, self.viewer(seat))

    def log(self, seat=None) -> list[str]:
        """Every move as `seat` may read it: its own by its full name, the others' as public events
        (domino_envs.text.public_events from its observations); watching agents, every move by name."""
        viewer = self.viewer(seat)
        if self.watch_only:
            return [e["full"] for e in self.events]
        if viewer not in self.humans:
            raise ConfigError(f"the log of this game is read from a human seat: {self.humans}")
        return [e["full"] if viewer == e["seat"] else e["public"][viewer] for e in self.events]

    def text(self, seat: int) -> str:
        """The seat's text view (domino_envs.text.seat_text) with the public log."""
        g = self.game
        seat = self.viewer(seat)
        mask = g.legal_mask(self.state) if self.turn == seat else np.zeros(g.num_actions, dtype=np.int8)
        return seat_text(g, g.observe(self.state, seat), mask, self.log(seat), seat=seat)

    def returns(self) -> list[float]:
        return self.totals.tolist()

    def replay(self):
        """The finished game as a domino_envs.replay.Replay (DominoError before the end)."""
        return self.recorder.finish(self.state)

    def hints(self, seat: int, search: bool = False) -> list[dict]:
        """For each legal move of `seat`: the shipped policy's probability (its masked softmax) and,
        with `search`, the guided search's mean win share and return over samples of the hidden tiles
        drawn from this seat's view (`sample_hidden`): what the seat could compute itself."""
        from domino_agents.pimc import PIMCAgent
        from domino_agents.trained import shipped_agent

        g = self.game
        if self.turn != seat or seat not in self.humans:
            raise NotYourTurn(f"no hint: it is not seat {seat}'s turn")
        mask = g.legal_mask(self.state)
        probs = shipped_agent(g, sample=True).action_probs(g.observe(self.state, seat), mask)
        rows = [{"action": a, "name": name, "policy": float(probs[a])} for a, name in self.legal(seat)]
        if search:
            agent = PIMCAgent(g, seed=mix_seed(self.seed, 1000 + self.version), n=64, rollout="policy",
                              policy="trained")
            agent.observe_state(self.state.copy(), seat, self.totals)
            legal, (win, ret) = agent.action_values(mask)
            values = {int(a): (float(w), float(r)) for a, w, r in zip(legal, win, ret)}
            for row in rows:
                row["win"], row["return"] = values[row["action"]]
        return rows

    # ------------------------------------------------------------------ moving
    def _apply(self, seat: int, action: int) -> list[dict]:
        g = self.game
        seen = sorted({0, *self.humans})
        before = {k: g.decode(g.observe(self.state, k)) for k in seen}
        hand = int(self.state[H_HAND])
        g.step(self.state, action)
        self.recorder.step(seat, action, self.state)
        rewards = g.rewards(self.state)
        self.totals += rewards
        self.version += 1
        name = g.describe_action(action)
        after = {k: g.decode(g.observe(self.state, k)) for k in seen}
        if int(self.state[H_HAND]) != hand:
            forced = [f"hand {hand + 1} is over"]
        else:
            forced = public_lines(g, before[0], after[0], seat)[1:]
        scored = "" if not rewards.any() else " (rewards " + ", ".join(f"{r:g}" for r in rewards) + ")"
        public = {}
        for h in self.humans:  # each human seat's own words for it (domino_envs.text.public_events)
            lines = public_events(g, before[h], after[h], h)
            public[h] = "; ".join(lines) if lines else f"{'you' if h == seat else f'seat {seat}'} passed"
        event = {"seat": seat, "full": f"seat {seat}: {name}{scored}" + "".join(f"; {p}" for p in forced),
                 "public": public}
        self.events.append(event)
        self._finish()
        return [event]

    def _finish(self) -> None:
        if self.over and not self.saved and self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            append(self.data_dir / GAMES_FILE, self.replay())
            self.saved = True

    def advance(self, max_moves: int | None = None) -> list[dict]:
        """Agents move until a human's turn or the end (or `max_moves` moves: watching step by step);
        the events, each as {"seat", "full", "public"}."""
        g = self.game
        out = []
        while not self.over and self.agents[self.turn] is not None:
            if max_moves is not None and len(out) >= max_moves:
                break
            seat = self.turn
            agent = self.agents[seat]
            if getattr(agent, "searches", False):
                agent.observe_state(self.state, seat, self.totals)
            action = int(agent.act(g.observe(self.state, seat), g.legal_mask(self.state)))
            out += self._apply(seat, action)
        self.touched = time.monotonic()
        return out

    def check(self, seat: int, action, version) -> int:
        """The action as an int if `seat` may play it now at `version`; else the refusal (nothing changes)."""
        g = self.game
        if self.over:
            raise NotYourTurn("the game is over")
        if seat != self.turn or seat not in self.humans:
            raise NotYourTurn(f"not your turn: seat {self.turn} is to act, not seat {seat}")
        if version != self.version:
            raise StaleMove(f"stale move: the position is at version {self.version}, the move was made at "
                            f"{version!r} (a double click or an old page); reload")
        legal = self.legal(seat)
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) \
                or int(action) not in {a for a, _ in legal}:
            what = (f"{action} ({g.describe_action(int(action))})"
                    if isinstance(action, (int, np.integer)) and 0 <= action < g.num_actions else repr(action))
            raise IllegalMove(f"illegal move {what}; legal: " + "; ".join(f"{a} {name}" for a, name in legal))
        return int(action)

    def play(self, seat: int, action, version) -> list[dict]:
        """`seat` plays `action` (checked by `check`); the move's events. The agents move in `advance`."""
        action = self.check(seat, action, version)
        self.touched = time.monotonic()
        return self._apply(seat, action)
