"""Golden playthroughs: committed transcripts of seeded games that `tests/games/test_golden.py` replays.

Each env and main config family has one transcript, ``tests/golden/<family>.txt``, of a few games
played through the PettingZoo AEC env (``domino_envs.make(env, render_mode="ansi", **config)``,
``reset(seed=seed)``) with actions drawn uniformly among the legal ids by
``numpy.random.default_rng(seed)``. For every decision it records the step number, the acting
agent and the legal ids, then one ``obs`` line per seat with a digest of each named piece of that
seat's observation (``game.decode``: hand, played_by, ends, ...; sha1 of the piece's float32 bytes,
first 8 hex digits), so a diff names the piece that changed; then the action and its
``describe_action``, every seat's reward, the terminations and truncations, and the ansi render
after the step. The game's end records every seat's pieces once more.

The test replays the *recorded* actions (it checks each one is legal where it was taken) and diffs
the new transcript against the file line by line. After an intended change of rules, masks,
observations or rendering, regenerate and review the diff:

    .venv/bin/python -m tests.golden.regenerate              # every family
    .venv/bin/python -m tests.golden.regenerate draw_v0      # one env (or family names)
    git diff --stat tests/golden/

Regeneration draws the actions afresh from the seed, so a change of masks changes the games from
that point on (that is the point: the new transcripts show the new decisions).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent
REGENERATE_CMD = ".venv/bin/python -m tests.golden.regenerate"

# family -> (env name, config, seeds). One file per family; keep each game short (the total of
# all transcripts must stay well under 2 MB). Every registered env has at least one family: one
# listed here, else `<env>` (its default config, seeds 0 and 1), added below from registry.GAMES.
LISTED: dict[str, tuple[str, dict, tuple[int, ...]]] = {
    "draw_2p": ("draw_v0", {}, (0, 1, 2)),
    "draw_3p": ("draw_v0", {"num_players": 3}, (0, 1)),
    "draw_4p": ("draw_v0", {"num_players": 4}, (0, 1)),
    "draw_pip9": ("draw_v0", {"max_pip": 9, "num_players": 3}, (0, 1)),
    "draw_match": ("draw_v0", {"match": True, "target": 60}, (0, 1)),
    "block_2p": ("block_v0", {}, (0, 1, 2)),
    "block_4p": ("block_v0", {"num_players": 4}, (0, 1, 2)),
    "block_match": ("block_v0", {"match": True, "target": 40, "num_players": 3}, (0,)),
    "pete": ("seven_toed_pete_v0", {}, (0, 1)),
    "pete_double_extra_turn": ("seven_toed_pete_v0", {"double_extra_turn": True, "first_leader": 2}, (0, 1)),
    "pete_match": ("seven_toed_pete_v0", {"match": True, "chips_to_win": 2}, (0,)),
    "racehorse_2p": ("racehorse_v0", {}, (0, 1)),
    "racehorse_3p_first_double": ("racehorse_v0", {"num_players": 3, "spinner": "first_double"}, (0, 1)),
    "racehorse_4p_teams_all_doubles": (
        "racehorse_v0", {"num_players": 4, "teams": True, "spinner": "all_doubles", "award": "per_five"}, (0, 1)),
    "racehorse_match": ("racehorse_v0", {"match": True, "num_players": 3, "target": 40}, (0,)),
    "sum7_2p": ("sum7_v0", {}, (0, 1)),
    "sum7_4p": ("sum7_v0", {"num_players": 4}, (0, 1)),
    "sum7_strict": ("sum7_v0", {"zero_rule": "strict", "num_players": 3}, (0, 1)),
    "sum7_wild_4p": ("sum7_v0", {"zero_rule": "wild", "num_players": 4}, (0, 1)),
    "sum7_seven_up_match": ("sum7_v0", {"deal": "seven_up", "num_players": 3, "match": True, "target": 30}, (0,)),
    "magic7_4p": ("magic7_v0", {}, (0, 1)),
    "magic7_2p": ("magic7_v0", {"num_players": 2}, (0,)),
    "magic7_6p": ("magic7_v0", {"num_players": 6}, (0, 1)),
    "magic7_match": ("magic7_v0", {"num_players": 3, "num_games": 2}, (0,)),
}


def _families() -> dict[str, tuple[str, dict, tuple[int, ...]]]:
    """LISTED, plus a default-config family for each registered env that LISTED does not cover."""
    from domino_envs.registry import GAMES

    covered = {env for env, _, _ in LISTED.values()}
    return {**LISTED, **{env: (env, {}, (0, 1)) for env in GAMES if env not in covered}}


FAMILIES = _families()

_GAME_RE = re.compile(r"^== game seed=(-?\d+)$")
_ACTION_RE = re.compile(r"^  action (-?\d+) ")


def path_of(family: str) -> Path:
    return GOLDEN_DIR / f"{family}.txt"


def _digest(values: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(values, dtype=np.float32).tobytes()).hexdigest()[:8]


def _pieces(env, agent: str) -> str:
    """`agent`'s observation as 'piece=digest' pairs, in the order of the game's obs_pieces."""
    decoded = env.game.decode(env.observe(agent)["observation"])
    return " ".join(f"{name}={_digest(values)}" for name, values in decoded.items())


def _obs_lines(env, agents: list[str], indent: str = "  ") -> list[str]:
    return [f"{indent}obs {a} {_pieces(env, a)}" for a in agents]


def differing_pieces(recorded: str, replayed: str) -> list[str]:
    """Names of the observation pieces whose digests differ between two ``obs`` lines (else [])."""
    def pairs(line):
        return dict(item.split("=", 1) for item in line.split()[2:] if "=" in item)

    if not (recorded.lstrip().startswith("obs ") and replayed.lstrip().startswith("obs ")):
        return []
    a, b = pairs(recorded), pairs(replayed)
    return [name for name in dict.fromkeys([*a, *b]) if a.get(name) != b.get(name)]


def _flags(d: dict, agents: list[str]) -> str:
    return "".join("T" if d[a] else "-" for a in agents)


def _outcome(env, agents: list[str]) -> list[str]:
    rewards = " ".join(repr(float(env.rewards[a])) for a in agents)
    lines = [f"  rewards {rewards} | term {_flags(env.terminations, agents)} "
             f"| trunc {_flags(env.truncations, agents)}"]
    lines += ["  | " + row for row in env.render().splitlines()]
    return lines


def play_game(env, seed: int, actions: list[int] | None = None, max_steps: int = 10_000) -> list[str]:
    """Transcript lines of one game on `env` from reset(seed=seed).

    With `actions`, those are played (a recorded action that is not legal, or running out of
    recorded actions, ends the transcript with a line saying so); without, actions are drawn
    uniformly among the legal ids by default_rng(seed).
    """
    agents = list(env.possible_agents)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [f"== game seed={seed}", "reset"] + _outcome(env, agents)
    step = 0
    while not all(env.terminations[a] or env.truncations[a] for a in agents):
        if step >= max_steps:
            lines.append(f"!! still running after {max_steps} steps")
            break
        step += 1
        agent = env.agent_selection
        legal = [int(i) for i in np.flatnonzero(env.observe(agent)["action_mask"])]
        lines.append(f"step {step} {agent} mask={','.join(map(str, legal))}")
        lines += _obs_lines(env, agents)
        if actions is None:
            action = legal[int(rng.integers(len(legal)))] if legal else None
        elif step - 1 < len(actions):
            action = actions[step - 1]
        else:
            lines.append("!! the game goes on past the recorded actions")
            break
        if action is None or action not in legal:
            lines.append(f"!! action {action} is not among the legal ids {legal}")
            break
        lines.append(f"  action {action} {env.describe_action(action)}")
        env.step(action)
        lines += _outcome(env, agents)
    if actions is not None and step < len(actions):
        lines.append(f"!! the game ended after {step} of {len(actions)} recorded actions")
    lines.append("end")
    lines += _obs_lines(env, agents)
    return lines


def header(family: str) -> list[str]:
    name, config, seeds = FAMILIES[family]
    return [
        f"# golden playthrough {family}: env {name}, render_mode ansi",
        f"# config {json.dumps(config, sort_keys=True)}",
        f"# seeds {list(seeds)}: reset(seed=s); actions uniform among legal ids by numpy default_rng(s)",
        "# obs lines: each seat's observation piece by piece (game.decode), sha1 of the float32 bytes, first 8 hex digits",
        f"# regenerate: {REGENERATE_CMD} {family}   (see tests/golden/__init__.py)",
    ]


def transcript(family: str, recorded: dict[int, list[int]] | None = None) -> list[str]:
    """Every line of `family`'s transcript; with `recorded`, the recorded actions per seed are
    replayed instead of drawn."""
    import domino_envs

    name, config, seeds = FAMILIES[family]
    env = domino_envs.make(name, render_mode="ansi", **config)
    lines = header(family)
    for seed in seeds:
        actions = None if recorded is None else recorded.get(seed, [])
        lines += play_game(env, seed, actions)
    return lines


def recorded_actions(lines: list[str]) -> dict[int, list[int]]:
    """Seed -> the actions recorded for that game in a transcript's lines."""
    out: dict[int, list[int]] = {}
    current: list[int] | None = None
    for line in lines:
        m = _GAME_RE.match(line)
        if m:
            current = out.setdefault(int(m.group(1)), [])
            continue
        m = _ACTION_RE.match(line)
        if m and current is not None:
            current.append(int(m.group(1)))
    return out


def families_of(selectors: list[str]) -> list[str]:
    """Family names chosen by env names or family names (every family when empty)."""
    if not selectors:
        return list(FAMILIES)
    chosen = []
    for sel in selectors:
        hits = [f for f, (name, _, _) in FAMILIES.items() if sel in (f, name)]
        if not hits:
            envs = sorted({name for name, _, _ in FAMILIES.values()})
            raise SystemExit(f"unknown env or family {sel!r}; envs: {envs}; families: {list(FAMILIES)}")
        chosen += [f for f in hits if f not in chosen]
    return chosen
