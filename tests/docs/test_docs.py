"""The documentation pages (docs/games/*.md, docs/quickstart.md) say what the code does.

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

import numpy as np
import pytest

import domino_envs
from domino_envs import registry
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
ALL_PAGES = [DOCS / "games" / p for p in GAME_PAGES] + [DOCS / "quickstart.md"]


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
    readme = (ROOT / "README.md").read_text()
    for page in [*(DOCS / "games").glob("*.md"), DOCS / "quickstart.md"]:
        assert f"(docs/{page.relative_to(DOCS)})" in readme, f"README does not link {page.name}"
    for picture in (DOCS / "pictures").glob("*.png"):
        assert f'src="docs/pictures/{picture.name}"' in readme, f"README does not show {picture.name}"


# ------------------------------------------------------------------------------ snippets
@pytest.mark.parametrize("path", ALL_PAGES, ids=lambda p: p.name)
def test_python_snippets_run(path, tmp_path, monkeypatch):
    blocks = fenced_blocks(path.read_text())
    assert blocks, f"{path.name} has no python snippet"
    monkeypatch.chdir(tmp_path)  # whatever a snippet writes (a training run) lands here
    for i, code in enumerate(blocks):
        with contextlib.redirect_stdout(io.StringIO()):
            run_snippet(code, f"{path} (python block {i + 1})")


def _help_text(command: str) -> str:
    from domino_training.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    return out.getvalue()


def check_domino_command(argv: list[str]) -> None:
    """Parse one `domino ...` command line as the CLI would, without running it."""
    command, rest = argv[0], argv[1:]
    if command == "train":
        from domino_training.configs import load_run
        from domino_training.learners.train import build_parser

        args = build_parser().parse_args(rest)
        overrides = list(args.set) + ([f"algo={args.algo}"] if args.algo else [])
        load_run(args.config, args.game, overrides, demo=args.demo)
    elif command == "evaluate":
        from domino_agents.registry import parse_spec
        from domino_envs.registry import config_from_pairs
        from domino_training.evaluate import build_parser

        args = build_parser().parse_args(rest)
        assert args.game in domino_envs.game_names(), args.game
        for spec in args.agents:
            parse_spec(spec)
        config = config_from_pairs(args.config, "--config")
        domino_envs.make_game(args.game, **config)
    elif command == "bench":
        help_text = _help_text("bench")
        for flag in (a.split("=")[0] for a in rest if a.startswith("--")):
            assert flag in help_text, f"domino bench has no option {flag}"
        games = rest[rest.index("--games") + 1:] if "--games" in rest else []
        for g in (g for g in games if not g.startswith("--")):
            assert g in domino_envs.game_names(), g
    elif command == "games":
        assert rest == []
    else:
        raise AssertionError(f"domino {command}: not a command this test knows; add a check for it here")


def shell_commands(text: str) -> list[list[str]]:
    """`domino ...` lines of the ```bash blocks (comments and continuation lines joined)."""
    commands = []
    for block in fenced_blocks(text, "bash", include_not_run=True):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["domino"]:
                commands.append(words[1:])
    return commands


@pytest.mark.parametrize("path", ALL_PAGES, ids=lambda p: p.name)
def test_domino_commands_parse(path, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the commands are relative to the repository
    for argv in shell_commands(path.read_text()):
        check_domino_command(argv)


def test_command_check_rejects_bad_lines():
    with pytest.raises(SystemExit):
        check_domino_command(["train", "draw_v0", "--no-such-flag"])
    with pytest.raises(domino_envs.ConfigError):
        check_domino_command(["train", "draw_v0", "--set", "ppo.no_such_key=1"])
    with pytest.raises(ValueError):
        check_domino_command(["evaluate", "--game", "draw_v0", "--agents", "no_such_agent"])
    with pytest.raises(AssertionError):
        check_domino_command(["bench", "--no-such-flag", "1"])
    check_domino_command(["evaluate", "--game", "sum7_v0", "--agents", "random", "pimc:n=4", "--config", "num_players=3"])


def test_quickstart_has_the_three_uses_and_the_placeholder():
    text = (DOCS / "quickstart.md").read_text()
    for heading in ("Train an agent", "Benchmark an algorithm", "Plug an env into your own code",
                    "Play, watch, scale"):
        assert re.search(rf"^## .*{heading}", text, flags=re.M), heading
