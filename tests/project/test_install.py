"""The package as a user gets it: a wheel built from the repo, installed (not editable) into a fresh
venv with pip resolving its dependencies as a user's pip would, used from folders outside the checkout.

The fresh venv gets torch==2.13.0 first, as the Makefile installs it (the CPU wheel on this machine's
disk: pip would otherwise fetch the multi-gigabyte CUDA build), then the wheel with only the `train`
and `render` extras, every other dependency resolved from the package indexes pip is configured
with, nothing taken from the venv running the tests. That is how a broken bound shows (issue 55: a
fresh install resolved pandas 3, under which rliable's `arch` does not import, and `domino benchmark`
crashed while the project's own venv, with pandas 2 through the `dev` extra, passed). Without an
index pip fails, and so does the fixture: nothing here skips. The sources are copied to a temporary
folder first and built there, so no stale build/ folder of the checkout can slip removed modules
into the wheel, and the checkout stays clean.

numba compiles the kernels cold for a new install location (about a minute of CPU for training's
vector kernels); XDG_CACHE_HOME points numba's cache into the temporary folder, which is removed
with it. The module's tests share one venv, so they run in one xdist worker (tests/conftest.py ONE_WORKER, with
the Makefile's `--dist loadgroup`): the install and the compile are paid once.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("domino_envs", "domino_agents", "domino_training")
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "runs", "__pycache__",
                                     ".pytest_cache", ".hypothesis", "tests")
TORCH = "torch==2.13.0"  # the Makefile's pin, installed first as the Makefile does (the docstring says why)
EXTRAS = ("train", "render")  # the user-facing extras `domino benchmark` and `domino render` need, no more
# tests/learners/test_training.py's tiny budget: a few seconds of training once the kernels are compiled
TINY = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "ppo.epochs=2", "network.hidden=[16]",
        "budget.env_steps=256", "budget.checkpoint_every=1", "imitation.decisions=0", "eval.every_updates=0",
        "eval.final_deals=0"]


@dataclass
class Install:
    """A fresh venv holding the wheel: its interpreter, its `domino` script, its site-packages, the
    environment to run them with, and a working folder outside the checkout."""

    wheel: Path
    build_log: str
    python: Path
    domino: Path
    site: Path
    env: dict
    outside: Path

    def run(self, args, cwd=None, stdin: str | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], cwd=cwd or self.outside, env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=timeout)


def _checked(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    base = tmp_path_factory.mktemp("wheel")
    src, dist, venv, outside = base / "src", base / "dist", base / "venv", base / "outside"
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "PYTHONSTARTUP")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", XDG_CACHE_HOME=str(base / "cache"))
    build = _checked(subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                                     "--no-index", "-w", str(dist), str(src)],
                                    capture_output=True, text=True, timeout=600, env=env), "pip wheel")
    (wheel,) = dist.glob("domino_envs-*.whl")
    _checked(subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300,
                            env=env), "python -m venv")
    python = venv / "bin" / "python"
    site = Path(_checked(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        capture_output=True, text=True, env=env), "venv python").stdout.strip())
    pip = [str(python), "-m", "pip", "install", "-q", "--no-compile"]  # no .pyc ahead (torch's take a minute)
    _checked(subprocess.run([*pip, TORCH], capture_output=True, text=True, timeout=900, env=env), f"pip install {TORCH}")
    _checked(subprocess.run([*pip, f"{wheel}[{','.join(EXTRAS)}]"], capture_output=True, text=True, timeout=900,
                            env=env), f"pip install the wheel[{','.join(EXTRAS)}]")
    outside.mkdir()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return Install(wheel, build.stdout + build.stderr, python, venv / "bin" / "domino", site, env, outside)


def test_the_wheel_holds_our_names_configs_and_policies_only(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    (dist_info,) = tops - set(OURS)
    assert tops == {*OURS, dist_info} and dist_info.endswith(".dist-info")
    configs = sorted(p.relative_to(ROOT / "configs").as_posix() for p in (ROOT / "configs").rglob("*.yaml"))
    cut = len("domino_training/game_configs/")
    assert sorted(n[cut:] for n in names if n.startswith("domino_training/game_configs/")
                  and n.endswith(".yaml")) == configs and len(configs) >= 6 + 4  # small/ too
    checkpoints = ROOT / "agents" / "checkpoints"
    policies = sorted(p.relative_to(checkpoints).as_posix() for p in checkpoints.rglob("*")
                      if p.suffix == ".npz" or p.name.endswith(".json.gz"))
    cut = len("domino_agents/checkpoints/")
    assert sorted(n[cut:] for n in names if n.startswith("domino_agents/checkpoints/")) == policies
    wheel = zipfile.ZipFile(installed.wheel)
    assert "domino = domino_training.cli:main" in wheel.read(f"{dist_info}/entry_points.txt").decode()
    assert "License-Expression: MIT" in wheel.read(f"{dist_info}/METADATA").decode()
    log = installed.build_log
    assert "Building wheel for domino-envs" in log  # -v: the backend's own output is in the log
    for word in ("Deprecat", "deprecat"):
        assert word not in log, [line for line in log.splitlines() if word in line]


def test_installed_modules_come_from_the_fresh_venv(installed):
    code = textwrap.dedent("""
        import importlib.resources, json, sys
        import domino_envs, domino_agents, domino_training, domino_training.game_configs
        print(json.dumps({
            "files": [m.__file__ for m in (domino_envs, domino_agents, domino_training, domino_training.game_configs)],
            "configs": str(importlib.resources.files("domino_training.game_configs")),
            "editable": sorted(m for m in sys.modules if "editable" in m),
            "path": sys.path}))
    """)
    info = json.loads(_checked(installed.run([installed.python, "-c", code]), "import").stdout)
    assert all(Path(f).is_relative_to(installed.site) for f in info["files"]), info["files"]
    assert Path(info["configs"]).is_relative_to(installed.site)
    assert info["editable"] == []
    # nothing of the checkout or of the venv running the tests is on sys.path
    outer = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    inside = [p for p in info["path"] if p and (Path(p).resolve().is_relative_to(ROOT) or Path(p).resolve() in outer)]
    assert inside == [] and "" in info["path"], info["path"]  # "": the cwd, a folder outside the checkout


def test_train_evaluate_play_and_render_from_outside_the_checkout(installed):
    """The four commands as a user types them, in a folder outside the checkout; the trained policy of
    the first is played by the second, and the game the third saves is drawn by the fourth."""
    here = installed.outside
    assert not here.resolve().is_relative_to(ROOT)
    sets = [a for key in TINY for a in ("--set", key)]
    out = _checked(installed.run([installed.domino, "train", "draw_v0", "--run-dir", "run", "--no-progress", *sets]),
                   "domino train").stdout
    assert "256 env steps" in out and (here / "run" / "policy.npz").is_file()

    _checked(installed.run([installed.domino, "evaluate", "--game", "draw_v0", "--agents", "trained",
                            "ppo:checkpoint=run/policy.npz", "random", "--deals", "4", "--no-progress",
                            "--json", "eval.json"]), "domino evaluate")
    report = json.loads((here / "eval.json").read_text())
    assert report["agents"] == ["trained", "ppo:checkpoint=run/policy.npz", "random"]
    assert all(m["deals"] == 4 for m in report["matchups"]) and len(report["matchups"]) == 6

    # move 1 is always a legal choice; once the game is over the extra 1s are refused and "n" ends it
    play = _checked(installed.run([installed.domino, "play", "draw_v0", "--vs", "trained", "--seed", "3",
                                   "--save", "game.jsonl"], stdin="1\n" * 80 + "n\n"), "domino play")
    assert "result:" in play.stdout and play.stdout.rstrip().endswith("bye")
    # nothing on stderr but, on this fresh cache, the one-line notice of the env's first compile
    assert all(line.startswith("domino: compiling draw_v0's numba kernels: ") for line in play.stderr.splitlines()), \
        play.stderr
    assert len((here / "game.jsonl").read_text().splitlines()) == 1

    _checked(installed.run([installed.domino, "render", "draw_v0", "--out", "table.png"]), "domino render")
    assert (here / "table.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _checked(installed.run([installed.domino, "render", "--replay", "game.jsonl", "--out", "game.gif"]),
             "domino render --replay")
    assert (here / "game.gif").read_bytes()[:6] == b"GIF89a"


def test_the_benchmark_runs_and_writes_its_report(installed):
    """`domino benchmark --profile ci` (the whole pipeline: train, evaluate, aggregate with rliable, rate,
    report) in the fresh install, from a folder outside the checkout: issue 55's crash was here."""
    out = installed.outside.parent / "bench"
    proc = _checked(installed.run([installed.domino, "benchmark", "--profile", "ci", "--out", out / "runs",
                                   "--report", out / "report.md"]), "domino benchmark --profile ci")
    assert proc.stdout.rstrip().endswith(f"wrote {out / 'report.md'} and {out / 'report'}/"), proc.stdout[-2000:]
    report = (out / "report.md").read_text()
    for learner in ("ppo", "dmc"):  # the ci profile's learners, each with its aggregate row: IQM [95% interval]
        assert re.search(rf"^\| {learner} \| \d\.\d\d \[\d\.\d\d, \d\.\d\d\] \|", report, flags=re.M), report[:3000]
    data = json.loads((out / "report" / "ci.json").read_text())
    assert {(r["learner"], r["seed"]) for r in data["scores"]} >= {("ppo", 0), ("ppo", 1), ("dmc", 0)}


def test_the_readme_usage_example_runs(installed):
    """The README's Usage blocks (extracted as tests/docs/test_readme.py does), pasted into the fresh
    install's python, run to the end."""
    from tests.docs.test_readme import usage_blocks

    first, *more = usage_blocks()
    script = installed.outside / "usage.py"
    script.write_text("\n".join([first, "print('left:', env.agents)", *more, "print('done')", ""]))
    proc = _checked(installed.run([installed.python, script]), "the README's Usage blocks")
    assert proc.stdout.split() == ["left:", "[]", "done"], proc.stdout[-2000:]  # every agent stepped out, then the rest ran


USER_FILES = {
    "agents/__init__.py": "WHO = 'user agents'\n",
    # the same module name as one of ours: if anything of ours imported `agents.trained`, it got this
    "agents/trained.py": "WHO = 'user agents.trained'\n",
    "training/__init__.py": "def fit():\n    return 'user fit'\n",
    "training/configs.py": "WHO = 'user training.configs'\n",
    "main.py": textwrap.dedent("""
        import json, sys
        import agents, training, training.configs
        import domino_envs, domino_agents, domino_training
        from domino_agents.registry import make_agent
        from domino_training.learners.train import load_settings

        env = domino_envs.make("draw_v0")
        env.reset(seed=1)
        players = [make_agent(spec, env.game, seed=0) for spec in ("trained", "heuristic")]
        decisions = 0
        for name in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            seat = env.possible_agents.index(name)
            decisions += not (term or trunc)
            env.step(None if term or trunc else players[seat].act(obs["observation"], obs["action_mask"]))
        run = load_settings(game="draw_v0")
        user_modules = sorted(m for m in sys.modules if m.split(".")[0] in ("agents", "training"))
        import agents.trained as user_trained
        print(json.dumps({
            "user": [agents.WHO, training.fit(), training.configs.WHO, user_trained.WHO],
            "user_files": [m.__file__ for m in (agents, training, training.configs, user_trained)],
            "user_modules": user_modules,
            "ours": [m.__file__ for m in (domino_envs, domino_agents, domino_training)],
            "policy_module": type(players[0]).__module__,
            "played": [decisions, env.agents],
            "run_game": run.game,
        }))
    """),
}


def test_a_user_project_with_its_own_agents_and_training_packages(installed):
    """A project whose own `agents` and `training` packages come first on sys.path (the script's folder,
    and the cwd under `python -m`): `import agents`/`import training` give the user's, domino_agents and
    domino_training give ours, and both work side by side."""
    project = installed.outside.parent / "userproject"
    for rel, text in USER_FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    info = json.loads(_checked(installed.run([installed.python, "main.py"], cwd=project), "user main.py").stdout)
    assert info["user"] == ["user agents", "user fit", "user training.configs", "user agents.trained"]
    assert all(Path(f).is_relative_to(project) for f in info["user_files"])
    assert all(Path(f).is_relative_to(installed.site) for f in info["ours"])
    # nothing of ours imported a module of the user's packages (only main.py's own imports are there)
    assert info["user_modules"] == ["agents", "training", "training.configs"]
    assert info["policy_module"] == "domino_agents.trained" and info["run_game"] == "draw_v0"
    decisions, left = info["played"]
    assert decisions > 0 and left == []  # the hand was played to its end
    # `python -m` puts the cwd (the user's project) first: our lazily imported agents still resolve to ours
    out = _checked(installed.run([installed.python, "-m", "domino_training.cli", "evaluate", "--game", "draw_v0",
                                  "--agents", "trained", "random", "--deals", "2", "--no-progress"], cwd=project),
                   "python -m domino_training.cli evaluate").stdout
    assert "trained" in out and "random" in out


def _files(folder: Path) -> set[str]:
    """Every file under `folder` (relative), less Python's bytecode caches."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_every_command_writes_only_where_its_flags_say(installed):
    """From the installed wheel, in an empty folder: each `domino` command creates exactly the files its
    flags name, or its documented defaults under the current folder, and nothing in site-packages (where
    the library lives) or anywhere else in the venv."""
    here = installed.outside.parent / "empty"
    here.mkdir()
    venv = installed.python.parent.parent
    before_venv = _files(venv)
    sets = [a for key in TINY for a in ("--set", key)]
    commands = [  # (argv, the files it may create: exact names, or a folder prefix ending in "/"; 2: refused)
        (["games"], set()),
        (["train", "draw_v0", "--no-progress", *sets], {"runs/draw_v0-ppo_bc-s0/"}),
        (["evaluate", "--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--no-progress"], set()),
        (["evaluate", "--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--no-progress",
          "--json", "out/eval.json", "--save-replays", "out/replays.jsonl"], {"out/eval.json", "out/replays.jsonl"}),
        (["rate", "random", "greedy", "--game", "block_v0", "--deals", "4", "--bootstrap", "2"], set()),
        (["play", "draw_v0", "--vs", "random", "--seed", "1"], set()),
        (["play", "draw_v0", "--vs", "random", "--seed", "1", "--save", "game.jsonl"], {"game.jsonl"}),
        (["replay", "game.jsonl"], set()),
        (["render", "draw_v0", "--out", "pics/table.png"], {"pics/table.png"}),
        # without the openspiel extra: refused in one line naming it (exit 2), nothing written
        (["exploit", "--exact", "random", "--game", "draw_v0", "--set", "max_pip=2", "--set", "hand_size=2"], 2),
        (["benchmark", "--profile", "ci", "--report-only", "--reps", "10"], {"benchmark_ci.md", "benchmark_ci/"}),
        (["benchmark", "freeze", "--lock", "mylock.json"], {"mylock.json"}),
    ]
    seen = set()
    for argv, allowed in commands:
        proc = installed.run([installed.domino, *argv], cwd=here, stdin="1\n" * 80 + "n\n")
        if allowed == 2:  # an extra this install lacks (EXTRAS)
            assert proc.returncode == 2 and "pip install 'domino-envs[openspiel]'" in proc.stderr, (argv, proc.stderr)
            assert len(proc.stderr.strip().splitlines()) == 1 and _files(here) == seen, (proc.stderr, _files(here) - seen)
            continue
        assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-2000:])
        now = _files(here)
        new = now - seen
        stray = [f for f in new if f not in allowed and not any(f.startswith(a) for a in allowed if a.endswith("/"))]
        assert stray == [], (argv, sorted(stray))
        assert all(any(f == a or f.startswith(a) for f in new) for a in allowed), (argv, sorted(new), allowed)
        seen = now
    assert _files(venv) == before_venv, sorted(_files(venv) ^ before_venv)
    # freeze without --lock would write the package's own lock: refused, naming the flag
    proc = installed.run([installed.domino, "benchmark", "freeze"], cwd=here)
    assert proc.returncode == 2 and "--lock" in proc.stderr
    assert _files(here) == seen and _files(venv) == before_venv
