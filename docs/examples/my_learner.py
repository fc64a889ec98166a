"""An example of a user's own learner on the learner interface (training/learners/interface.py), in one file.

The algorithm: random search (hill climbing) over a linear policy, logits = W @ obs + b. Each round
perturbs the incumbent with Gaussian noise and plays the candidate against it on the vector env
(the candidate in one seat of each game, the incumbent in the others); the candidate replaces the
incumbent when its win share beats the fair share. Numpy only, no torch.

    python docs/examples/my_learner.py            # trains on draw_v0 and evaluates against random

What makes it a learner: `train` takes (run, log, progress), counts every decision it steps as env
steps, logs a row a round with ``log.record``, saves a policy file (agents/trained.py's format:
`save_policy`, loaded by ``mlp:checkpoint=PATH``) at each mark with ``log.save``, and keeps its state
in the run folder so that a second call after a kill continues; one `register_learner` call makes
``domino train draw_v0 --learner my_learner --import docs/examples/my_learner.py``,
``train_learner("my_learner", run)`` and the benchmark find it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from domino_agents.trained import policy_meta, save_policy
from domino_envs import make_game
from domino_envs.outcome import win_shares
from domino_envs.vector import VectorEnv
from domino_training.learners import LearnerRun, PointLog, learner_settings, register_learner, train_learner
from domino_training.settings import bounded


@dataclass
class Search:
    num_envs: int = bounded(32, min=1)  # games played side by side
    steps_per_round: int = bounded(64, min=1)  # vector steps each candidate plays against the incumbent
    sigma: float = bounded(0.1, gt=0)  # scale of the Gaussian noise added to the incumbent


@dataclass
class Settings:
    """The learner's params (``search.sigma``...): the defaults, their meanings (the docs table), and
    what `--set` and a run's params may change."""

    search: Search = field(default_factory=Search)


def settings(run: LearnerRun) -> Search:
    """The defaults, then a game file's ``train.params.my_learner`` where it has them, then the run's
    params (`learner_settings`: how every learner takes its params); ConfigError naming an unknown key
    and the allowed ones, or a value outside its field's bounds (the one checker every learner's
    settings go through)."""
    return learner_settings("my_learner", run, Settings()).search


def act(w, b, obs, masks):
    """The linear policy's best legal action per row."""
    return np.where(masks != 0, obs @ w.T + b, -np.inf).argmax(axis=1)


def train(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Hill climbing until every pending mark is saved (see module doc)."""
    s = log.settings  # settings(run), built once by the driver's check
    game = make_game(run.game, **run.config)
    state = Path(run.run_dir) / "search_state.npz"
    if state.is_file():  # resume: the incumbent and the counters saved at the last mark
        with np.load(state) as d:
            w, b = d["w"], d["b"]
            env_steps, seconds = int(d["env_steps"]), float(d["seconds"])
        log.resumed_at(env_steps)  # the rows logged after that mark (by a killed session) are dropped
    else:
        w = np.zeros((game.num_actions, game.obs_size), np.float32)
        b = np.zeros(game.num_actions, np.float32)
        env_steps, seconds = 0, 0.0
    venv = VectorEnv(run.game, s.num_envs, **run.config)

    def restart(env_steps):
        """Fresh streams and deals at each mark, seeded by (seed, env steps): a resumed run repeats
        exactly what an uninterrupted one does from that mark on."""
        rng = np.random.default_rng([run.seed, env_steps])
        return (rng, *venv.reset(seed=int(rng.integers(2**63))))

    rng, obs, masks, seats = restart(env_steps)
    n, rows = game.num_players, np.arange(venv.num_envs)
    while log.pending():
        t0 = time.perf_counter()
        cw = w + s.sigma * rng.standard_normal(w.shape).astype(np.float32)
        cb = b + s.sigma * rng.standard_normal(b.shape).astype(np.float32)
        cand_seat = rows % n  # the candidate's seat in each game
        returns, wins, games = np.zeros((venv.num_envs, n)), 0.0, 0
        for _ in range(s.steps_per_round):
            mine = seats == cand_seat
            actions = np.where(mine, act(cw, cb, obs, masks), act(w, b, obs, masks))
            obs, masks, seats, rewards, term, trunc, _ = venv.step(actions)
            returns += rewards
            for i in np.flatnonzero(term | trunc):
                wins += win_shares(returns[i])[cand_seat[i]]
                games += 1
                returns[i] = 0.0
        env_steps += venv.num_envs * s.steps_per_round
        accepted = bool(games and wins / games > 1.0 / n)
        if accepted:
            w, b = cw, cb
        seconds += time.perf_counter() - t0
        log.record({"env_steps": env_steps, "seconds": round(seconds, 3), "candidate_win": wins / max(games, 1),
                    "accepted": int(accepted)})  # log.csv (and tb/ under domino train)
        for mark in log.due(env_steps):
            path = log.policy_path(mark)
            save_policy(path, [(w, b)], policy_meta(game, [], "my_learner", env_steps))
            log.save(mark, env_steps, seconds, f"mlp:checkpoint={path}")
            np.savez(state, w=w, b=b, env_steps=env_steps, seconds=seconds)
            rng, obs, masks, seats = restart(env_steps)


register_learner("my_learner", train, "random search over a linear policy (docs/examples/my_learner.py)",
                 check=settings, settings=Settings)


if __name__ == "__main__":
    from domino_training.evaluate import evaluate

    run = LearnerRun("draw_v0", {}, seed=0, budget=40_960, marks=[20_480, 40_960], run_dir=Path("runs/my_learner"),
                     params={})
    points = train_learner("my_learner", run)
    print(json.dumps([p.__dict__ for p in points], indent=1))
    print(evaluate("draw_v0", [points[-1].spec, "random"], 200, seed=1).table())
