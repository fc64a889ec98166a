"""Trained policies as agents: one `.npz` file holds the actor's weights and a JSON description.

    make_agent("mlp:checkpoint=runs/draw/policy.npz", game)   # any exported policy (ppo: is its old name)
    make_agent("trained", game)                               # the policy shipped for game.name

Why numpy and not torch here: an agent only needs the actor's forward pass (a few small matrix
products), so evaluation, play and the shipped agents work without the optional torch extra, and
a numpy forward of one observation is faster than torch's per-call overhead. Training keeps its
own torch checkpoint for resuming (optimizer and all); it exports this file beside it.

File format (``numpy.savez``, loaded with ``allow_pickle=False``): ``w0, b0, w1, b1, ...`` the
actor MLP's layers (ReLU between them, or tanh where the meta says ``"activation": "tanh"``, as
RLlib's exported policies do; the last gives one logit per action), and ``meta`` a JSON string:
format, game, game config, obs_size, num_actions, hidden, algo, env_steps, package version, training
config. Loading checks the file against the game and names what differs.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from domino_envs.errors import CheckpointError
from domino_envs.version import __version__

FORMAT = "domino-envs-policy/1"
ACTIVATIONS = ("relu", "tanh")  # between hidden layers; a file without "activation" is relu
MAX_LAYER_SIZE = 1 << 20  # units a layer may have in a policy file (a bound on what a file makes us allocate)
SHIPPED_DIR = Path(__file__).resolve().parent / "checkpoints"


def policy_meta(game, hidden, algo: str, env_steps: int, train: dict | None = None) -> dict:
    return {"format": FORMAT, "game": game.name, "config": game.config_dict(),
            "obs_size": int(game.obs_size), "num_actions": int(game.num_actions),
            "hidden": [int(h) for h in hidden], "algo": algo, "env_steps": int(env_steps),
            "package_version": __version__, "train": train or {}}


def save_policy(path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]], meta: dict) -> Path:
    """Write actor layers [(W [out, in], b [out]), ...] and meta to `path` (.npz)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"] = np.asarray(w, dtype=np.float32)
        arrays[f"b{i}"] = np.asarray(b, dtype=np.float32)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)  # atomic: an interrupted run never leaves half a file
    return path


def load_policy(path: str | Path) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict]:
    """(layers, meta) of a policy file; CheckpointError if it is missing, corrupted or malformed."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"policy file {str(path)!r} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            n = sum(1 for k in data.files if k.startswith("w"))
            layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
    except CheckpointError:
        raise
    except Exception as err:  # zip, key, JSON errors: all mean "not a policy file of ours"
        raise CheckpointError(f"{str(path)!r} is not a readable policy file ({type(err).__name__}: {err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r}: unknown policy format {meta.get('format') if isinstance(meta, dict) else meta!r}; "
                              f"expected {FORMAT!r}")
    if not layers:
        raise CheckpointError(f"{str(path)!r} holds no layers")
    hidden = meta.get("hidden")
    sizes = [meta.get("obs_size"), *(hidden if isinstance(hidden, list) else [None]), meta.get("num_actions")]
    if not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= MAX_LAYER_SIZE for x in sizes):
        raise CheckpointError(f"{str(path)!r}: its meta's obs_size, hidden and num_actions must be ints "
                              f"1..{MAX_LAYER_SIZE} (a list for hidden); got {sizes}")
    if not all(w.dtype.kind == "f" and b.dtype.kind == "f" for w, b in layers):
        raise CheckpointError(f"{str(path)!r}: weights must be floating point; got "
                              f"{sorted({a.dtype.name for pair in layers for a in pair})}")
    layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers]
    if len(layers) != len(sizes) - 1 or any(
            w.shape != (sizes[i + 1], sizes[i]) or b.shape != (sizes[i + 1],) for i, (w, b) in enumerate(layers)):
        raise CheckpointError(f"{str(path)!r}: layer shapes {[w.shape for w, _ in layers]} do not match the "
                              f"sizes its meta states {sizes}")
    if not all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in layers):
        raise CheckpointError(f"{str(path)!r}: weights hold NaN or infinite values")
    if meta.setdefault("activation", "relu") not in ACTIVATIONS:
        raise CheckpointError(f"{str(path)!r}: activation {meta['activation']!r} is not one of {list(ACTIVATIONS)}")
    return layers, meta


def check_meta(meta: dict, game, where: str) -> None:
    """CheckpointError naming every way `meta` does not fit `game` (name, config, sizes)."""
    problems = []
    if meta.get("game") != game.name:
        problems.append(f"it was trained on {meta.get('game')!r}, not {game.name!r}")
    mine = game.config_dict()
    theirs = meta.get("config", {})
    diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if diff:
        problems.append("game config differs: " + ", ".join(
            f"{k}={theirs.get(k)!r} in the file vs {mine.get(k)!r} here" for k in diff))
    if meta.get("obs_size") != game.obs_size:
        problems.append(f"observation size {meta.get('obs_size')} vs {game.obs_size}")
    if meta.get("num_actions") != game.num_actions:
        problems.append(f"{meta.get('num_actions')} actions vs {game.num_actions}")
    if problems:
        raise CheckpointError(f"{where} does not fit {game.name}: " + "; ".join(problems))


def mlp_logits(layers, x: np.ndarray, activation: str = "relu") -> np.ndarray:
    """Actor forward pass: an MLP (ReLU or tanh between layers), logits of the last layer (x: [obs] or [batch, obs])."""
    for w, b in layers[:-1]:
        x = x @ w.T + b
        x = np.tanh(x) if activation == "tanh" else np.maximum(x, 0.0)
    w, b = layers[-1]
    return x @ w.T + b


class SampledAgent:
    """What the trained agents share: the game, whether to sample or take the best action, and a
    seeded Generator for sampling (the Agent protocol's reset reseeds it)."""

    def __init__(self, game, seed: int | None, sample: bool):
        self.game = game
        self.sample = bool(sample)
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def legal_of(self, action_mask) -> np.ndarray:
        """The mask as bools; ValueError unless it has one entry per action and a legal one."""
        legal = np.asarray(action_mask) != 0
        if legal.shape != (self.game.num_actions,) or not legal.any():
            raise ValueError(f"{self.name}.act: the action mask must have {self.game.num_actions} entries with a "
                             f"legal one, got shape {legal.shape} with {int(legal.sum())} legal")
        return legal

    def pick(self, logits: np.ndarray, legal: np.ndarray) -> int:
        """The highest legal logit, or (``sample``) a draw from the masked softmax with the agent's Generator."""
        logits = np.asarray(logits, dtype=np.float64).copy()
        logits[~legal] = -np.inf
        if not self.sample:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(self._rng.choice(p.size, p=p / p.sum()))


def read_description(path: Path, fmt: str, where: str) -> dict:
    """The JSON description `path` of a saved model (format `fmt`); CheckpointError if it is
    unreadable or of another format. `where` names the model in messages."""
    try:
        meta = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise CheckpointError(f"{str(path)!r} (the description of {where}) is unreadable ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise CheckpointError(f"{str(path)!r}: not a {fmt} description")
    return meta


class PolicyAgent(SampledAgent):
    """A trained actor playing `game`: the highest-scoring legal action, or a sample (``sample=True``)."""

    name = "mlp"

    def __init__(self, game, seed: int | None = None, checkpoint: str = "", sample: bool = False):
        if not checkpoint:
            raise CheckpointError("mlp agent needs checkpoint=PATH (a policy .npz written by training)")
        self.layers, self.meta = load_policy(checkpoint)
        check_meta(self.meta, game, f"policy {checkpoint!r}")
        super().__init__(game, seed, sample)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = self.legal_of(action_mask)
        return self.pick(self.logits(observation), legal)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        return mlp_logits(self.layers, np.asarray(observation, dtype=np.float32), self.meta["activation"])

    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """`act`'s probabilities: the masked softmax (``sample``) or 1 on the highest legal logit."""
        legal = self.legal_of(action_mask)
        logits = self.logits(observation).astype(np.float64)
        logits[~legal] = -np.inf
        p = np.zeros(logits.size)
        if not self.sample:
            p[int(np.argmax(logits))] = 1.0
            return p
        p = np.exp(logits - logits.max())
        return p / p.sum()


class QPolicyAgent(PolicyAgent):
    """A Q-network in the policy format (training/learners/dmc.py exports one): the legal action of highest Q.
    The file is the actor's format (an MLP with one output per action), so this is `PolicyAgent`'s
    argmax without sampling (a softmax over Q-values is not the policy DMC learned)."""

    name = "dmc"

    def __init__(self, game, seed: int | None = None, checkpoint: str = ""):
        if not checkpoint:
            raise CheckpointError("dmc agent needs checkpoint=PATH (a policy .npz written by the dmc learner)")
        super().__init__(game, seed=seed, checkpoint=checkpoint, sample=False)


def shipped_path(game_name: str) -> Path:
    return SHIPPED_DIR / f"{game_name}.npz"


def shipped_agent(game, seed: int | None = None, sample: bool = False) -> PolicyAgent:
    """The policy shipped for this env (agents/checkpoints/<env>.npz), trained on its default config."""
    path = shipped_path(game.name)
    if not path.is_file():
        have = sorted(p.stem for p in SHIPPED_DIR.glob("*.npz"))
        raise CheckpointError(f"no trained policy is shipped for {game.name!r}; shipped: {have}")
    agent = PolicyAgent(game, seed=seed, checkpoint=str(path), sample=sample)
    agent.name = "trained"
    return agent
