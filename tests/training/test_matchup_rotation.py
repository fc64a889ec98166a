"""run_matchup plays every seat rotation of a deal on the same deal (a regression that once passed
the whole suite; tests/mutations/run.py plants it)."""
from __future__ import annotations

from domino_envs import make_game
from domino_envs.core import H_TURN


# ------------------------------------------------------------------------------ run_matchup
def test_run_matchup_plays_each_rotation_on_the_same_deal(monkeypatch):
    """Every rotation k of deal d starts from the same dealt state; different deals differ; the
    focal agent sits in seat k in rotation k."""
    from domino_training import evaluate as E

    game = make_game("draw_v0", num_players=3)
    dealt = []
    real_reset = game.reset

    def recording_reset(state, seed):
        real_reset(state, seed)  # (a reused row keeps stale history bytes: compare the deal itself)
        dealt.append(repr(([game.hand(state, k) for k in range(game.num_players)], game.boneyard(state),
                           int(state[H_TURN]))))

    monkeypatch.setattr(game, "reset", recording_reset)
    seats_of_focal = []
    real_play = E.play_hand

    def recording_play(g, state, agents, engine_seed, agent_seeds, recorder=None, **kw):
        seats_of_focal.append([getattr(a, "name", "") for a in agents].index("greedy"))
        return real_play(g, state, agents, engine_seed, agent_seeds, recorder, **kw)

    monkeypatch.setattr(E, "play_hand", recording_play)
    deals, n = 4, 3
    E.run_matchup(game, "greedy", "random", deals, seed=9, matchup_index=0)
    assert len(dealt) == deals * n
    for d in range(deals):
        first = dealt[d * n]
        for k in range(1, n):
            assert dealt[d * n + k] == first, f"deal {d}: rotation {k} was dealt differently"
    assert len({dealt[d * n] for d in range(deals)}) == deals, "different deals were the same"
    assert seats_of_focal == [k for _ in range(deals) for k in range(n)]


