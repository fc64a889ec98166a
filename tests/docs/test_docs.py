"""The documentation pages (docs/games/*.md, docs/quickstart.md and the reference pages) say what the code does.

The game pages come from the registry: each registered engine names its page (`docs_page`) and
the prefix of its ambiguity ids (`spec_prefix`), and every env of that engine is documented there.
A page is the full text of its game; the engine module's docstring is its summary, kept in step:
the docstring links the page, its ambiguity ids are exactly the page's ambiguity table, its
observation table names the engine's pieces in order with the page's general shapes, and its
``Discrete(...)`` is the page's and gives each env's `num_actions`.

For every game page: the observation table (piece names, shapes, offsets, sizes) and the stated
`num_actions` / `obs_size` equal the engine's for each env's default config; the config table
names every config key with the env's real default; every ambiguity id of the game (the game
module's docstring, which names every id the rules spec resolves: SPEC_IDS) has a row in the
page's ambiguity table, and every flag named there is a config key. Every ```python block of
every page runs (each in a fresh namespace, as a reader would paste it; a page's blocks in order
in one scratch folder), and every `domino ...` command in a ```bash block parses with that
command's own parser (training overrides and agent specs checked too; nothing is trained or
evaluated).

Across the pages and the README: every relative link and picture resolves (to a file, and to a
heading where the link names one), every `python -m domino_training...` command names a module
that runs, and every repository path written in code quotes exists. The README links every page
(it is the front door) and docs/index.md lists every page.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import io
import re
import shlex
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import domino_envs
from domino_envs import registry
from domino_envs.errors import DominoError
from domino_training.learners import interface as learner_registry
from tests.helpers import fenced_blocks, run_snippet

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# The ambiguity ids the project's rules spec resolves, per game page (copied from the spec, ranges
# written out as ids); each game module's docstring names these and the game's own further ids.
# A game the spec has a section for adds its row here (docs/adding_a_game.md).
SPEC_IDS = {
    "draw.md": "D-1..D-5",
    "seven_toed_pete.md": "P-2..P-5",
    "racehorse.md": "T-2..T-10",
    "sum7.md": "S-1..S-8, S-10",
    "magic7.md": "M7-2..M7-4, M7-6, M7-7",
}



def _game_pages() -> dict[str, tuple[Path, str, list[str]]]:
    """page -> (engine module's source file, id prefix, the envs documented on it), from
    registry.GAMES in registry order; an engine without a page is left to the test below."""
    pages: dict[str, tuple[Path, str, list[str]]] = {}
    for env_name in registry.GAMES:
        cls = registry.engine_class(env_name)
        if cls.docs_page:
            source = Path(inspect.getsourcefile(cls))
            pages.setdefault(cls.docs_page, (source, cls.spec_prefix, []))[2].append(env_name)
    return pages


GAME_PAGES = _game_pages()
# The hand-written reference pages (the README's reference moved here); the generated result pages
# (benchmark*.md, baselines.md, trained.md, exploitability.md) are written by commands.
REFERENCE_PAGES = [DOCS / p for p in ("quickstart.md", "envs.md", "tools.md", "training.md", "learners.md",
                                      "rllib.md", "speed.md", "search.md", "adding_a_game.md", "index.md")]
# Every Markdown file a reader can reach: the README and every page under docs/.
MARKDOWN_FILES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
# Every ```python block of those runs, except blocks marked not-run (tests/helpers.py NOT_RUN):
# adding_a_game.md's registry fragment and mirror_placements.md's 14-second measurement.
SNIPPET_PAGES = [p for p in MARKDOWN_FILES if fenced_blocks(p.read_text(), include_not_run=True)]
# Pages that must show runnable code: the game pages, the quickstart and envs.md.
ALL_PAGES = [DOCS / "games" / p for p in GAME_PAGES] + [DOCS / "quickstart.md", DOCS / "envs.md"]
# Pages whose ```bash blocks' `domino ...` commands parse: every Markdown file.
COMMAND_PAGES = MARKDOWN_FILES


# ------------------------------------------------------------------------------ parsing helpers
def page_text(page: str) -> str:
    return (DOCS / "games" / page).read_text()


def tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of a text as rows of stripped cells (the separator row dropped)."""
    found, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def table_with_header(text: str, first_cells: list[str]) -> list[list[str]]:
    """The one table whose header starts with `first_cells`; its rows, header included."""
    hits = [t for t in tables(text) if t[0][:len(first_cells)] == first_cells]
    assert len(hits) == 1, f"expected one table headed {first_cells}, found {len(hits)}"
    return hits[0]


def unquote(cell: str) -> str:
    m = re.fullmatch(r"`([^`]*)`", cell)
    assert m, f"cell {cell!r} should be one `code` span"
    return m.group(1)


def expand_ids(text: str, prefix: str) -> set[str]:
    """Ambiguity ids with `prefix` named in text; ranges like S-4..S-7 or P-2..P-5 expanded."""
    ids = set()
    for m in re.finditer(rf"\b{prefix}-(\d+)(?:\.\.(?:{prefix}-)?(\d+))?", text):
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        ids.update(f"{prefix}-{k}" for k in range(lo, hi + 1))
    return ids


def module_doc(page: str) -> str:
    """The docstring of the engine module whose page this is."""
    return ast.get_docstring(ast.parse(GAME_PAGES[page][0].read_text()))


def game_ids(page: str) -> set[str]:
    """The game's ambiguity ids as its module docstring names them (the spec's and its own)."""
    _, prefix, _ = GAME_PAGES[page]
    return expand_ids(module_doc(page), prefix)


def test_every_registered_game_has_its_page():
    """Each registered engine names a page that exists and its ambiguity-id prefix; every game page
    belongs to a registered engine; the spec's id table names registered pages only."""
    for env_name in registry.GAMES:
        cls = registry.engine_class(env_name)
        assert cls.docs_page, f"{env_name}: engine {cls.__name__} names no docs_page"
        assert (DOCS / "games" / cls.docs_page).is_file(), f"{env_name}: docs/games/{cls.docs_page} is missing"
        assert cls.spec_prefix, f"{env_name}: engine {cls.__name__} names no spec_prefix"
    assert {p.name for p in (DOCS / "games").glob("*.md")} == set(GAME_PAGES)
    assert set(SPEC_IDS) <= set(GAME_PAGES), sorted(set(SPEC_IDS) - set(GAME_PAGES))


@pytest.mark.parametrize("page", list(SPEC_IDS))
def test_module_docstring_names_every_id_of_the_spec(page):
    """So checking a page against the module's ids also checks it against the spec's."""
    prefix = GAME_PAGES[page][1]
    spec_ids = expand_ids(SPEC_IDS[page], prefix)
    assert spec_ids and spec_ids <= game_ids(page), sorted(spec_ids - game_ids(page))


# ------------------------------------------------------------------------------ docstring = the page's summary
def docstring_observation(doc: str) -> list[tuple[str, str]]:
    """(piece, shape) rows of the docstring's observation table: the indented lines after the line
    that starts with "Observation", up to the next blank line (a continuation line has no shape)."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Observation"))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            if rows:
                break
            continue
        m = re.match(r"^ {4}(\w+)\s+(\([^)]*\))", line)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def shape_text(text: str) -> str:
    return re.sub(r"\s+", "", text)


def discrete(text: str, quote: str) -> list[str]:
    """The expressions of every ``Discrete(EXPR)`` in text quoted by exactly `quote` (`` or `)."""
    return re.findall(rf"(?<!`){quote}Discrete\(([^`]*)\){quote}(?!`)", text)


def evaluate(expr: str, names: dict) -> int:
    """An integer expression of numbers, names (from `names`) and + - * //, evaluated safely."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return int(names[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv):
            a, b = ev(node.left), ev(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.FloorDiv: a // b if b else 0}[type(node.op)]
        raise AssertionError(f"{expr!r}: only numbers, names and + - * // are allowed")
    return ev(ast.parse(expr, mode="eval"))


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_module_docstring_links_its_page(page):
    assert f"docs/games/{page}" in module_doc(page), f"the engine module's docstring does not link docs/games/{page}"


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_module_docstring_observation_table_matches_the_engine_and_the_page(page):
    """Its pieces are the engine's, in order, for every env of the page; its shapes are the page's
    general shapes."""
    rows = docstring_observation(module_doc(page))
    page_rows = table_with_header(page_text(page), ["piece", "shape", "offset", "size", "general shape"])[1:]
    for env_name in GAME_PAGES[page][2]:
        names = [name for name, _ in domino_envs.make_game(env_name).obs_pieces()]
        assert [name for name, _ in rows] == names, f"{page}: the docstring's pieces are not {env_name}'s"
    assert [(n, shape_text(s)) for n, s in rows] == [(unquote(r[0]), shape_text(r[4])) for r in page_rows], (
        f"{page}: the docstring's observation shapes differ from the page's general shapes")


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_module_docstring_action_count_matches(page):
    """One ``Discrete(EXPR)`` in the docstring, the same EXPR first in the page's Actions section,
    and EXPR evaluated on each env's engine (its attributes and config) is its num_actions."""
    exprs = discrete(module_doc(page), "``")
    assert len(exprs) == 1, f"{page}: the docstring should state ``Discrete(...)`` once, found {exprs}"
    actions = page_text(page).split("\n## Actions", 1)[1]
    assert discrete(actions, "`")[:1] == exprs, f"{page}: its Actions section does not open with `Discrete({exprs[0]})`"
    for env_name in GAME_PAGES[page][2]:
        game = domino_envs.make_game(env_name)
        names = {**dataclasses.asdict(game.config), **vars(game)}
        assert evaluate(exprs[0], names) == game.num_actions, f"{env_name}: Discrete({exprs[0]})"


# ------------------------------------------------------------------------------ the helpers work
def test_docstring_helpers_parse_as_intended():
    doc = "x\n\nObservation (float32):\n    hand    (28,)   mine\n                    more\n    ends  (2, P)\n\nDeal"
    assert docstring_observation(doc) == [("hand", "(28,)"), ("ends", "(2, P)")]
    assert discrete("``Discrete(2 * n_tiles)`` and `Discrete(57)`", "``") == ["2 * n_tiles"]
    assert discrete("``Discrete(2 * n_tiles)`` and `Discrete(57)`", "`") == ["57"]
    assert evaluate("28 * num_arms + 1", {"num_arms": 4}) == 113
    with pytest.raises(AssertionError):
        evaluate("__import__('os')", {})


def test_tables_and_id_ranges_parse_as_intended():
    text = "x\n| a | b |\n|---|:-:|\n| `c` | 1 |\n\n| d |\n|---|\n| e |\n"
    assert tables(text) == [[["a", "b"], ["`c`", "1"]], [["d"], ["e"]]]
    assert expand_ids("S-4..S-7, S-10 and P-2..5", "S") == {"S-4", "S-5", "S-6", "S-7", "S-10"}
    assert expand_ids("M7-2, M7-9; D-1", "M7") == {"M7-2", "M7-9"}


# ------------------------------------------------------------------------------ game pages
@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_observation_table_matches_the_engine(page):
    rows = table_with_header(page_text(page), ["piece", "shape", "offset", "size"])[1:]
    stated = [(unquote(r[0]), ast.literal_eval(r[1]), int(r[2]), int(r[3])) for r in rows]
    for env_name in GAME_PAGES[page][2]:
        game = domino_envs.make_game(env_name)
        actual, offset = [], 0
        for name, shape in game.obs_pieces():
            size = int(np.prod(shape))
            actual.append((name, tuple(shape), offset, size))
            offset += size
        assert stated == actual, f"{page}: observation table differs from {env_name}'s obs_pieces()"


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_stated_sizes_match_the_engine(page):
    text = page_text(page)
    for env_name in GAME_PAGES[page][2]:
        m = re.findall(rf"`{env_name}`: `num_actions = (\d+)`, `obs_size = (\d+)`", text)
        assert len(m) == 1, f"{page}: no single '`{env_name}`: `num_actions = N`, `obs_size = M`' line"
        game = domino_envs.make_game(env_name)
        assert (int(m[0][0]), int(m[0][1])) == (game.num_actions, game.obs_size), env_name


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_config_table_gives_every_key_and_its_default(page):
    text = page_text(page)
    table = next((t for t in tables(text) if t[0][0] == "option"), None)
    assert table is not None, f"{page}: no config table headed 'option'"
    header, rows = table[0], table[1:]
    default_cols = {}
    for i, cell in enumerate(header):
        m = re.fullmatch(r"default in `(\w+)`", cell)
        if m:
            default_cols[m.group(1)] = i
    assert sorted(default_cols) == sorted(GAME_PAGES[page][2]), f"{page}: one default column per env"
    for env_name, col in default_cols.items():
        config = dataclasses.asdict(domino_envs.make_game(env_name).config)
        stated = {unquote(r[0]): ast.literal_eval(unquote(r[col])) for r in rows}
        assert stated == config, f"{page}: config table differs from {env_name}'s defaults"


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_every_ambiguity_id_has_its_ruling_and_flag(page):
    ids = game_ids(page)
    assert ids, f"{page}: found no ambiguity ids for the game"
    rows = table_with_header(page_text(page), ["id", "ruling (default)", "flag"])[1:]
    listed = [r[0] for r in rows]
    assert len(listed) == len(set(listed)), f"{page}: an id is listed twice"
    assert set(listed) == ids, (f"{page}: missing {sorted(ids - set(listed))}, "
                                f"unknown {sorted(set(listed) - ids)}")
    module = GAME_PAGES[page][0].stem
    env_name = GAME_PAGES[page][2][0]
    keys = {f.name for f in dataclasses.fields(domino_envs.make_game(env_name).config)}
    for r in rows:
        flags = re.findall(r"`([^`]*)`", r[2])
        assert flags or r[2].startswith("fixed, no flag"), f"{page} {r[0]}: flag cell {r[2]!r}"
        for flag in flags:
            key = flag.split("=")[0].strip()
            assert key in keys, f"{page} {r[0]}: {key!r} is not a config key of {module} ({sorted(keys)})"


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_page_shows_each_envs_picture(page):
    text = page_text(page)
    for env_name in GAME_PAGES[page][2]:
        assert f"](../pictures/{env_name}.png)" in text, f"{page}: no picture of {env_name}"
        assert (DOCS / "pictures" / f"{env_name}.png").is_file(), f"docs/pictures/{env_name}.png is missing"


def test_readme_links_every_docs_page_and_picture():
    """The README is the front door: one click reaches every page (the reference it used to hold
    included) and it shows every picture."""
    readme = (ROOT / "README.md").read_text()
    for page in DOCS.rglob("*.md"):
        assert f"(docs/{page.relative_to(DOCS)})" in readme, f"README does not link {page.relative_to(DOCS)}"
    for picture in (DOCS / "pictures").glob("*.png"):
        assert f'src="docs/pictures/{picture.name}"' in readme, f"README does not show {picture.name}"


def test_index_lists_every_page_once():
    index = (DOCS / "index.md").read_text()
    for page in DOCS.rglob("*.md"):
        if page.name != "index.md":
            name = page.relative_to(DOCS).as_posix()
            assert index.count(f"]({name})") == 1, f"docs/index.md should link {name} once"


# ------------------------------------------------------------------------------ links, modules, paths
def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown text's headings: lower case, punctuation other than
    hyphens and underscores dropped, spaces as hyphens; a repeated heading gets -1, -2, ..."""
    anchors: set[str] = set()
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else re.match(r"^#{1,6} (.*)$", line)
        if m:
            base = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchor, k = base, 0
            while anchor in anchors:
                k += 1
                anchor = f"{base}-{k}"
            anchors.add(anchor)
    return anchors


def outside_code_blocks(text: str) -> str:
    """A Markdown text less its fenced code blocks; a ``` run inside a line (prose naming a fence)
    is dropped too, so code spans pair up as they render."""
    return re.sub(r"`{3,}\w*", " ", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


def relative_links(text: str) -> list[str]:
    """The targets of a Markdown text's links, images and <img src=...> that are not URLs."""
    text = re.sub(r"``.*?``|`[^`]*`", "", outside_code_blocks(text), flags=re.S)  # links quoted in code are code
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text)
    return [t for t in targets if not re.match(r"^[a-z]+:", t)]


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path):
    for target in relative_links(path.read_text()):
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        assert resolved.exists(), f"{path.relative_to(ROOT)}: the link {target} goes nowhere"
        if anchor:
            assert resolved.suffix == ".md", f"{path.relative_to(ROOT)}: {target}"
            assert anchor in heading_anchors(resolved.read_text()), (
                f"{path.relative_to(ROOT)}: {resolved.name} has no heading #{anchor}")


def test_link_helpers_parse_as_intended():
    text = "# A page\n## 1. Train an agent\n## Notes\n## Notes\n```\n# not a heading\n```\n"
    assert heading_anchors(text) == {"a-page", "1-train-an-agent", "notes", "notes-1"}
    links = "[a](b.md#c) ![p](../x.png) [u](https://e.org) <img src=\"docs/p.png\"> `![q](q.png)`\n```\n[no](c.md)\n```\n"
    assert relative_links(links) == ["b.md#c", "../x.png", "docs/p.png"]


def module_commands(text: str) -> set[str]:
    """The modules of every `python -m domino_training...` in a text (code blocks and prose)."""
    return set(re.findall(r"python -m (domino_training(?:\.\w+)*)(?![\w.<])", text))


@pytest.mark.parametrize("path", MARKDOWN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_m_commands_name_modules_that_run(path):
    """`python -m X` runs X, or X.__main__ when X is a package: either must exist in the installed
    package (the maintainer scripts under domino_training.scripts run from a checkout)."""
    import importlib.util

    for module in sorted(module_commands(path.read_text())):
        spec = importlib.util.find_spec(module)
        assert spec is not None, f"{path.relative_to(ROOT)}: python -m {module}: no such module"
        if spec.submodule_search_locations is not None:
            assert importlib.util.find_spec(f"{module}.__main__"), f"{path.relative_to(ROOT)}: {module} has no __main__"


# The maintainer scripts (training/scripts/, not in the wheel) run from a checkout. The convention: the
# fenced block or prose paragraph that shows `python -m domino_training.scripts.X ...`, or the one just
# before it, says "from a checkout" (a comment line in a block, a sentence before a block or a table).
SCRIPT_COMMAND = re.compile(r"python -m (domino_training\.scripts\.\w+)(?![\w.<])")
CHECKOUT_MARK = "from a checkout"
PLACEHOLDERS = {"<env>": "draw_v0"}  # a page's placeholder, parsed as a real value


def text_units(text: str) -> list[tuple[str, str]]:
    """A Markdown text as (kind, text) units in order: each fenced block ("code") and each prose
    paragraph or table ("prose", lines joined)."""
    units = []
    for part in re.split(r"(^```[^\n]*\n.*?^```)", text, flags=re.S | re.M):
        if part.startswith("```"):
            units.append(("code", part))
        else:
            units += [("prose", " ".join(p.split())) for p in re.split(r"\n[ \t]*\n", part) if p.strip()]
    return units


def script_commands(text: str) -> list[tuple[list[str], bool]]:
    """(words from the module name on, marked) for every maintainer-script command of a text: a line of
    a fenced block (continuations joined, comments dropped) or a code span of prose; `marked`: its unit,
    or the prose paragraph just before it, says CHECKOUT_MARK."""
    found = []
    units = text_units(text)
    for i, (kind, unit) in enumerate(units):
        marked = CHECKOUT_MARK in unit or (i > 0 and units[i - 1][0] == "prose" and CHECKOUT_MARK in units[i - 1][1])
        if kind == "code":
            pieces = unit.replace("\\\n", " ").splitlines()[1:-1]
        else:
            pieces = [a or b for a, b in re.findall(r"``(.+?)``|`([^`]+)`", unit)]
        for piece in pieces:
            m = SCRIPT_COMMAND.search(piece)
            if m:
                for placeholder, value in PLACEHOLDERS.items():
                    piece = piece.replace(placeholder, value)
                found.append((shlex.split(piece[m.start():], comments=True)[2:], marked))
    return found


class _Parsed(BaseException):
    """Raised with the namespace once a script's own parser has parsed its argv (nothing is run)."""


def parse_script_command(words: list[str]):
    """Parse `python -m MODULE ARGV...` with the script's own parser: its main(ARGV) runs only up to
    its ArgumentParser.parse_args, whose result ends it. A bad flag or value is an AssertionError
    naming the line; a main without arguments (params_tables) takes none."""
    import argparse
    import importlib

    module, argv = importlib.import_module(words[0]), words[1:]
    line = f"python -m {shlex.join(words)}"
    if not inspect.signature(module.main).parameters:
        assert argv == [], f"{line}: {words[0]} takes no arguments"
        return None
    real = argparse.ArgumentParser.parse_args

    def parsed(self, args=None, namespace=None):
        raise _Parsed(real(self, args, namespace))

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parsed), \
            contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        try:
            module.main(argv)
        except _Parsed as done:
            return done.args[0]
        except SystemExit:
            raise AssertionError(f"{line}: {err.getvalue().strip()}") from None
    raise AssertionError(f"{line}: its main returned without parsing its arguments")


SCRIPT_PAGES = [p for p in MARKDOWN_FILES if SCRIPT_COMMAND.search(p.read_text())]


@pytest.mark.parametrize("path", SCRIPT_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_maintainer_script_commands_say_checkout_and_parse(path):
    """Every `python -m domino_training.scripts.X ...` of the README and docs/ says it runs from a
    checkout (the scripts are not in the wheel; SCRIPT_COMMAND's convention) and parses with the
    script's own parser, so a renamed flag or a removed subcommand fails here."""
    commands = script_commands(path.read_text())
    assert commands, f"{path.relative_to(ROOT)}: the page names a maintainer script but no command was found"
    for words, marked in commands:
        assert marked, f"{path.relative_to(ROOT)}: python -m {shlex.join(words)} does not say {CHECKOUT_MARK!r}"
        parse_script_command(words)


def test_script_command_helpers_parse_as_intended():
    text = ("Run it from a checkout:\n\n```bash\npython -m domino_training.scripts.ladder block_v0 \\\n"
            "    --deals 3   # one\n```\n\nThen `python -m domino_training.scripts.ship <env>` and\n"
            "`python -m domino_training.scripts.tuning\n--workers 2`, from a checkout.\n\n```bash\n"
            "# from a checkout\npython -m domino_training.scripts.baselines --deals 5\n```\n\n"
            "| `python -m domino_training.scripts.strength_timing --workers 2` |\n")
    assert script_commands(text) == [
        (["domino_training.scripts.ladder", "block_v0", "--deals", "3"], True),  # the sentence before the block
        (["domino_training.scripts.ship", "draw_v0"], True),  # its own paragraph; <env> is a real env
        (["domino_training.scripts.tuning", "--workers", "2"], True),
        (["domino_training.scripts.baselines", "--deals", "5"], True),  # the block's comment
        (["domino_training.scripts.strength_timing", "--workers", "2"], False)]  # a block's comment is not a sentence
    assert parse_script_command(["domino_training.scripts.ladder", "block_v0", "--deals", "3"]).deals == 3
    assert parse_script_command(["domino_training.scripts.exploit_pages", "learned", "--gather"]).gather
    with pytest.raises(AssertionError, match="unrecognized arguments: --rounds"):
        parse_script_command(["domino_training.scripts.ladder", "--deals", "3", "--rounds", "2"])
    with pytest.raises(AssertionError, match="required: --deals"):
        parse_script_command(["domino_training.scripts.ladder", "block_v0"])
    with pytest.raises(AssertionError, match="without parsing"):  # exploit_pages has no such subcommand
        parse_script_command(["domino_training.scripts.exploit_pages", "gather"])
    with pytest.raises(AssertionError, match="takes no arguments"):
        parse_script_command(["domino_training.scripts.params_tables", "--check"])


REPO_PATH = re.compile(r"(?<![\w/.])((?:domino_envs|agents|training|configs|tests|docs)/[\w/.*<>-]*[\w/*>])")


def repo_paths(text: str) -> set[str]:
    """Repository paths (a folder or a file under one of the project's top folders) in a text's code
    quotes and code blocks; paths with placeholders (<game>, *) and gymnasium ids (domino_envs/draw-v0) are
    left out."""
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, re.S | re.M)
    quotes = re.findall(r"``(.*?)``|`([^`]+)`", outside_code_blocks(text), flags=re.S)
    quotes = [double or single for double, single in quotes]
    return {p for p in REPO_PATH.findall(" ".join(quotes + blocks))
            if "<" not in p and "*" not in p and not re.search(r"-v\d+$", p)}


@pytest.mark.parametrize("path", [ROOT / "README.md", *REFERENCE_PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_repository_paths_exist(path):
    """A path the README or a reference page names in code (a module, a config, a test) is in the
    checkout, so a moved file cannot leave its old path behind in the docs."""
    missing = [p for p in sorted(repo_paths(path.read_text())) if not (ROOT / p).exists()]
    assert not missing, f"{path.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_repository_path_helper_parses_as_intended():
    text = ("`training/learners/ppo.py` and `configs/<game>.yaml`, runs/x/, `a/training/b.py`, `domino_envs/sum7-v0`,"
            " `agents/heuristic_*.py`, ``x `tests/engine/` y``, every ```python block, `tests/games/`"
            "\n```\ndocs/pictures\n```\n")
    assert repo_paths(text) == {"training/learners/ppo.py", "docs/pictures", "tests/engine/", "tests/games/"}


# ------------------------------------------------------------------------------ snippets
@pytest.mark.parametrize("path", ALL_PAGES, ids=lambda p: p.name)
def test_page_shows_runnable_code(path):
    assert fenced_blocks(path.read_text()), f"{path.name} has no python snippet that runs"


@pytest.mark.parametrize("path", SNIPPET_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_snippets_run(path, tmp_path, monkeypatch):
    from domino_agents import registry as agent_registry

    blocks = fenced_blocks(path.read_text())
    monkeypatch.chdir(tmp_path)  # whatever a snippet writes (a training run) lands here
    # what a snippet registers (learners.md's sketch registers a learner) is forgotten after the page
    with mock.patch.dict(agent_registry.AGENTS), mock.patch.dict(learner_registry.LEARNERS):
        for i, code in enumerate(blocks):
            with contextlib.redirect_stdout(io.StringIO()):
                run_snippet(code, f"{path} (python block {i + 1})")


def check_domino_command(argv: list[str]) -> None:
    """Parse one `domino ...` command line with the subcommand's own parser (training/cli.py's
    COMMANDS), without running it, then check what the parser cannot: the games and agent specs it
    names exist, its game config builds, and a `train` line's run config loads. A file its --import
    names in the checkout is imported first (what it registers is forgotten after the check); a file
    name the checkout lacks is the reader's own (``--import my_learner.py``), the example of that name
    in docs/examples/ when there is one. A `benchmark` line's suite matches the lock, and trains every
    learner its --import registers."""
    from domino_agents import registry as agent_registry

    with mock.patch.dict(agent_registry.AGENTS), mock.patch.dict(learner_registry.LEARNERS):
        _check_domino_command(argv)


def _check_domino_command(argv: list[str]) -> None:
    import importlib

    from domino_agents.registry import parse_spec
    from domino_envs.registry import config_from_pairs
    from domino_training.cli import COMMANDS
    from domino_training.user_code import import_user_code

    command, rest = argv[0], argv[1:]
    assert command in COMMANDS, f"domino {command}: not a subcommand of training/cli.py"
    module = COMMANDS[command][0]
    if module is None:  # `domino games`
        assert rest == [], rest
        return
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            args = importlib.import_module(module).build_parser().parse_args(rest)
        except SystemExit:
            raise AssertionError(f"domino {shlex.join(argv)}: {err.getvalue().strip()}") from None
    fields = vars(args)
    before = set(learner_registry.LEARNERS)
    for item in fields.get("imports") or []:
        example = DOCS / "examples" / Path(item).name  # `--import my_learner.py`: the reader's copy of the example
        if not item.endswith(".py") or Path(item).is_file():
            import_user_code(item)
        elif example.is_file():
            import_user_code(str(example))
    games = [fields[k] for k in ("game",) if fields.get(k)] + list(fields.get("games") or [])
    for game in games:
        assert game in domino_envs.game_names(), f"domino {command}: {game} is not a game"
    for key in ("vs", "exact", "target"):
        if fields.get(key):
            parse_spec(fields[key])
    for spec in list(fields.get("agents") or []) + list(fields.get("specs") or []):
        parse_spec(spec)
    if command == "train":  # the config loads, the learner exists and takes the params it is given
        from domino_training.learners.train import learner_run, plan

        try:
            run = plan(args)
        except DominoError as err:  # a learner that only an --import of the reader's own file registers
            assert "is not registered" in str(err) and any(not Path(i).is_file() for i in fields.get("imports") or []), \
                f"domino train: no learner {args.learner}: {err}"
        else:
            check = learner_registry.LEARNERS[run.learner].check
            if check is not None:
                check(learner_run(run, "unused"))
    elif "set" in fields or "config" in fields:
        pairs = list(fields.get("set") or []) + list(fields.get("config") or [])
        if command == "exploit":  # its learner's dotted params beside the rule keys
            from domino_training.settings import split_set

            pairs = split_set(pairs)[0]
        for game in games:
            domino_envs.make_game(game, **config_from_pairs(pairs, "--set"))
    if command == "benchmark":  # its --only games and --learners are the suite's (ConfigError otherwise)
        from domino_training.benchmark import load_suite
        from domino_training.benchmark.suite import check_protocol, read_lock, read_suite_file

        suite = args.suite and Path(args.suite)
        load_suite(args.profile, suite, args.only, args.learners, args.seeds)
        if args.action == "run":  # a suite of one's own is the locked protocol; it trains what --import registers
            check_protocol(read_suite_file(suite), read_lock(args.lock and Path(args.lock)))
            imported = set(learner_registry.LEARNERS) - before
            runs = load_suite(args.profile, suite, args.only, args.learners, args.seeds).runs
            assert imported <= set(runs), f"domino {shlex.join(argv)}: --import registers {sorted(imported - set(runs))}, " \
                                          "which the run does not train (domino benchmark refuses it)"


def shell_commands(text: str) -> list[list[str]]:
    """`domino ...` lines of the ```bash blocks (comments and continuation lines joined)."""
    commands = []
    for block in fenced_blocks(text, "bash", include_not_run=True):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["domino"]:
                commands.append(words[1:])
    return commands


@pytest.mark.parametrize("path", COMMAND_PAGES, ids=lambda p: p.name)
def test_domino_commands_parse(path, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the commands are relative to the repository
    for argv in shell_commands(path.read_text()):
        check_domino_command(argv)


def test_command_check_rejects_bad_lines():
    with pytest.raises(AssertionError):
        check_domino_command(["play", "draw_v0", "--vs", "heuristic", "--no-such-flag"])
    with pytest.raises(AssertionError):
        check_domino_command(["play", "no_such_game_v0", "--vs", "heuristic"])
    with pytest.raises(ValueError):
        check_domino_command(["rate", "--game", "sum7_v0", "random", "no_such_agent"])
    check_domino_command(["exploit", "--exact", "heuristic", "--game", "draw_v0", "--set", "max_pip=2", "--set",
                          "hand_size=2"])
    with pytest.raises(domino_envs.ConfigError):  # the game config is built, not just parsed
        check_domino_command(["exploit", "--exact", "heuristic", "--game", "draw_v0", "--set", "max_pip=2"])
    with pytest.raises(AssertionError, match="--no-such-flag"):
        check_domino_command(["exploit", "heuristic", "--game", "draw_v0", "--no-such-flag"])
    with pytest.raises(AssertionError):  # freeze, run and nothing else
        check_domino_command(["benchmark", "thaw"])
    with pytest.raises(domino_envs.ConfigError):
        check_domino_command(["benchmark", "--profile", "ci", "--only", "no_such_game"])
    with pytest.raises(AssertionError):
        check_domino_command(["replay", "games.jsonl", "--index", "first"])
    with pytest.raises(AssertionError, match="not a subcommand"):
        check_domino_command(["launch", "--port", "80"])
    with pytest.raises(AssertionError, match="unrecognized arguments: --no-such-flag"):
        check_domino_command(["train", "draw_v0", "--no-such-flag"])
    with pytest.raises(domino_envs.ConfigError):
        check_domino_command(["train", "draw_v0", "--set", "ppo.no_such_key=1"])
    with pytest.raises(domino_envs.ConfigError, match="dmc.no_such_key"):
        check_domino_command(["train", "draw_v0", "--learner", "dmc", "--set", "dmc.no_such_key=1"])
    with pytest.raises(AssertionError, match="no learner nope"):
        check_domino_command(["train", "draw_v0", "--learner", "nope"])
    with pytest.raises(ValueError):
        check_domino_command(["evaluate", "--game", "draw_v0", "--agents", "no_such_agent"])
    with pytest.raises(AssertionError):
        check_domino_command(["bench", "--no-such-flag", "1"])
    check_domino_command(["evaluate", "--game", "sum7_v0", "--agents", "random", "pimc:n=4", "--set", "num_players=3"])
    example = str(ROOT / "docs" / "examples" / "my_agent.py")  # --import: its agent parses, and is forgotten after
    check_domino_command(["evaluate", "--import", example, "--game", "draw_v0", "--agents", "my_agent", "random"])
    check_domino_command(["play", "draw_v0", "--vs", "my_agent:epsilon=0.5", "--import", example])
    with pytest.raises(AssertionError, match=r"registers \['my_learner'\], which the run does not train"):
        check_domino_command(["benchmark", "--import", "my_learner.py", "--profile", "quick"])  # issue 55
    check_domino_command(["benchmark", "--import", "my_learner.py", "--suite", "docs/examples/my_suite.yaml"])
    with pytest.raises(ValueError, match="unknown agent 'my_agent'"):
        check_domino_command(["evaluate", "--game", "draw_v0", "--agents", "my_agent", "random"])


def test_quickstart_has_the_three_uses_and_the_placeholder():
    text = (DOCS / "quickstart.md").read_text()
    for heading in ("Train an agent", "Benchmark an algorithm", "Plug an env into your own code",
                    "Play, watch, scale"):
        assert re.search(rf"^## .*{heading}", text, flags=re.M), heading


def test_the_params_tables_are_generated_from_the_learners_settings():
    """docs/learners.md's params tables are what each learner's settings dataclass gives (regenerate:
    python -m domino_training.scripts.params_tables), every key has a meaning, and every learner CI
    runs has its table."""
    from domino_training.scripts.params_tables import BLOCK, regenerate

    text = (DOCS / "learners.md").read_text()
    assert regenerate(text) == text, "run python -m domino_training.scripts.params_tables"
    named = {m[2] for m in BLOCK.finditer(text)}
    assert named >= {"ppo", "dmc", "sb3", "rllib"}, named
    for row in text.splitlines():
        if row.startswith("| `"):
            assert row.split("|")[3].strip(), f"a param without a meaning: {row}"
