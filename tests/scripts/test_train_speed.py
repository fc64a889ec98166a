"""training/scripts/train_speed.py on a tiny budget: both sides measure what they say (our PPO's decisions are
its updates' env steps, SB3's timesteps the ones asked for, with the opponents' moves counted on top), the
ratio it prints is the one of its numbers, and --heuristics (the compiled heuristics against the Python ones
of LEGACY_COMMIT, read from this checkout's git history) plays the very same games on both sides."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from domino_envs.errors import ConfigError
from domino_training.scripts import train_speed

SETS = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "ppo.epochs=1", "sb3.n_steps=32",
        "sb3.n_envs=2", "sb3.batch_size=32", "sb3.n_epochs=1"]


def test_both_sides_count_what_they_time_and_the_ratio_is_theirs(capsys):
    argv = ["--game", "block_v0", "--ppo-updates", "2", "--sb3-steps", "128", "--hidden", "16"]
    out = train_speed.main(argv + [x for s in SETS for x in ("--set", s)])
    ppo, sb3 = out["ppo"], out["sb3"]
    assert ppo["hidden"] == sb3["hidden"] == [16]
    assert ppo["decisions"] == 2 * 8 * 8 and 0 < ppo["samples"] <= ppo["decisions"]
    assert ppo["decisions_per_s"] == pytest.approx(ppo["decisions"] / ppo["seconds"])
    assert 0 < ppo["collect_seconds"] < ppo["seconds"]
    assert sb3["timesteps"] == 128 and (sb3["n_envs"], sb3["n_steps"]) == (2, 32)
    # two players: the opponent moves inside each learner step, about once (more where the learner's passes
    # are forced), so the decisions are about twice the timesteps; uncounted they would equal them
    assert 1.5 * sb3["timesteps"] < sb3["decisions"] < 3 * sb3["timesteps"]
    assert sb3["steps_per_s"] == pytest.approx(sb3["timesteps"] / sb3["seconds"])
    text = capsys.readouterr().out
    ratio = re.search(r"ours / MaskablePPO, end to end: ([\d.]+)x decisions/s", text).group(1)
    assert ratio == f"{ppo['decisions_per_s'] / sb3['decisions_per_s']:.1f}"


def _has_legacy_commit() -> bool:
    root = Path(train_speed.__file__).resolve().parents[2]
    return subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{train_speed.LEGACY_COMMIT}^{{commit}}"],
                          capture_output=True).returncode == 0


def test_the_heuristic_benchmark_plays_the_same_games_with_the_python_and_compiled_heuristics(monkeypatch, capsys):
    """In a clone whose history lacks LEGACY_COMMIT (a shallow one) the benchmark has no "before" to load:
    then it must say so in one error naming the commit, which is what this checks there."""
    if not _has_legacy_commit():
        with pytest.raises(ConfigError, match=train_speed.LEGACY_COMMIT):
            train_speed.main(["--heuristics", "block_v0", "--rounds", "1", "--deals", "1"])
        return
    real = train_speed.load_settings
    monkeypatch.setattr(train_speed, "load_settings", lambda game, learner, overrides: real(
        game=game, learner=learner, overrides=[*overrides, *SETS[:2], "opponents.heuristic=0.5"]))
    (row,) = train_speed.main(["--heuristics", "block_v0", "--rounds", "2", "--deals", "3"])["heuristics"]
    assert row["same_actions"] and row["same_results"]
    assert row["decisions_per_rollout"] == 64 and row["old"]["heuristic_decisions"] == row["new"]["heuristic_decisions"] > 0
    assert row["collect_ratio"] == pytest.approx(row["new"]["collect_decisions_per_s"] / row["old"]["collect_decisions_per_s"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| block_v0 |")]
    assert len(rows) == 2 and all(line.endswith("| yes |") for line in rows)  # the game's row, then the summary's
