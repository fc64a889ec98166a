"""The games as OpenSpiel games: every registered env as a pyspiel Python game (optional extra).

    pip install "domino-envs[openspiel]"          # open-spiel==2.0.2
    from domino_envs import openspiel
    game = openspiel.load_game("draw_v0", max_pip=2, hand_size=2)   # a pyspiel.Game
    # or, once registered: pyspiel.load_game("domino_draw_v0(max_pip=2,hand_size=2)")

This opens OpenSpiel's algorithms (CFR, exploitability, NFSP, ISMCTS, its evaluation bots) to our
games. Each registered env ``NAME`` is registered as ``domino_NAME`` (``register()``), with its
config as game parameters: every key of the env's resolved default config, ``-1`` standing for
``None`` (a random first seat, the D-1 hand size). One hand is one OpenSpiel game: match mode
(``match=True``, Magic-7's ``num_games`` > 1) deals later hands from the engine's own random
stream, which are no chance nodes, so it is refused.

The rules are the engine's: a state keeps the deal drawn so far and the decisions taken, and the
engine row they give, built with ``set_deal`` and advanced with ``step`` (no second copy of the
rules). The chance outcomes are explicit:

- hand 1's first seat, where the config leaves it random (``Game.first_key`` is None in the
  config): one chance node, uniform over the seats;
- the deal, **tile by tile**, seat 0's hand first, each hand dealt in increasing tile id with the
  probabilities that make every hand an equally likely set. Below the deal this is the tree a
  whole hand per chance node gives (every deal once, as sets of tiles: dealing in any order would
  multiply the deals by hand_size! per hand); it adds only the deal's inner chance nodes, fewer
  than the deals themselves, while the decisions and terminals below are the same. And it keeps
  every chance node's outcome list to a tile set (a whole hand would list C(28, 7) = 1.2 million
  outcomes at a double-six node, C(54, 12) in Magic-7), so it works at every size;
- the stock order, one chance node per tile drawn, uniform over the stock tiles not drawn yet, at
  the moment the engine draws it (a forced draw inside a step included). A state keeps two engine
  rows whose undrawn stock differs at every position; a step after which the two differ in any
  seat's observation drew a tile nobody has chosen yet, so the state becomes that draw's chance
  node and the step is replayed once it is chosen (a stock with one tile left needs no choice).

Observation tensor: the engine's observation of the seat (`Game.observe`), zeros while the deal
is still being drawn. Information state string, with perfect recall: at each of the seat's
decisions the change in its observation since its previous one (the first: its whole
observation, its dealt hand in it), and the action it took there; now, the change since its last
decision (`decision_key`); all after the seat's number (an observation is seat-relative, so two
seats can see the same). That is the history an agent sees in our fronts, which show a seat its
observation at its own decisions, so a policy over these strings plays in the PettingZoo env as
it does here (the tabular agent, agents/tabular.py). The observation at a decision shows every
tile played and by whom, the ends, hand sizes, draws and what each seat showed it lacks; what it
leaves out is the order of events between two of the seat's decisions and whether another seat's
move in between was its decision or a forced step (the env shows that only to a seat that looks
in between). Rewards and returns: the engine's rewards (``Game.rewards``) after each step, summed.

Small games (at most 6 tiles: the double-two configs) keep every state's children once
computed (the tree is walked many times over by CFR and best responses); bigger ones recompute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import registry
from .core import H_DONE, H_TURN, ConfigError, DominoError, Game, StateError
from .tiles import TILE_A, TILE_B

PREFIX = "domino_"
NONE_PARAM = -1  # a config value None, as a game parameter (pyspiel parameters are never None)
CACHE_MAX_TILES = 6  # games with at most this many tiles (double-two) keep their states' children


def pyspiel_module():
    """The pyspiel module; DominoError saying how to install it if it is missing."""
    try:
        import pyspiel
    except ImportError as err:  # pragma: no cover - depends on the install
        raise DominoError("domino_envs.openspiel needs OpenSpiel: pip install 'domino-envs[openspiel]' "
                          "(open-spiel==2.0.2)") from err
    return pyspiel


def short_name(env_name: str) -> str:
    """OpenSpiel's name of a registered env: ``domino_`` + the env name (``domino_draw_v0``)."""
    return PREFIX + env_name


def _defaults(env_name: str) -> dict:
    return registry.make_game(env_name).config_dict()


def params_of(env_name: str, config: dict) -> dict:
    """Game parameters (pyspiel values: no None) for a config of a registered env."""
    defaults = _defaults(env_name)
    unknown = [k for k in config if k not in defaults]
    if unknown:
        raise ConfigError(f"{env_name}: unknown config key(s) {unknown}; allowed keys: {list(defaults)}")
    return {k: (NONE_PARAM if v is None else v) for k, v in config.items()}


def config_of(env_name: str, params: dict) -> dict:
    """The engine config of game parameters: ``-1`` for a key whose default is None means None."""
    defaults = _defaults(env_name)
    config = {}
    for key, value in params.items():
        if key not in defaults:
            raise ConfigError(f"{short_name(env_name)}: unknown parameter {key!r}; allowed: {list(defaults)}")
        if defaults[key] is None and value == NONE_PARAM:
            value = None
        config[key] = value
    return config


# ---------------------------------------------------------------------------------- the tree
@dataclass(frozen=True, eq=False)
class _Spec:
    """What the states of one game share: the engine and the shape of its deal."""

    engine: Game
    n: int
    n_tiles: int
    hand_sizes: tuple
    stock_size: int
    first_fixed: int | None  # None: a chance node picks the first seat
    first_used: bool  # whether a deal names "first" (False where the rules pick the starter)
    pairs: bool  # deal tiles as (a, b) pairs (line games) or as ids (Magic-7)
    cache: bool

    def __deepcopy__(self, memo):  # shared by every state of the game, never copied
        return self

    def token(self, t: int):
        return (int(TILE_A[t]), int(TILE_B[t])) if self.pairs else int(t)

    def tile_id(self, token) -> int:
        if self.pairs:
            a, b = sorted(int(x) for x in token)
            return b * (b + 1) // 2 + a
        return int(token)


def _spec_of(engine: Game) -> _Spec:
    c = engine.config_dict()
    if c.get("match") is True or c.get("num_games", 1) != 1:
        raise ConfigError(f"{engine.name}: the OpenSpiel game is one hand; match mode deals later hands from the "
                          f"engine's own random stream (no chance nodes): use match=False (num_games=1)")
    row = engine.new_state()
    engine.reset(row, 0)
    deal = engine.deal_of(row)
    hands = deal["hands"]
    stock = deal.get("stock", [])
    pairs = any(isinstance(t, (tuple, list)) for h in hands for t in h)
    sizes = tuple(len(h) for h in hands)
    n_tiles = int(getattr(engine, "n_tiles", sum(sizes) + len(stock)))
    key = type(engine).first_key
    first_fixed = None if key is not None and c.get(key) is None else (c.get(key) if key else None)
    return _Spec(engine, engine.num_players, n_tiles, sizes, len(stock), first_fixed, key is not None, pairs,
                 n_tiles <= CACHE_MAX_TILES)


def deal_count(engine: Game) -> int:
    """How many deals the game's chance nodes spread over: the ways to deal every hand, times the
    seats when chance picks the first (stock draws come on top). What bounds a full tree walk."""
    spec = _spec_of(engine)
    count, left = 1, spec.n_tiles
    for size in spec.hand_sizes:
        count *= math.comb(left, size)
        left -= size
    return count * (spec.n if spec.first_fixed is None and spec.first_used else 1)


FIRST, DEAL, STOCK, DECISION, TERMINAL = range(5)


def obs_delta(old: np.ndarray | None, new: np.ndarray) -> str:
    """The entries of `new` that differ from `old` (zeros if None), as 'index:value' items."""
    diff = np.flatnonzero(new if old is None else new != old)
    return ",".join(f"{i}:{new[i]:g}" for i in diff)


def decision_key(key: str, last_obs: np.ndarray | None, obs: np.ndarray) -> str:
    """A seat's decision key (``_Node.decision_key``) at a decision: its key after its last action,
    extended by the change in its observation since its last decision."""
    return f"{key}|{obs_delta(last_obs, obs)}"


class _Node:
    """One history point (shared by the states at it, never changed once built; see module doc)."""

    __slots__ = ("spec", "kind", "first", "hands", "stock", "actions", "pending", "rows", "obs",
                 "dkeys", "dobs", "returns", "rewards", "children", "player", "legal", "outcomes")

    def __deepcopy__(self, memo):
        return self

    def __init__(self, spec: _Spec):
        self.spec = spec
        self.first = spec.first_fixed
        self.hands = tuple(() for _ in range(spec.n))
        self.stock = ()
        self.actions = ()
        self.pending = None
        self.rows = None
        self.obs = None
        self.dkeys = tuple("" for _ in range(spec.n))  # decision_key: the history a seat's agent sees
        self.dobs = tuple(None for _ in range(spec.n))
        self.returns = np.zeros(spec.n)
        self.rewards = np.zeros(spec.n)
        self.children = {} if spec.cache else None
        self.player = None
        self.legal = None
        self.outcomes = None
        self._classify()

    def _copy(self) -> _Node:
        new = object.__new__(_Node)
        for name in _Node.__slots__:
            setattr(new, name, getattr(self, name))
        new.children = {} if self.spec.cache else None
        new.rewards = np.zeros(self.spec.n)
        new.legal = new.outcomes = None
        return new

    # ---- what kind of node
    def _dealing_seat(self) -> int:
        for k, h in enumerate(self.hands):
            if len(h) < self.spec.hand_sizes[k]:
                return k
        return -1

    def _classify(self) -> None:
        if self.first is None and self.spec.first_used:
            self.kind, self.player = FIRST, -1
        elif self.rows is None and self._dealing_seat() >= 0:
            self.kind, self.player = DEAL, -1
        elif self.rows is None:  # the deal is complete but needs a stock tile nobody chose yet
            self.kind, self.player = STOCK, -1
        elif self.rows[0][H_DONE]:
            self.kind, self.player = TERMINAL, -4
        else:
            self.kind, self.player = DECISION, int(self.rows[0][H_TURN])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.outcomes is None:
            spec = self.spec
            if self.kind == FIRST:
                self.outcomes = [(k, 1.0 / spec.n) for k in range(spec.n)]
            elif self.kind == DEAL:
                k = self._dealing_seat()
                dealt = {t for h in self.hands for t in h}
                low = self.hands[k][-1] + 1 if self.hands[k] else 0
                avail = [t for t in range(low, spec.n_tiles) if t not in dealt]
                need = spec.hand_sizes[k] - len(self.hands[k])
                total = math.comb(len(avail), need)
                # dealt in increasing id: t is this hand's next tile in C(tiles above t, need - 1) of
                # the C(available, need) equally likely sets
                out = []
                for i, t in enumerate(avail):
                    ways = math.comb(len(avail) - i - 1, need - 1)
                    if ways:
                        out.append((t, ways / total))
                self.outcomes = out
            else:
                pool = self._stock_pool()
                self.outcomes = [(t, 1.0 / len(pool)) for t in pool]
        return self.outcomes

    def _stock_pool(self) -> list[int]:
        """The stock tiles whose place in the draw order is still open, ascending."""
        used = {t for h in self.hands for t in h} | set(self.stock)
        if self.spec.stock_size == 0:
            return []
        return [t for t in range(self.spec.n_tiles) if t not in used]

    # ---- the engine
    def _deal(self, rest: list[int]) -> dict:
        spec = self.spec
        deal = {"hands": [[spec.token(t) for t in h] for h in self.hands]}
        if spec.stock_size:
            deal["stock"] = [spec.token(t) for t in list(self.stock) + rest]
        if spec.first_used:
            deal["first"] = int(self.first)
        return deal

    def _build(self):
        """The two engine rows of the deal so far with every accepted decision replayed."""
        engine = self.spec.engine
        rest = self._stock_pool()
        orders = [rest, rest[1:] + rest[:1]] if len(rest) >= 2 else [rest]
        rows = []
        for order in orders:
            row = engine.new_state()
            engine.set_deal(row, self._deal(order))
            for a in self.actions:
                engine.step(row, a)
            rows.append(row)
        return rows

    def _same(self, rows) -> bool:
        """Whether the rows agree in everything any seat sees (a single row agrees with itself)."""
        if len(rows) == 1:
            return True
        engine, a, b = self.spec.engine, rows[0], rows[1]
        if a[H_DONE] != b[H_DONE] or a[H_TURN] != b[H_TURN]:
            return False
        if not np.array_equal(engine.rewards(a), engine.rewards(b)):
            return False
        return all(np.array_equal(engine.observe(a, k), engine.observe(b, k)) for k in range(self.spec.n))

    def _event(self, rows, actor: int | None, action: int | None) -> None:
        """Accept rows after an engine step that drew no unchosen tile: the node's engine state."""
        spec, engine = self.spec, self.spec.engine
        if action is not None:
            self.actions = self.actions + (action,)
        self.rows = rows
        self.pending = None
        self.rewards = np.asarray(engine.rewards(rows[0]), dtype=float)
        self.returns = self.returns + self.rewards
        self.obs = tuple(engine.observe(rows[0], k) for k in range(spec.n))

    def _advance(self, action: int | None, base) -> None:
        """Take `action` (None: the deal's own forced steps, which set_deal takes) from the rows
        `base` (None: rebuilt from the deal): accept it, or make this node the chance node of the
        stock tile the engine draws next, to be retried once it is chosen (`child`)."""
        if base is None:
            base = self._build()
        actor = None if action is None else int(base[0][H_TURN])
        rows = base
        if action is not None:
            rows = [r.copy() for r in base]
            for r in rows:
                self.spec.engine.step(r, action)
        if self._same(rows):
            self._event(rows, actor, action)
        else:  # the two rows drew different tiles: a draw nobody chose yet (>= 2 tiles open)
            self.rows, self.pending = None, action

    def child(self, a: int) -> _Node:
        """The node after action or chance outcome `a` (kept, for small games)."""
        if self.children is not None and a in self.children:
            return self.children[a]
        new = self._copy()
        if self.kind == FIRST:
            new.first = a
        elif self.kind == DEAL:
            k = self._dealing_seat()
            hands = list(self.hands)
            hands[k] = hands[k] + (a,)
            new.hands = tuple(hands)
            if new._dealing_seat() < 0:
                new._advance(None, None)
        elif self.kind == STOCK:
            new.stock = self.stock + (a,)
            new._advance(self.pending, None)
        elif self.kind == DECISION:
            p = self.player
            new.dkeys = tuple(f"{self.decision_key(p)}>a{a}" if k == p else key for k, key in enumerate(self.dkeys))
            new.dobs = tuple(self.obs[p] if k == p else o for k, o in enumerate(self.dobs))
            new._advance(a, self.rows)
        else:
            raise DominoError("the game is over: no action applies")
        new._classify()
        if self.children is not None:
            self.children[a] = new
        return new

    def decision_key(self, seat: int) -> str:
        """The seat's information state string (module doc): at each of its decisions the change in
        its observation since its last one and the action it took; the change since then. What the
        agents compute from the observations they are shown (agents/tabular.py)."""
        return decision_key(self.dkeys[seat], self.dobs[seat], self.obs[seat])

    def info(self, seat: int) -> str:
        """The information state string: the seat, then its decision key (while the deal is drawn:
        its tiles dealt so far)."""
        if self.obs is None:
            return f"p{seat} deal:" + ",".join(str(t) for t in self.hands[seat])
        return f"p{seat}{self.decision_key(seat)}"

    def legal_actions(self) -> list[int]:
        if self.legal is None:
            self.legal = self.spec.engine.legal_actions(self.rows[0]) if self.kind == DECISION else []
        return self.legal


# ---------------------------------------------------------------------------------- pyspiel
_CLASSES: dict = {}


def _classes():
    """The pyspiel Game, State and observer classes (built on first use: pyspiel is optional)."""
    if _CLASSES:
        return _CLASSES
    pyspiel = pyspiel_module()

    class DominoSpielState(pyspiel.State):
        """A history of one of our games (module doc): the shared tree node it is at."""

        def __init__(self, game, node: _Node):
            super().__init__(game)
            self._node = node

        @property
        def node(self) -> _Node:
            return self._node

        def engine_row(self) -> np.ndarray | None:
            """A copy of the engine row of this history (None while the deal or a draw is open)."""
            rows = self._node.rows
            return None if rows is None else rows[0].copy()

        def current_player(self):
            p = self._node.player
            if p == -1:
                return pyspiel.PlayerId.CHANCE
            if p == -4:
                return pyspiel.PlayerId.TERMINAL
            return p

        def _legal_actions(self, player):
            return list(self._node.legal_actions()) if player == self._node.player else []

        def chance_outcomes(self):
            return list(self._node.chance_outcomes()) if self._node.player == -1 else []

        def _apply_action(self, action):
            self._node = self._node.child(int(action))

        def resample_from_infostate(self, player, probability_sampler):
            """A history `player` cannot tell from this one, for OpenSpiel's ISMCTS (`resample`), seeded by
            a draw of `probability_sampler` (an OpenSpiel sampler: a uniform number in [0, 1) a call)."""
            seed = int(float(probability_sampler()) * 2.0 ** 53)
            return resample(self, int(player), np.random.default_rng(seed))

        def _action_to_string(self, player, action):
            node, spec = self._node, self._node.spec
            if player == pyspiel.PlayerId.CHANCE:
                if node.kind == FIRST:
                    return f"first seat {action}"
                what = "deal" if node.kind == DEAL else "draw"
                return f"{what} {spec.token(action)}"
            return spec.engine.describe_action(int(action))

        def is_terminal(self):
            return self._node.kind == TERMINAL

        def returns(self):
            return [float(x) for x in self._node.returns]

        def rewards(self):
            return [float(x) for x in self._node.rewards]

        def __str__(self):
            node = self._node
            return (f"first={node.first} hands={[list(map(node.spec.token, h)) for h in node.hands]} "
                    f"stock={[node.spec.token(t) for t in node.stock]} actions={list(node.actions)}"
                    + ("" if node.pending is None else f" pending={node.pending}"))

    class DominoObserver:
        """Our observation as the tensor; the perfect-recall history as the string (module doc)."""

        def __init__(self, size: int, perfect_recall: bool):
            self.perfect_recall = perfect_recall
            self.tensor = np.zeros(size, np.float32)
            self.dict = {"observation": self.tensor}

        def set_from(self, state, player):
            obs = state.node.obs
            self.tensor[:] = 0.0 if obs is None else obs[player]

        def string_from(self, state, player):
            node = state.node
            if self.perfect_recall:
                return node.info(player)
            return "" if node.obs is None else obs_delta(None, node.obs[player])

    _CLASSES.update(pyspiel=pyspiel, State=DominoSpielState, Observer=DominoObserver)
    return _CLASSES


def _game_class(env_name: str):
    """The pyspiel.Game subclass of a registered env, with its GameType."""
    c = _classes()
    pyspiel = c["pyspiel"]
    defaults = _defaults(env_name)
    players = [defaults["num_players"]]
    for field in ("num_players",):  # every seat count the engine's Config accepts
        for k in range(1, 9):
            try:
                registry.make_game(env_name, **{field: k})
            except DominoError:
                continue
            players.append(k)
    game_type = pyspiel.GameType(
        short_name=short_name(env_name),
        long_name=f"{registry.title(env_name)} (domino-envs {env_name})",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=max(players),
        min_num_players=min(players),
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params_of(env_name, defaults),
    )

    class DominoSpielGame(pyspiel.Game):
        """A registered env as an OpenSpiel game (module doc); `engine` and `spec` are ours."""

        def __init__(self, params=None):
            config = config_of(env_name, {**params_of(env_name, defaults), **dict(params or {})})
            engine = registry.make_game(env_name, **config)
            spec = _spec_of(engine)
            decisions = engine.max_decisions() if hasattr(engine, "max_decisions") else spec.n_tiles
            bound = float(engine.obs_high())
            info = pyspiel.GameInfo(
                num_distinct_actions=engine.num_actions,
                max_chance_outcomes=max(spec.n_tiles, spec.n),
                num_players=spec.n,
                min_utility=-bound,
                max_utility=bound,
                utility_sum=0.0,
                max_game_length=int(decisions) + spec.n_tiles + 1,
            )
            super().__init__(game_type, info, params_of(env_name, config))
            self.engine = engine
            self.spec = spec
            self._root = _Node(spec)

        def new_initial_state(self):
            return c["State"](self, self._root)

        def make_py_observer(self, iig_obs_type=None, params=None):
            perfect = iig_obs_type is not None and iig_obs_type.perfect_recall
            return c["Observer"](self.engine.obs_size, perfect)

    DominoSpielGame.__name__ = f"DominoSpielGame_{env_name}"
    return game_type, DominoSpielGame


_REGISTERED: set = set()


def register(names=None) -> list[str]:
    """Register every registered env (or those named) as a pyspiel game; the short names."""
    pyspiel = _classes()["pyspiel"]
    out = []
    for env_name in (registry.game_names() if names is None else names):
        short = short_name(env_name)
        if short not in _REGISTERED and short not in pyspiel.registered_names():
            game_type, game_cls = _game_class(env_name)
            pyspiel.register_game(game_type, game_cls)
        _REGISTERED.add(short)
        out.append(short)
    return out


def load_game(env_name: str, **config):
    """The pyspiel game of a registered env with `config` (registered first if need be)."""
    if env_name not in registry.GAMES:
        raise ConfigError(f"unknown game {env_name!r}; registered games: {registry.game_names()}")
    register([env_name])
    return _classes()["pyspiel"].load_game(short_name(env_name), params_of(env_name, config))


def engine_row(state) -> np.ndarray | None:
    """A copy of the engine row of an OpenSpiel state of ours (None while the deal or a draw is open)."""
    return state.engine_row()


def deal_outcomes(spec: _Spec, deal: dict):
    """The chance outcomes of an engine deal (`set_deal`'s format): a function of a chance node giving the
    outcome that deals it there (the first seat, each hand's tiles in increasing id, the stock in its order)."""
    hands = [sorted(spec.tile_id(t) for t in h) for h in deal["hands"]]
    stock = [spec.tile_id(t) for t in deal.get("stock", [])]

    def outcome(node: _Node) -> int:
        if node.kind == FIRST:
            return int(deal["first"])
        if node.kind == DEAL:
            k = node._dealing_seat()
            return hands[k][len(node.hands[k])]
        if node.kind == STOCK:
            return stock[len(node.stock)]
        raise DominoError("deal_outcomes: the node is no chance node")

    return outcome


RESAMPLE_TRIES = 10_000  # the replay's search steps before a resample gives up (module doc: fails closed)


def resample(state, seat: int, rng: np.random.Generator):
    """A new state at a history `seat` cannot tell from `state`'s (the same information state string): the
    engine's `sample_hidden` of the seat (every tile it cannot see redealt consistently with what it saw),
    its deal (`deal_of`: the hands as dealt, the stock in draw order) taken at the chance nodes and
    `state`'s moves replayed on it. What ISMCTS draws its worlds from (`resample_from_infostate`).

    The engine takes a seat's only legal move itself, so a tree's decisions are its real choices, and a
    redealt hand can turn another seat's choice into a forced move or the reverse: the replay then searches
    the other seats' moves, the recorded one first, for the history whose information state string for
    `seat` is `state`'s (checked at each of the seat's decisions on the way; in a line game every move is
    checked against the placements laid so far, `line`, which the seat saw). DominoError where none is
    found (the engine's sampler and this replay disagree: a bug to report, never a wrong world)."""
    node = state.node
    if node.rows is None:
        raise DominoError("resample: the state is a chance node (the deal or a draw is open); resample at a decision "
                          "or the end")
    if not 0 <= seat < node.spec.n:
        raise DominoError(f"resample: seat {seat} is not a seat of this game (0..{node.spec.n - 1})")
    spec, engine = node.spec, node.spec.engine
    try:
        deal = engine.deal_of(engine.sample_hidden(node.rows[0], seat, rng))
    except StateError as err:  # a sampled row keeps no deck order of what was drawn
        raise DominoError(f"resample: {engine.name} cannot yet rebuild a history seat {seat} cannot tell apart once "
                          f"a tile has been drawn ({err}); it can in the Block Game, and in the Draw Game before the "
                          "first draw") from None
    outcome = deal_outcomes(spec, deal)
    new = state.get_game().new_initial_state()
    while new.is_chance_node():  # the redealt deal
        new.apply_action(outcome(new.node))
    target = node.info(seat)
    moves = node.actions
    budget = [RESAMPLE_TRIES]
    # a line game's placements, forced ones too, in order: what the seat saw laid, so every prefix prunes
    truth = engine.line(node.rows[0]) if hasattr(engine, "line") else None

    def replay(at_state, done: int):
        """`at_state` after `done` of the recorded moves: the history reaching `target`, or None."""
        budget[0] -= 1
        if budget[0] < 0:
            return None
        at = at_state.node
        while at.kind == STOCK:  # a draw: the redealt stock's next tile
            at_state = at_state.child(outcome(at))
            at = at_state.node
        if truth is not None:
            laid = engine.line(at.rows[0])
            if laid != truth[:len(laid)]:
                return None
        if at.kind == DECISION and at.player == seat or at.kind == TERMINAL:
            info = at.info(seat)
            if info == target:  # moves left over were forced here: the engine took them already
                return at_state
            if at.kind == TERMINAL or not target.startswith(info + ">"):
                return None  # the seat's own record differs from here on
        legal = at.legal_actions()
        tries = []
        if done < len(moves):
            a = moves[done]
            # the recorded move, or (not legal here) one the engine forced here and took already
            tries.append((a, done + 1) if a in legal else (None, done + 1))
        if at.player != seat:  # a move the engine forced in the recorded history, a choice here
            tries += [(b, done) for b in legal if done >= len(moves) or b != moves[done]]
        for a, nxt in tries:
            found = replay(at_state if a is None else at_state.child(a), nxt)
            if found is not None:
                return found
        return None

    found = replay(new, 0)
    if found is None:
        raise DominoError(f"resample: no replay of seat {seat}'s history on the redealt {engine.name} deal was found "
                          f"within {RESAMPLE_TRIES} steps (please report it, with the state: {state})")
    return found
