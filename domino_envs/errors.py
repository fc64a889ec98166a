"""Every error the package raises for bad input, in one module that imports nothing of ours: each is
a `DominoError` (a ValueError) that names the bad value and what is allowed."""
from __future__ import annotations

from typing import Any


class DominoError(ValueError):
    """Base class of every error this package raises for bad input."""


class ConfigError(DominoError):
    """An unknown config key or a value outside what the rules allow."""


class IllegalActionError(DominoError):
    """An action that the rules do not allow now. Names the action, its meaning and the legal set."""

    def __init__(self, message: str, action: Any = None, legal: list[int] | None = None,
                 kind: str = "illegal"):
        super().__init__(message)
        self.action = action
        self.legal = legal or []
        self.kind = kind  # "type", "range", "over" (episode ended) or "illegal" (against the rules)


class DealError(DominoError):
    """A malformed deal passed to reset(options={"deal": ...})."""


class SamplingError(DominoError):
    """No state consistent with a seat's information was found: the engine state contradicts its
    own public record (a bug, or a hand-edited state). Never answered with the true state."""


class StateError(DominoError):
    """A state row or output buffer the engine cannot use: wrong type, dtype, shape or layout, or
    (``Game.validate``) contents outside what the rules can produce. Names what is wrong."""


class ReplayError(DominoError):
    """A replay that cannot be loaded, or that no longer plays as recorded. Names the line or the
    first step that does not match."""


class CheckpointError(DominoError):
    """A policy or training checkpoint that is unreadable or made for another game / shape."""


class PillowMissingError(ConfigError):
    """Pictures need Pillow, which is an optional dependency."""


class ProtocolError(ConfigError):
    """A benchmark protocol (or its frozen deals) that no longer matches the fingerprint recorded
    for its version: bump the version rather than change what published numbers meant."""


class MoveEntryError(DominoError):
    """A move as typed or replied that names no legal move (empty, out of range, not an action id,
    unknown, illegal, ambiguous). `problem` is the one line saying what is wrong; the message adds
    the legal moves, numbered as the text view numbers them."""

    def __init__(self, problem: str, kind: str, legal: list[int], names: list[str]):
        moves = "; ".join(f"{i}. {nm}" for i, nm in enumerate(names, 1))
        super().__init__(f"{problem} (legal moves: {moves})" if names else problem)
        self.problem = problem
        self.kind = kind  # empty, range, id, unknown, illegal, ambiguous
        self.legal = list(legal)
        self.names = list(names)
