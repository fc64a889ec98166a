"""One settings pattern for every learner: a dataclass (whose fields may be dataclasses: sections)
declares each param with its default, and the comment after the field says what it means. From
that one declaration come the params a learner takes (`keys`), `--set key=value` and a run's params
(`set_key`, `apply`: the key named in every error, with the allowed ones), and the docs table of
params (`table`; docs/learners.md holds each learner's, tests/docs checks they match).

    @dataclass
    class Search:
        sigma: float = bounded(0.1, gt=0)  # noise scale of each candidate

Bounds are declared on the fields (`bounded`: min, gt, max, choices, or a named rule) and `check`
is the one checker of every learner's settings: a value outside its bound is a ConfigError naming
the dotted key, the value and the bound, the same for every learner.
"""
from __future__ import annotations

import dataclasses
import inspect
import io
import textwrap
import tokenize
from collections.abc import Callable
from functools import cache
from typing import Any

import yaml

from domino_envs.errors import ConfigError


def bounded(default, *, min=None, gt=None, max=None, choices=None, rule: tuple[Callable, str] | None = None,  # noqa: A002
            verify: Callable | None = None):
    """A settings field with its bounds: ``min`` (value >= min), ``gt`` (value > gt), ``max`` (value <=
    max), ``choices`` (one of them), ``rule`` ((predicate, what is allowed): a bound no number states,
    e.g. a non-empty list of positive ints), ``verify`` (verify(key, value) raises the ConfigError
    itself: a bound that depends on the machine, such as a torch device). A list default is copied
    for each instance."""
    bounds = {k: v for k, v in (("min", min), ("gt", gt), ("max", max), ("choices", choices), ("rule", rule),
                                ("verify", verify)) if v is not None}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=bounds)
    return dataclasses.field(default=default, metadata=bounds)


def _allowed(bounds: dict) -> str:
    """The bounds of a field in words, as the errors say them."""
    if "rule" in bounds:
        return bounds["rule"][1]
    if "choices" in bounds:
        return f"allowed: {list(bounds['choices'])}"
    low = f">= {bounds['min']}" if "min" in bounds else f"> {bounds['gt']}" if "gt" in bounds else None
    if low is not None and "max" in bounds and "min" in bounds:
        return f"must be in [{bounds['min']}, {bounds['max']}]"
    return "must be " + " and ".join(x for x in (low, f"<= {bounds['max']}" if "max" in bounds else None) if x)


def _within(value, bounds: dict) -> bool:
    if "rule" in bounds:
        return bool(bounds["rule"][0](value))
    if "choices" in bounds:
        return value in bounds["choices"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return (("min" not in bounds or value >= bounds["min"]) and ("gt" not in bounds or value > bounds["gt"])
            and ("max" not in bounds or value <= bounds["max"]))


def check(obj, prefix: str = "") -> None:
    """The one settings checker: every field declared with bounds (`bounded`), sections included, is
    within them; else ConfigError ``KEY=VALUE is not allowed; BOUND`` naming the dotted key (after
    `prefix`), the value and its bound. The first field out of bounds, in declaration order."""
    for f in dataclasses.fields(obj):
        value, key = getattr(obj, f.name), prefix + f.name
        if dataclasses.is_dataclass(value):
            check(value, key + ".")
        elif "verify" in f.metadata:
            f.metadata["verify"](key, value)
        elif f.metadata and not _within(value, f.metadata):
            raise ConfigError(f"{key}={value!r} is not allowed; {_allowed(f.metadata)}")
        elif _is_int(f.default) and not _is_int(value) and any(b in f.metadata for b in ("min", "gt", "max")):
            raise ConfigError(f"{key}={value!r} is not allowed; an int, {_allowed(f.metadata)}")


def validate(obj) -> None:
    """A settings object's own ``validate()`` where it has one (its bounds, then its rules between keys),
    else its bounds (`check`)."""
    if callable(getattr(obj, "validate", None)):
        obj.validate()
    else:
        check(obj)


def flatten(mapping: dict, prefix: str = "") -> dict:
    """A nested mapping of params as dotted keys: ``{"ppo": {"lr": 1e-4}}`` -> ``{"ppo.lr": 1e-4}`` (a
    value that is not a mapping ends the key; dotted keys may be mixed in)."""
    out = {}
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_spec(text) -> bool:
    """Whether `text` parses as an agent spec of a known agent (whether it fits the game is checked
    when the agent is made): the rule of a field that names an agent."""
    from domino_agents.registry import parse_spec

    try:
        parse_spec(text)
    except ValueError:
        return False
    return True


def positive_ints(value) -> bool:
    """A non-empty list of positive ints (an MLP's hidden widths)."""
    return (isinstance(value, list) and len(value) >= 1
            and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in value))


HIDDEN = (positive_ints, "must be a non-empty list of positive ints")  # the rule of every network.hidden


def _section_fields(obj) -> dict[str, Any]:
    return {f.name: f for f in dataclasses.fields(obj)}


@cache
def meanings(cls: type) -> dict[str, str]:
    """Field name -> the comment after it in the class's source (comment-only lines right after it
    continue it); a field without one is absent, as is every field of a class whose source Python lacks."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source to read (a class made in an interpreter): no meanings
        return {}
    names = {f.name for f in dataclasses.fields(cls)}
    out: dict[str, str] = {}
    last, last_row = None, -1
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.start[1] == 4 and tok.string in names and tok.line.strip().startswith(
                tok.string + ":"):
            last, last_row = tok.string, tok.start[0]
        elif tok.type == tokenize.COMMENT and last is not None:
            text = tok.string.lstrip("#").strip()
            if tok.start[0] == last_row:
                out[last] = text
            elif tok.line.strip().startswith("#") and tok.start[0] == last_row + 1 and last in out:
                out[last] += " " + text
                last_row = tok.start[0]
        elif tok.type == tokenize.NEWLINE and tok.start[0] != last_row:
            last = None
    return out


def keys(obj, sections: tuple[str, ...] | None = None, prefix: str = "") -> dict[str, tuple[Any, str]]:
    """Every dotted key of a settings object (only `sections` at the top, a section name or a dotted
    key each): key -> (its current value, its meaning)."""
    out = {}
    docs = meanings(type(obj))
    for name in _section_fields(obj):
        key = prefix + name
        inside = sections is None or any(key == s or key.startswith(s + ".") for s in sections)
        value = getattr(obj, name)
        if dataclasses.is_dataclass(value):
            if inside or any(s.startswith(key + ".") for s in sections):
                out.update(keys(value, sections, key + "."))
        elif inside:
            out[key] = (value, docs.get(name, ""))
    return out


def _check_type(where: str, current, value):
    """value, if it has the type of the field's current value (ints accepted for floats)."""
    if dataclasses.is_dataclass(current):
        raise ConfigError(f"{where} is a section; set one of its keys: {list(_section_fields(current))}")
    if isinstance(current, bool):
        ok = isinstance(value, bool)
    elif isinstance(current, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(current, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(current, list):
        ok = isinstance(value, list)
    elif isinstance(current, str):
        ok = isinstance(value, str)
    else:
        ok = True
    if not ok:
        raise ConfigError(f"{where}={value!r} must be a {type(current).__name__} like the default {current!r}")
    return value


def set_key(obj, dotted: str, value) -> None:
    """Set one key of a settings object by its dotted path; ConfigError for an unknown key (naming the
    keys allowed there) or a wrong type."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        fields = _section_fields(obj)
        if part not in fields:
            where = ".".join(parts[:i]) or "train"
            raise ConfigError(f"unknown training key {dotted!r}: {where} has keys {list(fields)}")
        if i == len(parts) - 1:
            setattr(obj, part, _check_type(dotted, getattr(obj, part), value))
        else:
            obj = getattr(obj, part)
            if not dataclasses.is_dataclass(obj):
                raise ConfigError(f"unknown training key {dotted!r}: {'.'.join(parts[:i + 1])} is not a section")


def apply(obj, params: dict, owner: str, sections: tuple[str, ...] | None = None, run_sets: dict | None = None):
    """Set each dotted param on `obj`: a key the run sets itself (`run_sets`: key or section -> what
    sets it) or one outside `sections` is a ConfigError naming it and the keys allowed."""
    allowed = keys(obj, sections)
    for key, value in params.items():
        head = key.split(".")[0]
        set_by = (run_sets or {}).get(key) or (run_sets or {}).get(head)
        if set_by:
            raise ConfigError(f"{owner} learner: param {key!r} is set by {set_by}, not by params")
        if key not in allowed:
            raise ConfigError(f"{owner} learner: unknown param {key!r}; allowed: {', '.join(allowed)}")
        set_key(obj, key, value)
    return obj


def parse_override(text: str) -> tuple[str, Any]:
    """'ppo.lr=3e-4' -> ('ppo.lr', 0.0003); values read as YAML."""
    key, eq, raw = text.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"--set {text!r}: write KEY=VALUE, e.g. --set ppo.lr=3e-4")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str):  # YAML reads 3e-4 as a string; numbers in any float spelling count
        try:
            value = float(value)
        except ValueError:
            pass
    return key.strip(), value


def split_set(pairs: list[str] | tuple[str, ...]) -> tuple[list[str], dict[str, Any]]:
    """`--set` pairs as (rule 'KEY=VALUE' pairs, {dotted learner param: value}): a key with a dot
    (``ppo.lr=3e-4``) is a learner's param under its dotted name, any other key a rule key of the game
    (checked by the game). Values read as `parse_override` reads them; a pair without '=' fails there."""
    rules, params = [], {}
    for text in pairs:
        key, value = parse_override(text)
        if "." in key:
            params[key] = value
        else:
            rules.append(text)
    return rules, params


def table(obj, sections: tuple[str, ...] | None = None) -> str:
    """The Markdown table of a settings object's params: key, default, meaning."""
    rows = ["| param | default | meaning |", "|---|---|---|"]
    for key, (value, doc) in keys(obj, sections).items():
        shown = repr(value) if isinstance(value, str) else str(value).replace("True", "true").replace("False", "false")
        rows.append(f"| `{key}` | `{shown}` | {doc.replace('|', '/')} |")
    return "\n".join(rows)


__all__ = ["HIDDEN", "apply", "bounded", "check", "flatten", "is_spec", "keys", "meanings", "parse_override", "positive_ints", "set_key",
           "split_set", "table", "validate"]
