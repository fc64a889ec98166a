"""Dealing tiles: the shuffled deal at reset, and redealing unseen tiles consistently with what a seat
knows (the core of every `sample_hidden`).

A seat that cannot see some tiles knows how many sit in each hidden place (each opponent's hand,
the boneyard, out of play ...) and, from the public history, which tiles some places cannot hold
(an opponent that drew on a 5 holds no 5). `deal_consistent` assigns every unseen tile to a place
so that each place gets exactly its count and only tiles it may hold.

Distribution: uniform over every consistent assignment, by rejection: deal the tiles as a plain
shuffle into the places' counts and keep the deal only if every tile sits where it may
(`UNIFORM_TRIES` tries). Only when every try fails (heavily constrained places: an acceptance
below ~1/1000) does it fall back to a constructive deal that always finds a consistent assignment
when one exists (tiles one at a time to a random allowed place weighted by free room, augmenting
paths when a tile finds no room) but is *not* uniform: it over-weights assignments whose
constrained tiles find room early. PIMC and the leakage tests need only consistency; the
uniformity is what makes PIMC's sample averages estimate the right thing.
The result depends only on the inputs and the random stream, never on the true hidden state.

Failing closed: a game's `_sample_kernel` returns an EMPTY row when it finds no consistent
redeal (an engine state that contradicts its own public record) rather than a copy of the true
state; `Game.sample_hidden` turns that into a `SamplingError`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .core import SamplingError  # noqa: F401 (re-exported: raised by Game.sample_hidden)
from .rng import rng_below, rng_shuffle
from .tiles import lowest_bit, nth_bit, popcount

UNIFORM_TRIES = 2000  # rejection tries before the constructive (non-uniform) fallback


def checked_sample(game, state, seat, rng):
    """game.sample_hidden, which fails closed itself (SamplingError from core.py); kept as the
    name callers and tests use."""
    return game.sample_hidden(state, seat, rng)


@njit(cache=True, _nrt=False)
def _deal_uniform(tiles, n_tiles, allowed, capacity, n_groups, rng_arr, order, assign):
    """One rejection try: a plain shuffle of tiles[:n_tiles] dealt to the groups by capacity
    (uniform over all count-respecting deals); True, with assign[k] = group of tiles[k], iff every
    tile is allowed where it fell (so accepted deals are uniform over the consistent ones)."""
    for i in range(n_tiles):
        order[i] = i
    rng_shuffle(rng_arr, 0, order, n_tiles)
    i = 0
    for g in range(n_groups):
        for _ in range(capacity[g]):
            k = order[i]
            if (allowed[g] >> tiles[k]) & 1 == 0:
                return False
            assign[k] = g
            i += 1
    return True


@njit(cache=True)
def deal_consistent(tiles, n_tiles, allowed, capacity, n_groups, rng_arr):
    """Assign tiles[:n_tiles] to groups 0..n_groups-1 (uniformly, see the module doc).

    allowed[g]: bitmask of tile ids group g may hold; capacity[g]: how many it must hold
    (sum == n_tiles). rng_arr: 1-element int64 array holding the stream. Returns group per
    position of `tiles` (array), or an array whose first entry is -1 if no assignment exists or
    the counts are unusable (a negative capacity, capacities not summing to n_tiles).
    """
    # fails closed on counts it cannot use (a row whose counts contradict its masks): the deal
    # below indexes tiles[] by the capacities, so they must be >= 0 and sum to n_tiles
    total = 0
    for g in range(n_groups):
        if capacity[g] < 0:
            return np.full(1, -1, dtype=np.int64)
        total += capacity[g]
    if total != n_tiles or n_tiles < 0 or n_tiles > tiles.shape[0]:
        return np.full(1, -1, dtype=np.int64)
    assign = np.empty(n_tiles, dtype=np.int64)
    scratch = np.empty(n_tiles, dtype=np.int64)
    for _ in range(UNIFORM_TRIES):
        if _deal_uniform(tiles, n_tiles, allowed, capacity, n_groups, rng_arr, scratch, assign):
            return assign
    return _deal_constructive(tiles, n_tiles, allowed, capacity, n_groups, rng_arr)


@njit(cache=True)
def _deal_constructive(tiles, n_tiles, allowed, capacity, n_groups, rng_arr):
    """deal_consistent's fallback: always finds a consistent assignment when one exists, not
    uniformly (module doc)."""
    order = tiles[:n_tiles].copy()
    rng_shuffle(rng_arr, 0, order, n_tiles)
    assign = np.full(n_tiles, -1, dtype=np.int64)  # by position in `order`
    load = np.zeros(n_groups, dtype=np.int64)
    parent_group = np.empty(n_groups, dtype=np.int64)
    parent_pos = np.empty(n_groups, dtype=np.int64)
    queue = np.empty(n_groups, dtype=np.int64)
    for i in range(n_tiles):
        t = order[i]
        # weighted random choice among allowed groups with room
        room = 0
        for g in range(n_groups):
            if (allowed[g] >> t) & 1:
                room += capacity[g] - load[g]
        if room > 0:
            r = rng_below(rng_arr, 0, room)
            for g in range(n_groups):
                if (allowed[g] >> t) & 1:
                    r -= capacity[g] - load[g]
                    if r < 0:
                        assign[i] = g
                        load[g] += 1
                        break
            continue
        # augmenting path by breadth-first search over groups
        for g in range(n_groups):
            parent_group[g] = -2
        head = 0
        tail = 0
        for g in range(n_groups):
            if (allowed[g] >> t) & 1:
                parent_group[g] = -1
                parent_pos[g] = i
                queue[tail] = g
                tail += 1
        found = -1
        while head < tail and found < 0:
            g = queue[head]
            head += 1
            if load[g] < capacity[g]:
                found = g
                break
            for j in range(i):
                if assign[j] != g:
                    continue
                u = order[j]
                for h in range(n_groups):
                    if parent_group[h] == -2 and (allowed[h] >> u) & 1:
                        parent_group[h] = g
                        parent_pos[h] = j
                        queue[tail] = h
                        tail += 1
        if found < 0:
            fail = np.full(1, -1, dtype=np.int64)
            return fail
        g = found
        while True:
            pos = parent_pos[g]
            pg = parent_group[g]
            assign[pos] = g
            load[g] += 1
            if pg == -1:
                break
            load[pg] -= 1
            g = pg
    # map back to the caller's order of `tiles`
    out = np.empty(n_tiles, dtype=np.int64)
    for i in range(n_tiles):
        for k in range(n_tiles):
            if tiles[k] == order[i]:
                out[k] = assign[i]
                break
    return out


@njit(cache=True, inline="always")
def shuffle_and_deal(s, rng_slot, deck, deck_off, n_tiles, hands_off, n_seats, hand_size):
    """Shuffle tile ids 0..n_tiles-1 into deck[deck_off:] with the row's stream and deal
    hand_size tiles to each seat's bitmask s[hands_off + k] from the front; returns the next deck
    index. `deck` is the row itself or a byte view of it (`s.view(np.int8)`: a packed deck)."""
    for i in range(n_tiles):
        deck[deck_off + i] = i
    rng_shuffle(s, rng_slot, deck, n_tiles, deck_off)
    for k in range(n_seats):
        h = 0
        for i in range(hand_size):
            h |= 1 << np.int64(deck[deck_off + k * hand_size + i])
        s[hands_off + k] = h
    return n_seats * hand_size


@njit(cache=True, _nrt=False)
def mask_to_array(mask, out):
    """Write the set bits of mask into out (ascending); return how many."""
    k = 0
    while mask:
        out[k] = lowest_bit(mask)
        k += 1
        mask &= mask - 1
    return k


@njit(cache=True)
def unseen_setup(s, v, n, hands_off, played_off, n_tiles, deck_pos):
    """The start of a line game's redeal for seat v: (unseen tile mask, those tiles as an array,
    their count, allowed mask per group, capacity per group). Groups 0..n-1 are the seats (each
    opponent may hold any unseen tile until the game narrows `allowed`; v's capacity is 0), group
    n the stock, which holds the deck from `deck_pos` on. Played tiles are the union of the
    per-seat masks at s[played_off + k]."""
    played = 0
    for k in range(n):
        played |= s[played_off + k]
    unseen = ((1 << n_tiles) - 1) & ~played & ~s[hands_off + v]
    tiles = np.empty(n_tiles, dtype=np.int64)
    k = mask_to_array(unseen, tiles)
    allowed = np.zeros(n + 1, dtype=np.int64)
    cap = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        if j != v:
            allowed[j] = unseen
            cap[j] = popcount(s[hands_off + j])
    allowed[n] = unseen
    cap[n] = n_tiles - deck_pos
    return unseen, tiles, k, allowed, cap


@njit(cache=True)
def redeal_attempt(ns, v, n, tiles, k, allowed, cap, rng_arr, hands_off, deck, deck_off, deck_pos,
                   fixed_seat, candidates, pool):
    """One consistent redeal of tiles[:k] into ns, for the line games' `sample_hidden`.

    Groups 0..n-1 are the seats (the observer `v` has capacity 0), group n the stock (boneyard,
    market, out of play), written into deck[deck_off + deck_pos:] (deck: ns or a byte view of
    it, as in `shuffle_and_deal`). If fixed_seat >= 0 that seat holds exactly one tile of
    `candidates` (a tile it just drew and must play, say), exempt from its `allowed`, and the
    rest under the constraints. Uniform over such deals (rejection, as deal_consistent) when
    `candidates` and that seat's `allowed` are disjoint; otherwise, or when rejection keeps
    failing, the candidate is drawn uniformly first and the rest dealt by deal_consistent (not
    uniform). `pool` is scratch of len >= k. False if this attempt found no consistent deal
    (try again: the stream has moved on), or at once if the counts cannot be dealt at all
    (capacities not summing to k, a fixed seat without candidates or room)."""
    fixed = -1
    npool = k
    assign = np.empty(0, dtype=np.int64)
    done = False
    if fixed_seat >= 0 and (candidates == 0 or cap[fixed_seat] < 1):
        return False  # fails closed: no candidate to give, or no room for it
    total = 0
    for g in range(n + 1):
        total += cap[g]
    if total != k:
        return False  # the counts contradict the unseen tiles: nothing consistent to deal
    if fixed_seat >= 0 and (candidates & allowed[fixed_seat]) == 0:
        # exact: the seat may take its allowed tiles or candidates, and must get one candidate
        own = allowed[fixed_seat]
        allowed[fixed_seat] = own | candidates
        trial = np.empty(k, dtype=np.int64)
        scratch = np.empty(k, dtype=np.int64)
        for _ in range(UNIFORM_TRIES):
            if not _deal_uniform(tiles, k, allowed, cap, n + 1, rng_arr, scratch, trial):
                continue
            got = 0
            for i in range(k):
                if trial[i] == fixed_seat and (candidates >> tiles[i]) & 1:
                    got += 1
            if got == 1:
                done = True
                break
        allowed[fixed_seat] = own
        if done:
            for i in range(k):
                pool[i] = tiles[i]
            assign = trial
    if not done:
        if fixed_seat >= 0:
            fixed = nth_bit(candidates, rng_below(rng_arr, 0, popcount(candidates)))
            npool = 0
            for i in range(k):
                if tiles[i] != fixed:
                    pool[npool] = tiles[i]
                    npool += 1
            cap[fixed_seat] -= 1
        else:
            for i in range(k):
                pool[i] = tiles[i]
        assign = deal_consistent(pool, npool, allowed, cap, n + 1, rng_arr)
        if fixed_seat >= 0:
            cap[fixed_seat] += 1
        if npool > 0 and assign[0] < 0:
            return False
    for j in range(n):
        if j != v:
            ns[hands_off + j] = 0
    if fixed >= 0:
        ns[hands_off + fixed_seat] = 1 << fixed
    pos = deck_pos
    for i in range(npool):
        g = assign[i]
        if g < n:
            ns[hands_off + g] |= 1 << pool[i]
        else:
            deck[deck_off + pos] = pool[i]
            pos += 1
    return True


@njit(cache=True, _nrt=False)
def finish_redeal(ns, rng_arr, rng_slot, deck, deck_off, deck_pos, n_tiles):
    """Shuffle the redealt stock in deck (ns or a byte view of it), blank the deck slots dealt
    earlier (not the seat's knowledge) and give the sample a fresh random stream."""
    rng_shuffle(rng_arr, 0, deck, n_tiles - deck_pos, deck_off + deck_pos)
    for i in range(deck_pos):
        deck[deck_off + i] = -1
    ns[rng_slot] = rng_arr[0]
