"""Cross-play ratings (training/benchmark/ratings.py, `domino rate`): the Bradley-Terry fit against an
independent maximum-likelihood fit, finishing ranks, and ratings of real agents that must come out
in the order the agents' strength is known to have (random < heuristic)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from domino_envs.errors import ConfigError
from domino_training.benchmark.ratings import bradley_terry, finishing_ranks, partner_table, play_table, rate
from domino_training.cli import main as cli_main


def _mle_with_prior(wins: np.ndarray, games: np.ndarray) -> np.ndarray:
    """The same model fitted by scipy's optimiser on the log-likelihood (plus the prior of half a
    win and half a loss against a strength-1 player), as an independent check of the Newton iteration."""
    k = len(wins)

    def nll(x):
        diff = x[:, None] - x[None, :]
        ll = (wins * -np.logaddexp(0.0, -diff)).sum()
        ll += (0.5 * -np.logaddexp(0.0, -x) + 0.5 * -np.logaddexp(0.0, x)).sum()
        return -ll

    x = minimize(nll, np.zeros(k), method="BFGS", options={"gtol": 1e-10}).x
    return x - x.mean()


def test_bradley_terry_matches_an_independent_likelihood_fit():
    rng = np.random.default_rng(3)
    true = np.array([0.0, 0.7, -0.4, 1.5, 0.2])
    k = len(true)
    games = np.zeros((k, k))
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            n = int(rng.integers(20, 200))
            p = 1 / (1 + math.exp(true[j] - true[i]))
            w = rng.binomial(n, p) + 0.5 * rng.integers(0, 3)  # ties give halves
            games[i, j] = games[j, i] = n
            wins[i, j], wins[j, i] = w, n - w
    ours = bradley_terry(wins, games)
    assert np.allclose(ours, _mle_with_prior(wins, games), atol=1e-5)
    assert np.argmax(ours) == 3 and np.argmin(ours) == 2


def test_bradley_terry_stays_finite_for_an_agent_that_never_lost():
    wins = np.array([[0, 10.0], [0, 0]])
    games = np.array([[0, 10.0], [10, 0]])
    r = bradley_terry(wins, games)
    assert np.isfinite(r).all() and r[0] > r[1]


def test_finishing_ranks_share_ties():
    assert finishing_ranks(np.array([3.0, -1.0, 3.0, -5.0])).tolist() == [0, 2, 0, 3]


def test_play_table_gives_a_zero_sum_hand_per_deal_and_rotation_and_repeats():
    """Its shape, zero-sum hands and seeded repeats only; who sits where on which deal is
    test_play_table_seats_every_agent_in_every_seat_on_the_same_deal's (mutation ratings_no_rotation)."""
    from domino_envs import make_game

    g = make_game("block_v0")
    out = play_table(g, ["random", "greedy"], deals=3, seed=5)
    assert out.shape == (3, 2, 2)
    assert np.allclose(out.sum(axis=2), 0.0)  # zero-sum hands
    assert np.array_equal(out, play_table(g, ["random", "greedy"], deals=3, seed=5))  # seeded agents


def test_two_sided_ratings_order_random_below_the_heuristic():
    """Real hands: the heuristic's whole interval above random's 0 (not a point estimate of one seeded run),
    and its rating is the Bradley-Terry fit of the matrix on the Elo scale (400 / ln 10 points a unit)."""
    r = rate("sum7_v0", ["random", "greedy", "heuristic"], deals=40, seed=1, bootstrap=50)
    by = dict(zip(r.names, r.rating))
    assert by["random"] == 0.0
    lo, hi = dict(zip(r.names, r.lo)), dict(zip(r.names, r.hi))
    assert lo["heuristic"] > 0 and lo["heuristic"] < by["heuristic"] < hi["heuristic"]
    i, j = r.names.index("heuristic"), r.names.index("random")
    assert r.matrix[i, j] > 0.5 and math.isclose(r.matrix[i, j] + r.matrix[j, i], 1.0)
    assert r.model.startswith("bradley-terry")
    games = np.full(r.matrix.shape, 40.0)  # each pair's deals, every rotation of a deal pooled into one share
    np.fill_diagonal(games, 0.0)
    strength = bradley_terry(np.nan_to_num(r.matrix) * games, games)
    assert r.rating == pytest.approx(400 / math.log(10) * (strength - strength[0]), abs=1e-6)


def test_free_for_all_ratings_use_plackett_luce_on_finishing_orders():
    specs = ["random", "greedy", "heuristic", "pimc:n=2,rollout=random"]
    r = rate("seven_toed_pete_v0", specs, deals=30, seed=2, bootstrap=20)
    assert r.model.startswith("plackett-luce") and r.hands == 120
    by, lo = dict(zip(r.names, r.rating)), dict(zip(r.names, r.lo))
    assert by["random"] == 0.0 and lo["heuristic"] > 0  # the heuristic finishes above random
    i, j = r.names.index("heuristic"), r.names.index("random")
    assert r.matrix[i, j] > 0.5 and math.isclose(r.matrix[i, j] + r.matrix[j, i], 1.0)


def test_free_for_all_needs_enough_distinct_agents():
    with pytest.raises(ConfigError, match="at least 4 distinct agents"):
        rate("seven_toed_pete_v0", ["random", "greedy", "heuristic"], deals=3)


def test_partner_table_needs_partnerships_and_reports_each_partner():
    with pytest.raises(ConfigError, match="teams=True"):
        partner_table("racehorse_v0", "heuristic", ["random"], "heuristic", deals=2)
    out = partner_table("racehorse_v0", "heuristic", ["heuristic", "random"], "heuristic", deals=6,
                        config={"num_players": 4, "teams": True})
    assert set(out) == {"heuristic", "random"}
    assert all(0.0 <= v["lo"] <= v["mean"] <= v["hi"] <= 1.0 for v in out.values())


def test_rate_command_prints_and_writes_json(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert cli_main(["rate", "random", "greedy", "--game", "block_v0", "--deals", "6", "--json", str(path)]) == 0
    assert "random" in capsys.readouterr().out
    data = json.loads(path.read_text())
    assert [x["agent"] for x in data["ratings"]] == ["random", "greedy"] and data["anchor"] == "random"
    assert cli_main(["rate", "random", "--game", "block_v0"]) == 2
    assert "two or more distinct" in capsys.readouterr().err


# ------------------------------------------------------------------------------ seats, order, anchor, teams
def test_play_table_seats_every_agent_in_every_seat_on_the_same_deal(monkeypatch):
    """Three players: for each deal, three hands on one engine seed, each agent once in each seat, and
    returns[deal, rotation, position] is the return of the seat that agent sat in."""
    from domino_envs import make_game
    from domino_training.benchmark import ratings

    real_make, real_play = ratings.make_agent, ratings.play_hand
    calls = []

    def tagged(spec, game, **kw):
        agent = real_make(spec, game, **kw)
        agent.tag_for_test = spec
        return agent

    def spy(game, state, by_seat, engine_seed, agent_seeds, **kw):
        totals = real_play(game, state, by_seat, engine_seed, agent_seeds, **kw)
        calls.append((engine_seed, [a.tag_for_test for a in by_seat], totals.copy()))
        return totals

    monkeypatch.setattr(ratings, "make_agent", tagged)
    monkeypatch.setattr(ratings, "play_hand", spy)
    specs = ["random", "greedy", "heuristic"]
    out = play_table(make_game("draw_v0", num_players=3), specs, deals=2, seed=5)
    assert len(calls) == 6
    for d in range(2):
        hands = calls[3 * d:3 * d + 3]
        assert len({seed for seed, _, _ in hands}) == 1
        for spec in specs:
            assert sorted(seating.index(spec) for _, seating, _ in hands) == [0, 1, 2], (d, spec)
        for r, (_, seating, totals) in enumerate(hands):
            assert out[d, r].tolist() == [totals[seating.index(s)] for s in specs]
    assert calls[0][0] != calls[3][0]


STRENGTH = {"random": 0.0, "greedy": 1.0, "heuristic": 2.0, "heuristic:seed=1": 2.0,
            "pimc:n=2,rollout=random": 3.0}
FIRST_SEAT_BONUS = 1.5  # as large as a gap in strength: a rating that sees it cannot hide it


def fake_hands(monkeypatch):
    """Replace the hands ratings plays by a model with known answers: each seat scores its agent's
    STRENGTH, plus a bonus in seat 0, plus deal noise that depends on the deal and the seat only (not
    on who sits there). Two-sided games: the side with the higher total wins (+1 each, -1 each);
    otherwise every seat's return is its score. Rotation cancels the bonus; listing order is irrelevant."""
    from types import SimpleNamespace

    from domino_training.benchmark import ratings

    def play_hand(game, state, by_seat, engine_seed, agent_seeds, **kw):
        n = len(by_seat)
        noise = np.random.default_rng(engine_seed).normal(0.0, 1.0, n)
        score = np.array([STRENGTH[a.spec] for a in by_seat]) + noise
        score[0] += FIRST_SEAT_BONUS
        if not ratings.two_sided(game):
            return score
        side = np.array([ratings.side_of(game, s) for s in range(n)])
        margin = score[side == 0].sum() - score[side == 1].sum()
        return np.where(side == 0, 1.0, -1.0) * np.sign(margin)

    monkeypatch.setattr(ratings, "play_hand", play_hand)
    monkeypatch.setattr(ratings, "make_agent", lambda spec, game, **kw: SimpleNamespace(spec=spec))


@pytest.mark.parametrize("game,config", [("block_v0", {}), ("racehorse_v0", {"num_players": 4, "teams": True})],
                         ids=["two_players", "teams"])
def test_a_first_seat_advantage_does_not_enter_the_ratings(monkeypatch, game, config):
    """Two agents of equal strength, whatever seat 0 is worth, rate exactly alike (win share 1/2
    each way), listed in either order; a stronger one rates above them."""
    fake_hands(monkeypatch)
    r = rate(game, ["heuristic", "heuristic:seed=1", "random"], deals=30, seed=3, config=config, bootstrap=20)
    by = dict(zip(r.names, r.rating))
    assert by["heuristic"] == pytest.approx(by["heuristic:seed=1"], abs=1e-9) and by["heuristic"] > 50
    i, j = r.names.index("heuristic"), r.names.index("heuristic:seed=1")
    assert r.matrix[i, j] == 0.5 and r.matrix[j, i] == 0.5


@pytest.mark.parametrize("game,config,specs", [
    ("block_v0", {}, ["greedy", "pimc:n=2,rollout=random", "random", "heuristic"]),
    ("racehorse_v0", {"num_players": 4, "teams": True}, ["greedy", "heuristic", "random"]),
], ids=["two_players", "teams"])
def test_two_sided_ratings_do_not_depend_on_the_order_agents_are_listed_in(monkeypatch, game, config, specs):
    """The same agents listed in two orders, random never first: the same rating for each (random 0,
    the anchor, wherever it is listed), the same matrix, and the order of known strengths."""
    fake_hands(monkeypatch)
    a = rate(game, specs, deals=30, seed=3, config=config, bootstrap=20)
    b = rate(game, specs[::-1], deals=30, seed=3, config=config, bootstrap=20)
    ra, rb = dict(zip(a.names, a.rating)), dict(zip(b.names, b.rating))
    assert ra["random"] == rb["random"] == 0.0
    for name in specs:
        assert ra[name] == pytest.approx(rb[name], abs=1e-6), name
        for other in specs:
            assert (a.matrix[a.names.index(name), a.names.index(other)]
                    == pytest.approx(b.matrix[b.names.index(name), b.names.index(other)], nan_ok=True))
    assert sorted(specs, key=ra.get) == sorted(specs, key=STRENGTH.get)
    assert a.to_json()["anchor"] == "random"


def test_free_for_all_ratings_anchor_random_wherever_it_is_listed(monkeypatch):
    fake_hands(monkeypatch)
    specs = ["heuristic", "greedy", "pimc:n=2,rollout=random", "random"]
    r = rate("seven_toed_pete_v0", specs, deals=40, seed=2, bootstrap=10)
    by = dict(zip(r.names, r.rating))
    assert by["random"] == 0.0 and by["greedy"] > 0 and by["heuristic"] > by["greedy"]
    assert r.lo[r.names.index("random")] == 0.0 == r.hi[r.names.index("random")]


def test_a_teams_game_is_rated_end_to_end():
    """Racehorse in partnerships (seats 0 & 2 against 1 & 3), real hands: the heuristic pair beats the
    random pair; the matrix is the pair's win share each way; each deal is played in all 4 rotations."""
    r = rate("racehorse_v0", ["random", "heuristic"], deals=24, seed=1, config={"num_players": 4, "teams": True},
             bootstrap=50)
    by = dict(zip(r.names, r.rating))
    assert r.model.startswith("bradley-terry") and r.hands == 24 * 4
    assert by["random"] == 0.0 and r.lo[1] > 0  # the heuristic pair's interval above the random pair's 0
    assert r.matrix[1, 0] > 0.5 and math.isclose(r.matrix[1, 0] + r.matrix[0, 1], 1.0)


def test_the_free_for_all_fit_estimates_plackett_luce_as_choix_does():
    """The 3+ player fit breaks each finishing order into its pairs and fits Bradley-Terry to them (full
    rank-breaking): on finishing orders drawn from a Plackett-Luce model, its strengths agree with choix's
    Plackett-Luce likelihood fit and with the truth."""
    import choix

    from domino_training.benchmark.ratings import _finish_counts, _fit_free_for_all

    rng = np.random.default_rng(1)
    k, truth = 7, np.array([0.0, 0.9, -0.6, 0.3, 0.5, -0.2, 0.1])
    truth -= truth.mean()
    orders = []
    for _ in range(12000):
        seated, order = [int(x) for x in rng.choice(k, 4, replace=False)], []
        while seated:
            w = np.exp(truth[seated])
            order.append(seated.pop(int(rng.choice(len(seated), p=w / w.sum()))))
        orders.append(order)
    hands = [[[(agent, rank) for rank, agent in enumerate(order)]] for order in orders]  # one hand a deal
    ours, matrix = _fit_free_for_all(_finish_counts(k, hands))
    theirs = choix.ilsr_rankings(k, [tuple(o) for o in orders], alpha=1e-9)
    theirs -= theirs.mean()
    assert np.abs(ours - theirs).max() < 0.03 and np.abs(ours - truth).max() < 0.06
    assert matrix[1, 2] > 0.75  # the strongest finished above the weakest far more often than not


def test_the_free_for_all_fit_does_not_depend_on_the_order_of_the_hands():
    from domino_training.benchmark.ratings import _finish_counts, _fit_free_for_all

    rng = np.random.default_rng(3)
    hands = [[[(int(a), int(r)) for a, r in zip(rng.choice(6, 4, replace=False), rng.integers(0, 3, 4))]
              for _ in range(4)] for _ in range(50)]  # ties included
    first = _fit_free_for_all(_finish_counts(6, hands))[0]
    again = _fit_free_for_all(_finish_counts(6, hands[::-1]))[0]
    assert np.allclose(first, again)
    pick = rng.integers(0, 50, 50)  # a resample reweights deals: the same as fitting the resampled list
    assert np.allclose(_fit_free_for_all(_finish_counts(6, hands), pick)[0],
                       _fit_free_for_all(_finish_counts(6, [hands[d] for d in pick]))[0])
