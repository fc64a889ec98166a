"""The games as OpenSpiel games (domino_envs.openspiel): OpenSpiel's own random-simulation test on
every game's default config and on the small configs, the explicit chance outcomes, and a seeded
game played through the OpenSpiel game and the PettingZoo env alike, step for step."""
from __future__ import annotations

import math

import numpy as np
import pytest

from domino_envs import ConfigError, make, make_game, openspiel
from domino_envs.registry import GAMES

# the openspiel extra is part of make test's install: a missing pyspiel fails here, never skips
pyspiel = openspiel.pyspiel_module()

SMALLEST = [("draw_v0", {"max_pip": 2, "hand_size": 2}), ("block_v0", {"max_pip": 2, "hand_size": 2})]
SMALL = SMALLEST + [("draw_v0", {"max_pip": 3, "hand_size": 3}), ("block_v0", {"max_pip": 3, "hand_size": 3})]
DEFAULTS = [(name, {}) for name in GAMES]


def _id(c):
    return c[0] + "".join(f"-{k}={v}" for k, v in c[1].items())


def test_every_registered_game_is_registered_with_pyspiel():
    names = openspiel.register()
    assert names == [f"domino_{n}" for n in sorted(GAMES)]
    assert set(names) <= set(pyspiel.registered_names())
    game = pyspiel.load_game("domino_draw_v0(max_pip=2,hand_size=2)")
    assert game.num_distinct_actions() == 12 and game.num_players() == 2
    assert game.get_parameters()["hand_size"] == 2


@pytest.mark.parametrize("name,config", DEFAULTS + SMALL, ids=[_id(c) for c in DEFAULTS + SMALL])
def test_openspiel_random_simulation(name, config):
    game = openspiel.load_game(name, **config)
    pyspiel.random_sim_test(game, num_sims=3 if not config else 20, serialize=False, verbose=False)


def test_match_mode_and_unknown_keys_are_refused():
    with pytest.raises(ConfigError, match="the OpenSpiel game is one hand"):
        openspiel.load_game("draw_v0", match=True)
    with pytest.raises(ConfigError, match="unknown config key"):
        openspiel.load_game("draw_v0", players=2)


def _leaves(state, prob=1.0):
    """(chance-weighted probability, count) of the deals: walk only the chance nodes of the deal."""
    if not state.is_chance_node() or state.node.kind not in (0, 1):
        return [(prob, state)]
    out = []
    for a, p in state.chance_outcomes():
        out += _leaves(state.child(a), prob * p)
    return out


@pytest.mark.parametrize("name,config", SMALLEST, ids=[_id(c) for c in SMALLEST])
def test_the_deal_is_every_set_of_hands_once_equally_likely(name, config):
    game = openspiel.load_game(name, **config)
    leaves = _leaves(game.new_initial_state())
    engine = make_game(name, **config)
    n_first = 1 if engine.config.first_seat is not None else 2
    deals = n_first * math.comb(6, 2) * math.comb(4, 2)
    assert len(leaves) == deals
    assert {tuple(map(tuple, s.node.hands)) + (s.node.first,) for _, s in leaves}.__len__() == deals
    assert np.allclose([p for p, _ in leaves], 1.0 / deals)


def _tile_id(spec, token) -> int:
    """A deal's tile (a pair, a Magic-7 card name or id) as the OpenSpiel game's chance outcome."""
    if isinstance(token, str):
        from domino_envs.games.magic7 import card_id

        return card_id(token)
    return spec.tile_id(token)


def _seeded_deal(engine, rng):
    """A random deal in set_deal's format (the engine's own deal of a random seed)."""
    row = engine.new_state()
    engine.reset(row, int(rng.integers(2 ** 62)))
    return engine.deal_of(row)


@pytest.mark.parametrize("name,config", DEFAULTS + SMALLEST, ids=[_id(c) for c in DEFAULTS + SMALLEST])
def test_openspiel_game_and_pettingzoo_env_agree_step_for_step(name, config):
    game = openspiel.load_game(name, **config)
    engine = game.engine
    spec = game.spec
    rng = np.random.default_rng(7)
    played = 0
    for _ in range(4 if not config else 20):
        deal = _seeded_deal(engine, rng)
        env = make(name, **config)
        try:
            env.reset(seed=1, options={"deal": deal})
        except Exception as err:  # a deal played out by forced moves: the env refuses it, draw another
            if "played to the end by forced moves" in str(err):
                continue
            raise
        total = np.array([env.rewards[a] for a in env.possible_agents])  # the episode's return, step by step
        state = game.new_initial_state()
        stock = [_tile_id(spec, t) for t in deal.get("stock", [])]
        hands = [sorted(_tile_id(spec, t) for t in h) for h in deal["hands"]]
        while state.is_chance_node():  # the deal's chance outcomes: first seat, hands, draws
            kind = state.node.kind
            if kind == 0:
                a = deal["first"]
            elif kind == 1:
                k = state.node._dealing_seat()
                a = hands[k][len(state.node.hands[k])]
            else:
                a = stock[len(state.node.stock)]
            assert a in [o for o, _ in state.chance_outcomes()]
            state.apply_action(a)
        steps = 0
        while not state.is_terminal():
            while state.is_chance_node():  # a draw: the tile the env's stock order gives
                a = stock[len(state.node.stock)]
                assert a in [o for o, _ in state.chance_outcomes()]
                state.apply_action(a)
            assert np.allclose(state.returns(), total)  # the rewards so far, step by step
            if state.is_terminal():
                break
            seat = state.current_player()
            agent = env.agent_selection
            assert agent == f"player_{seat}"
            ob = env.observe(agent)
            assert state.legal_actions() == np.flatnonzero(ob["action_mask"]).tolist()
            assert np.array_equal(np.asarray(state.observation_tensor(seat), np.float32), ob["observation"])
            a = int(rng.choice(state.legal_actions()))
            state.apply_action(a)
            env.step(a)
            total += [env.rewards[p] for p in env.possible_agents]
            steps += 1
        assert all(env.terminations[a] or env.truncations[a] for a in env.agents)
        assert np.allclose(state.returns(), total)
        assert abs(sum(state.returns())) < 1e-9
        played += steps
    assert played > 0


@pytest.mark.parametrize("name,config", SMALLEST, ids=[_id(c) for c in SMALLEST])
def test_information_states_have_perfect_recall(name, config):
    """A seat's information state extends the one it had at its previous decision, and states in
    one information state show that seat the same observation and legal actions."""
    game = openspiel.load_game(name, **config)
    seen: dict = {}
    stack = [(game.new_initial_state(), ["", ""])]
    while stack:
        state, last = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack += [(state.child(a), last) for a, _ in state.chance_outcomes()]
            continue
        p = state.current_player()
        info = state.information_state_string(p)
        assert info.startswith(last[p]) and info != last[p]
        here = (tuple(state.observation_tensor(p)), tuple(state.legal_actions()))
        assert seen.setdefault(info, here) == here
        nxt = list(last)
        nxt[p] = info
        stack += [(state.child(a), nxt) for a in state.legal_actions()]
    assert len(seen) > 10


def _histories(game):
    """Every decision state of a small game's tree, by its acting seat's information state string."""
    by_info: dict = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack += [state.child(a) for a, _ in state.chance_outcomes()]
            continue
        by_info.setdefault(state.information_state_string(state.current_player()), []).append(state)
        stack += [state.child(a) for a in state.legal_actions()]
    return by_info


@pytest.mark.parametrize("config", [{"max_pip": 2, "hand_size": 2}, {"max_pip": 3, "hand_size": 2}],
                         ids=lambda c: _id(("block_v0", c)))
def test_a_resampled_block_state_is_a_real_history_the_seat_cannot_tell_apart(config):
    """`resample` (ISMCTS's `resample_from_infostate`) gives a history of the same information set:
    one of the tree's own histories there (found by walking every deal), never one outside it, and
    others than the state's own where the set has several."""
    game = openspiel.load_game("block_v0", **config)
    by_info = _histories(game)
    rng = np.random.default_rng(3)
    spread = several = checked = 0
    for info, states in by_info.items():
        members = {str(s) for s in states}
        seat = states[0].current_player()
        moved = False  # a state's own resamples reach another history of the set
        for state in states[:3]:
            got = set()
            for _ in range(4):
                new = openspiel.resample(state, seat, rng)
                assert new.information_state_string(seat) == info and str(new) in members
                assert new.legal_actions() == state.legal_actions()
                got.add(str(new))
                checked += 1
            moved = moved or got != {str(state)}
        several += len(members) > 1
        spread += moved
    assert checked > 500 and several > 20 and spread > 0.8 * several, (checked, several, spread)
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    state = next(iter(by_info.values()))[0]
    assert state.resample_from_infostate(state.current_player(), sampler).information_state_string(
        state.current_player()) == state.information_state_string(state.current_player())


def test_a_history_with_a_draw_or_at_a_chance_node_is_refused_with_what_resample_can_do():
    from domino_envs.games.draw import DRAWN

    game = openspiel.load_game("draw_v0", max_pip=3, hand_size=3)
    rng = np.random.default_rng(0)
    refused = resampled = 0
    for _ in range(40):
        state = game.new_initial_state()
        with pytest.raises(openspiel.DominoError, match="chance node"):
            openspiel.resample(state, 0, rng)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            seat = state.current_player()
            if state.engine_row()[DRAWN:DRAWN + 2].sum():
                with pytest.raises(openspiel.DominoError, match="once a tile has been drawn"):
                    openspiel.resample(state, seat, rng)
                refused += 1
            else:
                assert openspiel.resample(state, seat, rng).information_state_string(seat) == \
                    state.information_state_string(seat)
                resampled += 1
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert refused and resampled
    with pytest.raises(openspiel.DominoError, match="seat 2 is not a seat"):
        openspiel.resample(state.clone() if not state.is_terminal() else state, 2, rng)


def test_openspiels_ismcts_plays_the_block_game():
    """OpenSpiel's ISMCTS bot, which draws its worlds with `resample_from_infostate` and asserts each has the
    searched information state, plays whole hands of the Block Game against a random bot."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = openspiel.load_game("block_v0", max_pip=3, hand_size=3)
    rng = np.random.RandomState(4)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 20, random_state=rng)
    decisions = 0
    for deal in range(4):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            elif state.current_player() == deal % 2:
                action = bot.step(state)
                assert action in state.legal_actions()
                state.apply_action(action)
                decisions += 1
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
    assert decisions > 4


def test_resample_finds_the_history_where_a_forced_move_of_the_record_is_a_choice_in_the_redeal():
    """A Block hand (found by the ISMCTS run) where seat 1's reply to the lead was forced and seat 0's later
    0-6 too: most redeals give seat 1 a choice there. Every resample finds the history all the same (the
    replay once gave up on 1 redeal in 300 within its step budget)."""
    game = openspiel.load_game("block_v0")
    deal = {"hands": [[(0, 0), (2, 2), (3, 3), (0, 5), (4, 5), (0, 6), (6, 6)],
                      [(0, 1), (1, 2), (0, 4), (3, 4), (3, 5), (5, 5), (5, 6)]], "first": 0}
    outcome = openspiel.deal_outcomes(game.spec, deal)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(outcome(state.node))
    for action in [54, 30, 20, 38, 40, 36]:
        state.apply_action(action)
    assert len(game.engine.line(state.node.rows[0])) == 8  # 6 decisions and 2 forced moves laid
    info = state.information_state_string(0)
    for seed in range(300):
        assert openspiel.resample(state, 0, np.random.default_rng(seed)).information_state_string(0) == info
