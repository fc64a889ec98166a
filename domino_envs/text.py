"""A seat's view of any game as text, the names of its moves, and a parser for a move as typed.

One text of moves and one move parser serve the terminal (`domino play`, `domino replay`), the web
page and a language model (docs/llm.md). Everything here is a pure function of what one seat
observes (``game.decode(obs)``: observations are seat-relative, row r is the seat r places after the
observer in turn order), never of the state row, so a text is the same whatever the hidden tiles
are (tests/engine/test_text.py checks it with ``sample_hidden``). The texts are generic over the
observation's named pieces, so a new game's pieces show up without a switch on its name; a piece
this module has no wording for is printed as ``name: values`` rather than dropped.

    move_name(game, a) / move_names(game)    the names `domino play` accepts (game.describe_action)
    parse_move(game, text, legal) -> action  a number 1..k of the legal list, a name, a word, #ID
    public_events(game, before, after, me)   what happened between two decoded observations
    SeatLog(game, seat).observe(obs)         the public log one seat keeps
    rules_text(game)                         the rules for this config, from the game's docstring
    seat_text(game, obs, mask, log, seat=)   the seat's whole view and its legal moves, numbered
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache

import numpy as np

from .errors import MoveEntryError
from .registry import title
from .tiles import tile_name as line_tile_name

LOG_LINES = 12  # the recent public lines seat_text shows

_TILE = re.compile(r"\b(\d+)\s*[-|]\s*(\d+)\b")  # a tile as typed: 4-6, 6-4, 4|6


# ---------------------------------------------------------------------------- names
@lru_cache(maxsize=64)
def _names(game) -> tuple[str, ...]:
    return tuple(game.describe_action(a) for a in range(game.num_actions))


def move_name(game, action: int) -> str:
    """The name of an action, as `domino play` shows and accepts it (the game's describe_action)."""
    return _names(game)[int(action)]


def move_names(game) -> list[str]:
    """Every action's name, indexed by action id."""
    return list(_names(game))


def tile_namer(game):
    """The game's own tile names (Magic-7's module has its own `tile_name`: cards), else the line
    games' (``4-6``)."""
    return getattr(sys.modules[type(game).__module__], "tile_name", line_tile_name)


# ---------------------------------------------------------------------------- parsing

def parse_move(game, text: str, legal: list[int]) -> int:
    """The action an entry names among the `legal` ones (in the order the text view numbers them):
    its number 1..k, its name, a word of its name that fits one legal move (a tile in either order
    and as the hand shows it: 6-4, 4-6, 4|6; a card such as QH), or ``#ID`` for an action id.
    MoveEntryError (kind: empty, range, id, unknown, illegal, ambiguous) saying what is wrong and
    naming the legal moves otherwise."""
    names = _names(game)
    legal = [int(a) for a in legal]
    count = len(legal)
    text = str(text).strip()
    low = _TILE.sub(lambda m: "-".join(sorted((m[1], m[2]), key=int)), text.lower())

    def refuse(kind: str, problem: str):
        return MoveEntryError(problem, kind=kind, legal=legal, names=[names[a] for a in legal])

    if not count:
        raise refuse("illegal", "no move is legal now (the seat is not to act)")
    if not low:
        raise refuse("empty", f"empty entry: type a move number 1..{count}")
    if low.lstrip("+-").isdigit():
        k = int(low)
        if not 1 <= k <= count:
            raise refuse("range", f"{k} is out of range: choose a move 1..{count}")
        return legal[k - 1]
    if low.startswith("#"):
        ident = low[1:]
        if not ident.isdigit() or not 0 <= int(ident) < game.num_actions:
            raise refuse("id", f"{text!r} is not an action id: action ids are #0..#{game.num_actions - 1}; "
                               f"or type a move number 1..{count}")
        if int(ident) not in legal:
            raise refuse("illegal", f"illegal move: {names[int(ident)]} is not allowed now; choose a move 1..{count}")
        return int(ident)
    exact = [a for a in range(game.num_actions) if names[a].lower() == low]
    fits = exact or [a for a in range(game.num_actions) if low in names[a].lower().split()]
    if not fits:
        raise refuse("unknown", f"{text!r} is not a number or a move: type a move number 1..{count}")
    ok = [a for a in fits if a in legal]
    if not ok:
        raise refuse("illegal", f"illegal move: {names[fits[0]]} is not allowed now; choose a move 1..{count}")
    if len(ok) > 1:
        nums = ", ".join(str(legal.index(a) + 1) for a in ok)
        raise refuse("ambiguous", f"{text!r} fits several legal moves ({nums}): type the number")
    return ok[0]


# ---------------------------------------------------------------------------- what changed
_SCORE_PIECES = ("scores", "chips", "won", "paid", "penalties")


def _num(x) -> str:
    return f"{float(x):g}"


def _who(k: int, me: int | None, n: int) -> str:
    """A seat by its absolute number, or "you"; with `me` None the seats are relative (+k)."""
    if k == 0 and me is None:
        return "you"
    if me is None:
        return f"seat +{k}"
    return "you" if k == me else f"seat {k}"


def _absolute(r: int, me: int | None, n: int) -> int:
    """Absolute seat of observation row r (relative index when the observer is unknown)."""
    return r if me is None else (me + r) % n


def _turn_row(d: dict) -> int | None:
    if "to_move" not in d or not np.asarray(d["to_move"]).any():
        return None
    return int(np.argmax(d["to_move"]))


def seat_changes(game, before: dict, after: dict, observer: int | None) -> tuple[list[dict], bool]:
    """Per absolute seat (relative with `observer` None), what the public record says it did between
    two decoded observations of one seat: {"played": tile names, "drew": n, "killed": n, "jokers": n,
    "showed": numbers or tiles newly known to be lacking, "flags": words}; and whether a new hand was
    dealt in between (tiles left the table), in which case plays and draws are not diffed."""
    n = len(after["to_move"]) if "to_move" in after else game.num_players
    name = tile_namer(game)
    out = [{"played": [], "drew": 0, "killed": 0, "jokers": 0, "showed": [], "flags": []} for _ in range(n)]
    new_hand = False
    if "played_by" in after:
        on_table = [(d["played_by"] > 0).any(axis=0) for d in (before, after)]
        new_hand = bool((on_table[0] & ~on_table[1]).any())  # tiles left the table (not just changed rows)
    if new_hand:
        return out, True
    for r in range(n):
        c = out[_absolute(r, observer, n)]
        if "played_by" in after:
            c["played"] = [name(int(t)) for t in np.flatnonzero((after["played_by"][r] > 0) & ~(before["played_by"][r] > 0))]
        for piece, key in (("drawn", "drew"), ("killed_counts", "killed"), ("jokers_played", "jokers")):
            if piece in after:
                c[key] = max(0, int(round(float(after[piece][r] - before[piece][r]))))
        if "voids" in after:
            c["showed"] = [str(v) for v in np.flatnonzero((after["voids"][r] > 0) & ~(before["voids"][r] > 0))]
        if "lacks" in after:
            c["showed"] = [name(int(t)) for t in np.flatnonzero((after["lacks"][r] > 0) & ~(before["lacks"][r] > 0))]
        for piece, word in (("no_lead", "passed the lead duty"), ("dominoed", "went out"),
                            ("washed_up", "is washed up"), ("no_special", "showed it holds no special tile")):
            if piece in after and after[piece][r] > 0 and not before[piece][r] > 0:
                c["flags"].append(word)
    return out, False


def public_events(game, before: dict, after: dict, observer: int | None) -> list[str]:
    """What happened between two decoded observations of `observer`'s seat, as public lines in turn
    order from the seat that was to act: "seat 1 played 6-4", "seat 2 drew 2", "seat 3 passed
    (shows no 3, 5)", score changes, a new hand. Pure in the two observations. With `observer`
    None the seats are named relative to the observer ("seat +1")."""
    n = len(after["to_move"]) if "to_move" in after else game.num_players
    changes, new_hand = seat_changes(game, before, after, observer)
    start = _turn_row(before)
    start = 0 if start is None else start
    lines = []
    for d in range(n):
        r = (start + d) % n
        k = _absolute(r, observer, n)
        c = changes[k]
        parts = []
        if c["drew"]:
            parts.append(f"drew {c['drew']}")
        if c["showed"] and not c["drew"] and not c["played"] and "lacks" not in after:
            parts.append("passed")
        if c["played"]:
            parts.append(f"played {', '.join(c['played'])}")
        if c["jokers"]:
            parts.append(f"played {c['jokers']} joker(s)")
        if c["killed"]:
            parts.append(f"killed {c['killed']} tile(s)")
        parts += c["flags"]
        if c["showed"]:
            parts.append(f"shows no {', '.join(c['showed'])}")
        if parts:
            lines.append(f"{_who(k, observer, n)} {' and '.join(parts)}")
    for piece in _SCORE_PIECES:
        if piece in after:
            for r in range(n):
                old, new = float(before[piece][r]), float(after[piece][r])
                if new != old:
                    k = _absolute(r, observer, n)
                    lines.append(f"{_who(k, observer, n)}: {piece} {_num(old)} -> {_num(new)}")
    if new_hand:
        lines.append("--- a new hand is dealt")
    return lines


def forced_moves(game, names: list[str], observer: int, before: dict, after: dict, seat: int,
                 action: int) -> list[str]:
    """What the engine played by itself in one step (only moves, draws), one 'forced:' line per seat
    in turn order from the seat that acted, read from `observer`'s observations before and after it
    (`seat_changes`: only public facts), the tile the named action placed left out. Shared by
    `domino play` and `domino replay`."""
    n = game.num_players
    changes, _ = seat_changes(game, before, after, observer)
    name = names[action].split()
    lines = []
    for k in [(seat + d) % n for d in range(n)]:
        played = list(changes[k]["played"])
        if k == seat:
            own = next((t for t in played if t in name), None)
            if own is not None:
                played.remove(own)
        drew = changes[k]["drew"]
        parts = ([f"drew {drew}"] if drew else []) + ([f"played {', '.join(played)}"] if played else [])
        if parts:
            lines.append(f"  forced: seat {k} {' and '.join(parts)}")
    return lines


def _blank(game) -> dict:
    return game.decode(np.zeros(game.obs_size, dtype=np.float32))


class SeatLog:
    """The public log one seat keeps from its own observations alone (what an agent that sees only
    its observations can know): each `observe` appends the new public lines since the previous one."""

    def __init__(self, game, seat: int):
        self.game = game
        self.seat = int(seat)
        self.reset()

    def reset(self) -> None:
        """Forget everything: a new episode."""
        self.lines: list[str] = []
        self._last = _blank(self.game)

    def observe(self, obs) -> list[str]:
        """The new public lines since the seat's previous observation (appended to `.lines`)."""
        now = self.game.decode(np.array(obs, dtype=np.float32, copy=True))
        new = public_events(self.game, self._last, now, self.seat)
        self._last = now
        self.lines.extend(new)
        return new


# ---------------------------------------------------------------------------- rules
_SPEC_PAREN = re.compile(r"\s?\([A-Z]\d?-\d+\)")  # "(M7-2)"
_SPEC_ID = re.compile(r"\b[A-Z]\d?-\d+:?\s")  # "D-3 ", "T-9: "


def rules_text(game) -> str:
    """The rules for this game and config, for a person or a language model who knows dominoes: the
    players and every rule setting, then the game module's "Rules in brief" (its docstring, kept in
    step with docs/games/*.md by the docs tests) without the spec's rule ids, then how seats and
    moves are written here."""
    n = game.num_players
    doc = sys.modules[type(game).__module__].__doc__ or ""
    brief = doc.split("Rules in brief", 1)[1] if "Rules in brief" in doc else ""
    brief = brief[brief.find("\n- ") + 1:].split("\n\n", 1)[0].replace("``", "") if "\n- " in brief else ""
    brief = re.sub(r"\s*\n\s+(?!- )", " ", brief)  # unwrap each bullet onto one line
    brief = _SPEC_ID.sub(" ", _SPEC_PAREN.sub("", brief)).replace("  ", " ").replace("( ", "(")
    settings = ", ".join(f"{k}={v}" for k, v in game.config_dict().items())
    return "\n".join([
        f"{title(game.name)} ({game.name}), {n} players, seats 0..{n - 1} in turn order 0, 1, .., {n - 1}, 0, ..",
        f"Rule settings of this table: {settings}.",
        "Rules in brief:",
        *[line.strip() for line in brief.splitlines() if line.strip()],
        *(["Tiles are written low-high (6-4 is 4-6)."] if tile_namer(game) is line_tile_name else []),
        "Moves the rules force (a lone legal move, draws, passes) are made by the game itself and appear "
        "in the log. Only your own tiles are shown; the others' hands and the undealt tiles' order are hidden.",
    ])


# ---------------------------------------------------------------------------- the seat's view
_SEAT_WORDS = {  # per-seat count pieces -> wording
    "hand_sizes": "{} tiles", "live_counts": "{} live tiles", "killed_counts": "{} killed tiles",
    "drawn": "drew {}", "jokers_played": "played {} joker(s)",
    "scores": "score {}", "chips": "chips {}", "won": "won {}", "paid": "paid {}",
    "penalties": "penalties {}", "last_penalties": "last game's penalties {}",
}
_SEAT_FLAGS = {"no_lead": "passed the lead duty", "dominoed": "went out", "washed_up": "washed up",
               "no_special": "holds no special tile", "leader": "leads (or holds the lead duty)",
               "setter": "holds the set duty", "to_move": "to move"}
_SCALARS = {  # one-number pieces -> wording
    "boneyard": "boneyard: {} tiles", "market": "market: {} tiles", "pile": "pile: {} tiles",
    "count": "count (sum of the open ends): {}", "placements": "tiles in the line: {}",
    "passes": "passes in a row: {}", "games_played": "games played: {}",
    "hand_jokers": "your live jokers: {}", "killed_jokers": "your killed jokers: {}",
}
_SCALAR_FLAGS = {"traps_live": ("zero tiles may be placed now", "zero tiles may not be placed yet"),
                 "branches_open": ("the spinner's up and down branches are open", None),
                 "extra_turn": ("the seat to act plays an extra turn", None),
                 "extra_play": ("the seat to act makes an obliged extra play", None),
                 "just_drew": ("the seat to act just drew: it must play the tile it drew", None)}
_ARM = {0: "left", 1: "right", 2: "up", 3: "down"}
_SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def _tiles(name, vec) -> str:
    ids = np.flatnonzero(np.asarray(vec).ravel() > 0)
    return " ".join(name(int(t)) for t in ids) if len(ids) else "none"


def _pips(vec) -> list[int]:
    return [int(v) for v in np.flatnonzero(np.asarray(vec) > 0)]


def _table_lines(d: dict, handled: set) -> list[str]:
    """The play on the table: the line's ends, the arms, the spinner, Sum 7's requirements, Magic-7's rows."""
    lines = []
    if "ends" in d:
        handled.add("ends")
        ends = [_pips(row) for row in d["ends"]]
        if not any(ends):
            lines.append("table: empty (the first tile leads)")
        else:
            lines.append("open ends: " + ", ".join(f"{_ARM[i]} {e[0]}" for i, e in enumerate(ends) if e))
    if "arm_ends" in d:
        handled.update(("arm_ends", "arm_tiles", "arm_double"))
        parts = []
        for a, row in enumerate(d["arm_ends"]):
            label = _ARM.get(a, f"arm {a}")
            tiles = int(d["arm_tiles"][a]) if "arm_tiles" in d else 0
            end = _pips(row)
            dbl = " (a crosswise double)" if "arm_double" in d and d["arm_double"][a] > 0 else ""
            if end:
                parts.append(f"{label} {end[0]}{dbl} ({tiles} tiles)")
            elif tiles:
                parts.append(f"{label} closed ({tiles} tiles)")
        lines.append("open ends: " + ("; ".join(parts) if parts else "none (the first tile leads)"))
    if "spinner" in d:
        handled.add("spinner")
        sp = _pips(d["spinner"])
        lines.append(f"spinner: {sp[0]}-{sp[0]}" if sp else "spinner: none yet")
    if "required" in d:
        handled.update(("required", "closed"))
        parts = []
        for side, row in enumerate(d["required"]):
            req = _pips(row)
            closed = "closed" in d and d["closed"][side] > 0
            what = "closed by a zero" if closed else (f"requires {req[0] + 1}" if req else "not open")
            parts.append(f"{_ARM[side]} side {what}")
        lines.append("line: " + "; ".join(parts))
    if "rows" in d:
        handled.update(("rows", "row_ends", "jokers", "covered"))
        for su, row in enumerate(d["rows"]):
            cards = []
            for rk in range(13):
                if row[rk] > 0 or ("jokers" in d and d["jokers"][su][rk] > 0):
                    joker = "*" if "jokers" in d and d["jokers"][su][rk] > 0 else ""
                    cards.append(_RANKS[rk] + joker)
            cov = [("low", "high")[e] for e in range(2) if "covered" in d and d["covered"][su][e] > 0]
            note = f" (the {' and '.join(cov)} end: a joker waits for its card)" if cov else ""
            lines.append(f"{_SUIT_NAMES[su]} row: {' '.join(cards) if cards else '(its 7 is not out)'}{note}")
        lines.append("(* = a card lying on a joker)")
    return lines


def seat_text(game, obs, mask, log_lines: list[str] | None = None, seat: int | None = None,
              log_tail: int = LOG_LINES) -> str:
    """One seat's whole view as text: its hand, the table, each seat's public counts, the boneyard,
    scores, whose turn, the last `log_tail` public lines of `log_lines` (a `SeatLog`'s), and the
    legal moves numbered 1..k with their names (a single legal move said as forced). A pure function
    of the seat's observation, mask and log. `seat` is the observer's absolute seat (observations
    are seat-relative); without it the others are named relative to "you" (seat +1 acts next)."""
    d = game.decode(np.asarray(obs, dtype=np.float32))
    mask = np.asarray(mask)
    n = len(d["to_move"]) if "to_move" in d else game.num_players
    name = tile_namer(game)
    handled = set()
    me = "you" if seat is None else f"you are seat {seat}"
    lines = [f"{title(game.name)} ({game.name}), {n} players; {me}."]
    # your hand
    handled.add("hand")
    hand = d["hand"]
    lines.append(f"your hand ({int((hand > 0).sum())}): {_tiles(name, hand)}")
    if "killed" in d:
        handled.add("killed")
        lines.append(f"your killed tiles: {_tiles(name, d['killed'])}")
    # the table
    lines += _table_lines(d, handled)
    for key, words in _SCALARS.items():
        if key in d:
            handled.add(key)
            lines.append(words.format(_num(d[key][0])))
    for key, (yes, no) in _SCALAR_FLAGS.items():
        if key in d:
            handled.add(key)
            text = yes if d[key][0] > 0 else no
            if text:
                lines.append(text)
    # the seats
    lines.append("seats (in turn order):")
    for r in range(n):
        k = _absolute(r, seat, n)
        facts = []
        for key, words in _SEAT_WORDS.items():
            if key in d:
                handled.add(key)
                facts.append(words.format(_num(d[key][r])))
        if "voids" in d:
            handled.add("voids")
            v = _pips(d["voids"][r])
            if v:
                facts.append(f"lacks {', '.join(map(str, v))}")
        if "lacks" in d:
            handled.add("lacks")
            if d["lacks"][r].any():
                facts.append(f"known to lack {_tiles(name, d['lacks'][r])}")
        for key, words in _SEAT_FLAGS.items():
            if key in d:
                handled.add(key)
                if d[key][r] > 0:
                    facts.append(words)
        if "played_by" in d:
            handled.add("played_by")
            facts.append(f"played {_tiles(name, d['played_by'][r])}")
        label = _who(k, seat, n) if seat is not None else _who(r, None, n)
        lines.append(f"  {label}: {'; '.join(facts)}")
    for key, value in d.items():  # anything this module has no wording for, as it is
        if key not in handled:
            lines.append(f"{key}: {' '.join(_num(v) for v in np.asarray(value).ravel())}")
    # whose turn, the log, the moves
    turn = _turn_row(d)
    if turn is None:
        lines.append("turn: nobody (the game is over)")
    else:
        k = _absolute(turn, seat, n)
        lines.append(f"turn: {_who(k, seat, n) if seat is not None else _who(turn, None, n)}")
    if log_lines:
        lines.append(f"recent events (last {min(log_tail, len(log_lines))} of {len(log_lines)}):")
        lines += [f"  {line}" for line in log_lines[-log_tail:]]
    legal = [int(a) for a in np.flatnonzero(mask)]
    if not legal:
        lines.append("you have no move now.")
    else:
        lines.append("your only legal move (forced):" if len(legal) == 1 else
                     f"your legal moves (reply with a number 1..{len(legal)} or a move's name):")
        lines += [f"  {i}. {move_name(game, a)}" for i, a in enumerate(legal, 1)]
    return "\n".join(lines)
