"""The engine contract every game implements, and what the fronts (AEC env, vector env) rely on.

A game's state is one int64 row (``state_size`` slots); a batch is a 2-D array of rows, so cloning
a state is copying a row. Every row starts with the same header, read directly by the fronts:

    H_TURN    seat to act (-1 once the episode is over)
    H_DONE    1 once the episode is over
    H_TRUNC   1 if it ended by a safety cap rather than by the rules
    H_STEPS   decisions taken so far
    H_RNG     the row's own random stream (see rng.py): (seed, actions) determine a game
    H_HAND    hands completed so far (match mode)
    H_REWARD  MAX_SEATS slots: each seat's reward from the last step, in units of 1/reward_scale

A game subclass supplies compiled single-row kernels plus Python-side pieces (config, observation
pieces, deals, rendering, action names); this base class turns them into the public methods:

    _reset_kernel(s, seed, p)          deal a new episode from an int64 seed, advance to a decision
    _step_kernel(s, a, p) -> code      OK / ERR_OVER / ERR_RANGE / ERR_ILLEGAL; the state is left
                                       untouched unless OK; advances through every forced step
    _mask_kernel(s, p, out)            int8 legal mask of the seat to act (zeros once over)
    _obs_kernel(s, p, seat, out)       float32 observation of `seat`
    _sample_kernel(s, p, seat, seed)   -> a new row `seat` cannot tell from s (hidden tiles redealt)
    _legal_set_kernel(s, p, out)       legality via the step's own check, for tests
    _check_kernel(s, p) -> bool        tile conservation and state invariants, for tests

`s` is one state row, `p` the game's int64 params array (its config as numbers). A row must be
contiguous (`new_state()`, or a row of a C-order batch): packed fields (the Draw Game's deck, the
layout history) are read through byte and int16 views of it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
from numba import njit

from .rng import seed_from_generator

MAX_SEATS = 6
H_TURN, H_DONE, H_TRUNC, H_STEPS, H_RNG, H_HAND = 0, 1, 2, 3, 4, 5
H_REWARD = 6
HEADER_SIZE = H_REWARD + MAX_SEATS

# step kernel return codes
OK, ERR_OVER, ERR_RANGE, ERR_ILLEGAL = 0, 1, 2, 3


@njit(cache=True, _nrt=False)
def step_gate(s, a, n_actions):
    """The checks a step kernel makes before its own legality check: ERR_OVER once the episode
    is over, ERR_RANGE for an action outside 0..n_actions-1, else OK. Use as

        code = step_gate(s, a, n_actions)
        if code == OK and not _is_legal(s, p, a):
            code = ERR_ILLEGAL
        if code != OK:
            return code
        step_begin(s)
    """
    if s[H_DONE] == 1:
        return ERR_OVER
    if a < 0 or a >= n_actions:
        return ERR_RANGE
    return OK


@njit(cache=True, inline="always")
def step_begin(s):
    """A legal step starts: every seat's reward slot back to 0, the decision counted."""
    for k in range(MAX_SEATS):
        s[H_REWARD + k] = 0
    s[H_STEPS] += 1


class DominoError(ValueError):
    """Base class of every error this package raises for bad input."""


class ConfigError(DominoError):
    """An unknown config key or a value outside what the rules allow."""


class IllegalActionError(DominoError):
    """An action that the rules do not allow now. Names the action, its meaning and the legal set."""

    def __init__(self, message: str, action: Any = None, legal: list[int] | None = None,
                 kind: str = "illegal"):
        super().__init__(message)
        self.action = action
        self.legal = legal or []
        self.kind = kind  # "type", "range", "over" (episode ended) or "illegal" (against the rules)


class DealError(DominoError):
    """A malformed deal passed to reset(options={"deal": ...})."""


def deal_tile_ids(game: str, seq, where: str, seen: set, max_pip: int = 6) -> list[int]:
    """Tile ids of one place of a hand-set deal (a list of (a, b) pairs). DealError naming the game,
    the place and the tile for anything that is not a tile of the double-`max_pip` set or that is
    dealt a second time; `seen` collects the ids dealt so far."""
    from .tiles import tile_id

    if not isinstance(seq, (list, tuple)):
        raise DealError(f"{game}: {where} must be a list of tiles (a, b); got {seq!r}")
    out = []
    for tile in seq:
        try:
            a, b = tile
            if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)) or int(a) != a or int(b) != b:
                raise ValueError
            a, b = int(a), int(b)
            if min(a, b) < 0:
                raise ValueError
        except (TypeError, ValueError):
            raise DealError(f"{game}: {where}: {tile!r} is not a tile (a, b) with halves 0..{max_pip}") from None
        if max(a, b) > max_pip:
            raise DealError(f"{game}: {where}: tile {tile!r} is not in a double-{max_pip} set")
        t = tile_id(a, b)
        if t in seen:
            raise DealError(f"{game}: {where}: tile {tile!r} is dealt twice")
        seen.add(t)
        out.append(t)
    return out


def check_choice(game: str, key: str, value, allowed) -> None:
    """Raise ConfigError unless value is one of allowed."""
    if value not in allowed:
        raise ConfigError(f"{game}: {key}={value!r} is not allowed; allowed values: {list(allowed)}")


def check_int(game: str, key: str, value, lo: int, hi: int | None = None) -> None:
    """Raise ConfigError unless value is an int in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo or (
        hi is not None and value > hi
    ):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{game}: {key}={value!r} must be an integer in {rng}")


def check_bool(game: str, key: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{game}: {key}={value!r} must be True or False")


def build_config(config_cls, game_name: str, defaults: dict, kwargs: dict):
    """Config dataclass from registry defaults overlaid with user keys; unknown keys rejected."""
    allowed = [f.name for f in dataclasses.fields(config_cls)]
    unknown = [k for k in kwargs if k not in allowed]
    if unknown:
        raise ConfigError(
            f"{game_name}: unknown config key(s) {unknown}; allowed keys: {allowed}"
        )
    merged = {**defaults, **kwargs}
    return config_cls(**merged)


KERNELS = ("_reset_kernel", "_step_kernel", "_mask_kernel", "_obs_kernel", "_sample_kernel",
           "_legal_set_kernel", "_check_kernel")


class Game:
    """Base class binding a game's compiled kernels to the engine contract (see module doc).

    A game module defines its kernels at module level and its engine class as
    ``class MyGame(Game, kernels=globals())``, which binds every kernel of `KERNELS`.
    """

    def __init_subclass__(cls, kernels: dict | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if kernels is not None:
            missing = [k for k in KERNELS if k not in kernels]
            if missing:
                raise TypeError(f"{cls.__name__}: the game module lacks kernels {missing}")
            for k in KERNELS:
                setattr(cls, k, staticmethod(kernels[k]))

    name: ClassVar[str] = "game"
    reward_scale: ClassVar[float] = 1.0  # rewards in the header are integers / reward_scale

    # set by subclasses -------------------------------------------------------------------
    config: Any
    params: np.ndarray
    num_players: int
    num_actions: int
    state_size: int

    def __init__(self, config, name: str | None = None):
        self.config = config
        if name is not None:
            self.name = name
        self._mask_buf = np.zeros(self.num_actions, dtype=np.int8)
        self.obs_size = sum(int(np.prod(shape)) for _, shape in self.obs_pieces())

    # ------------------------------------------------------------------ to be provided
    def obs_pieces(self) -> list[tuple[str, tuple[int, ...]]]:
        """Named observation pieces in order, with their shapes."""
        raise NotImplementedError

    def describe_action(self, action: int) -> str:
        raise NotImplementedError

    def obs_high(self) -> float:
        """Upper bound of every observation entry (the Box's high)."""
        raise NotImplementedError

    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        raise NotImplementedError

    def render(self, state: np.ndarray, seat: int) -> str:
        raise NotImplementedError

    def _sample_kernel(self, state, seat, seed):  # pragma: no cover - overridden
        raise NotImplementedError

    # ------------------------------------------------------------------ contract
    def new_state(self) -> np.ndarray:
        return np.zeros(self.state_size, dtype=np.int64)

    def reset(self, state: np.ndarray, seed: int) -> None:
        """Deal a new episode into state from an integer seed."""
        type(self)._reset_kernel(state, np.int64(seed), self.params)

    def action_as_int(self, action) -> int:
        """The action as a Python int; IllegalActionError for anything but an integer."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
                return int(action.item())
            raise IllegalActionError(
                f"{self.name}: action {action!r} is not an integer; actions are ints 0..{self.num_actions - 1}",
                action, kind="type",
            )
        return int(action)

    def step(self, state: np.ndarray, action) -> None:
        """Apply one action of the seat to move; advance through forced steps."""
        a = self.action_as_int(action)
        code = type(self)._step_kernel(state, a, self.params)
        if code != OK:
            self._raise_step_error(state, a, code)

    def _raise_step_error(self, state, action, code) -> None:
        if code == ERR_OVER:
            raise IllegalActionError(
                f"{self.name}: the game is over; reset() before stepping again", action, kind="over"
            )
        if code == ERR_RANGE:
            raise IllegalActionError(
                f"{self.name}: action {action} is out of range; actions are 0..{self.num_actions - 1}",
                action, kind="range",
            )
        legal = self.legal_actions(state)
        shown = ", ".join(f"{a} ({self.describe_action(a)})" for a in legal[:24])
        more = f" ... and {len(legal) - 24} more" if len(legal) > 24 else ""
        raise IllegalActionError(
            f"{self.name}: action {action} ({self.describe_action(int(action))}) is illegal for "
            f"seat {int(state[H_TURN])} now; legal actions: [{shown}{more}]",
            action,
            legal,
        )

    def legal_mask(self, state: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """int8 mask of the legal actions of the seat to move (all zeros once over)."""
        if out is None:
            out = np.zeros(self.num_actions, dtype=np.int8)
        type(self)._mask_kernel(state, self.params, out)
        return out

    def legal_actions(self, state: np.ndarray) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.legal_mask(state, self._mask_buf))]

    def observe(self, state: np.ndarray, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """float32 observation of `seat` (seat-relative, only what that seat may know)."""
        if out is None:
            out = np.zeros(self.obs_size, dtype=np.float32)
        type(self)._obs_kernel(state, self.params, seat, out)
        return out

    def sample_hidden(self, state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
        """A state `seat` cannot tell from `state`: every tile it cannot see redealt consistently."""
        return type(self)._sample_kernel(state, self.params, int(seat), np.int64(seed_from_generator(rng)))

    def legal_set(self, state: np.ndarray) -> np.ndarray:
        """int8 legality of every action by the step's own check (an independent path from the mask)."""
        out = np.zeros(self.num_actions, dtype=np.int8)
        type(self)._legal_set_kernel(state, self.params, out)
        return out

    def invariants_ok(self, state: np.ndarray) -> bool:
        """Tile conservation and the game's own state invariants."""
        return bool(type(self)._check_kernel(state, self.params))

    def current_seat(self, state: np.ndarray) -> int:
        return int(state[H_TURN])

    def is_over(self, state: np.ndarray) -> bool:
        return bool(state[H_DONE])

    def rewards(self, state: np.ndarray) -> np.ndarray:
        """Each seat's reward from the last step."""
        return state[H_REWARD:H_REWARD + self.num_players] / self.reward_scale

    def decode(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Observation vector -> its named pieces (views, reshaped)."""
        obs = np.asarray(obs)
        if obs.shape != (self.obs_size,):
            raise ValueError(f"{self.name}: observation has shape {obs.shape}, expected ({self.obs_size},)")
        out, o = {}, 0
        for name, shape in self.obs_pieces():
            size = int(np.prod(shape))
            out[name] = obs[o:o + size].reshape(shape)
            o += size
        return out
