"""The benchmark's partnership branch (training/benchmark/aggregate.py `crossplay`, report.py's partner table)
on Racehorse with teams: each learner's seed-0 policy is also played beside partners it never trained with
(itself, the heuristic, greedy, its other seed's policy) against two heuristics, with exactly the numbers
`partner_table` gives for those partners, and the report prints one row a partner. Tiny policies (random
weights) stand in for trained ones; the ci profile's cross-play deals."""
from __future__ import annotations

import numpy as np

from domino_agents.trained import policy_meta, save_policy
from domino_envs import make_game
from domino_training.benchmark import aggregate, runner
from domino_training.benchmark import report as page
from domino_training.benchmark import suite as bench_suite
from domino_training.benchmark.ratings import partner_table


def test_a_partnership_game_rates_each_seed_zero_policy_beside_unseen_partners_and_reports_them(tmp_path):
    s = bench_suite.load_suite("ci", only=["racehorse_teams"])
    s.runs = {"ppo": (2, ["racehorse_teams"])}
    game_spec = s.games["racehorse_teams"]
    game = make_game(game_spec.env, **game_spec.config)
    assert game.config.teams and game.num_players == 4
    rng = np.random.default_rng(0)
    scores = runner.ScoreFile(tmp_path / "scores.jsonl")
    specs = {}
    for seed in (0, 1):
        layers = [(rng.normal(size=(8, game.obs_size)), np.zeros(8)),
                  (rng.normal(size=(game.num_actions, 8)), np.zeros(game.num_actions))]
        path = save_policy(tmp_path / f"seed{seed}.npz", layers, policy_meta(game, [8], "ppo", 10))
        specs[seed] = f"mlp:checkpoint={path}"
        scores.add({"game": "racehorse_teams", "learner": "ppo", "seed": seed, "env_steps": 10, "opponent": "greedy",
                    "final": True, "spec": specs[seed], "win": 0.5, "fair": 0.5})
    cross = aggregate.crossplay(s, scores, bootstrap=10, echo=lambda *a: None)
    entry = cross["racehorse_teams"]
    assert entry["ratings"]["model"].startswith("bradley-terry")
    assert list(entry["partners"]) == ["ppo/0"]  # the seed-0 policy only
    direct = partner_table(game_spec.env, specs[0], [specs[0], "heuristic", "greedy", specs[1]], "heuristic",
                           s.crossplay_deals, s.deal_seed, dict(game_spec.config))
    assert entry["partners"]["ppo/0"] == {"ppo/0": direct[specs[0]], "heuristic": direct["heuristic"],
                                          "greedy": direct["greedy"], "ppo/1": direct[specs[1]]}
    agg = {"common_games": [], "opponents": {}, "improvement": {}}
    text = page.markdown(s, agg, {}, cross, [], tmp_path / "benchmark.md", "test machine", 1.0)
    lines = text.splitlines()
    head = lines.index("| policy | partner | win share | 95% CI |")
    rows = lines[head + 2:head + 6]
    assert rows == [f"| ppo/0 | {mate} | {st['mean']:.3f} | [{st['lo']:.3f}, {st['hi']:.3f}] |"
                    for mate, st in entry["partners"]["ppo/0"].items()]
    assert lines[head + 6:head + 7] in ([], [""])
