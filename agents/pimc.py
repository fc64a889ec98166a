"""PIMC: Perfect-Information Monte Carlo search, the strong baseline.

At each decision with more than one legal action the agent samples N full states that its seat
cannot tell apart from the real one (``game.sample_hidden(state, seat, rng)``: every unseen tile
redealt consistently with what the seat knows), and from each sample plays every legal action
followed by a fast rollout to the end of the episode in the compiled engine. The action with the
best mean win share (or return, see `objective`) for its seat wins (random tie-break). A win is
judged on the whole episode, as the harness judges it: each seat's return so far (Racehorse's
mid-hand points, earlier hands of a match) plus what the rollout adds. All actions share the same N samples and,
per sample, the same rollout random stream (common random numbers), so their differences are
measured with far less noise than independent rollouts would give.

Information boundary: the harness calls ``observe_state(state, seat, returns)`` right before each
decision of an agent that declares ``searches = True`` (`returns`: each seat's episode return so
far, public in every game; without it PIMC counts from zero, exact only before any reward). That hook
immediately turns the live state into N
``sample_hidden`` draws and keeps only those; the agent never reads the state in any other way,
and its choice is therefore a function of (observation, mask, public information, seed) - the
tests check it gives the same choice when handed a resampled state of the same seat. The one
exception is ``sees="all"``, a measuring device rather than a player (below).

Parameters:
    n         samples (determinizations) per decision (default 32)
    rollout   "greedy" (heaviest-tile policy of agents/greedy.py with epsilon exploration,
              default), "random" (uniform legal actions) or "policy" (a trained actor, below)
    epsilon   probability of a uniform random action in a greedy rollout (default 0.1)
    policy    rollout=policy only: the actor the rollouts follow, "trained" (the policy shipped
              for the game) or the path of a policy file (``mlp:checkpoint=`` files, `agents/trained.py`);
              every seat of a rollout draws its moves from that actor's masked softmax
    temperature  rollout=policy only: the softmax is of logits / temperature (default 1; above 1
              spreads the rollouts' moves, below 1 sharpens them)
    objective "win" (default): the best mean win share (ties shared, as the harness scores a
              hand), mean return breaking ties; "return": the best mean return, win share
              breaking ties
    sees      "own" (default): what its seat sees, as above; "all": every determinization is the true
              state itself (every hand and the stock's order). Not a fair player: the ceiling a search
              of this size reaches with nothing hidden, which bounds what hiding costs in a game (the
              ladder's headroom section, issue 60)

Speed: the rollouts run in one numba function per call, reaching the engine through
domino_envs/dispatch.py (compiled once per game and cached on disk). A new game joins by its
dispatch entry. Policy rollouts cannot run the network inside numba, so they run in lockstep
instead: all N x (legal actions) rollouts of a decision are rows of one batch, and each step is
one compiled call (`_advance_dispatch`: step, score the finished rows, observe and mask the rest)
plus one numpy forward pass of the actor over the live rows. Common random numbers hold here too:
every rollout of sample i draws its moves from the same uniform stream.
"""
from __future__ import annotations

import numpy as np
from numba import literally, njit

from domino_envs.core import H_DONE, H_REWARD, H_TURN
from domino_envs.dispatch import game_id, mask_one, observe_one, specialize, step_one
from domino_envs.errors import CheckpointError
from domino_envs.outcome import win_share_of
from domino_envs.rng import rng_below, rng_next, seed_from_generator
from domino_envs.sampling import checked_sample

from .actions import greedy_scores
from .trained import check_meta, load_policy, mlp_logits, shipped_path

ROLLOUTS = {"random": 0, "greedy": 1, "policy": 2}  # policy: lockstep batch, not _policy
SEES = ("own", "all")  # what a determinization is drawn from: the seat's view, or the true state (module doc)
MAX_ROLLOUT_STEPS = 2000


@njit(cache=True, _nrt=False)
def _policy(mask, kind, eps, weight, rng):
    """An action from int8 `mask`: uniform (kind 0) or epsilon-greedy on `weight` (kind 1)."""
    count = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            count += 1
    if count == 0:
        return -1
    explore = kind == 0
    if not explore and eps > 0.0:
        u = np.float64(rng_next(rng, 0) >> np.uint64(11)) / 9007199254740992.0
        explore = u < eps
    if explore:
        k = rng_below(rng, 0, count)
        for a in range(mask.shape[0]):
            if mask[a]:
                if k == 0:
                    return a
                k -= 1
    best = -1
    best_w = -1e300
    ties = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            w = weight[a]
            if w > best_w:
                best_w = w
                best = a
                ties = 1
            elif w == best_w:  # reservoir tie-break
                ties += 1
                if rng_below(rng, 0, ties) == 0:
                    best = a
    return best


@njit(cache=True, _nrt=False)
def _score(tot, base, n_players, seat, out, j):
    """Add seat's win share of the episode returns `tot` (domino_envs/outcome.py's rule) and its
    return after the search point (tot - base) to out[j]."""
    out[j, 0] += win_share_of(tot, n_players, seat)
    out[j, 1] += tot[seat] - base[seat]


@njit(cache=True)
def _search_dispatch(gid, samples, p, seat, legal, seeds, kind, eps, weight, n_actions, n_players, base, out):
    """out[j] = sums over samples of (seat's win share, seat's return) after legal[j] then a rollout;
    base: each seat's episode return before the search point (reward units of the header)."""
    literally(gid)  # one compiled version per game (domino_envs/dispatch.py)
    mask = np.zeros(n_actions, dtype=np.int8)
    tot = np.zeros(n_players, dtype=np.int64)
    rng = np.zeros(1, dtype=np.int64)
    for i in range(samples.shape[0]):
        for j in range(legal.shape[0]):
            s = samples[i].copy()
            rng[0] = seeds[i]
            tot[:] = base
            a = legal[j]
            steps = -1  # the searched action, then up to MAX_ROLLOUT_STEPS rollout steps
            failed = False
            # one step_one call site: each is a full inlined copy of the game's step kernel
            while True:
                if step_one(gid, s, a, p) != 0:
                    failed = True
                    break
                for k in range(n_players):
                    tot[k] += s[H_REWARD + k]
                steps += 1
                if s[H_DONE] != 0 or steps >= MAX_ROLLOUT_STEPS:
                    break
                mask_one(gid, s, p, mask)
                a = _policy(mask, kind, eps, weight, rng)
                if a < 0:
                    break
            if failed:  # cannot happen: legal actions, masked rollouts, consistent samples
                out[j, 0] = -1e300
            else:
                _score(tot, base, n_players, seat, out, j)


@njit(cache=True, _nrt=False)  # allocates nothing
def _advance_dispatch(gid, states, actions, p, live, seat, base, tot, steps, obs, masks, action_of, out):
    """One lockstep step of policy rollouts: every live row takes its action and adds its rewards
    to tot; a row that ends (or passes MAX_ROLLOUT_STEPS) is scored into out[action_of[row]] and
    leaves `live`; the others get the observation and mask of the seat to act next. A step that
    fails marks its action -1e300 (cannot happen: legal actions, masked rollouts, consistent samples)."""
    literally(gid)  # one compiled version per game (domino_envs/dispatch.py)
    n_players = tot.shape[1]
    for i in range(states.shape[0]):
        if live[i] == 0:
            continue
        s = states[i]
        if step_one(gid, s, actions[i], p) != 0:
            out[action_of[i], 0] = -1e300
            live[i] = 0
            continue
        for k in range(n_players):
            tot[i, k] += s[H_REWARD + k]
        steps[i] += 1
        if s[H_DONE] != 0 or steps[i] >= MAX_ROLLOUT_STEPS:
            _score(tot[i], base, n_players, seat, out, action_of[i])
            live[i] = 0
            continue
        mask_one(gid, s, p, masks[i])
        observe_one(gid, s, p, s[H_TURN], obs[i])


def _policy_file(game, policy: str):
    """(layers, path) of the actor a policy rollout follows: "trained" or a policy file's path."""
    if not isinstance(policy, str) or not policy:
        raise CheckpointError(f"PIMCAgent: rollout=policy needs policy=trained or policy=PATH (a policy .npz); "
                              f"got policy={policy!r}")
    path = shipped_path(game.name) if policy == "trained" else policy
    layers, meta = load_policy(path)
    check_meta(meta, game, f"rollout policy {str(path)!r}")
    if meta.get("algo") == "dmc":
        raise CheckpointError(f"PIMCAgent: rollout policy {str(path)!r} is a dmc Q-network; policy rollouts draw from "
                              f"an actor's softmax (a ppo policy file or trained)")
    return [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers], str(path), meta["activation"]


class PIMCAgent:
    """Perfect-Information Monte Carlo search over `sample_hidden` determinizations (module doc)."""

    name = "pimc"
    searches = True

    def __init__(self, game, seed: int | None = None, n: int = 32, rollout: str = "greedy",
                 epsilon: float = 0.1, objective: str = "win", policy: str = "", temperature: float = 1.0,
                 sees: str = "own"):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"PIMCAgent: n={n!r} must be a positive integer (samples per decision)")
        if rollout not in ROLLOUTS:
            raise ValueError(f"PIMCAgent: rollout={rollout!r} is not allowed; allowed values: {list(ROLLOUTS)}")
        if not isinstance(epsilon, (int, float)) or not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"PIMCAgent: epsilon={epsilon!r} must be a number in [0, 1]")
        if objective not in ("win", "return"):
            raise ValueError(f"PIMCAgent: objective={objective!r} is not allowed; allowed values: ['win', 'return']")
        if policy and rollout != "policy":
            raise ValueError(f"PIMCAgent: policy={policy!r} is for rollout=policy only (got rollout={rollout!r})")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 < temperature < np.inf:
            raise ValueError(f"PIMCAgent: temperature={temperature!r} must be a number > 0")
        if temperature != 1.0 and rollout != "policy":
            raise ValueError(f"PIMCAgent: temperature={temperature!r} is for rollout=policy only (got rollout={rollout!r})")
        if sees not in SEES:
            raise ValueError(f"PIMCAgent: sees={sees!r} is not allowed; allowed values: {list(SEES)}")
        self.sees = sees
        self.temperature = float(temperature)
        self.objective = objective
        self.game = game
        self._layers, self.policy, self._activation = (_policy_file(game, policy) if rollout == "policy"
                                                       else (None, "", "relu"))
        self.n = int(n)
        self.rollout = rollout
        self.epsilon = float(epsilon)
        self._weight = greedy_scores(game.action_table())
        self._rng = np.random.default_rng(seed)
        self._samples: np.ndarray | None = None
        self._base = np.zeros(game.num_players, dtype=np.int64)
        self._seat = -1
        self._gid = game_id(game)  # ValueError naming the known engines if dispatch lacks it

    def _run_search(self, *args) -> None:
        # this game's compiled search (found by argument types: cheap next to a search)
        specialize(_search_dispatch, self._gid, *args)(self._gid, *args)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._samples = None

    def observe_state(self, state: np.ndarray, seat: int, returns=None) -> None:
        """Turn the live state into N determinizations for `seat` at once; keep nothing else.

        returns: each seat's episode return so far (game units, as the harness sums them); None
        counts from zero. SamplingError if the state contradicts its public record."""
        g = self.game
        self._seat = int(seat)
        if self.sees == "all":  # the true state itself, n times (the ceiling of the search: module doc)
            self._samples = np.repeat(np.asarray(state)[None, :], self.n, axis=0)
        else:
            self._samples = np.stack([checked_sample(g, state, self._seat, self._rng) for _ in range(self.n)])
        if returns is None:
            self._base[:] = 0
        else:
            r = np.asarray(returns, dtype=np.float64)
            if r.shape != (g.num_players,) or not np.isfinite(r).all():
                raise ValueError(f"PIMCAgent: returns must be {g.num_players} finite numbers (one per seat); got {returns!r}")
            self._base[:] = np.rint(r * g.reward_scale).astype(np.int64)

    def action_values(self, action_mask: np.ndarray):
        """(legal actions, (mean win share, mean return) of each) from the last observe_state's samples."""
        legal = np.flatnonzero(action_mask).astype(np.int64)
        if self._samples is None:
            raise RuntimeError("PIMCAgent: observe_state(state, seat) must be called before each decision "
                               "(the evaluation harness does this for agents with searches = True)")
        out = np.zeros((legal.size, 2), dtype=np.float64)
        if self._layers is not None:
            self._policy_search(legal, out)
            return legal, self._means(out)
        seeds = np.array([seed_from_generator(self._rng) for _ in range(self.n)], dtype=np.int64)
        self._run_search(self._samples, self.game.params, np.int64(self._seat), legal, seeds,
                     np.int64(ROLLOUTS[self.rollout]), self.epsilon, self._weight,
                     np.int64(self.game.num_actions), np.int64(self.game.num_players), self._base, out)
        return legal, self._means(out)

    def _means(self, out: np.ndarray):
        """(mean win share, mean return in game units) of each action from the sums in `out`."""
        return out[:, 0] / self.n, out[:, 1] / self.n / self.game.reward_scale  # the instance's: Magic-7 sets its own

    def _policy_search(self, legal: np.ndarray, out: np.ndarray) -> None:
        """`out` sums of every (sample, legal action) rollout, the rollouts following the actor in
        lockstep (module doc): row i*L + j is sample i after legal[j]."""
        g, n, L = self.game, self.n, legal.size
        rows = n * L
        states = np.repeat(self._samples, L, axis=0)
        actions = np.tile(legal, n).astype(np.int64)
        action_of = np.tile(np.arange(L, dtype=np.int64), n)
        sample_of = np.repeat(np.arange(n), L)
        live = np.ones(rows, dtype=np.int8)
        tot = np.repeat(self._base[None, :], rows, axis=0)
        steps = np.full(rows, -1, dtype=np.int64)  # the searched action is step 0
        obs = np.zeros((rows, g.obs_size), dtype=np.float32)
        masks = np.zeros((rows, g.num_actions), dtype=np.int8)
        args = (states, actions, g.params, live, np.int64(self._seat), self._base, tot, steps, obs, masks,
                action_of, out)
        advance = specialize(_advance_dispatch, self._gid, *args)
        while True:
            advance(self._gid, *args)
            idx = np.flatnonzero(live)
            if idx.size == 0:
                return
            logits = mlp_logits(self._layers, obs[idx], self._activation).astype(np.float64) / self.temperature
            logits[masks[idx] == 0] = -np.inf
            prob = np.exp(logits - logits.max(axis=1, keepdims=True))
            cum = np.cumsum(prob, axis=1)
            u = self._rng.random(n)[sample_of[idx]] * cum[:, -1]  # one draw per sample: common random numbers
            actions[idx] = np.minimum((cum <= u[:, None]).sum(axis=1), g.num_actions - 1)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("PIMCAgent.act: the action mask has no legal action")
        if legal.size == 1:
            self._samples = None
            return int(legal[0])
        legal, (win, ret) = self.action_values(action_mask)
        self._samples = None
        primary, secondary = (win, ret) if self.objective == "win" else (ret, win)
        top = legal[primary >= primary.max() - 1e-9]
        sec = secondary[primary >= primary.max() - 1e-9]
        best = top[sec >= sec.max() - 1e-9]
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])
