"""Rows that pass `validate` must never crash a public method: the row fuzzer, run in a child process.

`test_validate_fuzz.py` starts ``python -m tests.bad_input.fuzz_rows GAME CONFIGS SEED ROWS`` once
per game (CONFIGS: a JSON list of config dicts): the child builds ROWS rows per config by mutating
real positions (seeded random play, then random slot changes within each slot's range, bit flips
in masks, tiles moved between places, counts off by one, header changes, packed bytes changed),
and for every row that passes ``validate`` calls every public method that takes a row. Before the
calls on row i it prints ``ROW i`` (flushed), so a crash (the child dies) names the row being
tried; at the end it prints ``REPORT {json}``: rows tried, rows that passed validate, and every
call that raised a Python exception other than a DominoError subclass. ``--start I`` begins at
row I (rows before it are built but not tried: the stream is the same), ``--stop J`` ends before
row J, ``--only I`` tries row I alone and ``--show I`` prints row I as JSON without trying it.

Deterministic: one seeded Generator drives the positions, the mutations and the sampler seeds.
"""
from __future__ import annotations

import json
import sys
import traceback

import numpy as np

from domino_envs import DominoError, make_game
from domino_envs.core import H_DONE, H_HAND, H_REWARD, H_STEPS, H_TRUNC, H_TURN, HEADER_SIZE, MAX_SEATS

POSITIONS = 60  # real positions (random play) the rows are mutated from


def real_positions(game, rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """`count` positions met in seeded random games (every decision point and the final rows)."""
    seen: list[np.ndarray] = []
    while len(seen) < 4 * count:
        s = game.new_state()
        game.reset(s, int(rng.integers(2 ** 62)))
        seen.append(s.copy())
        while not game.is_over(s) and len(seen) < 4 * count:
            legal = np.flatnonzero(game.legal_mask(s))
            game.step(s, int(legal[rng.integers(len(legal))]))
            seen.append(s.copy())
    pick = rng.choice(len(seen), size=count, replace=False)
    return [seen[int(i)] for i in sorted(pick)]


class Mutator:
    """Random changes to a row, each within what the slot table allows where it has a range."""

    def __init__(self, game):
        self.game = game
        self.ranged = [(start + i, lo, hi) for _, start, count, lo, hi in game.slot_ranges() for i in range(count)]
        self.masks = [(slot, lo, hi) for slot, lo, hi in self.ranged if lo == 0 and hi >= 3 and (hi + 1) & hi == 0]
        covered = {slot for slot, _, _ in self.ranged}
        self.raw = [k for k in range(HEADER_SIZE, game.state_size) if k not in covered]

    def mutate(self, s: np.ndarray, rng: np.random.Generator) -> str:
        """Apply one random change to s; return what it did."""
        kind = int(rng.integers(8))
        if kind == 0 or (kind in (2, 3) and not self.masks) or (kind == 6 and not self.raw):
            slot, lo, hi = self.ranged[rng.integers(len(self.ranged))]
            s[slot] = int(rng.integers(lo, hi, endpoint=True))
            return f"slot {slot} = {int(s[slot])}"
        if kind == 1:  # a count or index off by one, kept within its range
            slot, lo, hi = self.ranged[rng.integers(len(self.ranged))]
            s[slot] = min(hi, max(lo, int(s[slot]) + (1 if rng.random() < 0.5 else -1)))
            return f"slot {slot} +-1 = {int(s[slot])}"
        if kind == 2:  # one bit of a mask flipped
            slot, _, hi = self.masks[rng.integers(len(self.masks))]
            s[slot] ^= 1 << int(rng.integers(hi.bit_length()))
            return f"slot {slot} bit flip = {int(s[slot])}"
        if kind == 3:  # a tile moved from one place to another (two masks of the same width)
            a, _, hi = self.masks[rng.integers(len(self.masks))]
            same = [m for m, _, h in self.masks if h == hi and m != a]
            if not same or s[a] == 0:
                s[a] ^= 1 << int(rng.integers(hi.bit_length()))
                return f"slot {a} bit flip = {int(s[a])}"
            b = same[rng.integers(len(same))]
            bits = [i for i in range(hi.bit_length()) if (int(s[a]) >> i) & 1]
            bit = 1 << bits[rng.integers(len(bits))]
            s[a] &= ~bit
            s[b] |= bit
            return f"tile bit {bit.bit_length() - 1} moved from slot {a} to slot {b}"
        if kind == 4:  # a value copied from one slot of a run to another
            slot, lo, hi = self.ranged[rng.integers(len(self.ranged))]
            other = [m for m, lo2, hi2 in self.ranged if (lo2, hi2) == (lo, hi) and m != slot]
            if other:
                src = other[rng.integers(len(other))]
                s[slot] = s[src]
                return f"slot {slot} = slot {src}"
            s[slot] = int(rng.integers(lo, hi, endpoint=True))
            return f"slot {slot} = {int(s[slot])}"
        if kind == 5:  # the header
            n = self.game.num_players
            which = int(rng.integers(6))
            if which == 0:
                s[H_TURN] = int(rng.integers(-1, n))
            elif which == 1:
                s[H_DONE] ^= 1
                s[H_TURN] = -1 if s[H_DONE] else int(rng.integers(n))
            elif which == 2:
                s[H_STEPS] = max(0, int(s[H_STEPS]) + int(rng.integers(-3, 4)))
            elif which == 3:
                s[H_HAND] = max(0, int(s[H_HAND]) + int(rng.integers(-1, 2)))
            elif which == 4:
                s[H_REWARD + int(rng.integers(MAX_SEATS))] = int(rng.integers(-30, 31))
            else:
                s[H_TRUNC] ^= 1
            return f"header change {which}"
        if kind == 6:  # a packed slot (deck bytes, layout history entries) changed
            slot = self.raw[rng.integers(len(self.raw))]
            if rng.random() < 0.5:
                v = s[slot:slot + 1].view(np.int8)
                v[int(rng.integers(8))] = int(rng.integers(-1, 56))
            else:
                v = s[slot:slot + 1].view(np.int16)
                v[int(rng.integers(4))] = int(rng.integers(-2, 55 * 32))
            return f"packed slot {slot} changed"
        # kind 7: several slots of one run shuffled (tiles swapped between places)
        slot, lo, hi = self.ranged[rng.integers(len(self.ranged))]
        run = [m for m, lo2, hi2 in self.ranged if (lo2, hi2) == (lo, hi)]
        vals = s[run].copy()
        rng.shuffle(vals)
        s[run] = vals
        return f"slots {run[0]}..{run[-1]} shuffled"


def build_rows(game, seed: int, count: int):
    """Yield (row, its description, a Generator for the calls on it), deterministically."""
    rng = np.random.default_rng(seed)
    bases = real_positions(game, rng, POSITIONS)
    mut = Mutator(game)
    for _ in range(count):
        s = bases[rng.integers(len(bases))].copy()
        what = [mut.mutate(s, rng) for _ in range(int(rng.integers(1, 4)))]
        yield s, "; ".join(what), np.random.default_rng(int(rng.integers(2 ** 62)))


def _call(failures: list, row_index: int, what: str, fn, *args):
    """(True, fn(*args)); (False, None) for a DominoError (an accepted answer) or any other exception,
    which is recorded in `failures`."""
    try:
        return True, fn(*args)
    except DominoError:
        return False, None
    except Exception as err:  # noqa: BLE001 - every other exception is what the fuzz looks for
        failures.append({"row": row_index, "call": what, "error": f"{type(err).__name__}: {err}",
                         "trace": traceback.format_exc(limit=4)})
        return False, None


def try_row(game, s: np.ndarray, i: int, rng: np.random.Generator, failures: list, venv, picture: bool) -> None:
    """Every public method that takes a row, on copies of s (a row that passed validate)."""
    from domino_envs import pictures

    n = game.num_players
    _call(failures, i, "legal_mask", game.legal_mask, s.copy())
    legal = _call(failures, i, "legal_actions", game.legal_actions, s.copy())[1] or []
    _call(failures, i, "legal_set", game.legal_set, s.copy())
    _call(failures, i, "invariants_ok", game.invariants_ok, s.copy())
    for seat in range(n):
        _call(failures, i, f"observe({seat})", game.observe, s.copy(), seat)
        _call(failures, i, f"sample_hidden({seat})", game.sample_hidden, s.copy(), seat, rng)
    _call(failures, i, "render", game.render, s.copy(), int(rng.integers(n)))
    _call(failures, i, "describe", pictures.describe, game, s.copy(), "full")
    if hasattr(game, "deal_of"):
        _call(failures, i, "deal_of", game.deal_of, s.copy())
    if picture:
        _call(failures, i, "picture", pictures.picture, game, s.copy(), 0)
    illegal = [int(a) for a in rng.integers(-1, game.num_actions + 1, size=3) if a not in legal]
    after = legal[int(rng.integers(len(legal)))] if legal else None
    for a in list(legal) + illegal:
        t = s.copy()
        if _call(failures, i, f"step({a})", game.step, t, a)[0] and a == after:
            # a legal step from a valid row gives a row the engine itself may be asked about
            try:
                game.validate(t)
            except DominoError as err:
                failures.append({"row": i, "call": f"validate after step({a})", "error": str(err), "trace": ""})
                continue
            seat = int(rng.integers(n))
            _call(failures, i, f"step({a}) then legal_mask", game.legal_mask, t.copy())
            _call(failures, i, f"step({a}) then observe({seat})", game.observe, t.copy(), seat)
            _call(failures, i, f"step({a}) then sample_hidden({seat})", game.sample_hidden, t.copy(), seat, rng)
    if legal and not s[H_DONE]:  # the vector env's compiled loop on a loaded row (what --resume does)
        venv.states[0] = s
        _call(failures, i, "VectorEnv.step", venv.step, np.array([legal[int(rng.integers(len(legal)))]]))


def all_rows(name: str, configs: list[dict], seed: int, count: int):
    """Yield (global index, game, row, mutation, Generator): `count` rows for each config in turn."""
    for c, config in enumerate(configs):
        game = make_game(name, **config)
        for i, (s, what, rng) in enumerate(build_rows(game, seed + 1000 * c, count)):
            yield c * count + i, game, s, what, rng


def main(argv: list[str]) -> int:
    from domino_envs.vector import VectorEnv

    name, configs, seed, count = argv[0], json.loads(argv[1]), int(argv[2]), int(argv[3])
    opts = dict(zip(argv[4::2], argv[5::2]))
    start = int(opts.get("--start", opts.get("--only", 0)))
    stop = int(opts["--only"]) + 1 if "--only" in opts else int(opts.get("--stop", count * len(configs)))
    show = int(opts["--show"]) if "--show" in opts else None
    venvs = {}
    failures: list = []
    passed = 0
    for i, game, s, what, rng in all_rows(name, configs, seed, count):
        if i == show:
            print("SHOW " + json.dumps({"config": game.config_dict(), "row": [int(x) for x in s],
                                        "mutation": what}), flush=True)
            return 0
        if i < start or show is not None:
            continue
        if i >= stop:
            break
        try:
            game.validate(s)
        except DominoError:
            continue
        passed += 1
        print(f"ROW {i}", flush=True)
        if id(game) not in venvs:
            venvs = {id(game): VectorEnv(game, 1, seed=0)}
        try_row(game, s, i, rng, failures, venvs[id(game)], picture=passed % 200 == 1)
    print("REPORT " + json.dumps({"rows": stop - start, "passed": passed, "failures": failures}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
