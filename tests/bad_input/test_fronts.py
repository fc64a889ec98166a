"""Bad input to the fronts (AEC env, SingleSeatEnv, VectorEnv, the CLI): every case raises a
DominoError subclass naming the bad value and what is allowed; nothing is coerced, nothing hangs.

One table, case -> (expected error, message fragment). Cases that could hang or crash the process
(a deal loop that never ends, values reaching compiled code) run in a child process with a timeout.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import domino_envs
from domino_agents import RandomAgent
from domino_envs import ConfigError, DominoError, IllegalActionError, make_game
from domino_envs.vector import make_vec
from domino_envs.wrappers import SingleSeatEnv

SEED_RANGE = r"an integer in 0\.\.2\*\*64-1"


def _aec(**kw):
    return domino_envs.make("draw_v0", **kw)


def _aec_reset(**kw):
    env = _aec()
    env.reset(**kw)


def _aec_stepped(action):
    env = _aec()
    env.reset(seed=0)
    env.step(action)


def _single(**kw):
    return SingleSeatEnv("draw_v0", opponents=RandomAgent, **kw)


def _single_stepped(action):
    env = _single(seed=0)
    env.reset()
    env.step(action)


def _vec_stepped(actions):
    venv = make_vec("draw_v0", 2, seed=0)
    venv.reset()
    venv.step(actions)


CASES = {
    # seeds: None or an int 0..2**64-1; nothing else is coerced to some other seed
    "aec reset seed=1.7": (lambda: _aec_reset(seed=1.7), ConfigError, rf"seed=1\.7 .*{SEED_RANGE}"),
    "aec reset seed=True": (lambda: _aec_reset(seed=True), ConfigError, rf"seed=True .*{SEED_RANGE}"),
    "aec reset seed=2**64": (lambda: _aec_reset(seed=2**64), ConfigError, rf"seed=18446744073709551616 .*{SEED_RANGE}"),
    "aec reset seed=-1": (lambda: _aec_reset(seed=-1), ConfigError, rf"seed=-1 .*{SEED_RANGE}"),
    "aec reset seed='3'": (lambda: _aec_reset(seed="3"), ConfigError, rf"seed='3' .*{SEED_RANGE}"),
    "aec reset options=list": (lambda: _aec_reset(seed=0, options=["deal"]), ConfigError, r"options=\['deal'\] must be a dict"),
    "single seed=1.5": (lambda: _single(seed=1.5), ConfigError, rf"seed=1\.5 .*{SEED_RANGE}"),
    "single reset seed=2**64": (lambda: _single().reset(seed=2**64), ConfigError, SEED_RANGE),
    "single reset seed=-5": (lambda: _single().reset(seed=-5), ConfigError, rf"seed=-5 .*{SEED_RANGE}"),
    "vec seed=1.5": (lambda: make_vec("draw_v0", 2, seed=1.5), ConfigError, rf"seed=1\.5 .*{SEED_RANGE}"),
    "vec reset seed=True": (lambda: make_vec("draw_v0", 2).reset(seed=True), ConfigError, rf"seed=True .*{SEED_RANGE}"),
    "vec reset seed=2**64": (lambda: make_vec("draw_v0", 2).reset(seed=2**64), ConfigError, SEED_RANGE),
    # constructor options
    "vec num_envs=True": (lambda: make_vec("draw_v0", True), ConfigError, r"num_envs=True must be a positive integer"),
    "vec num_envs=2.0": (lambda: make_vec("draw_v0", 2.0), ConfigError, r"num_envs=2\.0 must be a positive integer"),
    "vec Game + config": (lambda: domino_envs.VectorEnv(make_game("draw_v0"), 2, num_players=3), ConfigError,
                          r"config keys \['num_players'\] given with a Game instance"),
    "aec illegal_reward=nan": (lambda: _aec(illegal_reward=float("nan")), ConfigError, r"illegal_reward=nan must be a finite number"),
    "aec illegal_reward='x'": (lambda: _aec(illegal_reward="x"), ConfigError, r"illegal_reward='x' must be a finite number"),
    "single illegal_reward=inf": (lambda: _single(illegal_reward=float("inf")), ConfigError, r"illegal_reward=inf must be"),
    "single illegal_action=skip": (lambda: _single(illegal_action="skip"), ConfigError,
                                   r"illegal_action='skip' is not allowed; allowed values: \['raise', 'penalize'\]"),
    "single render_mode=rgb": (lambda: _single(render_mode="rgb"), ConfigError,
                               r"render_mode='rgb' is not supported; allowed: \[None, 'ansi', 'human', 'rgb_array'\]"),
    "single Game + config": (lambda: SingleSeatEnv(make_game("draw_v0"), RandomAgent, num_players=3), ConfigError,
                             r"config keys \['num_players'\] given with a Game instance"),
    "single game=3": (lambda: SingleSeatEnv(3, RandomAgent), ConfigError, r"game=3 must be a registered name or a Game"),
    "single seat=True": (lambda: _single(seat=True), ConfigError, r"seat=True must be 'rotate' or a seat 0\.\.1"),
    # order and names
    "aec last before reset": (lambda: _aec().last(), DominoError, r"call reset\(\) before last\(\)"),
    "aec observe player_9": (lambda: (e := _aec(), e.reset(seed=0), e.observe("player_9")), DominoError,
                             r"no agent 'player_9'; agents are \['player_0', 'player_1'\]"),
    "single step before reset": (lambda: _single().step(0), IllegalActionError, r"reset\(\) before stepping"),
    # actions outside int64 never reach compiled code
    "aec action 2**63": (lambda: _aec_stepped(2**63), IllegalActionError,
                         r"action 9223372036854775808 is out of range; actions are 0\.\.55"),
    "aec action -2**63-1": (lambda: _aec_stepped(-2**63 - 1), IllegalActionError, r"action -9223372036854775809 is out of range"),
    "aec action 2**70": (lambda: _aec_stepped(2**70), IllegalActionError, r"action 1180591620717411303424 is out of range"),
    "single action 2**64": (lambda: _single_stepped(2**64), IllegalActionError, r"action 18446744073709551616 is out of range"),
    "single action -2**63-1": (lambda: _single_stepped(-2**63 - 1), IllegalActionError, r"action -9223372036854775809 is out of range"),
    "single action 1.0": (lambda: _single_stepped(1.0), IllegalActionError, r"action 1\.0 is not an integer"),
    "vec actions uint64 2**63": (lambda: _vec_stepped(np.array([0, 2**63], dtype=np.uint64)), IllegalActionError,
                                 r"env 1: .*action 9223372036854775808 is out of range"),
    "vec actions 2**64 list": (lambda: _vec_stepped([0, 2**64]), IllegalActionError, r"actions must be an integer array"),
    "vec actions float": (lambda: _vec_stepped(np.zeros(2)), IllegalActionError,
                          r"actions must be an integer array of shape \(2,\), got float64"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_table(case):
    call, error, fragment = CASES[case]
    with pytest.raises(error, match=fragment):
        call()


def test_rejected_resets_leave_every_front_unchanged():
    env = _single(seed=0)
    env.reset()
    state, episode, seat = env._state.copy(), env._episode, env.seat
    for bad in (1.5, True, 2**64, -1):
        with pytest.raises(ConfigError):
            env.reset(seed=bad)
    assert np.array_equal(env._state, state) and (env._episode, env.seat) == (episode, seat)
    venv = make_vec("draw_v0", 2, seed=0)
    venv.reset()
    rows = venv.states.copy()
    with pytest.raises(ConfigError):
        venv.reset(seed=-1)
    assert np.array_equal(venv.states, rows)


def _child(code: str, timeout: float = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (a hang or a crash there fails the test, not the run)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


NO_DECISION = r"1000 deals in a row were played to the end by forced moves.*hand_size=1"

RISKY = {
    # every deal is played out by forced moves: the deal-again loops used to spin forever
    "vec reset hand_size=1": "from domino_envs.vector import make_vec\nmake_vec('draw_v0', 4, seed=0, hand_size=1).reset()",
    "aec reset hand_size=1": "import domino_envs\ndomino_envs.make('draw_v0', hand_size=1, num_players=4).reset(seed=0)",
    "single reset hand_size=1": ("from domino_agents import RandomAgent\nfrom domino_envs.wrappers import SingleSeatEnv\n"
                                 "SingleSeatEnv('draw_v0', RandomAgent, seed=0, hand_size=1).reset()"),
}


@pytest.mark.parametrize("case", list(RISKY))
def test_risky_cases_fail_clearly_in_a_child(case):
    code = f"""
        from domino_envs import ConfigError
        try:
{textwrap.indent(RISKY[case], ' ' * 12)}
        except ConfigError as err:
            print("ConfigError:", err)
        else:
            print("no error")
    """
    out = _child(code)
    assert out.returncode == 0, out.stderr[-2000:]
    import re

    assert re.search("ConfigError: .*" + NO_DECISION, out.stdout), out.stdout


@pytest.mark.parametrize("args,fragment", [
    (["--game", "nope_v0"], "unknown game 'nope_v0'; registered games"),
    (["--agents", "random", "alphago"], "unknown agent 'alphago'"),
    (["--deals", "0"], "deals=0 must be a positive integer"),
    (["--deals", "many"], "--deals: invalid int value: 'many'"),
    (["--set", "colour=1"], "unknown config key(s) ['colour']"),
])
def test_cli_bad_arguments_are_one_line_and_exit_2(args, fragment):
    out = _child(f"import sys; from domino_training.cli import main; sys.exit(main({['evaluate', *args, '--no-progress']!r}))",
                 timeout=120)
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert lines[0].startswith("domino evaluate: error: ") and fragment in lines[0]


CACHE_PROBE = """
    import warnings, os, stat
    {prelude}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import domino_envs
    import numba
    from domino_envs.rng import next_seed
    import numpy as np
    next_seed(np.zeros(2, dtype=np.int64), 0)  # compile and cache one function
    said = [str(w.message) for w in caught if "numba cache folder" in str(w.message)]
    print(len(said), said[0] if said else "")
    print(numba.config.CACHE_DIR)
    print(oct(stat.S_IMODE(os.stat(numba.config.CACHE_DIR).st_mode)))
"""


def _package_index_files() -> set:
    pkg_cache = os.path.join(os.path.dirname(domino_envs.__file__), "__pycache__")
    return {f for f in os.listdir(pkg_cache) if f.endswith(".nbi")} if os.path.isdir(pkg_cache) else set()


def _cache_probe(tmp_path, prelude: str = "") -> tuple[str, str, str]:
    """Import the package in a child whose cache home is a file (unwritable even for root) and whose
    temporary folder is tmp_path/tmp; (the one warning, the cache folder used, its mode)."""
    blocked = tmp_path / "not_a_folder"
    blocked.write_text("a file where the cache folder should be: unwritable even for root")
    before = _package_index_files()
    out = _child(CACHE_PROBE.format(prelude=prelude),
                 env={"XDG_CACHE_HOME": str(blocked), "TMPDIR": str(tmp_path / "tmp"), "NUMBA_CACHE_DIR": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    assert _package_index_files() == before  # nothing written into the package's own __pycache__
    count_line, cache_dir, mode = out.stdout.strip().splitlines()[-3:]
    assert count_line.startswith("1 "), out.stdout  # said once
    return count_line, cache_dir, mode


def test_unwritable_numba_cache_falls_back_to_a_private_temp_folder(tmp_path):
    """numba would write into the package's own __pycache__; a per-user temp folder is used instead,
    created 0700, and said once."""
    (tmp_path / "tmp").mkdir()
    said, cache_dir, mode = _cache_probe(tmp_path)
    assert "is not writable" in said
    fallback = tmp_path / "tmp" / f"domino_envs-{os.getuid()}"
    assert cache_dir.startswith(str(fallback) + os.sep)
    assert oct(stat.S_IMODE(fallback.stat().st_mode)) == "0o700" and mode == "0o700"
    assert list(fallback.rglob("*.nbi")), "nothing was cached in the fallback folder"


@pytest.mark.parametrize("plant", ["other_writable", "file_squatting", "symlink", "other_owner"])
def test_numba_cache_fallback_refuses_a_folder_someone_else_could_have_planted(tmp_path, plant):
    """A fallback folder that another local user could write (mode 0777), a file squatting its name, a
    link to elsewhere, or a folder owned by another user is never used: numba's index is a pickle. The
    compiled code goes to a fresh private folder instead, nothing is read from or written into the
    planted one, and the warning says why."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    planted = tmp / f"domino_envs-{os.getuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    prelude = ""
    if plant == "other_writable":
        planted.mkdir()
        os.chmod(planted, 0o777)
        reason = "writable by other users: mode 777"
    elif plant == "file_squatting":
        planted.write_text("squatter")
        reason = "is not a folder"
    elif plant == "symlink":
        planted.symlink_to(elsewhere, target_is_directory=True)
        reason = "is a symbolic link"
    else:  # owned by another user: the child believes it is another uid than the folders' owner
        planted.mkdir(mode=0o700)
        prelude = "os.getuid = lambda: 4242424"
        planted = tmp / "domino_envs-4242424"
        planted.mkdir(mode=0o700)
        reason = "belongs to user id"
    said, cache_dir, mode = _cache_probe(tmp_path, prelude)
    assert "not cached across runs" in said and reason in said, said
    assert not cache_dir.startswith(str(planted)) and mode == "0o700"
    assert os.path.basename(cache_dir).startswith("domino_envs-numba-")
    assert not list(elsewhere.iterdir())
    if planted.is_dir() and not planted.is_symlink():
        assert not list(planted.rglob("*.nbi"))
    assert not os.path.exists(cache_dir), "the private folder outlived the process"
