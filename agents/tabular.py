"""A tabular policy as an agent: ``tabular:path=FILE`` plays a policy file keyed by decision history.

The files are what ``domino_training.exploit`` writes from OpenSpiel's CFR+ on a small config
(docs/exploitability.md): a JSON object (gzip-compressed when the name ends in ``.gz``)

    {"format": "domino-envs-tabular/1", "game": "draw_v0", "config": {...}, "algo": "cfr+",
     "iterations": 1000, "policy": {KEY: {ACTION: PROB, ...}, ...}}

KEY is the seat's decision key (``domino_envs.openspiel.decision_key``): at each of its decisions
the change in its observation since its previous decision, and the action it took; the agent
builds it from the observations it is shown, so it plays the table in any front (PettingZoo env,
evaluation harness) as in the OpenSpiel game. A key missing from the table (a config the file was
not made for cannot get here: the file's game and config are checked) is an error naming it.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from domino_envs.errors import CheckpointError
from domino_envs.openspiel import decision_key

FORMAT = "domino-envs-tabular/1"


def read_table(path: str | Path) -> dict:
    """The policy file's JSON object; CheckpointError if it is missing, unreadable or of another format."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"tabular policy file {str(path)!r} does not exist")
    try:
        raw = path.read_bytes()
        data = json.loads(gzip.decompress(raw) if path.name.endswith(".gz") else raw)
    except (OSError, ValueError, EOFError) as err:
        raise CheckpointError(f"{str(path)!r} is not a readable tabular policy file ({err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("policy"), dict):
        raise CheckpointError(f"{str(path)!r}: not a {FORMAT} file (a JSON object with a 'policy' table)")
    return data


def write_table(path: str | Path, data: dict) -> Path:
    """Write a policy file (gzip when the name ends in .gz; sorted keys: the same table, the same bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"format": FORMAT, **data}, sort_keys=True, separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(text, mtime=0) if path.name.endswith(".gz") else text)
    return path


class TabularAgent:
    """Plays a tabular policy file (module doc); samples with its seeded Generator."""

    name = "tabular"

    def __init__(self, game, seed: int | None = None, path: str = ""):
        if not path:
            raise CheckpointError("tabular agent needs path=FILE (a policy file written by domino_training.exploit)")
        data = read_table(path)
        if data.get("game") != game.name or data.get("config") != game.config_dict():
            raise CheckpointError(f"tabular policy {path!r} was made for {data.get('game')!r} with config "
                                  f"{data.get('config')}, not {game.name!r} with {game.config_dict()}")
        self.game = game
        self.table = data["policy"]
        self.meta = {k: v for k, v in data.items() if k != "policy"}
        self._rng = np.random.default_rng(seed)
        self._key, self._last = "", None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._key, self._last = "", None

    def probs_at(self, key: str, action_mask: np.ndarray) -> np.ndarray:
        """The table's probabilities at decision key `key` (CheckpointError if it has none)."""
        entry = self.table.get(key)
        if entry is None:
            raise CheckpointError(f"tabular policy: no entry for decision key {key!r} (the game's history so far)")
        p = np.zeros(np.asarray(action_mask).size)
        for a, q in entry.items():
            p[int(a)] = q
        p[np.asarray(action_mask) == 0] = 0.0
        if p.sum() <= 0:
            raise CheckpointError(f"tabular policy: the entry for {key!r} gives no legal action")
        return p / p.sum()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = np.asarray(observation, dtype=np.float32)
        key = decision_key(self._key, self._last, obs)
        p = self.probs_at(key, action_mask)
        a = int(self._rng.choice(p.size, p=p))
        self._key, self._last = f"{key}>a{a}", obs.copy()
        return a
