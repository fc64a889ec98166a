"""Ray RLlib path (training/learners/rllib.py): the README's RLlib commands run as written in
subprocesses outside the checkout, with no deprecation notice in their output; one PPO iteration on
draw_v0 in a local Ray, the masked module's actions, and the CLI's checkpoint and restore. Skipped
unless the `rllib` extra is installed (`make test-rllib`); each test keeps Ray to one or two CPUs
and tiny batches."""
import logging
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.tune.registry import register_env  # noqa: E402

import domino_envs  # noqa: E402
from domino_agents import rllib_module  # noqa: E402
from domino_training.learners import rllib as rllib_train  # noqa: E402
from domino_training.learners import rllib_command  # noqa: E402
from tests.helpers import fenced_blocks  # noqa: E402

TINY = dict(train_batch=200, minibatch=100, epochs=1, hidden=(32,))
TINY_FLAGS = ["--num-cpus", "1", "--train-batch", "200", "--minibatch", "100", "--epochs", "1", "--hidden", "32"]


@pytest.fixture
def local_ray():
    ray.init(num_cpus=1, include_dashboard=False)
    register_env(rllib_train.ENV_NAME, rllib_train.env_creator)
    yield
    ray.shutdown()


def decision_observations(game: str, n: int, seed: int, policy=None) -> list[dict]:
    """`n` observations of the seat to act, from games played by `policy` (default: a random legal
    move); every action `policy` picks is checked legal against the mask before it is stepped."""
    env = domino_envs.make(game)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    seen = []
    while len(seen) < n:
        if not env.agents:
            env.reset()
            continue
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seen.append(obs)
        mask = obs["action_mask"]
        action = int(policy([obs])[0]) if policy else int(rng.choice(np.flatnonzero(mask)))
        assert mask[action] == 1, f"illegal action {action}; legal {np.flatnonzero(mask)}"
        env.step(action)
    return seen


def test_one_training_iteration_on_draw(local_ray):
    algo = rllib_train.build_config("draw_v0", {}, env_runners=0, seed=0, **TINY).build_algo()
    try:
        before = {k: v.clone() for k, v in algo.get_module(rllib_train.POLICY).state_dict().items()}
        summary = rllib_train.iteration_summary(algo.train())
        module = algo.get_module(rllib_train.POLICY)
        after = module.state_dict()
    finally:
        algo.stop()

    assert summary["env_steps"] >= TINY["train_batch"]
    assert summary["episodes"] > 0
    for key in ("policy_loss", "vf_loss", "entropy"):
        assert math.isfinite(summary[key]), (key, summary)
    assert summary["entropy"] > 0
    assert any(not np.array_equal(before[k], after[k]) for k in before), "the learner left the weights unchanged"
    # every seat got an episode return (the terminal reward reaches the seat that did not move last too)
    assert set(summary["seat_returns"]) == {"player_0", "player_1"}

    # The trained module acts: its greedy action on each of 300 decisions is legal ...
    observations = decision_observations("draw_v0", 300, seed=1, policy=lambda obs: rllib_train.greedy_actions(module, obs))
    # ... and that is the mask's doing: without it the same network picks an illegal action on many of them.
    unmasked = [dict(o, action_mask=np.ones_like(o["action_mask"])) for o in observations]
    picks = rllib_train.greedy_actions(module, unmasked)
    illegal = sum(o["action_mask"][a] == 0 for o, a in zip(observations, picks))
    assert illegal > 0, "the test would pass without masking: the unmasked network never picked an illegal action"


def test_list_episodes_train_exactly_like_numpy_episodes(local_ray):
    """build_config turns RLlib's episodes_to_numpy off for speed only: with it on, the same seed
    gives the same sampled steps and the same losses (a change of RLlib's would show here)."""
    summaries = []
    for to_numpy in (True, False):
        config = rllib_train.build_config("block_v0", {}, env_runners=0, envs_per_runner=4, seed=3, **TINY)
        algo = config.env_runners(episodes_to_numpy=to_numpy).build_algo()
        try:
            summaries.append([rllib_train.iteration_summary(algo.train()) for _ in range(2)])
        finally:
            algo.stop()
    numpy_run, list_run = summaries
    for a, b in zip(numpy_run, list_run):
        assert a["env_steps_total"] == b["env_steps_total"]
        for key in ("policy_loss", "vf_loss", "entropy"):
            assert a[key] == pytest.approx(b[key], rel=1e-6), (key, a, b)


def test_masked_module_samples_only_legal_actions():
    """The exploration distribution (what env runners sample from) puts no mass on illegal actions,
    even when the raw logits strongly favour them."""
    env = domino_envs.make("block_v0")
    module = RLModuleSpec(module_class=rllib_train.MaskedActorCritic, observation_space=env.observation_space("player_0"),
                          action_space=env.action_space("player_0"), model_config={"hidden": [32]}).build()
    observations = decision_observations("block_v0", 64, seed=2)
    illegal_first = torch.as_tensor(1.0 - observations[0]["action_mask"].astype(np.float32))
    with torch.no_grad():
        module.policy_net[-1].bias += 30.0 * illegal_first  # the first observation's illegal moves look best

    def sample(masks):
        batch = {Columns.OBS: {"observation": torch.as_tensor(np.stack([o["observation"] for o in observations])),
                               "action_mask": torch.as_tensor(np.stack(masks))}}
        with torch.no_grad():
            logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        return np.stack([dist.sample().numpy() for _ in range(50)], axis=1)  # (observations, draws)

    masks = [o["action_mask"] for o in observations]
    drawn = sample(masks)
    assert all(mask[drawn[i]].all() for i, mask in enumerate(masks))
    unmasked = sample([np.ones_like(m) for m in masks])
    assert not masks[0][unmasked[0]].all(), "without the mask the biased logits should pick illegal moves"


def test_cli_trains_saves_and_restores(tmp_path, capsys):
    out = tmp_path / "ckpt"
    assert rllib_command.main(["--game", "draw_v0", "--iterations", "1", "--out", str(out), *TINY_FLAGS]) == 0
    first = capsys.readouterr().out
    assert "iter   1" in first and (out / "policy" / "learner_group").is_dir(), first  # the run folder's latest
    assert (out / "points.json").is_file() and (out / "log.csv").is_file()  # the one driver's run folder
    # the saved policy acts legally without Ray
    module = rllib_train.load_module(out)
    decision_observations("draw_v0", 100, seed=3, policy=lambda obs: rllib_train.greedy_actions(module, obs))
    # the agent plays the exported arrays (domino_policy.npz), which are the module's policy network
    from domino_agents.registry import make_agent as agent_of

    agent = agent_of(f"rllib:checkpoint={out}", domino_envs.make_game("draw_v0"))
    observations = decision_observations("draw_v0", 50, seed=4)
    x = np.stack([o["observation"] for o in observations]).astype(np.float32)
    with torch.no_grad():
        theirs = module.policy_net(torch.as_tensor(x)).numpy()
    assert np.allclose(np.stack([agent.logits(row) for row in x]), theirs, atol=1e-5)
    # the checkpoint is an agent for the evaluation harness (and domino play): legal moves, a report
    from domino_training.evaluate import evaluate

    spec = f"rllib:checkpoint={out}"
    report = evaluate("draw_v0", [spec, "random"], deals=5, seed=1, progress=False)
    assert report.matchups[(spec, "random")].win_stat.n == 5
    # another game, or another config of it, is refused by the agent and by --restore, naming why
    from domino_agents.registry import make_agent
    from domino_agents.trained import CheckpointError

    with pytest.raises(CheckpointError, match="trained on 'draw_v0', not 'block_v0'"):
        make_agent(spec, domino_envs.make_game("block_v0"))
    with pytest.raises(CheckpointError, match="num_players=2 in the file vs 3 here"):
        make_agent(spec, domino_envs.make_game("draw_v0", num_players=3))
    refused = tmp_path / "refused"
    assert rllib_command.main(["--game", "draw_v0", "--set", "num_players=3", "--restore", str(out), "--out",
                             str(refused)]) == 2
    assert "num_players=2 in the file vs 3 here" in capsys.readouterr().err and not ray.is_initialized()
    assert not refused.exists()  # refused before anything is written
    assert rllib_command.main(["--game", "draw_v0", "--iterations", "1", "--restore", str(out), "--out",
                             str(tmp_path / "again"), *TINY_FLAGS]) == 0
    # the restored run goes on counting from the checkpoint's 200+ env steps
    second = capsys.readouterr().out
    total = int(float(second.split("(total ")[1].split(")")[0]))
    assert total >= 2 * 200, second


def test_cli_refuses_a_bad_game_config_before_starting_ray(capsys):
    assert rllib_command.main(["--game", "draw_v0", "--set", "num_players=9"]) == 2
    err = capsys.readouterr().err
    assert "num_players" in err and not ray.is_initialized()


# ------------------------------------------------------------------------- the README's commands
README = Path(__file__).resolve().parents[2] / "docs" / "rllib.md"  # the RLlib page (linked from the README)
README_SHRINK = {"--iterations": "1", "--deals": "4"}  # the only values the README run changes
README_TRAIN_SIZES = ["--num-cpus", "2", "--train-batch", "200", "--minibatch", "100", "--epochs", "1", "--hidden", "32"]
OUR_NAMES = ("MaskedActorCritic", "domino", "rllib_module", "rllib_train", "rllib_agent")


def readme_rllib_commands() -> list[list[str]]:
    """The commands (argv lists, comments dropped) of the first bash block in the RLlib page's
    "On one machine" section: the local ones, not the cluster's."""
    text = README.read_text()
    section = text[text.index("## On one machine"):]
    section = section[:section.index("\n## ", 1)]
    blocks = fenced_blocks(section, "bash", include_not_run=True)
    assert blocks, "the RLlib page's local section has no bash block"
    return [argv for argv in (shlex.split(line, comments=True) for line in blocks[0].splitlines()) if argv]


def shrunk(argv: list[str]) -> list[str]:
    """`argv` as written, with the README_SHRINK values and, for a training, README_TRAIN_SIZES
    appended: one 200-step iteration, a few deals."""
    argv = list(argv)
    for flag, value in README_SHRINK.items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
    if argv[:3] == ["python", "-m", "domino_training.learners.rllib_command"]:
        argv += README_TRAIN_SIZES
    return argv


def deprecation_lines(text: str) -> list[str]:
    """The lines of a command's output that report a deprecation: Python's DeprecationWarning
    (and Ray's subclasses) and RLlib's logged "DeprecationWarning: ..." notices alike."""
    return [line for line in text.splitlines() if "deprecat" in line.lower()]


def test_readme_rllib_commands_run_as_written(tmp_path):
    """Each command of the README's RLlib block, in order, as its own process in a folder outside
    the checkout (so only the installed names import, as for a user): each trains (and saves) with
    one small iteration, `domino evaluate` plays the saved checkpoint, `domino play` plays a hand
    against it from piped input. Python shows DeprecationWarnings (PYTHONWARNINGS) and RLlib logs
    its own notices; not one deprecation line may appear, from the driver or an env runner."""
    commands = readme_rllib_commands()
    trained = {argv[argv.index("--out") + 1] for argv in commands if "--out" in argv}
    played = {arg.split("=", 1)[1] for argv in commands for arg in argv if arg.startswith("rllib:checkpoint=")}
    kinds = [" ".join(argv[:3]) if argv[0] == "python" else " ".join(argv[:2]) for argv in commands]
    assert {"python -m domino_training.learners.rllib_command", "domino evaluate", "domino play"} <= set(kinds), commands
    assert played and played <= trained, f"the README plays {played} but trains {trained}"
    assert any("--env-runners" in argv for argv in commands), "no README command samples in remote env runners"

    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONWARNINGS"] = "default::DeprecationWarning"
    deprecations = []
    for argv in map(shrunk, commands):
        program = {"python": [sys.executable], "domino": [str(bin_dir / "domino")]}[argv[0]]
        keyboard = "1\n" * 300 if argv[:2] == ["domino", "play"] else None  # move 1 each turn, then end of input
        proc = subprocess.run(program + argv[1:], cwd=tmp_path, env=env, input=keyboard, capture_output=True,
                              text=True, timeout=600)
        shown = " ".join(argv)
        assert proc.returncode == 0, (shown, proc.stdout[-2000:], proc.stderr[-4000:])
        assert "Traceback" not in proc.stderr, (shown, proc.stderr[-4000:])
        if "--out" in argv:
            out = tmp_path / argv[argv.index("--out") + 1]
            assert "iter   1" in proc.stdout and (out / "policy" / "domino_policy.json").is_file(), (shown, proc.stdout)
        if argv[:2] == ["domino", "evaluate"]:
            spec = next(a for a in argv if a.startswith("rllib:"))
            row = next(line for line in proc.stdout.splitlines() if line.startswith(spec))
            assert row.split()[-1] == README_SHRINK["--deals"], (shown, proc.stdout)
        if argv[:2] == ["domino", "play"]:
            assert "result:" in proc.stdout and "rllib:checkpoint=" in proc.stdout, (shown, proc.stdout[-2000:])
        deprecations += [f"{shown}: {line}" for line in deprecation_lines(proc.stdout + proc.stderr)]
    ours = [line for line in deprecations if any(name in line.split(": ", 1)[1] for name in OUR_NAMES)]
    assert not deprecations, f"deprecation notices ({len(ours)} naming our code):\n" + "\n".join(deprecations)


def test_only_rllibs_own_module_config_notice_is_dropped():
    """RLlib logs its RLModuleConfig notice on building any module, its own default PPO module too
    (so it is not our module's API); our filter drops that record only, and a deprecation from
    anywhere else, or another one from RLlib's rl_module.py, still shows."""
    from ray.rllib.algorithms.ppo.ppo_catalog import PPOCatalog
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.rl_module import rl_module as rllib_rl_module
    from ray.util.debug import reset_log_once

    logger = logging.getLogger(rllib_rl_module.deprecation_warning.__module__)
    notice_filter = rllib_module.quiet_rllib_module_config_notice()
    assert logger.filters.count(notice_filter) == 1 and rllib_module.quiet_rllib_module_config_notice() is notice_filter
    env = domino_envs.make("draw_v0")
    ours = RLModuleSpec(module_class=rllib_module.MaskedActorCritic, observation_space=env.observation_space("player_0"),
                        action_space=env.action_space("player_0"), model_config={"hidden": [8]})
    rllibs = RLModuleSpec(module_class=DefaultPPOTorchRLModule, observation_space=env.observation_space("player_0")["observation"],
                          action_space=env.action_space("player_0"), model_config={}, catalog_class=PPOCatalog)

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__()
            self.records = []

        def emit(self, record):
            self.records.append(record)

    def notices_on_build(spec) -> list[logging.LogRecord]:
        kept = Keep()
        logger.addHandler(kept)
        try:
            reset_log_once(rllib_module.RLLIB_MODULE_CONFIG_NOTICE)  # RLlib says it once per process
            spec.build()
        finally:
            logger.removeHandler(kept)
        return [r for r in kept.records if rllib_module.RLLIB_MODULE_CONFIG_NOTICE in r.getMessage()]

    assert notices_on_build(ours) == [] and notices_on_build(rllibs) == []
    logger.removeFilter(notice_filter)
    try:
        for spec in (ours, rllibs):
            (record,) = notices_on_build(spec)
            assert Path(record.pathname).resolve() == Path(rllib_rl_module.__file__).resolve(), record.pathname
    finally:
        logger.addFilter(notice_filter)

    def record(pathname: str, message: str) -> logging.LogRecord:
        return logging.LogRecord(logger.name, logging.WARNING, pathname, 1, message, None, None)

    notice = f"DeprecationWarning: `{rllib_module.RLLIB_MODULE_CONFIG_NOTICE}` has been deprecated."
    assert not notice_filter.filter(record(rllib_rl_module.__file__, notice))
    assert notice_filter.filter(record(rllib_module.__file__, notice))
    assert notice_filter.filter(record(rllib_rl_module.__file__, "DeprecationWarning: `something else` has been deprecated."))


def test_rllib_learner_trains_through_the_learner_interface(tmp_path):
    """The optional `rllib` learner of training/learners/interface.py: a checkpoint per mark that plays as
    ``rllib:checkpoint=DIR``, and a second call on the finished run returns the same points."""
    from domino_training.evaluate import evaluate
    from domino_training.learners import LearnerRun, train_learner

    run = LearnerRun("draw_v0", {}, 0, 400, [200, 400], tmp_path / "run",
                     {"rllib.train_batch": 200, "rllib.minibatch": 100, "rllib.epochs": 1, "rllib.num_cpus": 1,
                      "network.hidden": [32]})
    points = train_learner("rllib", run)
    assert [p.mark for p in points] == [200, 400]
    assert all(p.env_steps >= p.mark for p in points) and 0 < points[0].seconds <= points[1].seconds
    for p in points:
        assert p.spec.startswith("rllib:checkpoint=")
        report = evaluate("draw_v0", [p.spec, "random"], 2, seed=1)
        assert report.matchups[(p.spec, "random")].win.shape == (2,)
    assert train_learner("rllib", run) == points


def test_rllib_learner_resumes_from_its_last_mark(tmp_path, monkeypatch):
    """Killed right after its first point, the rllib learner restores that mark's checkpoint and
    trains only the rest; the first point is kept as it was."""
    from domino_training.learners import interface as learners

    run = learners.LearnerRun("draw_v0", {}, 0, 400, [200, 400], tmp_path / "run",
                              {"rllib.train_batch": 200, "rllib.minibatch": 100, "rllib.epochs": 1,
                               "rllib.num_cpus": 1, "network.hidden": [32]})
    save = learners.PointLog.save

    def killed(self, *args):
        save(self, *args)
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(learners.PointLog, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        learners.train_learner("rllib", run)
    if ray.is_initialized():  # the learner's own finally shut it down
        ray.shutdown()
    monkeypatch.setattr(learners.PointLog, "save", save)
    first = learners.PointLog(run, "rllib").points
    assert [p.mark for p in first] == [200]
    summaries = []  # RLlib's own counts per iteration of the resumed run
    summary = rllib_train.iteration_summary
    monkeypatch.setattr(rllib_train, "iteration_summary", lambda result: summaries.append(summary(result)) or summaries[-1])
    points = learners.train_learner("rllib", run)
    assert [p.mark for p in points] == [200, 400] and points[0] == first[0]
    assert points[1].env_steps > points[0].env_steps and points[1].seconds > points[0].seconds
    # restored, not restarted: RLlib's lifetime count goes on from the checkpoint's steps, and only
    # the rest of the budget is trained
    assert summaries and summaries[0]["env_steps_total"] >= first[0].env_steps + summaries[0]["env_steps"], summaries
    assert sum(s["env_steps"] for s in summaries) == points[1].env_steps - first[0].env_steps


def test_domino_train_learner_rllib_writes_the_same_run_folder(tmp_path, monkeypatch, capsys):
    """`domino train --learner rllib` runs the rllib learner through the one driver: the layout every
    learner's run folder has, evaluation at each mark, the final table, and the folder plays."""
    from domino_training.evaluate import evaluate
    from domino_training.learners.train import main as train_main

    monkeypatch.chdir(tmp_path)
    sets = ["budget.env_steps=400", "eval.every_env_steps=200", "eval.deals=2", "eval.opponents=[random]",
            "eval.final_deals=2", "eval.final_opponents=[random]", "rllib.train_batch=200", "rllib.minibatch=100",
            "rllib.epochs=1", "rllib.num_cpus=1", "network.hidden=[32]"]
    assert train_main(["draw_v0", "--learner", "rllib", "--run-dir", "run", "--no-progress",
                       *sum((["--set", s] for s in sets), [])]) == 0, capsys.readouterr().err
    run = tmp_path / "run"
    for name in ("points.json", "config.yaml", "log.csv", "eval.csv", "final_eval.md", "policy/domino_policy.npz"):
        assert (run / name).is_file(), name
    assert "iter   1" in capsys.readouterr().out
    report = evaluate("draw_v0", [f"rllib:checkpoint={run}", "random"], 2, seed=1)
    assert report.matchups[(f"rllib:checkpoint={run}", "random")].win.shape == (2,)
