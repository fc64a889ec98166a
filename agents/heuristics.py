"""One rule-based heuristic per game, found from the engine: `make_heuristic(game, seed, **params)`.

The engine names its heuristic family (`Game.heuristic`: "family" or "family:variant", a plain
string, so the env layer imports nothing of the agents); the class is found by convention as
``domino_agents.heuristic_<family>.<Family>Heuristic`` (heuristic_line.py for Draw and Block,
heuristic_fives.py for Seven-Toed Pete and Racehorse, heuristic_sum7.py, heuristic_magic7.py). A
new game with a heuristic adds that module; a game without one (``heuristic = None``) gets a
ConfigError saying so.

Every heuristic scores each legal action of a row with a rule of thumb per term and plays the best
one. Each family's scoring is one compiled batch kernel (numba, `@njit(cache=True)`) over many rows
with the weights as an array (issue 24: the PPO opponent pool, imitation data and evaluation no
longer score per row in Python); the agent class wraps that kernel, so the rules of thumb have one
source. `ScoredHeuristic` (below) is the part they share: the agent API, the row checks and the
tie-break (`pick_best`). tests/agents/test_heuristic_kernels.py pins the kernels to the scores and
choices of the Python heuristics they replaced, on recorded positions of every env and config family.
"""
from __future__ import annotations

import importlib

import numpy as np
from numba import njit

from domino_envs.errors import ConfigError, IllegalActionError, StateError

from .random_agent import uniform_over


def heuristic_family(game) -> str:
    """The family part of the engine's `heuristic` ("fives" of "fives:pete"); ConfigError if none."""
    named = getattr(game, "heuristic", None)
    if not named:
        raise ConfigError(f"{game.name}: this game has no rule-based heuristic (its engine "
                          f"{type(game).__name__} names none: heuristic = {named!r}); use another agent, "
                          f"e.g. random or greedy")
    return named.partition(":")[0]


def heuristic_class(game):
    """The heuristic class for `game`'s engine (ConfigError if the game has none or the named
    module or class does not exist)."""
    family = heuristic_family(game)
    module, name = f"domino_agents.heuristic_{family}", f"{family.capitalize()}Heuristic"
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except ModuleNotFoundError as err:
        if err.name != module:  # the module exists but something it imports does not
            raise
        cls = None
    if cls is None:
        raise ConfigError(f"{game.name}: its engine names the heuristic family {family!r}, but "
                          f"{module}.{name} does not exist")
    return cls


def make_heuristic(game, seed: int | None = None, **params):
    return heuristic_class(game)(game, seed=seed, **params)


# ------------------------------------------------------------------------------ the shared part
@njit(cache=True)
def pick_best(scores, mask, rng) -> int:
    """The best legal action of one row, ties broken by `rng` (a numpy Generator, passed in).

    The tie set is the agents' rule since the first Python heuristics: every legal action whose score
    is within ``np.isclose`` (rtol 1e-5, atol 1e-8) of the top one, in ascending id order; with more
    than one, ``rng.integers(0, count)`` picks among them (one draw, none without a tie), so a seeded
    agent draws exactly as the Python agents drew. -1 if the mask has no legal action."""
    top = -np.inf
    found = False
    for a in range(mask.size):
        if mask[a] != 0 and (not found or scores[a] > top):
            top = scores[a]
            found = True
    if not found:
        return -1
    tol = 1e-8 + 1e-5 * abs(top)
    count = 0
    first = -1
    for a in range(mask.size):
        if mask[a] != 0 and abs(scores[a] - top) <= tol:
            if count == 0:
                first = a
            count += 1
    if count == 1:
        return first
    j = rng.integers(0, count)
    for a in range(mask.size):
        if mask[a] != 0 and abs(scores[a] - top) <= tol:
            if j == 0:
                return a
            j -= 1
    return first  # not reached


def obs_offsets(game, names: tuple[str, ...]) -> np.ndarray:
    """First entry of each named observation piece of `game` (its `obs_pieces`, as `decode` reads
    them), in the order of `names`: the offsets a heuristic kernel indexes."""
    at, o = {}, 0
    for name, shape in game.obs_pieces():
        at[name] = o
        o += int(np.prod(shape))
    return np.array([at[k] for k in names], dtype=np.int64)


class ScoredHeuristic:
    """What every game's heuristic shares: the weights as an array in the order of `WEIGHTS`, one
    compiled batch kernel per family (a subclass's `_run` calls it) that scores every action of many
    rows and picks each row's best, and the agent API around it.

    - `act(observation, mask)`: one row through the kernel, ties broken by the agent's own seeded
      Generator (`reset(seed)`), exactly as the Python heuristics broke them.
    - `act_batch(obs, masks, rng)`: many rows in one kernel call, ties broken by `rng` row by row
      (training/learners/pool.py `HeuristicBatch` passes a Generator seeded from its caller's stream).
    - `scores(observation, mask)`: (legal action ids, their scores); `batch_scores(obs, masks)`: the
      kernel's score matrix (-inf where illegal); both for tests and inspection, they draw nothing.
    """

    name = "heuristic"
    WEIGHTS: tuple[str, ...] = ()

    def __init__(self, game, seed: int | None, weights: dict):
        self.game = game
        self.table = game.action_table()
        self.n = game.num_players
        self.w = dict(weights)
        self.weights = np.array([float(self.w[k]) for k in self.WEIGHTS], dtype=np.float64)
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def _run(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator, pick: bool,
             scores: np.ndarray, actions: np.ndarray) -> None:
        """Fill scores[i, a] (-inf where illegal) and, with `pick`, actions[i] (subclasses: the kernel)."""
        raise NotImplementedError

    def _rows(self, obs, masks) -> tuple[np.ndarray, np.ndarray]:
        """obs and masks as the kernel reads them (float32 and int8, 2-D, one row each, contiguous);
        StateError naming the shapes if they are not the game's."""
        given = (np.shape(obs), np.shape(masks))
        obs = np.asarray(obs, dtype=np.float32)
        masks = np.asarray(masks)
        if masks.dtype != np.int8:
            masks = masks.astype(np.int8)
        if obs.ndim == 1 and masks.ndim == 1:
            obs, masks = obs[None, :], masks[None, :]
        g = self.game
        if obs.ndim != 2 or obs.shape[1] != g.obs_size or masks.shape != (obs.shape[0], g.num_actions):
            raise StateError(f"{g.name}: {type(self).__name__} needs observations of shape (rows, {g.obs_size}) "
                             f"and masks of shape (rows, {g.num_actions}) (or one of each, 1-D); got "
                             f"{given[0]} and {given[1]}")
        return np.ascontiguousarray(obs), np.ascontiguousarray(masks)

    def _choose(self, obs, masks, rng, scores) -> np.ndarray:
        """Kernel call on checked rows; IllegalActionError if a row has no legal action."""
        actions = np.empty(masks.shape[0], dtype=np.int64)
        self._run(obs, masks, rng, True, scores, actions)
        if actions.size and actions.min() < 0:
            row = int(np.flatnonzero(actions < 0)[0])
            raise IllegalActionError(f"{type(self).__name__}.act: the action mask has no legal action "
                                     f"(row {row}); a heuristic needs at least one", legal=[])
        return actions

    def scores(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions, their scores) of one observation - exposed for tests and inspection."""
        obs, masks = self._rows(observation, action_mask)
        out = np.empty(masks.shape, dtype=np.float64)
        self._run(obs, masks, self._rng, False, out, np.empty(masks.shape[0], dtype=np.int64))
        legal = np.flatnonzero(masks[0])
        return legal, out[0, legal]

    def batch_scores(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Every action's score of many rows, float64 (rows, actions), -inf where illegal - for tests
        and inspection."""
        obs, masks = self._rows(obs, masks)
        out = np.empty(masks.shape, dtype=np.float64)
        self._run(obs, masks, self._rng, False, out, np.empty(masks.shape[0], dtype=np.int64))
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs, masks = self._rows(observation, action_mask)
        return int(self._choose(obs, masks, self._rng, np.empty(masks.shape, dtype=np.float64))[0])

    def best(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The tie set `act` picks from: legal actions within np.isclose of the top score (pick_best's rule)."""
        legal, s = self.scores(observation, action_mask)
        if legal.size == 0:
            raise IllegalActionError(f"{type(self).__name__}.best: the action mask has no legal action", legal=[])
        top = s.max()
        return legal[np.abs(s - top) <= 1e-8 + 1e-5 * abs(top)]

    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """`act`'s probabilities: uniform over the tied best-scoring legal actions (what an exact
        exploitability walk, domino_training.exploit, reads instead of sampling `act`)."""
        return uniform_over(self.best(observation, action_mask), np.asarray(action_mask).size)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each row's best legal action (int64), ties broken by `rng` in row order."""
        obs, masks = self._rows(obs, masks)
        return self._choose(obs, masks, rng, np.empty(masks.shape, dtype=np.float64))
