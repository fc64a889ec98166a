"""Compiled dispatch from a game id to that game's kernels, for compiled loops over many games.

numba cannot cache a function that receives other compiled functions as arguments. A batched
loop (vector.py, the search agent) instead takes the game id and marks it `numba.literally(gid)`:
numba then compiles (and caches) one version of the loop per game, and these overloads, resolved
while that version is typed, put the game's own kernels in it. Each game's loop holds only its
own code (one loop branching over all five games ran the Draw Game about 7% slower: the
register pressure of the other games' code). A new game adds one `ENGINES` entry.

Inlining policy (compile time): numba's own inliner (`inline="always"`) re-parses and deep-copies
a callee at every call site, nested ones included, so a tree of them took 5 minutes to compile
the Draw Game's loops. It is kept for the kernels these overloads inline, the one- to five-line
leaves of tiles.py, rng.py and layout.py, the deal (shuffle, layout init) and a few hot game
helpers with one or two call sites.
Other helpers are `njit(_nrt=False)`: they allocate nothing, so a call out of line passes the
state row without atomic reference counting (~20 ns a call otherwise; tests/test_vector.py checks
every game function but the allocating search and test kernels). Call each overload at one site
per loop.

    @njit(cache=True)
    def loop(gid, states, ...):
        literally(gid)
        ... step_one(gid, s, a, p) ...

    run = specialize(loop, gid, states, ...)  # once; then run(gid, states, ...) from Python
"""
from __future__ import annotations

import sys
import warnings

from numba import typeof
from numba.core import types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from .games.draw import DrawGame
from .games.magic7 import Magic7Game
from .games.pete import PeteGame
from .games.racehorse import RacehorseGame
from .games.sum7 import Sum7Game

ENGINES = (DrawGame, Sum7Game, PeteGame, RacehorseGame, Magic7Game)  # index = dispatch id
# engine class name -> dispatch id
GAME_IDS = {cls.__name__: i for i, cls in enumerate(ENGINES)}


def game_id(game) -> int:
    """Dispatch id of an engine instance (ValueError naming the known engines if none)."""
    cls = type(game).__name__
    if cls not in GAME_IDS:
        raise ValueError(f"{game.name}: no compiled dispatch for {cls}; known: {sorted(GAME_IDS)}")
    return GAME_IDS[cls]


def specialize(loop, gid: int, *args):
    """Machine code of `loop` (a compiled function taking the game id first, marked
    `literally`) for game gid and the types of `args`: compiled or loaded from the cache on
    first use. Call the result directly from Python: calling `loop` itself would retype it
    (~5 ms) on every call before numba finds the per-game version. The result does not check
    argument types: pass arrays of exactly the dtypes, dimensions and C order of `args`."""
    signature = (types.literal(gid),) + tuple(typeof(a) for a in args)
    with warnings.catch_warnings():
        # numba's SSA pass flags variables of kernels inlined several levels deep (an internal
        # check, its message says); tests/test_vector.py checks the compiled loops' results
        warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
        return loop.compile(signature)


def _kernel(gid, name):
    """Kernel `name` of game `gid` while typing; None (no match yet) until gid is a literal."""
    if not isinstance(gid, types.IntegerLiteral):
        return None
    return getattr(sys.modules[ENGINES[gid.literal_value].__module__], name)


def _compiled_only(*_):
    raise TypeError("dispatch functions run inside compiled loops only, with a literal game id")


# Stubs that the overloads below give compiled meaning; called from Python they fail clearly.
def reset_one(gid, s, seed, p):
    """Deal game gid's first hand into row s (its `_reset_kernel`)."""
    _compiled_only()


def step_one(gid, s, a, p):
    """Apply action a to row s of game gid (its `_step_kernel`); returns the status code."""
    _compiled_only()


def observe_one(gid, s, p, seat, obs):
    """Write seat's observation of row s of game gid into obs (its `_obs_kernel`)."""
    _compiled_only()


def mask_one(gid, s, p, mask):
    """Write the action mask of the seat to act in row s of game gid (its `_mask_kernel`)."""
    _compiled_only()


@overload(reset_one, inline="always")
def _reset_one(gid, s, seed, p):
    k = _kernel(gid, "_reset_kernel")
    if k is not None:
        return lambda gid, s, seed, p: k(s, seed, p)


@overload(step_one, inline="always")
def _step_one(gid, s, a, p):
    k = _kernel(gid, "_step_kernel")
    if k is not None:
        return lambda gid, s, a, p: k(s, a, p)


@overload(observe_one, inline="always")
def _observe_one(gid, s, p, seat, obs):
    k = _kernel(gid, "_obs_kernel")
    if k is not None:
        return lambda gid, s, p, seat, obs: k(s, p, seat, obs)


@overload(mask_one, inline="always")
def _mask_one(gid, s, p, mask):
    k = _kernel(gid, "_mask_kernel")
    if k is not None:
        return lambda gid, s, p, mask: k(s, p, mask)
