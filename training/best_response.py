"""Learned best responses: what a PPO learner gains against a frozen target, a lower bound on the
target's exploitability in games too large for a tree walk.

    domino exploit SPEC --game G [--set k=v ...] [--steps N] [--seeds K] [--deals D] [--out DIR]

- **Training.** The target (any agent spec that plays from observations: random, greedy, the
  heuristic, a policy file, the shipped ``trained`` agent) sits in every seat but one; our PPO
  (training/ppo.py, through the ``ppo``/``ppo_bc`` learners of training/learners.py) learns in that
  one, drawn at random each game (``opponents.target = 1``, every other pool weight 0). Its reward
  is the game's own (``ppo.reward = score``), scaled by 1 / the standard deviation of a seat's
  return under random play (`reward_scale`), because exploitability is measured in the game's
  units, not in wins.
- **Warm start** (``warm_start``): the learner starts as a copy of the target, where the target is
  a policy file (``network.init_actor``: its actor's weights), or by imitating it first
  (``imitation.teacher = SPEC``, those decisions counted in the budget) for the heuristic and
  greedy. Where each helps was measured: on the small configs from scratch is better (block_d2
  against the heuristic: 98% of the exact best response's gain recovered from scratch, 41-45%
  from the heuristic's clone, whose argmax PPO barely moved, with 1, 3 or 15 imitation epochs or
  an entropy coefficient of 0.03); on the full games a response from scratch had not reached the
  target's own level in 1M steps (Block: -0.12 pips against the heuristic and -1.5 against the
  shipped agent; Magic-7: -0.5 and -1.5), so there the report warm-starts (`exploit.FULL_BR`).
- **Measure.** Each saved policy (its argmax, `PolicyAgent`) plays one seat against copies of the
  target on frozen duplicate deals (training/evaluate.py, seats rotated, evaluation seed
  ``eval_seed``, unrelated to training's), and so does the target itself on the same deals and
  agent seeds. The **edge** is the per-deal difference of the two (the response's return minus
  the target's own return in the same seats): mean and 95% interval over deals per seed, and over
  seeds and deals together by a bootstrap that resamples both. A response can only fall short of
  the best one, so the edge is **a lower bound** on what a best response gains: on two-player
  zero-sum games (Draw, Block) the mean over seats of that gain is the target's exploitability.
- **Checked on the small configs** (domino_training.exploit.response_gains): there the learned
  response's own gain is computed exactly by the tree walk and compared with the exact best
  response's (the share of it recovered).
- **Run folder** (resumable: a killed run continues; a second call redoes nothing): one learner
  folder per seed (``seed<k>/``, training/learners.py), the target's self-play per-deal returns and
  every evaluated point in ``edges.json``; `result` aggregates them.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from domino_envs.errors import ConfigError
from domino_envs.registry import make_game
from domino_training.evaluate import Stat

EDGES_FILE = "edges.json"
BOOTSTRAP = 2000


@dataclass
class BRSettings:
    """How a learned best response is trained and measured (module doc)."""

    steps: int = 1_000_000          # env steps each seed trains (every seat's decisions, the imitation's too)
    seeds: int = 3
    marks: int = 4                  # policies saved along the budget (the curve), at k/marks of it
    deals: int = 1000               # frozen duplicate deals of the final policy's evaluation
    curve_deals: int = 200          # deals of the earlier points
    eval_seed: int = 20_271         # the evaluation's deals (training draws its own)
    warm_start: bool = False        # start from a copy of the target (never for random: nothing to copy); module doc
    imitation: int = 100_000        # decisions of the target to imitate
    params: dict = field(default_factory=dict)  # ppo learner keys, e.g. {"ppo.ent_coef": 0.01}

    def check(self) -> None:
        for key in ("steps", "seeds", "marks", "deals", "curve_deals", "imitation"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"best response {key}={value!r} must be an int >= 1")
        if self.steps < 2 * self.marks * 1024:
            raise ConfigError(f"best response steps={self.steps} is too small for {self.marks} marks "
                              f"(at least {2 * self.marks * 1024})")


def reward_scale(game_name: str, config: dict, games: int = 512, seed: int = 0) -> float:
    """1 / the standard deviation of a seat's return over `games` games of random play (a seeded
    vector env), so the learner's reward is of order 1 in every game."""
    from domino_envs.vector import VectorEnv
    from domino_training.opponents import RandomBatch

    venv = VectorEnv(game_name, 64, seed=seed, **config)
    rng = np.random.default_rng([seed, 0x5CA1E])
    player = RandomBatch(venv.game)
    obs, masks, _ = venv.reset()
    running = np.zeros((64, venv.game.num_players))
    finished: list[np.ndarray] = []
    while len(finished) < games:
        obs, masks, _, rewards, term, trunc, _ = venv.step(player.act_batch(obs, masks, rng))
        running += rewards
        for i in np.flatnonzero(term | trunc):
            finished.append(running[i].copy())
            running[i] = 0.0
    sd = float(np.std(np.concatenate(finished)))
    return 1.0 / sd if sd > 0 else 1.0


def marks_of(settings: BRSettings) -> list[int]:
    """The env-step marks of the curve: k/marks of the budget, k = 1..marks."""
    return [settings.steps * k // settings.marks for k in range(1, settings.marks + 1)]


def learner_and_params(target: str, game_name: str, config: dict, settings: BRSettings) -> tuple[str, dict]:
    """(learner name, its params) of a best response to `target` (module doc)."""
    params = {"opponents.self_play": 0.0, "opponents.snapshot": 0.0, "opponents.random": 0.0,
              "opponents.greedy": 0.0, "opponents.heuristic": 0.0, "opponents.target": 1.0,
              "opponents.target_spec": target, "ppo.reward": "score",
              "ppo.score_scale": round(reward_scale(game_name, config), 6), "ppo.torch_threads": 1,
              **settings.params}
    if settings.warm_start and target != "random":
        path = policy_file_of(target, game_name)
        if path is not None:  # a policy file: the actor starts as a copy of it
            from domino_agents.trained import load_policy

            params.update({"network.init_actor": str(path), "network.hidden": load_policy(path)[1]["hidden"]})
            return "ppo", params
        params.update({"imitation.teacher": target, "imitation.decisions": settings.imitation})
        return "ppo_bc", params
    return "ppo", params


def policy_file_of(spec: str, game_name: str) -> Path | None:
    """The policy file an agent spec plays (``ppo:``/``dmc:checkpoint=PATH``, ``trained``), else None."""
    from domino_agents.registry import parse_spec
    from domino_agents.trained import shipped_path

    name, params = parse_spec(spec)
    if name == "trained":
        return shipped_path(game_name).resolve()
    if name in ("ppo", "dmc") and "checkpoint" in params:
        return Path(str(params["checkpoint"])).resolve()
    return None


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _save(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    tmp.replace(path)


def per_deal_returns(game, focal: str, target: str, deals: int, seed: int) -> np.ndarray:
    """`focal`'s return on each duplicate deal against copies of `target`, averaged over its seats."""
    from domino_training.evaluate import run_matchup

    return run_matchup(game, focal, target, deals, seed, 0)[0].reward


def train(target: str, game_name: str, config: dict, settings: BRSettings, out: Path,
          progress: bool = False, log=print) -> dict:
    """Train and measure the best responses of every seed (resumable; module doc); returns `result`."""
    from domino_training.learners import LearnerRun, train_learner
    from domino_training.opponents import batch_opponent

    settings.check()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    game = make_game(game_name, **config)
    batch_opponent(target, game)  # a spec that cannot be a target fails here, before any training
    learner, params = learner_and_params(target, game_name, config, settings)
    path = out / EDGES_FILE
    edges = _load(path)
    this_run = {"target": target, "game": game_name, "config": config, "settings": asdict(settings),
                "learner": learner, "params": params}
    if edges and edges.get("run") != this_run:
        raise ConfigError(f"{out} holds another best-response run ({edges.get('run')}); use another --out")
    edges.setdefault("run", this_run)
    edges.setdefault("points", {})
    if "self_play" not in edges:
        edges["self_play"] = {str(d): per_deal_returns(game, target, target, d, settings.eval_seed).tolist()
                              for d in sorted({settings.deals, settings.curve_deals})}
        _save(path, edges)
    for s in range(settings.seeds):
        run = LearnerRun(game=game_name, config=dict(config), seed=s, budget=settings.steps, marks=marks_of(settings),
                         run_dir=out / f"seed{s}", params=params)
        points = train_learner(learner, run, progress=progress)
        for point in points:
            key = f"{s}/{point.mark}"
            if key in edges["points"]:
                continue
            deals = settings.deals if point.mark == settings.steps else settings.curve_deals
            mine = per_deal_returns(game, point.spec, target, deals, settings.eval_seed)
            edges["points"][key] = {"seed": s, "mark": point.mark, "env_steps": point.env_steps,
                                    "seconds": point.seconds, "spec": point.spec, "deals": deals,
                                    "returns": mine.tolist()}
            _save(path, edges)
            e = Stat.of(mine - np.asarray(edges["self_play"][str(deals)]))
            log(f"  {game_name} vs {target}: seed {s} at {point.mark:,} steps: edge {e.mean:+.4f} "
                f"(95% CI {e.lo:+.4f}, {e.hi:+.4f})", flush=True)
    return result(edges)


def bootstrap_interval(matrix: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the grand mean of a [seeds, deals] matrix, resampling seeds and
    deals (columns are the same deals in every row, so they are resampled together)."""
    rng = np.random.default_rng(seed)
    s, d = matrix.shape
    rows = rng.integers(s, size=(BOOTSTRAP, s))
    cols = rng.integers(d, size=(BOOTSTRAP, d))
    means = np.array([matrix[np.ix_(r, c)].mean() for r, c in zip(rows, cols)])
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def result(edges: dict) -> dict:
    """The edges of a run folder's `edges.json`, summed up: per seed and point (mean, 95% interval
    over deals), the final points' mean over seeds with the seeds-and-deals bootstrap interval,
    and the curve (mean over seeds at each mark)."""
    run = edges["run"]
    settings = run["settings"]
    base = {int(k): np.asarray(v) for k, v in edges["self_play"].items()}
    per_point, final_edges = [], []
    for p in sorted(edges["points"].values(), key=lambda p: (p["seed"], p["mark"])):
        e = np.asarray(p["returns"]) - base[p["deals"]]
        stat = Stat.of(e)
        per_point.append({k: p[k] for k in ("seed", "mark", "env_steps", "seconds", "spec", "deals")}
                         | {"edge": stat.mean, "lo": stat.lo, "hi": stat.hi, "return": float(np.mean(p["returns"]))})
        if p["mark"] == settings["steps"]:
            final_edges.append(e)
    final = [p for p in per_point if p["mark"] == settings["steps"]]
    out = {"target": run["target"], "game": run["game"], "config": run["config"], "learner": run["learner"],
           "settings": settings, "score_scale": run["params"]["ppo.score_scale"],
           "self_play_return": float(base[settings["deals"]].mean()), "points": per_point,
           "curve": [{"mark": m, "edge": float(np.mean([p["edge"] for p in per_point if p["mark"] == m]))}
                     for m in sorted({p["mark"] for p in per_point})]}
    if final:
        matrix = np.stack(final_edges)
        lo, hi = bootstrap_interval(matrix) if len(final) > 1 else (final[0]["lo"], final[0]["hi"])
        best = max(final, key=lambda p: p["edge"])
        out["final"] = {"seeds": len(final), "edge": float(matrix.mean()), "lo": lo, "hi": hi,
                        "best_seed": best["seed"], "best_edge": best["edge"], "best_lo": best["lo"],
                        "best_hi": best["hi"], "best_spec": best["spec"],
                        "minutes": float(np.mean([p["seconds"] for p in final]) / 60)}
    return out


def describe(res: dict) -> str:
    """The result as lines of text, saying what the number is: a lower bound."""
    f = res.get("final")
    lines = [f"learned best response to {res['target']!r} on {res['game']} {res['config'] or ''}".rstrip(),
             f"  learner {res['learner']}, {res['settings']['steps']:,} env steps per seed, reward scale "
             f"{res['score_scale']}, evaluated on {res['settings']['deals']} duplicate deals (seed "
             f"{res['settings']['eval_seed']})",
             f"  the target's own return in those seats (self-play): {res['self_play_return']:+.4f}"]
    for p in res["points"]:
        if p["mark"] == res["settings"]["steps"]:
            lines.append(f"  seed {p['seed']}: edge {p['edge']:+.4f} [{p['lo']:+.4f}, {p['hi']:+.4f}] "
                         f"({p['seconds'] / 60:.1f} min)")
    if f:
        lines.append(f"  edge over the target's self-play, mean of {f['seeds']} seeds: {f['edge']:+.4f} "
                     f"[{f['lo']:+.4f}, {f['hi']:+.4f}] (95%, seeds and deals resampled): a lower bound on "
                     f"what a best response gains against {res['target']!r}")
    return "\n".join(lines)


def main(args) -> int:
    """`domino exploit SPEC --game G` (the parser is domino_training.exploit's)."""
    from domino_envs.registry import config_from_pairs

    from .configs import parse_override

    params = dict(parse_override(t) for t in args.param)
    settings = BRSettings(steps=args.steps, seeds=args.seeds, marks=args.marks, deals=args.deals,
                          curve_deals=min(args.deals, args.curve_deals), eval_seed=args.eval_seed,
                          warm_start=args.warm_start, imitation=args.imitation, params=params)
    config = config_from_pairs(args.set)
    out = Path(args.out) if args.out else Path("runs") / "exploit" / args.game / _slug(args.target)
    res = train(args.target, args.game, config, settings, out, progress=not args.no_progress)
    print(describe(res))
    (out / "result.json").write_text(json.dumps(res, indent=1) + "\n")
    return 0


def _slug(spec: str) -> str:
    """A folder name for an agent spec."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in spec)[:80]
