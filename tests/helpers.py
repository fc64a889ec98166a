"""Shared test helpers: random play through the engine and through the AEC env."""
from __future__ import annotations

import numpy as np

from domino_envs import make_game


def vector_reference_rows(game, n_envs: int, seed: int) -> list[np.ndarray]:
    """The rows `make_vec(name, n_envs, seed=seed)` starts from, dealt through the engine: row i
    from the i-th seed drawn from ``default_rng(seed)``, a deal without a decision dealt again
    (``fronts.deal_to_decision``, the rule the vector env follows)."""
    from domino_envs.fronts import deal_to_decision
    from domino_envs.rng import seed_from_generator

    gen = np.random.default_rng(seed)
    rows = []
    for _ in range(n_envs):
        s = game.new_state()
        deal_to_decision(game, s, seed_from_generator(gen))
        rows.append(s)
    return rows


def random_game(game, state, seed: int, rng: np.random.Generator, check=None, max_decisions=100_000):
    """Play one seeded game with uniformly random legal actions; call check(state) after each step.

    Returns (decisions, summed reward per seat)."""
    game.reset(state, seed)
    total = np.zeros(game.num_players)
    decisions = 0
    if check is not None:
        check(state)
    while not game.is_over(state):
        legal = np.flatnonzero(game.legal_mask(state))
        game.step(state, int(legal[rng.integers(len(legal))]))
        total += game.rewards(state)
        decisions += 1
        if check is not None:
            check(state)
        assert decisions <= max_decisions, "game did not terminate within the bound"
    return decisions, total


def play_to_random_point(game, seed: int, rng: np.random.Generator):
    """A state part-way through a seeded random game (not over), or None if it ended first."""
    state = game.new_state()
    game.reset(state, seed)
    stop = int(rng.integers(0, 14))
    for _ in range(stop):
        if game.is_over(state):
            return None
        legal = np.flatnonzero(game.legal_mask(state))
        game.step(state, int(legal[rng.integers(len(legal))]))
    return None if game.is_over(state) else state


def make(name, **kwargs):
    return make_game(name, **kwargs)


# ------------------------------------------------------------------------------ docs and README
NOT_RUN = "<!-- not-run -->"  # put on the line before a ```python fence that must not be executed


def fenced_blocks(text: str, lang: str = "python", include_not_run: bool = False) -> list[str]:
    """The bodies of the ```lang fenced blocks of a Markdown text, in order. A block whose fence
    is preceded by the NOT_RUN comment line is left out unless include_not_run."""
    import re

    blocks = []
    for m in re.finditer(rf"^([^\n]*)\n```{lang}\n(.*?)^```", "\n" + text, flags=re.S | re.M):
        if m.group(1).strip() == NOT_RUN and not include_not_run:
            continue
        blocks.append(m.group(2))
    return blocks


def run_snippet(code: str, where: str) -> dict:
    """Execute a documentation snippet in a fresh namespace (as a reader pasting it would) and
    return that namespace; `where` names it in tracebacks."""
    namespace: dict = {"__name__": "__doc_snippet__"}
    exec(compile(code, where, "exec", dont_inherit=True), namespace)  # not this file's __future__ imports
    return namespace


def deal_state(game, hands, stock=(), first=0):
    """A state dealt by hand: `hands` per seat, `stock` (boneyard / market / pile, in draw order),
    `first` (the first seat, Pete's leader). The one place that knows each game's deal dict."""
    state = game.new_state()
    game.reset(state, 0)
    family = game.name.split("_")[0]
    stock = list(stock)
    if family in ("draw", "block", "racehorse"):
        deal = {"hands": hands, "stock": stock, "first": first}
    elif family == "sum7":  # a Sum 7 deal names every tile: the rest go to the stock in id order
        named = {(min(t), max(t)) for h in hands for t in h} | {(min(t), max(t)) for t in stock}
        rest = [(a, b) for b in range(7) for a in range(b + 1) if (a, b) not in named]
        deal = {"hands": hands, "stock": stock + rest}
    elif family == "seven":
        deal = {"hands": hands, "first": first}
    elif family == "magic7":
        deal = {"hands": hands, "stock": stock, "first": first}
    else:
        raise AssertionError(f"deal_state does not know {game.name}")
    game.set_deal(state, deal)
    return state


class ScriptedVenv:
    """A stand-in for VectorEnv: per step the seat to act in each row, the legal masks, the rewards the
    step pays and which rows' games end. Observation row i at step k reads [i, k, 0, ...], so each
    decision can be told apart; every action taken is recorded with its mask."""

    def __init__(self, obs_size: int, seats, masks, rewards, done, game=None):
        self.game = game
        self.seats_at, self.masks_at = np.asarray(seats), np.asarray(masks, np.int8)
        self.rewards_at, self.done_at = np.asarray(rewards, np.float64), np.asarray(done, bool)
        self.obs_size, self.k = obs_size, 0
        self.taken: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (obs, masks, actions) per step
        self._show()

    def _show(self):
        N = self.seats_at.shape[1]
        k = min(self.k, len(self.seats_at) - 1)
        self.obs = np.zeros((N, self.obs_size), np.float32)
        self.obs[:, 0], self.obs[:, 1] = np.arange(N), self.k
        self.masks, self.seats = self.masks_at[k].copy(), self.seats_at[k].copy()

    def reset(self):
        return self.obs, self.masks, self.seats

    def step(self, actions):
        k = self.k
        legal = self.masks != 0
        assert legal[np.arange(len(actions)), actions].all(), "an illegal action"
        self.taken.append((self.obs.copy(), self.masks.copy(), np.array(actions)))
        self.k += 1
        self._show()
        done = self.done_at[k]
        return self.obs, self.masks, self.seats, self.rewards_at[k], done, np.zeros_like(done), {}
