"""Compiled dispatch from a game id to that game's kernels, for compiled loops over many games.

numba cannot cache a function that receives other compiled functions as arguments. A batched
loop (vector.py, the search agent) instead takes the game id and marks it `numba.literally(gid)`:
numba then compiles (and caches) one version of the loop per game, and these overloads, resolved
while that version is typed, put the game's own kernels in it. Each game's loop holds only its
own code (one loop branching over all five games ran the Draw Game about 7% slower: the
register pressure of the other games' code). The games are those of `registry.GAMES`: a new
game needs no entry here.

Dispatch ids and the on-disk cache: the package's own engines (`ENGINES`: the unique engine classes
of `registry.GAMES` in registry order, from modules of this package) have ids 0, 1, ... and their
loops are cached (the cache folder is keyed on this package's sources, _numba_cache.py, so an
edited registry or game recompiles). An engine registered from outside the package (a test's toy
game, a plugin) gets the next free id when first asked for, and its loops are compiled without
the disk cache: the cache key knows nothing of its source, so a cached loop would keep running
its old code after an edit, or another such engine's under the same id.

Inlining policy (compile time): numba's own inliner (`inline="always"`) re-parses and deep-copies
a callee at every call site, nested ones included, so a tree of them took 5 minutes to compile
the Draw Game's loops. It is kept for the kernels these overloads inline, the one- to five-line
leaves of tiles.py, rng.py and layout.py, the deal (shuffle, layout init) and a few hot game
helpers with one or two call sites.
Other helpers are `njit(_nrt=False)`: they allocate nothing, so a call out of line passes the
state row without atomic reference counting (~20 ns a call otherwise; tests/fronts/test_vector.py checks
every game function but the allocating search and test kernels). Call each overload at one site
per loop.

    @njit(cache=True)
    def loop(gid, states, ...):
        literally(gid)
        ... step_one(gid, s, a, p) ...

    run = specialize(loop, gid, states, ...)  # once; then run(gid, states, ...) from Python
"""
from __future__ import annotations

import warnings

from numba import njit, typeof
from numba.core import types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from . import registry
from .core import DominoError

_PACKAGE = __name__.rpartition(".")[0] + "."
# the package's engines: index = dispatch id, loops cached on disk
ENGINES = tuple(cls for cls in registry.engine_classes() if cls.__module__.startswith(_PACKAGE))
# engine class name -> dispatch id, for the package's engines
GAME_IDS = {cls.__name__: i for i, cls in enumerate(ENGINES)}
_OUTSIDE: list = []  # engines registered from outside the package, ids len(ENGINES) + index


def engine_of(gid: int):
    """The engine class of dispatch id gid."""
    return ENGINES[gid] if gid < len(ENGINES) else _OUTSIDE[gid - len(ENGINES)]


def game_id(game) -> int:
    """Dispatch id of an engine instance: its class must be the engine of a registered game
    (DominoError naming the registered engines otherwise)."""
    cls = type(game)
    if cls in ENGINES:
        return ENGINES.index(cls)
    registered = {name: registry.engine_class(name) for name in registry.GAMES}  # now: registrations change
    if cls not in registered.values():
        raise DominoError(f"{game.name}: no compiled dispatch for engine {cls.__name__}: it is the engine of "
                          f"no registered game (registry.GAMES: {sorted(registered)}); register it first")
    if cls not in _OUTSIDE:
        _OUTSIDE.append(cls)  # its id stays its own for the life of the process
    return len(ENGINES) + _OUTSIDE.index(cls)


_uncached_loops: dict = {}


def _uncached(loop):
    """A copy of compiled function `loop` that never touches the disk cache (same options)."""
    if loop not in _uncached_loops:
        options = {k: v for k, v in loop.targetoptions.items() if k != "nopython"}  # njit implies it
        _uncached_loops[loop] = njit(**options)(loop.py_func)
    return _uncached_loops[loop]


def specialize(loop, gid: int, *args):
    """Machine code of `loop` (a compiled function taking the game id first, marked
    `literally`) for game gid and the types of `args`: compiled or loaded from the cache on
    first use. Call the result directly from Python: calling `loop` itself would retype it
    (~5 ms) on every call before numba finds the per-game version. The result does not check
    argument types: pass arrays of exactly the dtypes, dimensions and C order of `args`."""
    if gid >= len(ENGINES):  # an engine from outside the package: no disk cache (module doc)
        loop = _uncached(loop)
    signature = (types.literal(gid),) + tuple(typeof(a) for a in args)
    with warnings.catch_warnings():
        # numba's SSA pass flags variables of kernels inlined several levels deep (an internal
        # check, its message says); tests/fronts/test_vector.py checks the compiled loops' results
        warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
        return loop.compile(signature)


def _kernel(gid, name):
    """Kernel `name` of game `gid` while typing; None (no match yet) until gid is a literal."""
    if not isinstance(gid, types.IntegerLiteral):
        return None
    return getattr(engine_of(gid.literal_value), name)


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
