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
pieces, deals, rendering, action names, and what the layers above ask of a game: its action table,
its table description for pictures, its heuristic family and its docs page; docs/adding_a_game.md
lists them all); this base class turns them into the public methods:

    _reset_kernel(s, seed, p)          deal a new episode from an int64 seed, advance to a decision
    _step_kernel(s, a, p) -> code      OK / ERR_OVER / ERR_RANGE / ERR_ILLEGAL; the state is left
                                       untouched unless OK; advances through every forced step
    _mask_kernel(s, p, out)            int8 legal mask of the seat to act (zeros once over)
    _obs_kernel(s, p, seat, out)       float32 observation of `seat`
    _sample_kernel(s, p, seat, seed)   -> a new row `seat` cannot tell from s (hidden tiles redealt)
    _legal_set_kernel(s, p, out)       legality via the step's own check, for tests
    _check_kernel(s, p) -> bool        tile conservation and state invariants, for tests

The step and the legality sweep are templates here (`step_kernel`, `legal_set`) that a game fills
with its `_is_legal`, `_play` and `_advance`; the drawing games share `draw_until_playable`, and
every game gives its fixed facts (config class, slot table, docs page...) as one `Facts` record.

`s` is one state row, `p` the game's int64 params array (its config as numbers). A row must be
contiguous (`new_state()`, or a row of a C-order batch): packed fields (the Draw Game's deck, the
layout history) are read through byte and int16 views of it.

Checks in front of the kernels (compiled loops trust their inputs). Every public method checks
its arguments before any kernel runs, at the cost of a few attribute reads: the row is a 1-D
C-contiguous int64 ndarray of ``state_size``; an ``out`` buffer has exactly the dtype and size
the kernel writes, contiguous and writeable; a seat is an int (not a bool) in 0..num_players-1;
an action is an int in 0..num_actions-1; ``sample_hidden`` takes a numpy Generator. The methods
that read a row also check its header's turn and done slots (the seat to act indexes the hands
in every kernel), so a row with a garbage turn raises `StateError`. They do not check the rest of
the row: a row that only the engine has written (``reset``, ``step``, ``set_deal``) is valid by
construction, and a full check on every call would cost the callers that step in a loop. A row
from anywhere else (a file, another process, edited by hand) goes through ``validate(state)``
once: the header ranges, every slot a kernel uses as an index or bitmask within its range, every
relation between slots a kernel relies on (the game's ``_validate_more``: the layout as its history
gives it, played masks against the table, public voids against the hands, pointers, counts, the
seat to act at a real decision) and the game's invariants (``_check_kernel``), each failure a
`StateError` naming the slot. The samplers fail closed (an empty row, `SamplingError`) on counts
they cannot deal. The
fronts' hot paths (the AEC env's step, ``VectorEnv``'s compiled loop) call the kernels directly on
rows they own and pay for none of this.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numba import njit

from .errors import (  # noqa: F401 - the engine contract's errors, importable from here too
    ConfigError,
    DealError,
    DominoError,
    IllegalActionError,
    SamplingError,
    StateError,
)
from .rng import seed_from_generator
from .slots import Slots

MAX_SEATS = 6
# The common header, declared once (slots.py); Game.validate checks these slots in code (turn and
# done together, rewards against reward_scale * obs_high()), so they carry no table range.
HEADER = Slots("header")
H_TURN = HEADER.slot("turn", doc="seat to act, -1 once over (checked with done by Game.validate)")
H_DONE = HEADER.slot("done", doc="1 once the episode is over (Game.validate)")
H_TRUNC = HEADER.slot("truncated", doc="1 if a safety cap ended it (Game.validate)")
H_STEPS = HEADER.slot("steps", doc="decisions taken so far, >= 0 (Game.validate)")
H_RNG = HEADER.slot("rng", doc="the row's random stream: any int64")
H_HAND = HEADER.slot("hands done", doc="hands completed so far, >= 0 (Game.validate)")
H_REWARD = HEADER.slot("rewards", MAX_SEATS, doc="last step's reward per seat, in 1/reward_scale units "
                                                 "(Game.validate)")
HEADER_SIZE = HEADER.close()

# step kernel return codes
OK, ERR_OVER, ERR_RANGE, ERR_ILLEGAL = 0, 1, 2, 3


@njit(cache=True, _nrt=False)
def step_gate(s, a, n_actions):
    """The checks `step_kernel` makes before the game's own legality check: ERR_OVER once the
    episode is over, ERR_RANGE for an action outside 0..n_actions-1, else OK."""
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


# The kernels every game writes alike, as templates a game fills in with its own compiled functions
# (numba passes them as first-class functions; inlined, each game's kernel is its own machine code,
# cached with the game module, as fast as the copies it replaces):
#
#     @njit(cache=True, inline="always")
#     def _step_kernel(s, a, p):
#         return step_kernel(s, a, p, N_ACTIONS, _is_legal, _play, _advance)
#
#     @njit(cache=True)
#     def _legal_set_kernel(s, p, out):
#         legal_set(s, p, out, N_ACTIONS, _is_legal)
@njit(inline="always")
def step_kernel(s, a, p, n_actions, is_legal, play, advance):
    """The step of the engine contract: ERR_OVER / ERR_RANGE (`step_gate`), ERR_ILLEGAL unless
    ``is_legal(s, p, a)``, the row untouched on any of them; else `step_begin`, ``play(s, p, a)``
    (the seat to act takes action a) and ``advance(s, p)`` (every forced step up to the next
    decision), and OK."""
    code = step_gate(s, a, n_actions)
    if code == OK and not is_legal(s, p, a):
        code = ERR_ILLEGAL
    if code != OK:
        return code
    step_begin(s)
    play(s, p, a)
    advance(s, p)
    return OK


@njit(inline="always")
def legal_set(s, p, out, n_actions, is_legal):
    """out[a] = 1 where ``is_legal(s, p, a)``, the step's own check, action by action (an independent
    path from the mask, for tests); all zeros once the episode is over."""
    out[:] = 0
    if s[H_DONE] == 1:
        return
    for a in range(n_actions):
        out[a] = 1 if is_legal(s, p, a) else 0


@njit(inline="always")
def draw_until_playable(s, deck, at, end, slots, seat, fits, shown):
    """The draw of the drawing games (D-2, S-9, T-7): `seat`, with nothing to play, draws the stock's
    next tile ``deck[at + s[pos]]`` into its hand, one at a time, counting its draws, until a tile
    of the bitmask `fits` comes (it must play it: the just-drew slot set) or the stock is down to
    `end` (``end <= s[pos]``: no draw). Its lacks slot becomes `shown` where it kept a tile (a kept
    tile is unseen: what it showed before no longer holds), else gains `shown`. `slots` is the
    game's (pos, hands, drawn, lacks, just_drew) offsets. Returns (drew a playable tile, tiles kept)."""
    pos, hands, drawn, lacks, just_drew = slots
    kept = 0
    got = False
    while s[pos] < end:
        t = np.int64(deck[np.uint64(at + s[pos])])
        s[pos] += 1
        s[hands + seat] |= 1 << t
        s[drawn + seat] += 1
        if (fits >> t) & 1:
            got = True
            s[just_drew] = 1
            break
        kept += 1
    s[lacks + seat] = shown if kept > 0 else (s[lacks + seat] | shown)
    return got, kept


# Upper bounds of the config integers the kernels add up or compare (they fit int64 with room).
MAX_TARGET = 1_000_000
MAX_HANDS = 1_000_000
# Engine seeds are int64 (the row's random stream slot).
SEED_MIN, SEED_MAX = -(2 ** 63), 2 ** 63 - 1


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
            if not (is_int(a) and is_int(b)):
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


def is_int(value) -> bool:
    """Whether value is an integer (Python or numpy), bools excluded: 6.0, True and "6" are not."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


# The one deal format: every game's set_deal takes {"hands": one list of tiles per seat (required),
# "stock": the undealt tiles in draw order, "first": the seat to start} plus that game's extras.
# The keys games used before are refused with a message naming the new key.
DEAL_KEYS = ("hands", "stock", "first")
DEAL_RENAMED = {"boneyard": "stock", "market": "stock", "pile": "stock", "leader": "first"}


def check_deal_keys(game: str, deal, allowed=DEAL_KEYS) -> None:
    """DealError unless deal is a dict whose keys are among `allowed` (the game's subset of the one
    deal format plus its extras) and include "hands"; a key of the old formats gets a message
    naming the key that replaces it."""
    allowed = list(allowed)
    if not isinstance(deal, dict):
        raise DealError(f"{game}: a deal is a dict with keys {allowed} ('hands' required); got {deal!r}")
    for key in deal:
        if key in DEAL_RENAMED and key not in allowed and DEAL_RENAMED[key] in allowed:
            raise DealError(f"{game}: deal key {key!r} is now {DEAL_RENAMED[key]!r} (one deal format for "
                            f"every game; this game's keys: {allowed})")
    unknown = [k for k in deal if k not in allowed]
    if unknown or "hands" not in deal:
        raise DealError(f"{game}: a deal is a dict with keys {allowed} ('hands' required); got keys "
                        f"{list(deal)}")


def deal_hands(game: str, deal: dict, n: int) -> list:
    """The deal's "hands": a list (or tuple) of n lists, one per seat; DealError otherwise."""
    hands = deal["hands"]
    if not isinstance(hands, (list, tuple)) or len(hands) != n:
        raise DealError(f"{game}: 'hands' must be a list of {n} hands (one per seat); got {hands!r}")
    for k, h in enumerate(hands):
        if not isinstance(h, (list, tuple)):
            raise DealError(f"{game}: hand {k} must be a list of tiles; got {h!r}")
    return list(hands)


def deal_stock(game: str, deal: dict) -> list:
    """The deal's "stock" (the undealt tiles in draw order; [] if absent); DealError unless a list."""
    stock = deal.get("stock", [])
    if not isinstance(stock, (list, tuple)):
        raise DealError(f"{game}: 'stock' must be a list of tiles in draw order; got {stock!r}")
    return list(stock)


def deal_first(game: str, deal: dict, n: int, default: int) -> int:
    """The deal's "first" seat (`default` if absent): an int (not a bool) in 0..n-1."""
    first = deal.get("first", default)
    if not is_int(first) or not 0 <= first < n:
        raise DealError(f"{game}: first={first!r} must be a seat 0..{n - 1} (an int)")
    return int(first)


def check_choice(game: str, key: str, value, allowed) -> None:
    """Raise ConfigError unless value is one of allowed, of the same kind (6.0 or True is not 6
    or 1: an int choice takes ints only, a str choice strs only)."""
    allowed = list(allowed)
    kind_ok = all(is_int(value) if is_int(a) else type(value) is type(a) for a in allowed[:1])
    if not kind_ok or value not in allowed:
        raise ConfigError(f"{game}: {key}={value!r} is not allowed; allowed values: {allowed}")


def check_int(game: str, key: str, value, lo: int, hi: int) -> None:
    """Raise ConfigError unless value is an int (not a bool, not a float) in [lo, hi]. Every
    config integer has an upper bound: the kernels hold it in int64 and add to it."""
    if not is_int(value) or not lo <= value <= hi:
        raise ConfigError(f"{game}: {key}={value!r} must be an integer in {lo}..{hi}")


def check_bool(game: str, key: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{game}: {key}={value!r} must be True or False")


def check_match(game: str, config) -> None:
    """The match keys of a game played to a target score: `match` (play hands to `target` as one
    episode) True or False, `target` in 1..MAX_TARGET, `max_hands` (the safety cap) in 1..MAX_HANDS."""
    check_bool(game, "match", config.match)
    check_int(game, "target", config.target, 1, MAX_TARGET)
    check_int(game, "max_hands", config.max_hands, 1, MAX_HANDS)


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


class Facts(NamedTuple):
    """What a game is whatever its config, given once: ``class MyGame(Game, kernels=globals(),
    facts=Facts(...))`` sets each field as the class attribute of that name (the `Game` docs say
    what each is for)."""

    Config: type  # the frozen dataclass of rule parameters
    slots: Slots  # the row's slot table, closed (state_size is its size)
    docs_page: str  # its page under docs/games/
    spec_prefix: str  # the prefix of its ambiguity ids
    heuristic: str | None = None  # its rule-based heuristic's family ("family" or "family:variant")
    first_key: str | None = None  # the config key naming hand 1's first seat
    reward_scale: float = 1.0  # rewards in the header are integers / reward_scale


KERNELS = ("_reset_kernel", "_step_kernel", "_mask_kernel", "_obs_kernel", "_sample_kernel",
           "_legal_set_kernel", "_check_kernel")


class Game:
    """Base class binding a game's compiled kernels to the engine contract (see module doc).

    A game module defines its kernels at module level and its engine class as
    ``class MyGame(Game, kernels=globals(), facts=Facts(...))``, which binds every kernel of
    `KERNELS` and sets the class attributes of its `Facts`.
    """

    def __init_subclass__(cls, kernels: dict | None = None, facts: Facts | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if facts is not None:
            for key, value in facts._asdict().items():
                setattr(cls, key, value)
        if kernels is not None:
            missing = [k for k in KERNELS if k not in kernels]
            if missing:
                raise TypeError(f"{cls.__name__}: the game module lacks kernels {missing}")
            for k in KERNELS:
                setattr(cls, k, staticmethod(kernels[k]))
        table = cls.__dict__.get("slots")
        if table is not None:  # the row is the game's slot table: its size is the row size
            if not table.closed:
                raise TypeError(f"{cls.__name__}: its slot table {table.name!r} is not closed")
            if cls.__dict__.get("state_size", table.size) != table.size:
                raise TypeError(f"{cls.__name__}: state_size {cls.__dict__['state_size']} is not its slot "
                                f"table's size {table.size}")
            cls.state_size = table.size

    name: ClassVar[str] = "game"
    reward_scale: ClassVar[float] = 1.0  # rewards in the header are integers / reward_scale
    # what the layers above ask of a game, named here rather than switched on the class name:
    # heuristic: the family of its rule-based heuristic, "family" or "family:variant"; the agents
    # find it as domino_agents.heuristic_<family>.<Family>Heuristic (None: the game has none)
    heuristic: ClassVar[str | None] = None
    # docs_page: its page under docs/games/, the full text of its rules, actions and observation
    # (the module docstring summarises it); spec_prefix: the prefix of its ambiguity ids in the
    # rules spec (D for D-1, M7 for M7-4), which the docstring and the page both list
    docs_page: ClassVar[str | None] = None
    spec_prefix: ClassVar[str | None] = None
    # first_key: the config key naming hand 1's first seat (its value None: drawn at random from
    # the row's stream), which a deal's "first" names; None where the rules pick that seat from the
    # hands (the OpenSpiel games, openspiel.py, make the random draw a chance node)
    first_key: ClassVar[str | None] = None

    # set by subclasses -------------------------------------------------------------------
    slots: ClassVar[Slots]  # the row's slot table (slots.py): state_size, slot_ranges, slot_map
    config: Any
    params: np.ndarray
    num_players: int
    num_actions: int
    state_size: int

    def __init__(self, config, name: str | None = None):
        self.config = config
        if name is not None:
            self.name = name
        self.obs_size = sum(int(np.prod(shape)) for _, shape in self.obs_pieces())

    # ------------------------------------------------------------------ to be provided
    def obs_pieces(self) -> list[tuple[str, tuple[int, ...]]]:
        """Named observation pieces in order, with their shapes."""
        raise NotImplementedError

    def describe_action(self, action: int) -> str:
        raise NotImplementedError

    def action_table(self):
        """The meaning of every action id as arrays (actions.ActionTable: kind, tile, arm, weight
        shed), built from the game's action encoding alone; what rule-based agents read."""
        raise NotImplementedError

    def describe_table(self, state: np.ndarray, table, face_up: list[bool]) -> None:
        """Fill in what a picture of `state` shows (table.py): each seat's count, its lines
        (score, chips, notes) and its tiles where face_up[seat], the facts line (`table.info`) and
        the play on the felt (`table.play`: a LinePlay, RowsPlay or None). pictures.describe has
        made the seats, the title and the footer; the state is checked."""
        raise NotImplementedError

    def obs_high(self) -> float:
        """Upper bound of every observation entry (the Box's high)."""
        raise NotImplementedError

    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start an episode from a given deal instead of a shuffled one (see each game's module
        docstring for its deal format). The whole deal is checked before the row is touched, so a
        DealError leaves the row as it was; then the row starts afresh (as `reset` leaves it before
        dealing, its random stream kept) and forced steps are taken."""
        raise NotImplementedError

    def config_dict(self) -> dict:
        """The full resolved config as plain JSON values (tuples as lists): what replays, policy files
        and checkpoints record, and what loading one compares against."""
        return json.loads(json.dumps(dataclasses.asdict(self.config)))

    def _fresh_row(self, state: np.ndarray) -> None:
        """Every slot back to 0 but the row's random stream: a deal then starts a new episode
        (hand 1, scores, rewards and counters cleared), whatever the row held before."""
        rng = state[H_RNG]
        state[:] = 0
        state[H_RNG] = rng

    def render(self, state: np.ndarray, seat: int) -> str:
        raise NotImplementedError

    def _sample_kernel(self, state, seat, seed):  # pragma: no cover - overridden
        raise NotImplementedError

    # ------------------------------------------------------------------ argument checks
    def _check_row(self, state) -> None:
        """StateError unless state is a row the kernels can index: a 1-D C-contiguous int64 ndarray
        of state_size slots (cheap: no slot is read)."""
        if (type(state) is not np.ndarray or state.dtype != np.int64 or state.shape != (self.state_size,)
                or not state.flags.c_contiguous):
            what = (f"{type(state).__name__} with dtype {state.dtype}, shape {state.shape}"
                    + ("" if state.flags.c_contiguous else ", not C-contiguous")
                    if isinstance(state, np.ndarray) else repr(type(state).__name__))
            raise StateError(f"{self.name}: a state row is a C-contiguous int64 numpy array of shape "
                             f"({self.state_size},) (game.new_state()); got {what}")

    def _check_state(self, state) -> None:
        """`_check_row` plus the header slots every kernel indexes with: done is 0 or 1, and the
        turn is a seat 0..num_players-1 while the episode runs, -1 once it is over."""
        self._check_row(state)
        turn, done = state[H_TURN], state[H_DONE]
        if not ((done == 0 and 0 <= turn < self.num_players) or (done == 1 and turn == -1)):
            raise StateError(f"{self.name}: corrupted state row: turn slot {int(turn)} with done slot "
                             f"{int(done)} (a running episode has done 0 and a turn 0..{self.num_players - 1}; "
                             f"a finished one done 1 and turn -1)")

    def _check_out(self, out, dtype, size: int, what: str) -> None:
        if (type(out) is not np.ndarray or out.dtype != dtype or out.shape != (size,)
                or not out.flags.c_contiguous or not out.flags.writeable):
            got = (f"dtype {out.dtype}, shape {out.shape}"
                   + ("" if out.flags.c_contiguous else ", not contiguous")
                   + ("" if out.flags.writeable else ", read-only")
                   if isinstance(out, np.ndarray) else f"a {type(out).__name__}")
            raise StateError(f"{self.name}: out must be a writeable contiguous {np.dtype(dtype).name} "
                             f"numpy array of shape ({size},) ({what}); got {got}")

    def seat_as_int(self, seat) -> int:
        """The seat as a Python int; StateError unless an int (Python or numpy, not a bool) in
        0..num_players-1 (no negative indexing: -1 is not the last seat)."""
        if not is_int(seat) or not 0 <= seat < self.num_players:
            raise StateError(f"{self.name}: seat={seat!r} must be an int 0..{self.num_players - 1}")
        return int(seat)

    # ------------------------------------------------------------------ contract
    def new_state(self) -> np.ndarray:
        return np.zeros(self.state_size, dtype=np.int64)

    def reset(self, state: np.ndarray, seed: int) -> None:
        """Deal a new episode into state from an integer seed (int64 range)."""
        self._check_row(state)
        if not is_int(seed) or not SEED_MIN <= seed <= SEED_MAX:
            raise ConfigError(f"{self.name}: seed={seed!r} must be an int in {SEED_MIN}..{SEED_MAX}")
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
        self._check_state(state)
        a = self.action_as_int(action)
        if not 0 <= a < self.num_actions:  # before the kernel: 2**63 does not fit its int64
            self._raise_step_error(state, a, ERR_OVER if state[H_DONE] else ERR_RANGE)
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
        self._check_state(state)
        if out is None:
            out = np.zeros(self.num_actions, dtype=np.int8)
        else:
            self._check_out(out, np.int8, self.num_actions, "num_actions")
        type(self)._mask_kernel(state, self.params, out)
        return out

    def legal_actions(self, state: np.ndarray) -> list[int]:
        # a fresh mask per call: one Game may serve several envs in several threads
        return [int(a) for a in np.flatnonzero(self.legal_mask(state))]

    def observe(self, state: np.ndarray, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """float32 observation of `seat` (seat-relative, only what that seat may know)."""
        self._check_state(state)
        seat = self.seat_as_int(seat)
        if out is None:
            out = np.zeros(self.obs_size, dtype=np.float32)
        else:
            self._check_out(out, np.float32, self.obs_size, "obs_size")
        type(self)._obs_kernel(state, self.params, seat, out)
        return out

    def sample_hidden(self, state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
        """A state `seat` cannot tell from `state`: every tile it cannot see redealt consistently."""
        self._check_state(state)
        seat = self.seat_as_int(seat)
        if not isinstance(rng, np.random.Generator):
            raise StateError(f"{self.name}: rng must be a numpy.random.Generator "
                             f"(np.random.default_rng(seed)); got {type(rng).__name__}")
        sample = type(self)._sample_kernel(state, self.params, seat, np.int64(seed_from_generator(rng)))
        if sample.size == 0:  # the kernels fail closed: an empty row, never the true state
            raise SamplingError(f"{self.name}: no deal consistent with seat {seat}'s information exists "
                                f"(the state contradicts its public record); no sample returned")
        return sample

    def legal_set(self, state: np.ndarray) -> np.ndarray:
        """int8 legality of every action by the step's own check (an independent path from the mask)."""
        self._check_state(state)
        out = np.zeros(self.num_actions, dtype=np.int8)
        type(self)._legal_set_kernel(state, self.params, out)
        return out

    def invariants_ok(self, state: np.ndarray) -> bool:
        """Tile conservation and the game's own state invariants."""
        self._check_state(state)
        return bool(type(self)._check_kernel(state, self.params))

    # ------------------------------------------------------------------ full row check
    def slot_ranges(self) -> list[tuple[str, int, int, int, int]]:
        """(name, first slot, count, lo, hi) of every game slot a kernel uses as an index, a seat,
        a bitmask or a bounded counter: ``validate`` requires lo <= value <= hi for each. Read off
        the game's slot table (``slots``, bounds resolved for this config; the header is checked
        by ``validate`` itself)."""
        return self.slots.ranges(self)

    def slot_map(self) -> str:
        """The state row as text, one line per run of slots (name, first slot, size, allowed
        range for this config, note): the game's slot table printed."""
        return self.slots.slot_map(self)

    def validate(self, state: np.ndarray) -> None:
        """Check a row from outside the engine before any kernel reads it: its type and layout, the
        header (turn and done consistent, done/truncated 0 or 1, steps and hands counts >= 0,
        rewards within reward_scale * obs_high()), every slot of ``slot_ranges`` within its range,
        and then the game's invariants (``_check_kernel``: tile conservation and more). StateError
        naming the first slot that is wrong; None if the row is one the engine can use."""
        self._check_state(state)
        s = state
        if s[H_TRUNC] not in (0, 1) or (s[H_TRUNC] == 1 and s[H_DONE] == 0):
            raise StateError(f"{self.name}: corrupted state row: truncated slot {int(s[H_TRUNC])} "
                             f"(0, or 1 once the episode is over)")
        for name, slot in (("steps", H_STEPS), ("hands", H_HAND)):
            if s[slot] < 0:
                raise StateError(f"{self.name}: corrupted state row: {name} slot {int(s[slot])} is negative")
        bound = self.reward_scale * self.obs_high()
        rewards = s[H_REWARD:H_REWARD + MAX_SEATS]
        bad = np.flatnonzero((np.abs(rewards) > bound) | (np.arange(MAX_SEATS) >= self.num_players) & (rewards != 0))
        if bad.size:
            k = int(bad[0])
            raise StateError(f"{self.name}: corrupted state row: reward slot of seat {k} is {int(rewards[k])} "
                             f"(seats 0..{self.num_players - 1} within +-{bound:g}, the rest 0)")
        for name, start, count, lo, hi in self.slot_ranges():
            vals = s[start:start + count]
            bad = np.flatnonzero((vals < lo) | (vals > hi))
            if bad.size:
                i = int(bad[0])
                where = f"{name}[{i}]" if count > 1 else name
                raise StateError(f"{self.name}: corrupted state row: {where} (slot {start + i}) is "
                                 f"{int(vals[i])}; allowed {lo}..{hi}")
        self._validate_more(s)
        if not type(self)._check_kernel(s, self.params):
            raise StateError(f"{self.name}: corrupted state row: its tiles are not a consistent deal "
                             f"(hands, layout and stock must hold every tile once: the game's _check_kernel)")

    def _validate_more(self, state: np.ndarray) -> None:
        """Game checks beyond plain slot ranges (the relations between slots the kernels rely on),
        before `_check_kernel`."""

    def _deal_parts(self, deal, keys=DEAL_KEYS, first: int | None = None) -> tuple[list, list, int | None]:
        """A hand-set deal in the one deal format, read for `set_deal`: its keys (`check_deal_keys`
        with the game's `keys`), its hands (`deal_hands`), its stock (`deal_stock`) and, where the
        game's default first seat `first` is given, the deal's first seat (`deal_first`; else None).
        DealError naming the first thing wrong."""
        check_deal_keys(self.name, deal, keys)
        hands = deal_hands(self.name, deal, self.num_players)
        stock = deal_stock(self.name, deal)
        return hands, stock, None if first is None else deal_first(self.name, deal, self.num_players, first)

    def _deal_ids(self, hands: list, stock: list, max_pip: int = 6) -> tuple[list[list[int]], list[int], set[int]]:
        """The tile ids of each hand and of the stock (`deal_tile_ids`: tiles of the double-`max_pip`
        set, none dealt twice; DealError for an empty hand) and the set of ids dealt."""
        seen: set[int] = set()
        hand_ids = [deal_tile_ids(self.name, h, f"hand {k}", seen, max_pip) for k, h in enumerate(hands)]
        if any(len(h) == 0 for h in hand_ids):
            raise DealError(f"{self.name}: every hand needs at least one tile")
        return hand_ids, deal_tile_ids(self.name, stock, "stock", seen, max_pip), seen

    def _dealt(self, deck: np.ndarray, dealt_end: int, pos: int, n_tiles: int) -> np.ndarray:
        """deck[:dealt_end], the tiles dealt in deal order (for `deal_of`; deck[:pos] were dealt or
        drawn); StateError where the row does not hold them: those slots blanked (-1: a
        `sample_hidden` row keeps only what a seat may know) or not tiles, or more draws counted
        than the deck position allows."""
        used = np.asarray(deck[:pos])
        if not 0 <= dealt_end <= pos or ((used < 0) | (used >= n_tiles)).any():
            raise StateError(f"{self.name}: this row does not hold its deal: the dealt deck slots are blanked "
                             f"(a sample_hidden row keeps only what a seat may know) or not tiles, or its draws "
                             f"exceed the deck position")
        return used[:dealt_end]

    def _check_known(self, s: np.ndarray, hands: int, forbid: list[int], what: str, exempt: int = 0) -> None:
        """Each seat k's hand s[hands + k] holds none of the tiles `forbid[k]` that its public record
        says it lacks (`what`: the slots and rule that record it), except for tiles of `exempt` in
        the hand of the seat to act (the tile it just drew and must play: at most one). The
        samplers redeal the hidden tiles under exactly these constraints, so a row whose own hands
        break them has no consistent redeal."""
        for k, f in enumerate(forbid):
            bad = int(s[hands + k]) & int(f)
            if k == s[H_TURN] and not s[H_DONE] and popcount_py(bad & exempt) <= 1:
                bad &= ~exempt
            if bad:
                self._refuse(f"seat {k} holds tiles {_bits(bad)} that its {what} says it lacks")

    def _refuse(self, problem: str):
        """Raise the StateError of `validate` for `problem` (what is wrong, naming the slot)."""
        raise StateError(f"{self.name}: corrupted state row: {problem}")

    def _check_played(self, s: np.ndarray, played: int, seats: int, on_table: int,
                      played_by: int | None = None, n_tiles: int = 0) -> None:
        """The per-seat played-tile masks s[played + k] (k < seats) are disjoint and together hold
        exactly the tiles on the table (`on_table`, a tile bitmask); with `played_by` (per-tile
        seat slots, -1 for a tile not placed) each placed tile's seat is the seat whose mask holds
        it. The samplers take the unseen tiles as the complement of these masks and the
        observations show them, so a mask that disagrees would redeal tiles that are in sight."""
        union = 0
        for k in range(seats):
            m = int(s[played + k])
            if m & union:
                self._refuse(f"played mask of seat {k} (slot {played + k}) shares tiles "
                             f"{_bits(m & union)} with an earlier seat's (each placed tile is one seat's)")
            union |= m
        if union != on_table:
            self._refuse(f"the played masks (slots {played}..{played + seats - 1}) hold tiles {_bits(union)}, but "
                         f"the table holds {_bits(on_table)} (they must be the same tiles)")
        if played_by is None:
            return
        for t in range(n_tiles):
            k = int(s[played_by + t])
            if (k >= 0) != bool((on_table >> t) & 1) or (k >= 0 and not (int(s[played + k]) >> t) & 1):
                self._refuse(f"played-by slot of tile {t} (slot {played_by + t}) is {k}; allowed: the seat whose "
                             f"played mask holds tile {t}, -1 if it is not on the table")

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


def _bits(mask: int) -> list[int]:
    """The set bits of a mask (tile ids), for error messages."""
    return [i for i in range(int(mask).bit_length()) if (int(mask) >> i) & 1]


def popcount_py(mask: int) -> int:
    """Set bits of a Python int (validate's checks)."""
    return bin(int(mask)).count("1")
