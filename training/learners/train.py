"""`domino train <game>`: one training run in one folder, with logs, evaluation and resume.

    domino train draw_v0                                  # configs/draw.yaml's train section
    domino train sum7_v0 --set ppo.lr=1e-4 --set budget.env_steps=2000000
    domino train draw_v0 --run-dir runs/d1 --resume       # continue an interrupted run
    domino train draw_v0 --algo sb3                       # MaskablePPO on SingleSeatEnv

The run folder holds (ppo): checkpoint.pt (resume), policy.npz (the agent: ``mlp:checkpoint=...``),
config.yaml (the resolved config), log.csv and tb/ (TensorBoard: losses, entropy, steps/s, the
training-time win share against each pool kind), eval.csv and curve.png (win rate against each
evaluation opponent over training, 95% intervals, on the same duplicate deals every time), and
final_eval.md / final_eval.json (the evaluation harness's table at the end).

A run is checkpointed every ``budget.checkpoint_every`` updates and at its end; ``--resume``
continues from the last checkpoint exactly as if it had not stopped (logs rows written after that
checkpoint are dropped and written again). Without ``--resume`` a folder that already holds a
checkpoint is refused, so a finished run is never overwritten by accident.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import yaml

from domino_envs.core import DominoError
from domino_training.commands import HelpFormatter
from domino_training.configs import ALGOS, RunConfig, load_run

LABEL = "ppo"  # how the trained policy is named in evaluation tables
EVAL_FIELDS = ["update", "env_steps", "seconds", "opponent", "win", "win_lo", "win_hi", "reward", "deals"]


class CsvLog:
    """Append-only CSV with a fixed header; on resume, rows past the checkpoint are dropped."""

    def __init__(self, path: Path, fields: list[str] | None = None):
        self.path = path
        self.fields = fields

    def truncate_after(self, update: int) -> None:
        if not self.path.is_file():
            return
        with self.path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        if rows:
            self.fields = list(rows[0].keys())
        with self.path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=self.fields or [])
            w.writeheader()
            w.writerows(r for r in rows if int(r["update"]) <= update)

    def write(self, row: dict) -> None:
        new = not self.path.is_file() or self.path.stat().st_size == 0
        if self.fields is None:
            self.fields = list(row.keys())
        extra = [k for k in row if k not in self.fields]
        if extra and not new:  # a column appeared (e.g. a pool kind's first game): rewrite the header
            with self.path.open(newline="") as fh:
                rows = list(csv.DictReader(fh))
            self.fields += extra
            with self.path.open("w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=self.fields)
                w.writeheader()
                w.writerows(rows)
        elif extra:
            self.fields += extra
        with self.path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=self.fields)
            if new:
                w.writeheader()
            w.writerow(row)

    def rows(self) -> list[dict]:
        if not self.path.is_file():
            return []
        with self.path.open(newline="") as fh:
            return list(csv.DictReader(fh))


def evaluate_policy(run: RunConfig, policy_path: Path, opponents: list[str], deals: int, seed: int):
    """The harness's duplicate-deal report of the policy file against each opponent spec."""
    from domino_training.evaluate import evaluate

    spec = f"mlp:checkpoint={policy_path}"
    report = evaluate(run.game, [spec, *opponents], deals, seed, dict(run.config),
                      pairs=[(spec, o) for o in opponents], progress=False)
    return LABEL, relabel(report, spec, LABEL)


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


def train_ppo(run: RunConfig, run_dir: str | Path, resume: bool = False, progress: bool | None = None,
              echo=print):
    """Run our PPO to the budget (see module doc); returns the final evaluation Report (or None)."""
    from domino_training.learners.ppo import Trainer

    run_dir = Path(run_dir)
    trainer = Trainer(run, run_dir)
    cfg = run.train
    if trainer.checkpoint_path.is_file():
        if not resume:
            raise DominoError(f"{run_dir} already holds a run (checkpoint.pt): pass --resume to continue it, "
                              f"or choose another --run-dir")
        extra = trainer.load_checkpoint()
        echo(f"resumed {run_dir} at update {trainer.update} ({trainer.env_steps:,} env steps)")
    else:
        extra = {}
        if cfg.imitation.decisions:
            t0 = time.perf_counter()
            stats = trainer.warm_start()
            echo(f"imitation of {cfg.imitation.teacher}: {cfg.imitation.decisions:,} decisions, agreement "
                 f"{stats['bc_agreement']:.3f}, {time.perf_counter() - t0:.0f} s")
    if trainer.device.type == "cpu":
        echo(f"torch: {cfg.ppo.torch_threads} CPU thread(s) (ppo.torch_threads; more gains little on an idle "
             f"machine and costs several times over beside other jobs)")
    started = time.perf_counter()  # budget.minutes counts distillation rounds too
    distilling = bool(cfg.distill.rounds or cfg.distill.every_updates)
    if distilling:
        from domino_training.learners.distill import rounds_done, rounds_due, run_round

        done = rounds_done(trainer, extra)
        dlog = CsvLog(run_dir / "distill.csv")
        dlog.truncate_after(trainer.update if done else -1)

        def catch_up() -> None:
            """Run (and log in distill.csv) the rounds due by this update that are not done yet."""
            nonlocal done
            while done < rounds_due(cfg.distill, trainer.update):
                dlog.write(run_round(trainer, done, echo))
                done += 1

        catch_up()
    (run_dir / "config.yaml").write_text(yaml.safe_dump(run.to_dict(), sort_keys=False))
    log, evals = CsvLog(run_dir / "log.csv"), CsvLog(run_dir / "eval.csv", EVAL_FIELDS)
    log.truncate_after(trainer.update)
    evals.truncate_after(trainer.update)
    writer = _tensorboard(run_dir, trainer.update)
    total = trainer.total_updates
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=min(trainer.update, total), unit="update", desc=f"{run.game} ppo",
                   file=sys.stderr)
    time_cap = cfg.budget.minutes * 60.0
    fair = 1.0 / trainer.collector.n
    try:
        while trainer.update < total:
            if time_cap and time.perf_counter() - started > time_cap:
                echo(f"time budget of {cfg.budget.minutes} min reached at update {trainer.update}")
                break
            row = trainer.iterate()
            log.write(row)
            if writer is not None:
                for k, v in row.items():
                    if k != "update" and isinstance(v, (int, float)) and math.isfinite(v):
                        writer.add_scalar(f"train/{k}", v, trainer.env_steps)
            if cfg.eval.every_updates and trainer.update % cfg.eval.every_updates == 0:
                _evaluate_point(run, trainer, evals, writer, bar)
            if trainer.update % cfg.budget.checkpoint_every == 0:
                trainer.export_policy()
                trainer.save_checkpoint({"distill_rounds": done} if distilling else None)
            if distilling:
                catch_up()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(sps=f"{row['steps_per_s']:.0f}", ent=f"{row.get('entropy', 0):.2f}")
    finally:
        if bar is not None:
            bar.close()
        trainer.export_policy()
        trainer.save_checkpoint({"distill_rounds": done} if distilling else None)
        if writer is not None:
            writer.close()
    plot_curve(run_dir / "eval.csv", run_dir / "curve.png", f"{run.game}: PPO", fair)
    echo(f"{trainer.env_steps:,} env steps in {trainer.seconds:.0f} s of training "
         f"({trainer.env_steps / max(trainer.seconds, 1e-9):,.0f} steps/s); policy: {trainer.policy_path}")
    return final_evaluation(run, trainer.policy_path, run_dir)


def _tensorboard(run_dir: Path, update: int):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the train extra; the run goes on without it
        return None
    return SummaryWriter(str(run_dir / "tb"), purge_step=update + 1 if update else None)


def _evaluate_point(run, trainer, evals: CsvLog, writer, bar) -> None:
    cfg = run.train.eval
    path = trainer.export_policy()  # policy.npz: the latest actor, as the evaluation plays it
    spec, report = evaluate_policy(run, path, cfg.opponents, cfg.deals, cfg.seed)
    parts = []
    for opp in cfg.opponents:
        m = report.matchups[(spec, opp)]
        w, r = m.win_stat, m.reward_stat
        evals.write({"update": trainer.update, "env_steps": trainer.env_steps, "seconds": round(trainer.seconds, 1),
                     "opponent": opp, "win": round(w.mean, 4), "win_lo": round(w.lo, 4), "win_hi": round(w.hi, 4),
                     "reward": round(r.mean, 4), "deals": cfg.deals})
        if writer is not None:
            writer.add_scalar(f"eval/win_vs_{opp}", w.mean, trainer.env_steps)
        parts.append(f"{opp} {w.mean:.3f}")
    msg = f"update {trainer.update}: win vs " + ", ".join(parts)
    if bar is not None:
        bar.write(msg)
    else:
        print(msg, file=sys.stderr)


def train(run: RunConfig, run_dir: str | Path, resume: bool = False, progress: bool | None = None, echo=print):
    """Train with run.train.algo into run_dir; returns the final evaluation Report (or None)."""
    if run.train.algo == "sb3":
        from domino_training.learners.sb3 import train_sb3

        run_dir = Path(run_dir)
        if (run_dir / "sb3_model.zip").is_file() and not resume:
            raise DominoError(f"{run_dir} already holds a run (sb3_model.zip): pass --resume to continue it, "
                              f"or choose another --run-dir")
        train_sb3(run, run_dir, resume=resume, progress=sys.stderr.isatty() if progress is None else progress)
        return final_evaluation(run, run_dir / "policy.npz", run_dir)
    return train_ppo(run, run_dir, resume=resume, progress=progress, echo=echo)


def final_evaluation(run: RunConfig, policy: Path, run_dir: Path):
    """The harness's table of the run's policy against eval.final_opponents, saved in the run folder."""
    import json

    cfg = run.train.eval
    if not cfg.final_deals:
        return None
    _, report = evaluate_policy(run, policy, cfg.final_opponents, cfg.final_deals, cfg.seed)
    (run_dir / "final_eval.md").write_text(report.markdown())
    (run_dir / "final_eval.json").write_text(json.dumps(report.to_json(), indent=2))
    return report


EXAMPLES = """examples:
  domino train draw_v0                     # the config's budget, into runs/draw_v0-ppo-s0
  domino train draw_v0 --demo              # a few minutes
  domino train sum7_v0 --set num_players=3 --set budget.minutes=20 --run-dir runs/sum7-3p
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino train", description="Train an agent for one game into a run folder: config.yaml, "
                                "checkpoints, logs, evaluations during training and the final table.")
    p.add_argument("game", help="registered env name, e.g. draw_v0")
    p.add_argument("--config", default=None, metavar="FILE", help="config file (default: the game's config shipped with the package)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a training key, e.g. --set ppo.lr=3e-4 (repeatable)")
    p.add_argument("--algo", choices=ALGOS, default=None, help="ppo (ours, vector env) or sb3 (MaskablePPO)")
    p.add_argument("--run-dir", default=None, help="run folder (default runs/<game>-<algo>-s<seed>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its checkpoint")
    p.add_argument("--demo", action="store_true", help="apply the config file's demo overrides")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        overrides = list(args.set) + ([f"algo={args.algo}"] if args.algo else [])
        run = load_run(args.config, args.game, overrides, demo=args.demo)
        run_dir = args.run_dir or f"runs/{run.game}-{run.train.algo}-s{run.train.seed}"
        report = train(run, run_dir, resume=args.resume, progress=False if args.no_progress else None)
    except DominoError as err:
        print(f"domino train: error: {err}", file=sys.stderr)
        return 2
    if report is not None:
        print(report.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
