"""The run folder every learner writes, whoever calls it (`domino train`, the benchmark, the learned
best responses): what a run is (`LearnerRun`), the points it saves (`PolicyPoint`, points.json), its
logs and its evaluation during training. `PointLog` is the one object a learner's
``train(run, log, progress)`` talks to:

- ``log.pending()`` / ``log.due(env_steps)`` / ``log.policy_path(mark)`` / ``log.save(...)``: the marks
  left, the ones reached, where a mark's policy goes, and recording it (points.json, atomically);
- ``log.record(row)``: one row of training metrics (a dict with ``env_steps``) into log.csv and, when
  the run asks for it, TensorBoard (tb/);
- ``log.resumed_at(env_steps)``: a learner that continues from a checkpoint says where, and the rows
  logged after it (by the session that was killed) are dropped, to be written again;
- ``log.say(text)``: a line for the person running it (printed by `domino train`, silent elsewhere).

A time budget (``minutes``, `domino train`'s ``budget.minutes``) ends a run early: once it is spent,
``due`` returns the last mark (saved with the policy as it is then, its real env steps recorded) and
the marks between are skipped (points.json lists them). Its clock (`BudgetClock`) counts the seconds
since the log opened less those numba spent compiling kernels (its ``numba:compile`` events) and
those a learner spends in ``log.uncounted()`` (our PPO's imitation warm start): on a cold cache the
first collection compiles for up to minutes, which would otherwise spend a short budget before the
first update, and kernels first compiled later (an evaluation's, a search teacher's) do not count
either.

A run is its description (`LearnerRun.describe`): a folder holding another run is refused
(`AnotherRunError`, one line naming each key that differs with its value there). Where a run
trains is not part of it: a param named ``device`` (``ppo.device``, ``dmc.device``) may change
between sessions, so a run resumes on another device. An `Evaluation` makes the log evaluate each
saved policy on fixed duplicate deals (eval.csv, curve.png) and the last one against the final
opponents (final_eval.md, final_eval.json).

Files: points.json, config.yaml (the run's description, readable), log.csv, tb/ (with
``tensorboard=True``), policy_<mark>.npz (or a folder) per mark, policy.npz (or policy/: the
latest), eval.csv, curve.png, final_eval.md/.json (with an Evaluation), and the learner's own
checkpoint files.
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from domino_envs.errors import CheckpointError, DominoError
from domino_training.settings import bounded

POINTS_FILE = "points.json"
POINTS_FORMAT = "domino-envs-learner-points/1"
EVAL_FIELDS = ["env_steps", "seconds", "opponent", "win", "win_lo", "win_hi", "reward", "deals"]


class LearnerError(DominoError):
    """A learner that cannot run (unknown name, a missing optional dependency) or broke its contract."""


class AnotherRunError(CheckpointError):
    """The run folder holds another run: `stored` maps each key of the run's identity that differs to
    its value there (`MISSING` where the folder's description lacks it)."""

    def __init__(self, folder: Path, stored: dict):
        self.folder, self.stored = Path(folder), dict(stored)
        super().__init__(f"{str(folder)!r} holds another run ({describe_values(stored)} there): resume it "
                         f"with those values, or use another run folder")


MISSING = "(unset: the default)"


def where_it_runs(key: str) -> bool:
    """A param that says where a run trains, not what it learns (``ppo.device``, ``dmc.device``): not
    part of the run's identity."""
    return key.rsplit(".", 1)[-1] == "device"


def identity(desc: dict) -> dict:
    """A run description (`LearnerRun.describe`, or points.json's ``run``) flattened into the keys that
    make it that run: learner, game, each rule key, seed, budget, marks and each param but those
    `where_it_runs`."""
    config, params = desc.get("config"), desc.get("params")
    flat = {k: desc.get(k, MISSING) for k in ("learner", "game")}
    flat.update(config.items() if isinstance(config, dict) else [("config", config)])
    flat.update({k: desc.get(k, MISSING) for k in ("seed", "budget", "marks")})
    if isinstance(params, dict):
        flat.update((k, v) for k, v in params.items() if not where_it_runs(k))
    else:
        flat["params"] = params
    return flat


def run_differences(stored: dict, desc: dict) -> dict:
    """Each key of the identity where run description `desc` differs from `stored`, with its stored value."""
    theirs, mine = identity(stored), identity(desc)
    keys = [*mine, *(k for k in theirs if k not in mine)]
    return {k: theirs.get(k, MISSING) for k in keys if theirs.get(k, MISSING) != mine.get(k, MISSING)}


def describe_values(values: dict) -> str:
    """key=value, ... on one line (a long list shortened to its ends and its length)."""
    def short(v):
        if isinstance(v, list) and len(repr(v)) > 60:
            return f"[{v[0]!r}, {v[1]!r}, ..., {v[-1]!r}] ({len(v)} items)"
        return repr(v) if v != MISSING else MISSING
    return ", ".join(f"{k}={short(v)}" for k, v in values.items())


class BudgetClock:
    """Seconds since it was made less the seconds numba spent compiling meanwhile (outermost
    ``numba:compile`` events: a kernel compiles the ones it calls inside its own event) and those spent
    in `paused` blocks. `open` listens, `close` stops."""

    def __init__(self):
        from numba.core import event

        clock = self

        class _Compiling(event.Listener):
            def on_start(self, ev):
                if clock._depth == 0:
                    clock._since = now()
                clock._depth += 1

            def on_end(self, ev):
                clock._depth -= 1
                if clock._depth == 0:
                    clock.compiling += now() - clock._since

        self._listener, self._depth, self._since, self.compiling = _Compiling(), 0, 0.0, 0.0
        self.started, self._open, self.paused_s = now(), False, 0.0

    def open(self) -> BudgetClock:
        from numba.core import event

        if not self._open:
            event.register("numba:compile", self._listener)
            self._open = True
        return self

    def close(self) -> None:
        from numba.core import event

        if self._open:
            event.unregister("numba:compile", self._listener)
            self._open = False

    def _compiled(self) -> float:
        return self.compiling + (now() - self._since if self._depth else 0.0)  # a compile under way included

    def seconds(self) -> float:
        """Seconds counted against the budget: elapsed, less compiling and pauses."""
        return now() - self.started - self._compiled() - self.paused_s

    @contextlib.contextmanager
    def paused(self):
        """A block whose seconds do not count (its compiling counted once)."""
        t0, c0 = now(), self._compiled()
        try:
            yield
        finally:
            self.paused_s += (now() - t0) - (self._compiled() - c0)


def now() -> float:
    """The clock of the time budget (a test may stand in for it)."""
    return time.perf_counter()


@dataclass
class LearnerRun:
    """One training run of a learner (see training/learners/interface.py)."""

    game: str                 # env name, e.g. "draw_v0"
    config: dict              # the game's rule keys
    seed: int
    budget: int               # env steps, every seat's decisions
    marks: list[int]          # env-step marks at which a policy is saved; the last == budget
    run_dir: Path
    params: dict = field(default_factory=dict)  # the learner's own settings, dotted keys

    def describe(self, learner: str) -> dict:
        """What identifies the run in points.json (a folder of another run is refused)."""
        return {"learner": learner, "game": self.game, "config": dict(self.config), "seed": int(self.seed),
                "budget": int(self.budget), "marks": [int(m) for m in self.marks], "params": dict(self.params)}


@dataclass
class PolicyPoint:
    """One saved policy: the env steps trained when it was saved, the training seconds until then,
    the agent spec that loads it, and the mark it was saved for."""

    env_steps: int
    seconds: float
    spec: str
    mark: int = 0


@dataclass
class Evaluation:
    """Evaluation during training (`domino train`'s eval section): each saved policy against
    `opponents` on `deals` duplicate deals of `seed`, the last one against `final_opponents` on
    `final_deals` (0: no final table). `label` names the policy in the tables."""

    opponents: list = field(default_factory=list)
    deals: int = 0
    final_opponents: list = field(default_factory=list)
    final_deals: int = 0
    seed: int = 0
    label: str = "ppo"
    report: object = field(default=None, repr=False)  # the final table's Report, once the run has finished


# ------------------------------------------------------------------------------ CSV
class CsvLog:
    """Append-only CSV with a header that grows when a row brings a new column; rows past a point
    can be dropped (a resumed run writes them again)."""

    def __init__(self, path: Path, fields: list[str] | None = None):
        self.path = path
        self.fields = fields

    def rows(self) -> list[dict]:
        if not self.path.is_file():
            return []
        with self.path.open(newline="") as fh:
            return list(csv.DictReader(fh))

    def _rewrite(self, rows: list[dict]) -> None:
        with self.path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=self.fields or [])
            w.writeheader()
            w.writerows(rows)

    def truncate_after(self, env_steps: int) -> None:
        """Drop the rows logged past `env_steps`."""
        rows = self.rows()
        if not rows:
            return
        self.fields = list(rows[0].keys())
        self._rewrite([r for r in rows if int(r["env_steps"]) <= env_steps])

    def write(self, row: dict) -> None:
        new = not self.path.is_file() or self.path.stat().st_size == 0
        if self.fields is None:
            self.fields = list(self.rows()[0].keys()) if not new else list(row.keys())
        extra = [k for k in row if k not in self.fields]
        if extra:  # a column appeared (e.g. a pool kind's first game): rewrite the header
            rows = self.rows()
            self.fields += extra
            if not new:
                self._rewrite(rows)
        with self.path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=self.fields)
            if new:
                w.writeheader()
            w.writerow(row)


# ------------------------------------------------------------------------------ evaluation
@dataclass
class Eval:
    """The train section's ``eval``: the run's evaluation during training and its final table (the run's
    settings, not a learner's: `domino train` makes it an `Evaluation`)."""

    every_updates: int = bounded(25, min=0)  # evaluation against `opponents` during training every that many PPO
                                    # updates
    #                                 worth of env steps (ppo.num_envs x ppo.rollout_steps each), whatever the learner
    every_env_steps: int = bounded(0, min=0)  # > 0: every that many env steps instead (the unit of every learner)
    deals: int = bounded(100, min=1)  # duplicate deals per matchup during training
    opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    final_deals: int = bounded(500, min=0)  # duplicate deals per matchup of the table at the end (0: none)
    final_opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    seed: int = 12345               # deals of the evaluation (the same at every point of a run)


@dataclass
class RunBudget:
    env_steps: int = bounded(2_000_000, min=1)  # decisions trained on (every seat's; an imitation warm start's too)
    minutes: float = bounded(0.0, min=0)  # wall-clock cap on training (0: none), numba's compiling and the imitation
                                    # warm start not counted (`BudgetClock`); a resumed run gets it afresh


@dataclass
class RunSettings:
    """A game file's train section less its ``params``: the run `domino train` makes (a `LearnerRun`
    and its `Evaluation`), the same whichever learner trains it."""

    learner: str = "ppo"            # who trains: a registered learner (training/learners/interface.py)
    seed: int = bounded(0, min=0)   # the run's seed (LearnerRun.seed)
    budget: RunBudget = field(default_factory=RunBudget)
    eval: Eval = field(default_factory=Eval)


def evaluate_spec(game: str, config: dict, spec: str, opponents: list[str], deals: int, seed: int, label: str):
    """The harness's duplicate-deal report of `spec` against each opponent, `spec` shown as `label`."""
    from domino_training.evaluate import evaluate

    report = evaluate(game, [spec, *opponents], deals, seed, dict(config), pairs=[(spec, o) for o in opponents],
                      progress=False)
    return relabel(report, spec, label)


def relabel(report, spec: str, label: str):
    """The report with agent spec `spec` shown as `label` (a policy path makes an unreadable table)."""
    report.agents = [label if a == spec else a for a in report.agents]
    matchups = {}
    for (f, o), m in report.matchups.items():
        m.focal = label if m.focal == spec else m.focal
        m.opponent = label if m.opponent == spec else m.opponent
        matchups[(label if f == spec else f, label if o == spec else o)] = m
    report.matchups = matchups
    return report


def plot_curve(eval_csv: Path, out: Path, title: str, fair_share: float) -> Path | None:
    """curve.png: win rate against each opponent over env steps, with 95% intervals."""
    rows = CsvLog(eval_csv).rows()
    if not rows:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("curve.png not drawn: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for opp in dict.fromkeys(r["opponent"] for r in rows):
        rs = [r for r in rows if r["opponent"] == opp]
        x = [int(r["env_steps"]) for r in rs]
        ax.plot(x, [float(r["win"]) for r in rs], marker="o", ms=3, label=f"vs {opp}")
        ax.fill_between(x, [float(r["win_lo"]) for r in rs], [float(r["win_hi"]) for r in rs], alpha=0.2)
    ax.axhline(fair_share, color="grey", ls="--", lw=1, label="fair share")
    ax.set_xlabel("env steps (decisions)")
    ax.set_ylabel("win rate (duplicate deals)")
    ax.set_title(title)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# ------------------------------------------------------------------------------ the point log
class PointLog:
    """The run folder as a learner sees it (see module doc)."""

    def __init__(self, run: LearnerRun, learner: str, minutes: float = 0.0, evaluation: Evaluation | None = None,
                 tensorboard: bool = False, echo=None, settings=None):
        self.run, self.learner = run, learner
        self.settings = settings  # the learner's settings, built once by its check (train_learner hands them over)
        self.dir = Path(run.run_dir)
        self.path = self.dir / POINTS_FILE
        self.points: list[PolicyPoint] = []
        self.skipped: list[int] = []
        self.minutes, self.evaluation, self.echo = float(minutes), evaluation, echo
        self.clock = BudgetClock()
        desc = run.describe(learner)
        if self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                theirs = data["run"]
                self.points = [PolicyPoint(int(p["env_steps"]), float(p["seconds"]), str(p["spec"]), int(p["mark"]))
                               for p in data["points"]]
                self.skipped = [int(m) for m in data.get("skipped", [])]
            except (OSError, ValueError, KeyError, TypeError) as err:
                raise CheckpointError(f"{str(self.path)!r} is not a readable points file ({type(err).__name__}: {err})") \
                    from None
            if not isinstance(theirs, dict):
                raise CheckpointError(f"{str(self.path)!r} is not a readable points file (its run is not a mapping)")
            diff = run_differences(theirs, desc)
            if diff:
                raise AnotherRunError(self.dir, diff)
            if not {p.mark for p in self.points} | set(self.skipped) <= set(run.marks):
                raise CheckpointError(f"{str(self.path)!r} holds points for marks outside {run.marks}")
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write()
        (self.dir / "config.yaml").write_text(yaml.safe_dump(desc, sort_keys=False))
        self.csv = CsvLog(self.dir / "log.csv")
        self.evals = CsvLog(self.dir / "eval.csv", EVAL_FIELDS)
        self._tensorboard, self._writer = tensorboard, None
        if self.minutes > 0:
            self.clock.open()

    def _write(self) -> None:
        data = {"format": POINTS_FORMAT, "run": self.run.describe(self.learner),
                "points": [dataclasses.asdict(p) for p in self.points]}
        if self.skipped:
            data["skipped"] = self.skipped
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.path)

    # -------------------------------------------------------------- marks
    def pending(self) -> list[int]:
        """Marks not saved (nor skipped) yet, in order."""
        done = {p.mark for p in self.points} | set(self.skipped)
        return [m for m in self.run.marks if m not in done]

    def uncounted(self):
        """A block of work before training proper (a warm start) whose seconds the time budget does not count."""
        return self.clock.paused()

    def out_of_time(self) -> bool:
        """Whether the time budget is spent (compiling not counted: `BudgetClock`)."""
        return self.minutes > 0 and self.clock.seconds() > 60.0 * self.minutes

    def due(self, env_steps: int) -> list[int]:
        """Pending marks at or below `env_steps`; once the time budget is spent, the last mark (the
        ones before it are skipped)."""
        pending = self.pending()
        if pending and self.out_of_time():
            self.skipped = sorted(set(self.skipped) | set(pending[:-1]))
            self._write()
            self.say(f"time budget of {self.minutes:g} min spent at {env_steps:,} env steps: the run ends here")
            return pending[-1:]
        return [m for m in pending if m <= env_steps]

    def policy_path(self, mark: int, suffix: str = ".npz") -> Path:
        """Where the policy of `mark` goes (absolute, so the spec works from any folder)."""
        return (self.dir / f"policy_{int(mark):012d}{suffix}").resolve()

    def save(self, mark: int, env_steps: int, seconds: float, spec: str) -> PolicyPoint:
        """Record the policy saved for `mark` (write the file first: a point always has its file), then
        copy it to policy.npz and evaluate it when the run has an Evaluation."""
        if mark not in self.pending():
            raise LearnerError(f"mark {mark} is not pending (pending: {self.pending()})")
        point = PolicyPoint(int(env_steps), float(seconds), spec, int(mark))
        self.points.append(point)
        self.points.sort(key=lambda p: p.mark)
        self._write()
        _, _, path = spec.partition("=")
        if path.endswith(".npz") and Path(path).is_file():
            shutil.copyfile(path, self.dir / "policy.npz")
        elif Path(path).is_dir():  # a checkpoint folder (rllib): the latest is policy/
            shutil.rmtree(self.dir / "policy", ignore_errors=True)
            shutil.copytree(path, self.dir / "policy")
        if self.evaluation is not None and self.evaluation.deals and self.evaluation.opponents:
            self._evaluate_point(point)
        return point

    # -------------------------------------------------------------- logs
    def record(self, row: dict) -> None:
        """One row of training metrics (it must hold ``env_steps``): log.csv, and tb/ when asked."""
        self.csv.write(row)
        writer = self._tb()
        if writer is not None:
            for k, v in row.items():
                if k not in ("update", "env_steps") and isinstance(v, (int, float)) and math.isfinite(v):
                    writer.add_scalar(f"train/{k}", v, int(row["env_steps"]))

    def resumed_at(self, env_steps: int) -> None:
        """The learner continues from `env_steps`: drop the rows logged after it."""
        self.csv.truncate_after(env_steps)
        self.evals.truncate_after(env_steps)
        self.say(f"resumed {self.dir} at {env_steps:,} env steps")

    def say(self, text: str) -> None:
        if self.echo is not None:
            self.echo(text)

    def _tb(self):
        if not self._tensorboard:
            return None
        if self._writer is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # tensorboard is in the train extra; the run goes on without it
                self._tensorboard = False
                return None
            self._writer = SummaryWriter(str(self.dir / "tb"))
        return self._writer

    def close(self) -> None:
        self.clock.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # -------------------------------------------------------------- evaluation
    def _evaluate_point(self, point: PolicyPoint) -> None:
        ev = self.evaluation
        report = evaluate_spec(self.run.game, self.run.config, point.spec, ev.opponents, ev.deals, ev.seed, ev.label)
        parts = []
        for opp in ev.opponents:
            m = report.matchups[(ev.label, opp)]
            w, r = m.win_stat, m.reward_stat
            self.evals.write({"env_steps": point.env_steps, "seconds": round(point.seconds, 1), "opponent": opp,
                              "win": round(w.mean, 4), "win_lo": round(w.lo, 4), "win_hi": round(w.hi, 4),
                              "reward": round(r.mean, 4), "deals": ev.deals})
            writer = self._tb()
            if writer is not None:
                writer.add_scalar(f"eval/win_vs_{opp}", w.mean, point.env_steps)
            parts.append(f"{opp} {w.mean:.3f}")
        self.say(f"{point.env_steps:,} env steps: win vs " + ", ".join(parts))

    def finish(self):
        """At the end of a run: curve.png from eval.csv, and the final table of the last policy
        (final_eval.md/.json) when the Evaluation asks for one; returns that Report or None."""
        self.close()
        ev = self.evaluation
        if ev is None or not self.points:
            return None
        import domino_envs

        fair = 1.0 / domino_envs.make_game(self.run.game, **self.run.config).num_players
        plot_curve(self.evals.path, self.dir / "curve.png", f"{self.run.game}: {self.learner}", fair)
        if not (ev.final_deals and ev.final_opponents):
            return None
        report = evaluate_spec(self.run.game, self.run.config, self.points[-1].spec, ev.final_opponents,
                               ev.final_deals, ev.seed, ev.label)
        (self.dir / "final_eval.md").write_text(report.markdown())
        (self.dir / "final_eval.json").write_text(json.dumps(report.to_json(), indent=2))
        ev.report = report
        return report


# ------------------------------------------------------------------------------ the loop of ppo and dmc
def drive(trainer, log: PointLog, budget: int, agent: str, checkpoint_every: int, progress: bool,
          offset: int = 0) -> None:
    """The loop of the learners with a `Trainer`-shaped object (iterate, env_steps, seconds,
    export_policy, save_checkpoint): save every due mark (policy file, point with the spec
    `agent`:checkpoint=, then the checkpoint, so a kill between them loses nothing), stop when no
    mark is pending, else one more iteration, its row logged."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=budget, initial=min(budget, offset + trainer.env_steps), unit="step", desc=log.learner,
                   file=sys.stderr)
    since = 0
    try:
        while True:
            steps = offset + trainer.env_steps
            due = log.due(steps)
            for mark in due:
                path = trainer.export_policy(log.policy_path(mark))
                log.save(mark, steps, trainer.seconds, f"{agent}:checkpoint={path}")
            if due:
                trainer.save_checkpoint()
                since = 0
            if not log.pending():
                return
            row = trainer.iterate()
            log.record({**row, "env_steps": offset + trainer.env_steps})
            since += 1
            if since >= checkpoint_every:
                trainer.save_checkpoint()
                since = 0
            if bar is not None:
                bar.update(min(budget, offset + trainer.env_steps) - bar.n)
    finally:
        if bar is not None:
            bar.close()


__all__ = ["AnotherRunError", "BudgetClock", "CsvLog", "EVAL_FIELDS", "Eval", "Evaluation", "LearnerError", "LearnerRun", "POINTS_FILE",
           "PointLog", "PolicyPoint", "RunBudget", "RunSettings", "drive", "evaluate_spec", "identity", "plot_curve", "relabel",
           "run_differences", "where_it_runs"]
