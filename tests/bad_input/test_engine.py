"""Bad input to the engine API (`make_game(...)` methods): every case raises a DominoError subclass
naming what is wrong, before any compiled kernel reads or writes out of bounds.

Cases that crashed or wrote out of bounds before the checks run in a child process (a segfault
there fails the test instead of killing the test run): one child per game runs that game's cases
one by one and prints the error class of each, so a crash names the case that caused it.
"""
from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from domino_envs import ConfigError, DealError, DominoError, IllegalActionError, make_game
from domino_envs.core import H_DONE, H_REWARD, H_TRUNC, H_TURN, StateError
from domino_envs.registry import GAMES as REGISTERED

GAMES = list(REGISTERED)  # every registered env, in registry order

# Run in a child: `game`, `s` (a reset row of a 2-player game, 4 for Pete) and `rng` are defined.
RISKY = {
    "reset on a short row": "g.reset(np.zeros(g.state_size - 1, np.int64), 0)",
    "reset on an int32 row": "g.reset(np.zeros(g.state_size, np.int32), 0)",
    "reset on a 2-D row": "g.reset(np.zeros((1, g.state_size), np.int64), 0)",
    "reset on a strided row": "g.reset(np.zeros(2 * g.state_size, np.int64)[::2], 0)",
    "reset with seed 2**64": "g.reset(s, 2 ** 64)",
    "reset with seed 1.5": "g.reset(s, 1.5)",
    "observe into 3 floats": "g.observe(s, 0, out=np.zeros(3, np.float32))",
    "observe into float64": "g.observe(s, 0, out=np.zeros(g.obs_size, np.float64))",
    "observe into a read-only buffer": "o = np.zeros(g.obs_size, np.float32); o.flags.writeable = False; g.observe(s, 0, out=o)",
    "legal_mask into 2 bytes": "g.legal_mask(s, out=np.zeros(2, np.int8))",
    "legal_mask into a list": "g.legal_mask(s, out=[0] * g.num_actions)",
    "observe seat 99": "g.observe(s, 99)",
    "observe seat -100": "g.observe(s, -100)",
    "observe seat -1": "g.observe(s, -1)",
    "observe seat n": "g.observe(s, g.num_players)",
    "observe seat True": "g.observe(s, True)",
    "observe seat 0.0": "g.observe(s, 0.0)",
    "sample_hidden seat 10": "g.sample_hidden(s, 10, rng)",
    "sample_hidden with an int rng": "g.sample_hidden(s, 0, 7)",
    "step action 2**63": "g.step(s, 2 ** 63)",
    "step action -2**63": "g.step(s, -2 ** 63)",
    "garbage turn into legal_mask": "s[H_TURN] = 10 ** 12; g.legal_mask(s)",
    "garbage turn into step": "s[H_TURN] = -7; g.step(s, 0)",
    "garbage turn into observe": "s[H_TURN] = 2 ** 40; g.observe(s, 0)",
    "garbage turn into legal_actions": "s[H_TURN] = 99; g.legal_actions(s)",
    "garbage turn into sample_hidden": "s[H_TURN] = 99; g.sample_hidden(s, 0, rng)",
    "garbage done into step": "s[H_DONE] = 5; g.step(s, 0)",
    "turn of a seat the game lacks": "s[H_TURN] = g.num_players; g.legal_mask(s)",
    "garbage row into validate": "s[:] = np.random.default_rng(0).integers(-2 ** 62, 2 ** 62, s.size); g.validate(s)",
    "validate a list": "g.validate(list(s))",
}

CHILD = r"""
import sys, numpy as np
from domino_envs import make_game, DominoError
from domino_envs.core import H_DONE, H_TURN
name = sys.argv[1]
g = make_game(name)
for label, code in CASES.items():
    s = g.new_state()
    g.reset(s, 3)
    rng = np.random.default_rng(0)
    print("START", label, flush=True)
    try:
        exec(code)
        print("RESULT", label, "no error", flush=True)
    except DominoError as err:
        print("RESULT", label, type(err).__name__, "|", str(err).replace("\n", " "), flush=True)
    except Exception as err:
        print("RESULT", label, "NOT A DominoError:", type(err).__name__, err, flush=True)
"""


@pytest.mark.parametrize("name", GAMES)
def test_risky_engine_calls_raise_domino_errors_in_a_child(name):
    code = f"CASES = {RISKY!r}\n" + CHILD
    proc = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, timeout=300)
    started = [ln.split(" ", 1)[1] for ln in proc.stdout.splitlines() if ln.startswith("START ")]
    assert proc.returncode == 0, (f"{name}: the child died (code {proc.returncode}) in case "
                                  f"{started[-1] if started else None!r}\n{proc.stderr[-2000:]}")
    results = {}
    for ln in proc.stdout.splitlines():
        if ln.startswith("RESULT "):
            for label in RISKY:
                if ln.startswith(f"RESULT {label} "):
                    results[label] = ln[len(f"RESULT {label} "):]
    assert set(results) == set(RISKY)
    wrong = {k: v for k, v in results.items() if not v.startswith(("StateError", "IllegalActionError", "ConfigError"))}
    assert not wrong, wrong
    # the messages name the bad value and what is allowed
    assert "seat=99 must be an int 0.." in results["observe seat 99"]
    assert "shape (3,)" in results["observe into 3 floats"]
    assert "out of range" in results["step action 2**63"] and "IllegalActionError" in results["step action 2**63"]
    assert "turn slot 1000000000000" in results["garbage turn into legal_mask"]
    assert "int32" in results["reset on an int32 row"]


@pytest.mark.parametrize("name", GAMES)
def test_validate_accepts_every_row_of_play_and_of_sample_hidden(name):
    g = make_game(name)
    rng = np.random.default_rng(1)
    for seed in range(4):
        s = g.new_state()
        g.reset(s, seed)
        g.validate(s)
        while not g.is_over(s):
            g.step(s, int(rng.choice(g.legal_actions(s))))
            g.validate(s)
            g.validate(g.sample_hidden(s, int(rng.integers(g.num_players)), rng))


@pytest.mark.parametrize("name", GAMES)
def test_validate_names_a_corrupted_slot(name):
    g = make_game(name)
    s = g.new_state()
    g.reset(s, 0)
    cases = {
        "truncated slot 7": (H_TRUNC, 7),
        "done slot 2": (H_DONE, 2),
        f"turn slot {g.num_players}": (H_TURN, g.num_players),
        "reward slot of seat 0": (H_REWARD, 10 ** 15),
    }
    for words, (slot, value) in cases.items():
        bad = s.copy()
        bad[slot] = value
        with pytest.raises(StateError, match=words):
            g.validate(bad)
    # every game slot with a range: one past its top is refused, naming it
    for label, start, _count, lo, hi in g.slot_ranges():
        if hi >= 2 ** 62:
            continue
        bad = s.copy()
        bad[start] = hi + 1
        with pytest.raises(StateError, match=rf"{label}.*is {hi + 1}; allowed {lo}\.\.{hi}"):
            g.validate(bad)
    # in range everywhere but not a consistent deal: a tile given twice
    bad = s.copy()
    seat = int(s[H_TURN])
    other = g.new_state()
    g.reset(other, 1)
    hands = [sl for sl in g.slot_ranges() if sl[0] in ("hands", "live")][0][1]
    bad[hands + seat] |= other[hands + (seat + 1) % g.num_players]
    if not np.array_equal(bad, s):
        with pytest.raises(StateError):
            g.validate(bad)


def test_the_row_is_untouched_by_a_refused_call():
    g = make_game("draw_v0")
    s = g.new_state()
    g.reset(s, 0)
    before = s.copy()
    for call in (lambda: g.step(s, 2 ** 63), lambda: g.observe(s, 5), lambda: g.step(s, 1.5),
                 lambda: g.set_deal(s, {"hands": [[(1, 2)], [(1, 2)]]}),
                 lambda: g.set_deal(s, {"hands": [[(1, 2)], [(3, 4)]], "boneyard": []})):
        with pytest.raises(DominoError):
            call()
        assert np.array_equal(s, before)


@pytest.mark.parametrize("name,key,value,words", [
    ("draw_v0", "max_pip", 6.0, r"max_pip=6\.0 is not allowed; allowed values: \[2, 3, 6, 9\]"),
    ("draw_v0", "max_pip", True, r"max_pip=True is not allowed"),
    ("draw_v0", "num_players", 2.0, r"num_players=2\.0 must be an integer in 2\.\.4"),
    ("draw_v0", "target", 2 ** 70, r"target=\d+ must be an integer in 1\.\.1000000"),
    ("draw_v0", "max_hands", 2 ** 63, r"max_hands=\d+ must be an integer in 1\.\.1000000"),
    ("block_v0", "hand_size", 3.0, r"hand_size=3\.0 must be an integer"),
    ("sum7_v0", "target", 2 ** 70, r"target=\d+ must be an integer in 1\.\.1000000"),
    ("sum7_v0", "max_hands", 2 ** 63, r"max_hands=\d+ must be an integer in 1\.\.1000000"),
    ("racehorse_v0", "target", 2 ** 70, r"target=\d+ must be an integer in 1\.\.1000000"),
    ("racehorse_v0", "max_hands", 2 ** 63, r"max_hands=\d+ must be an integer in 1\.\.1000000"),
    ("racehorse_v0", "first_setter", 1.0, r"first_setter=1\.0 must be an integer"),
    ("seven_toed_pete_v0", "num_players", 4.0, r"num_players=4\.0 is not allowed"),
    ("seven_toed_pete_v0", "chips_to_win", 2 ** 63, r"chips_to_win=\d+ must be an integer in 1\.\.1000"),
    ("magic7_v0", "num_games", 2 ** 70, r"num_games=\d+ must be an integer in 1\.\.1000"),
    ("magic7_v0", "first_seat", True, r"first_seat=True must be an integer"),
])
def test_config_values_out_of_type_or_bounds_are_config_errors(name, key, value, words):
    with pytest.raises(ConfigError, match=words):
        make_game(name, **{key: value})


@pytest.mark.parametrize("name", GAMES)
def test_deal_hands_not_a_list_and_first_a_bool_are_deal_errors(name):
    g = make_game(name)
    s = g.new_state()
    g.reset(s, 0)
    with pytest.raises(DealError, match="'hands' must be a list"):
        g.set_deal(s, {"hands": 5})
    if name != "sum7_v0":  # Sum 7's starter follows the rules (S-2/S-3): 'first' is refused anyway
        with pytest.raises(DealError, match="first=True must be a seat"):
            g.set_deal(s, {"hands": [[(1, 2)]] * g.num_players, "first": True})


def test_step_action_range_and_type_errors_are_illegal_action_errors():
    g = make_game("draw_v0")
    s = g.new_state()
    g.reset(s, 0)
    for action, kind in ((2 ** 63, "range"), (-1, "range"), (g.num_actions, "range"), (1.0, "type"), (True, "type")):
        with pytest.raises(IllegalActionError) as err:
            g.step(s, action)
        assert err.value.kind == kind


def test_legal_actions_is_right_from_two_threads_on_one_game():
    g = make_game("draw_v0")
    rows = []
    for seed in range(40):
        s = g.new_state()
        g.reset(s, seed)
        rows.append(s)
    expected = [g.legal_actions(s) for s in rows]
    assert len({tuple(e) for e in expected}) > 1  # the rows differ, so a shared buffer would show
    errors = []

    def work():
        for _ in range(300):
            for s, want in zip(rows, expected):
                if g.legal_actions(s) != want:
                    errors.append(want)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
