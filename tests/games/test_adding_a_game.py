"""docs/adding_a_game.md followed once: a throwaway game, defined here and registered for the test only.

"Tiny Line" (`toy_v0`) is a complete engine of the contract in domino_envs/core.py, as small as a
game gets: the six tiles of a double-two set, two seats holding three each, one line with two
ends. A seat plays a tile that matches an end (the leader any tile); a seat that cannot passes
(the engine takes the pass); whoever goes out wins (+1 / -1), and a blocked line goes to the lower
pip total (a tie pays nothing).

The registration is the recipe's one registry line (``monkeypatch.setitem(registry.GAMES, ...)``)
and nothing else: the test then checks that the generic machinery works for a game it has never
heard of - make_game, the PettingZoo AEC env (api_test), the compiled vector env, the action
table and describe_action, the picture's table description and the picture, the random and
greedy agents, and that asking for a heuristic fails clearly (the toy names none).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from numba import njit

import domino_envs
from domino_envs import registry
from domino_envs.actions import PLACE, tile_arm_table
from domino_envs.core import (
    H_DONE,
    H_REWARD,
    H_RNG,
    H_TURN,
    HEADER_SIZE,
    DealError,
    DominoError,
    Game,
    check_choice,
    check_deal_keys,
    deal_first,
    deal_hands,
    deal_tile_ids,
    legal_set,
    step_kernel,
)
from domino_envs.rng import rng_below, rng_shuffle
from domino_envs.table import LinePlay, hand_number
from domino_envs.tiles import TILE_A, TILE_B, popcount, tile_name

NT = 6  # tiles 0-0, 0-1, 1-1, 0-2, 1-2, 2-2 (tiles.py ids 0..5)
NA = 2 * NT  # action tile * 2 + end
ALL = (1 << NT) - 1
HANDS = HEADER_SIZE  # 2 slots: bitmask of each seat's tiles
ENDS = HANDS + 2  # 2 slots: pip showing at the left / right end (-1 before the lead)
NPLAYED = ENDS + 2
PLAYS = NPLAYED + 1  # NT slots: the actions placed, in order
BY = PLAYS + NT  # NT slots: the seat that placed each
STATE_SIZE = BY + NT


# ------------------------------------------------------------------------------ kernels
@njit(cache=False, _nrt=False)
def _is_legal(s, p, a):
    if a < 0 or a >= NA or s[H_DONE] == 1:
        return False
    t, e = a // 2, a % 2
    if (s[HANDS + s[H_TURN]] >> t) & 1 == 0:
        return False
    if s[NPLAYED] == 0:
        return e == 0  # the lead goes on end 0
    return TILE_A[t] == s[ENDS + e] or TILE_B[t] == s[ENDS + e]


@njit(cache=False, _nrt=False)
def _can_play(s, p, seat):
    turn = s[H_TURN]
    s[H_TURN] = seat
    ok = False
    for a in range(NA):
        if _is_legal(s, p, a):
            ok = True
            break
    s[H_TURN] = turn
    return ok


@njit(cache=False, _nrt=False)
def _pips(s, seat):
    total = 0
    for t in range(NT):
        if (s[HANDS + seat] >> t) & 1:
            total += TILE_A[t] + TILE_B[t]
    return total


@njit(cache=False, _nrt=False)
def _end(s, winner):
    s[H_DONE] = 1
    s[H_TURN] = -1
    if winner >= 0:
        s[H_REWARD + winner] = 1
        s[H_REWARD + 1 - winner] = -1


@njit(cache=False, _nrt=False)
def _reset_kernel(s, seed, p):
    for i in range(STATE_SIZE):
        s[i] = 0
    s[H_RNG] = seed
    for i in range(NT):
        s[PLAYS + i] = i  # the deck, shuffled in place (the plays slots are empty until the lead)
    rng_shuffle(s, H_RNG, s, NT, PLAYS)
    for i in range(NT):
        s[HANDS + i // 3] |= 1 << s[PLAYS + i]
        s[PLAYS + i] = 0
    s[ENDS] = -1
    s[ENDS + 1] = -1
    s[H_TURN] = rng_below(s, H_RNG, 2)


@njit(cache=False, _nrt=False)
def _play(s, p, a):
    seat = s[H_TURN]
    t, e = a // 2, a % 2
    s[HANDS + seat] &= ~(1 << t)
    if s[NPLAYED] == 0:
        s[ENDS] = TILE_A[t]
        s[ENDS + 1] = TILE_B[t]
    else:
        s[ENDS + e] = TILE_B[t] if TILE_A[t] == s[ENDS + e] else TILE_A[t]
    s[PLAYS + s[NPLAYED]] = a
    s[BY + s[NPLAYED]] = seat
    s[NPLAYED] += 1


@njit(cache=False, _nrt=False)
def _advance(s, p):
    seat = s[H_TURN]  # who just played
    if s[HANDS + seat] == 0:
        _end(s, seat)
    elif _can_play(s, p, 1 - seat):
        s[H_TURN] = 1 - seat
    elif not _can_play(s, p, seat):  # blocked: the lower pip total wins
        mine, theirs = _pips(s, seat), _pips(s, 1 - seat)
        _end(s, seat if mine < theirs else 1 - seat if theirs < mine else -1)
    # else the other seat passes (forced) and this one plays again


@njit(cache=False, _nrt=False)
def _step_kernel(s, a, p):  # the engine core's template, filled with this game's three functions
    return step_kernel(s, a, p, NA, _is_legal, _play, _advance)


@njit(cache=False, _nrt=False)
def _mask_kernel(s, p, out):
    for a in range(NA):
        out[a] = 1 if _is_legal(s, p, a) else 0


@njit(cache=False, _nrt=False)
def _obs_kernel(s, p, seat, out):
    for i in range(out.shape[0]):
        out[i] = 0.0
    for t in range(NT):
        out[t] = (s[HANDS + seat] >> t) & 1
    for i in range(s[NPLAYED]):  # played_by: relative seat r's row
        r = (s[BY + i] - seat) % 2
        out[NT + r * NT + s[PLAYS + i] // 2] = 1.0
    for e in range(2):  # ends: one-hot pip
        if s[ENDS + e] >= 0:
            out[3 * NT + 3 * e + s[ENDS + e]] = 1.0
    for r in range(2):
        out[3 * NT + 6 + r] = popcount(s[HANDS + (seat + r) % 2])
        if s[H_DONE] == 0 and s[H_TURN] == (seat + r) % 2:
            out[3 * NT + 8 + r] = 1.0


@njit(cache=False)
def _sample_kernel(s, p, seat, seed):
    return s.copy()  # every tile a seat cannot see is in the other hand: nothing to redeal


@njit(cache=False)
def _legal_set_kernel(s, p, out):
    legal_set(s, p, out, NA, _is_legal)


@njit(cache=False)
def _check_kernel(s, p):
    placed = 0
    for i in range(s[NPLAYED]):
        placed |= 1 << (s[PLAYS + i] // 2)
    h0, h1 = s[HANDS], s[HANDS + 1]
    return (h0 & h1) == 0 and (placed & (h0 | h1)) == 0 and (placed | h0 | h1) == ALL


# ------------------------------------------------------------------------------ Python side
@dataclass(frozen=True)
class ToyConfig:
    num_players: int = 2

    def __post_init__(self):
        check_choice("toy", "num_players", self.num_players, [2])


class ToyGame(Game, kernels=globals()):
    """Tiny Line (module doc). No heuristic, no docs page: a game of this test only."""

    Config = ToyConfig
    state_size = STATE_SIZE
    num_players = 2
    num_actions = NA

    def __init__(self, config: ToyConfig, name: str = "toy_v0"):
        self.params = np.zeros(1, dtype=np.int64)
        super().__init__(config, name)

    def obs_pieces(self):
        return [("hand", (NT,)), ("played_by", (2, NT)), ("ends", (2, 3)), ("hand_sizes", (2,)),
                ("to_move", (2,))]

    def obs_high(self) -> float:
        return 3.0

    def describe_action(self, action: int) -> str:
        if not 0 <= action < NA:
            return f"out of range (0..{NA - 1})"
        t, e = divmod(int(action), 2)
        return f"play {tile_name(t)} on the {'left end (or lead it)' if e == 0 else 'right end'}"

    def action_table(self):
        return tile_arm_table("line", NT, 2, NA)

    def set_deal(self, state, deal):
        self._check_row(state)
        check_deal_keys(self.name, deal, ("hands", "first"))
        seen: set[int] = set()
        hands = [deal_tile_ids(self.name, h, f"hand {k}", seen, 2) for k, h in enumerate(deal_hands(self.name, deal, 2))]
        if len(seen) != NT or not all(hands):
            raise DealError(f"{self.name}: the two hands hold all six tiles, each at least one")
        first = deal_first(self.name, deal, 2, 0)
        self._fresh_row(state)
        for k in range(2):
            state[HANDS + k] = sum(1 << t for t in hands[k])
        state[ENDS:ENDS + 2] = -1
        state[H_TURN] = first

    def deal_of(self, state):
        """The deal in play, as set_deal takes it (the benchmark suite's deal fingerprints read it):
        each hand with the tiles its seat has placed, and the leader."""
        held = [int(state[HANDS + k]) for k in range(2)]
        for i in range(int(state[NPLAYED])):
            held[int(state[BY + i])] |= 1 << (int(state[PLAYS + i]) // 2)
        first = int(state[BY]) if state[NPLAYED] else int(state[H_TURN])
        return {"hands": [[(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT) if h >> t & 1] for h in held],
                "first": first}

    def slot_ranges(self):
        return [("hands", HANDS, 2, 0, ALL), ("ends", ENDS, 2, -1, 2), ("placed", NPLAYED, 1, 0, NT),
                ("plays", PLAYS, NT, 0, NA - 1), ("placed by", BY, NT, 0, 1)]

    def hand(self, state, seat) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT) if (int(state[HANDS + seat]) >> t) & 1]

    def render(self, state, seat) -> str:
        s = state
        line = " ".join(self.describe_action(int(a)) for a in s[PLAYS:PLAYS + s[NPLAYED]])
        lines = [f"{self.name}  line: {line or '(empty)'}"]
        lines += [f"seat {k}: {len(self.hand(s, k))} tiles" + (" <- to move" if s[H_TURN] == k else "")
                  for k in range(2)]
        lines.append(f"seat {seat} holds: " + " ".join(f"[{a}|{b}]" for a, b in self.hand(s, seat)))
        if s[H_DONE]:
            won = [k for k in range(2) if s[H_REWARD + k] > 0]
            lines.append("over: " + (f"seat {won[0]} won" if won else "blocked, tied"))
        return "\n".join(lines)

    def describe_table(self, state, table, face_up):
        s = state
        for k, seat in enumerate(table.seats):
            hand = self.hand(s, k)
            seat.count = len(hand)
            seat.tiles = hand if face_up[k] else None
        table.info.append(f"hand {hand_number(s)}")
        plays = [int(a) for a in s[PLAYS:PLAYS + s[NPLAYED]]]
        if plays:
            lead = plays[0] // 2
            ends = [int(TILE_A[lead]), int(TILE_B[lead])]
            moves = []
            for a in plays[1:]:
                t, e = divmod(a, 2)
                inner = ends[e]
                ends[e] = int(TILE_B[t]) if TILE_A[t] == inner else int(TILE_A[t])
                moves.append((e, inner, ends[e]))
            table.play = LinePlay((int(TILE_A[lead]), int(TILE_B[lead])), moves, {}, {0, 1})
        table.max_pip = 2


# ------------------------------------------------------------------------------ the recipe, followed
@pytest.fixture
def toy(monkeypatch):
    """The one registry line (docs/adding_a_game.md); nothing else is registered anywhere."""
    monkeypatch.setitem(registry.GAMES, "toy_v0", registry.GameEntry(__name__, "ToyGame", {}, "Tiny Line"))
    return domino_envs.make_game("toy_v0")


def test_make_game_knows_it_by_its_registry_line(toy):
    assert isinstance(toy, ToyGame) and toy.name == "toy_v0" and "toy_v0" in domino_envs.game_names()
    assert toy.obs_size == 28 and toy.num_actions == 12
    with pytest.raises(domino_envs.ConfigError, match="allowed keys"):
        domino_envs.make_game("toy_v0", num_seats=3)


def test_the_aec_env_passes_pettingzoo_api_test(toy):
    from pettingzoo.test import api_test

    from domino_envs import toy_v0  # PettingZoo's import style, made from the registry line

    env = toy_v0.env(render_mode="ansi")
    assert env.game.name == "toy_v0" and isinstance(domino_envs.make("toy_v0").game, ToyGame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=200)
    env.reset(seed=3)
    assert "seat" in env.render()
    for seed in range(30):  # every game ends with zero-sum rewards of +-1 or 0
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter(max_iter=100):
            obs, reward, term, trunc, _ = env.last()
            total[agent] += reward
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sorted(total.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_the_vector_env_runs_its_kernels_compiled(toy):
    """make_vec compiles the vector loops for the toy (without the disk cache: dispatch.py) and
    they play the same games as the engine, transition for transition."""
    from domino_envs.dispatch import ENGINES, game_id
    from domino_envs.fronts import deal_to_decision
    from domino_envs.vector import make_vec, next_episode_seed
    from tests.helpers import vector_reference_rows

    assert ToyGame not in ENGINES and game_id(toy) >= len(ENGINES)
    venv = make_vec("toy_v0", 16, seed=5)
    refs = vector_reference_rows(toy, 16, seed=5)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(2)
    finished = 0
    for _ in range(60):
        for i, s in enumerate(refs):
            assert seats[i] == s[H_TURN]
            assert np.array_equal(obs[i], toy.observe(s, int(s[H_TURN])))
            assert np.array_equal(masks[i], toy.legal_mask(s))
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, masks, seats, rewards, term, trunc, info = venv.step(actions)
        for i, s in enumerate(refs):
            toy.step(s, int(actions[i]))
            assert np.array_equal(rewards[i], toy.rewards(s))
            assert bool(term[i]) == toy.is_over(s)
            if toy.is_over(s):
                finished += 1
                deal_to_decision(toy, s, int(next_episode_seed(s)))
    assert finished > 16  # games ended and the loop dealt new ones


def test_action_table_and_describe_action_agree(toy):
    table = toy.action_table()
    assert (table.kind == PLACE).all() and table.arms == 2
    for a in range(toy.num_actions):
        t = int(table.tile[a])
        text = toy.describe_action(a)
        assert f"{TILE_A[t]}-{TILE_B[t]}" in text and ("left" in text) == (table.arm[a] == 0)
        assert table.weight[a] == TILE_A[t] + TILE_B[t]


def test_the_picture_shows_its_line(toy):
    from domino_envs.pictures import HEIGHT, WIDTH, describe, picture

    s = toy.new_state()
    toy.reset(s, 0)
    toy.set_deal(s, {"hands": [[(0, 1), (1, 2), (2, 2)], [(0, 0), (1, 1), (0, 2)]], "first": 0})
    toy.step(s, 2 * 4)  # 1-2 leads: ends 1 and 2
    toy.step(s, 2 * 2 + 0)  # seat 1: 1-1 on the left
    table = describe(toy, s, 0)
    assert table.title == "Tiny Line" and table.info == ["hand 1"] and table.max_pip == 2
    assert table.play == LinePlay((1, 2), [(0, 1, 1)], {}, {0, 1})
    assert [seat.count for seat in table.seats] == [2, 2] and table.seats[0].to_act
    assert table.seats[0].tiles == [(0, 1), (2, 2)] and table.seats[1].tiles is None
    image = picture(toy, s, "full")
    assert image.shape == (HEIGHT, WIDTH, 3) and len(np.unique(image.reshape(-1, 3), axis=0)) > 100


def test_random_and_greedy_agents_play_it(toy):
    from domino_agents.registry import make_agent

    for spec in ("random", "greedy"):
        for seed in range(10):
            agents = [make_agent(spec, toy, seed=seed + k) for k in range(2)]
            s = toy.new_state()
            toy.reset(s, seed)
            while not toy.is_over(s):
                seat = toy.current_seat(s)
                mask = toy.legal_mask(s)
                a = agents[seat].act(toy.observe(s, seat), mask)
                assert mask[a] == 1
                if spec == "greedy":  # the heaviest legal tile
                    legal = np.flatnonzero(mask)
                    assert toy.action_table().weight[a] == toy.action_table().weight[legal].max()
                toy.step(s, a)


def test_asking_for_its_heuristic_fails_clearly(toy):
    from domino_agents.heuristics import make_heuristic
    from domino_agents.registry import make_agent

    for ask in (lambda: make_heuristic(toy), lambda: make_agent("heuristic", toy)):
        with pytest.raises(DominoError, match=r"toy_v0: this game has no rule-based heuristic"):
            ask()


def test_an_unregistered_engine_has_no_vector_env():
    """Without its registry line the same engine is refused by the compiled dispatch."""
    from domino_envs.vector import VectorEnv

    game = ToyGame(ToyConfig(), name="toy_v0")
    with pytest.raises(DominoError, match="engine of no registered game"):
        VectorEnv(game, 4)


def test_the_benchmark_suite_takes_it_under_a_new_version(toy, tmp_path):
    """Section 6 of the recipe: the game's line in (a copy of) the shipped suite is refused under the old
    protocol version, `domino benchmark freeze` records the bumped version beside the old one, and the
    profiles that name no games then run it."""
    import shutil

    import yaml

    from domino_training.benchmark import cli
    from domino_training.benchmark.suite import check_protocol, load_suite, read_lock, read_suite_file, suite_folder

    state = toy.new_state()
    toy.reset(state, 5)
    toy.step(state, int(np.flatnonzero(toy.legal_mask(state))[0]))
    again = toy.new_state()
    toy.set_deal(again, toy.deal_of(state))  # deal_of reads the deal back after a move, in set_deal's format
    assert toy.deal_of(again) == toy.deal_of(state) and sorted(sum(toy.deal_of(state)["hands"], [])) == sorted(
        (int(TILE_A[t]), int(TILE_B[t])) for t in range(NT))

    suite, lock = tmp_path / "suite.yaml", tmp_path / "lock.json"
    shutil.copy(suite_folder() / "lock.json", lock)
    data = yaml.safe_load((suite_folder() / "suite.yaml").read_text())
    data["protocol"]["games"]["toy"] = {"env": "toy_v0"}
    suite.write_text(yaml.safe_dump(data))
    with pytest.raises(DominoError, match="bump `version`"):
        check_protocol(read_suite_file(suite), read_lock(lock))
    data["version"] += 1
    suite.write_text(yaml.safe_dump(data))
    with pytest.raises(DominoError, match="no fingerprint"):
        check_protocol(read_suite_file(suite), read_lock(lock))
    before = read_lock(lock)
    assert cli.main(["freeze", "--suite", str(suite), "--lock", str(lock)]) == 0  # the recipe's command
    after = read_lock(lock)
    assert {k: v for k, v in after.items() if k in before} == before and set(after) == {*before, str(data["version"])}
    assert "toy" in after[str(data["version"])]["deals"]
    check_protocol(read_suite_file(suite), after)
    assert "toy" in load_suite("quick", suite).runs["ppo"][1]  # quick names no games for ppo: all of them
    assert load_suite("ci", suite).runs["ppo"][1] == ["block"]  # ci names its games
