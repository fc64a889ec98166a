"""Record the heuristics' scores on seeded positions of every env and config family.

    .venv/bin/python -m tests.agents.record_heuristics        # writes tests/data/heuristic_positions.npz

Why: the heuristics were first written as per-observation Python scoring (at commit 7b59658) and then
ported to compiled batch kernels (issue 24). This file pins the port: it plays seeded games of every
family below and stores, for each decision with at least two legal actions, the observation, the
mask, the heuristic's score of every legal action and its set of best actions (the scores within
`np.isclose` of the top one, the agent's tie set). `tests/agents/test_heuristic_kernels.py` asserts
that the kernels give the same scores and choose within the same sets on every recorded position.

The recorded heuristics are always the Python ones of commit 7b59658: the committed file was
written at that commit, and at any later one this module loads those modules from git
(`domino_training.scripts.train_speed.legacy_heuristic_class`, as the benchmark does), so after an intended
change of the observations it can be re-run in a git checkout and still records the Python
originals (they read the observation through `decode`, by piece name).

The games are played on the engine (`make_game`: reset / observe / legal_mask / step); in each
game a seat plays one of the heuristic's best actions with probability 0.7 and a uniformly random
legal action otherwise (one seeded Generator per family), so the positions are ones the heuristic
reaches and ones it would not.

Families: the golden playthroughs' config families (tests/golden, all players counts, match,
teams, spinners, max_pip=9, Sum 7's zero rules and deals, Magic-7's game counts), a few more
configs, and one family per heuristic class with every weight set away from its default (so the
kernels' weight arrays are pinned term by term).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "heuristic_positions.npz"
POSITIONS = 1500  # per family
HEURISTIC_SHARE = 0.7

# family -> (env, config, heuristic keyword arguments); the golden families are added in `families`
EXTRA: dict[str, tuple[str, dict, dict]] = {
    "draw_pip9_2p": ("draw_v0", {"max_pip": 9}, {}),
    "block_pip9_4p": ("block_v0", {"max_pip": 9, "num_players": 4}, {}),
    "block_3p": ("block_v0", {"num_players": 3}, {}),
    "racehorse_4p": ("racehorse_v0", {"num_players": 4}, {}),
    "racehorse_2p_all_doubles_per_five": ("racehorse_v0", {"spinner": "all_doubles", "award": "per_five"}, {}),
    "sum7_3p": ("sum7_v0", {"num_players": 3}, {}),
    "sum7_wild_seven_up_3p": ("sum7_v0", {"zero_rule": "wild", "deal": "seven_up", "num_players": 3}, {}),
    "magic7_3p": ("magic7_v0", {"num_players": 3}, {}),
    "magic7_5p": ("magic7_v0", {"num_players": 5}, {}),
    # every weight away from its default
    "draw_weights": ("draw_v0", {"num_players": 3},
                     dict(pips=0.7, double=3.1, variety=0.4, follow=2.2, block=1.3, scarce=6.5, go_out=50.0,
                          endgame=0.25)),
    "pete_weights": ("seven_toed_pete_v0", {"double_extra_turn": True},
                     dict(go_out=90.0, score=11.0, points=1.5, special=3.0, setup=0.8, open=2.5, pips=0.9,
                          double=0.6, washed=7.0)),
    "racehorse_weights": ("racehorse_v0", {"num_players": 3, "spinner": "first_double"},
                          dict(go_out=25.0, score=4.0, points=2.5, special=5.0, setup=0.6, open=1.2, pips=1.1,
                               double=2.0, washed=15.0)),
    "sum7_weights": ("sum7_v0", {"num_players": 3},
                     dict(end=1.7, close=2.4, pips=0.6, follow=1.1, open=3.3, wait=-2.5, force=4.5, go_out=300.0)),
    "magic7_weights": ("magic7_v0", {},
                       dict(pips=0.8, unlock=1.7, next=6.0, gift=0.9, self_force=9.0, late=2.5, late_at=5, block=1.4,
                            stuck=0.3, kill_cost=2.2)),
}


def families() -> dict[str, tuple[str, dict, dict]]:
    """Every recorded family: the golden config families (default weights), then EXTRA."""
    from tests.golden import LISTED

    out = {name: (env, dict(config), {}) for name, (env, config, _) in LISTED.items()}
    out.update(EXTRA)
    return out


def record_family(env: str, config: dict, params: dict, positions: int, seed: int) -> dict[str, np.ndarray]:
    """Play seeded games of `env` until `positions` decisions with 2+ legal actions are recorded."""
    from domino_envs.core import H_TURN
    from domino_envs.registry import make_game
    from domino_training.scripts.train_speed import legacy_heuristic_class

    game = make_game(env, **config)
    agent = legacy_heuristic_class(game)(game, seed=0, **params)  # the Python heuristic of 7b59658
    rng = np.random.default_rng(seed)
    state = game.new_state()
    mask_buf = np.zeros(game.num_actions, dtype=np.int8)
    obs, masks, scores, best = [], [], [], []
    episode = 0
    while len(obs) < positions:
        game.reset(state, int(rng.integers(2**62)))
        episode += 1
        while not game.is_over(state) and len(obs) < positions:
            seat = int(state[H_TURN])
            o = game.observe(state, seat).copy()
            m = game.legal_mask(state, mask_buf).copy()
            legal, s = agent.scores(o, m)
            top = legal[np.isclose(s, s.max())]
            if legal.size > 1:
                obs.append(o)
                masks.append(m != 0)
                scores.append(np.asarray(s, dtype=np.float64))
                best.append(np.isin(legal, top))
            pick = top if rng.random() < HEURISTIC_SHARE else legal
            game.step(state, int(pick[rng.integers(pick.size)]))
    obs_all = np.stack(obs).astype(np.float32)
    for small in (obs_all.astype(np.uint8), obs_all.astype(np.int16)):  # counts and flags: exact in few bytes
        if np.array_equal(small, obs_all):
            obs_all = small
            break
    return {"obs": obs_all, "mask": np.packbits(np.stack(masks), axis=1),
            "scores": np.concatenate(scores), "best": np.packbits(np.concatenate(best)),  # flat, legal order
            "episodes": np.int64(episode)}


def main(argv: list[str] | None = None) -> int:
    only = set(argv if argv is not None else sys.argv[1:])
    arrays: dict[str, np.ndarray] = {}
    meta = {}
    for i, (name, (env, config, params)) in enumerate(families().items()):
        if only and name not in only:
            continue
        rec = record_family(env, config, params, POSITIONS, seed=1000 + i)
        for key, value in rec.items():
            arrays[f"{name}/{key}"] = value
        meta[name] = {"env": env, "config": config, "params": params, "positions": int(len(rec["obs"])),
                      "legal": int(len(rec["scores"]))}
        print(f"{name:36s} {env:20s} {len(rec['obs'])} positions, {len(rec['scores'])} legal actions, "
              f"{int(rec['episodes'])} episodes", flush=True)
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    DATA.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(DATA, **arrays)
    print(f"wrote {DATA} ({DATA.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
