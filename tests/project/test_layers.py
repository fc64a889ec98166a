"""The layers hold: every import of the project's modules (lazy ones inside functions too) goes down
the stack domino_envs < domino_agents < domino_training, the rules engine imports no front, no module
imports its own package root or the repo's folder names, and no two modules import each other
through any chain (no circles).

The imports are read from the source with `ast`, not by importing, so a lazy import that a test run
never reaches counts as much as one at the top of a file.

Inside domino_training the layers are `TRAINING_LAYERS` (lower first): the statistics and the config
loader, then the evaluation harness, the learners, the benchmark and exploitability side by side, the
user tools, the web app and the `domino` command; the maintainer scripts (domino_training.scripts) may import any of
them, and nothing imports the scripts.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# installed package name -> repo folder (pyproject.toml's package-dir)
PACKAGES = {"domino_envs": "domino_envs", "domino_agents": "agents", "domino_training": "training"}
LAYER = {"domino_envs": 0, "domino_agents": 1, "domino_training": 2}
# the rules engine: what the game modules and their shared helpers may import (no front, no renderer)
ENGINE = {"domino_envs.core", "domino_envs.errors", "domino_envs.tiles", "domino_envs.layout", "domino_envs.rng",
          "domino_envs.sampling", "domino_envs.slots", "domino_envs.version", "domino_envs.games",
          "domino_envs.actions", "domino_envs.table"}  # the action table and the table description: pure data


def project_modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the three packages."""
    mods = {}
    for pkg, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [pkg, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def imports_of(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The project modules `name` imports anywhere in its source, as written (a ``from X import Y``
    of a submodule Y counts as an import of X.Y, not of X), plus the raw names of any import of a
    top-level ``agents`` or ``training`` (the folder names, which an installed package does not have)."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                prefix = base[:len(base) - node.level + 1]
                module = ".".join(prefix + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in mods]
            targets = subs if len(subs) == len(node.names) else [module, *subs]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                targets = [arg.value]
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                # f"domino_agents.{module}": some module of that package; counts for the layer and
                # folder-name checks (not as an import of the package root)
                top = str(arg.values[0].value).split(".")[0]
                if top in ("agents", "training") or (top in PACKAGES and top != name.split(".")[0]):
                    targets = [top]
        for target in targets:
            top = target.split(".")[0]
            if top in ("agents", "training"):
                found.add(target)
            elif top in PACKAGES:
                while target not in mods and "." in target:  # `import a.b.c` of a name inside a module
                    target = target.rsplit(".", 1)[0]
                if target in mods and target != name:
                    found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = project_modules()
    return {name: imports_of(name, path, mods) for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# domino_training's subpackages and top modules, lower layers first; names on one line sit side by side
# and do not import each other
TRAINING_LAYERS = [("settings",), ("stats", "configs", "parallel", "commands", "user_code", "interrupt"),
                   ("evaluate",), ("learners",), ("benchmark", "exploit"), ("tools",), ("web",), ("cli",)]
SCRIPTS = "domino_training.scripts"


def training_place(mod: str) -> tuple[int, str] | None:
    """(layer, part) of a domino_training module; None for the package root, its game configs and scripts."""
    parts = mod.split(".")
    if parts[0] != "domino_training" or len(parts) < 2 or parts[1] in ("game_configs", "scripts"):
        return None
    for i, names in enumerate(TRAINING_LAYERS):
        if parts[1] in names:
            return i, parts[1]
    return -1, parts[1]


def training_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside domino_training that break TRAINING_LAYERS, imports of the scripts, and modules
    placed in no layer."""
    bad = []
    for mod, targets in sorted(graph.items()):
        here = training_place(mod)
        if here is not None and here[0] < 0:
            bad.append(f"{mod} is in no layer of TRAINING_LAYERS")
            continue
        for t in sorted(targets):
            if (t == SCRIPTS or t.startswith(SCRIPTS + ".")) and not (mod == SCRIPTS or mod.startswith(SCRIPTS + ".")):
                bad.append(f"{mod} imports {t}: nothing imports the maintainer scripts")
                continue
            there = training_place(t)
            if here is None or there is None or there[0] < 0:
                continue
            if there[0] > here[0]:
                bad.append(f"{mod} imports {t} (upward inside domino_training: {here[1]} is below {there[1]})")
            elif there[0] == here[0] and there[1] != here[1]:
                bad.append(f"{mod} imports {t}: {here[1]} and {there[1]} sit side by side")
    return bad


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(graph.items()):
        pkg = mod.split(".")[0]
        for t in sorted(targets):
            top = t.split(".")[0]
            if top in ("agents", "training"):
                bad.append(f"{mod} imports {t}: the installed name is domino_{top}")
            elif LAYER[top] > LAYER[pkg]:
                bad.append(f"{mod} imports {t} (upward: {pkg} is below {top})")
            elif t == pkg and mod != pkg:
                bad.append(f"{mod} imports its package root {t} (import the module that holds the name)")
            elif (mod in ENGINE or mod.startswith("domino_envs.games.")) and not (
                    t in ENGINE or t.startswith("domino_envs.games.")):
                bad.append(f"{mod} imports {t}: the rules engine imports only {sorted(ENGINE)} and the games")
    return bad


def test_no_upward_import_and_no_circle():
    graph = import_graph()
    assert len(graph) > 50 and "domino_training.cli" in graph and "domino_agents.registry" in graph
    assert layer_violations(graph) == []
    assert cycles(graph) == []


def test_the_layers_inside_training_hold():
    graph = import_graph()
    places = {training_place(m) for m in graph} - {None}
    assert {p[1] for p in places} == {n for names in TRAINING_LAYERS for n in names}  # every layer has modules
    assert any(m.startswith(SCRIPTS + ".") for m in graph)
    assert training_violations(graph) == []


@pytest.mark.parametrize("files, expected", [
    ({"training/__init__.py": "", "training/evaluate.py": "def f():\n    from domino_training.learners.ppo import Trainer\n",
      "training/learners/__init__.py": "", "training/learners/ppo.py": ""},
     ["domino_training.evaluate imports domino_training.learners.ppo (upward inside domino_training: evaluate is "
      "below learners)"]),
    ({"training/__init__.py": "", "training/benchmark/__init__.py": "",
      "training/benchmark/runner.py": "from domino_training.exploit.exact import exact\n",
      "training/exploit/__init__.py": "", "training/exploit/exact.py": ""},
     ["domino_training.benchmark.runner imports domino_training.exploit.exact: benchmark and exploit sit side by side"]),
    ({"training/__init__.py": "", "training/tools/__init__.py": "",
      "training/tools/demo.py": "from domino_training.scripts.ship import main\n",
      "training/scripts/__init__.py": "", "training/scripts/ship.py": "from domino_training.tools.demo import x\n"},
     ["domino_training.tools.demo imports domino_training.scripts.ship: nothing imports the maintainer scripts"]),
    ({"training/__init__.py": "", "training/misc.py": ""},
     ["domino_training.misc is in no layer of TRAINING_LAYERS"]),
])
def test_the_training_check_names_each_kind_of_violation(tmp_path, files, expected):
    """The training table's checker: an upward import, an import between side-by-side parts, an import
    of a script (the script's own import of the library is fine) and an unplaced module are each reported."""
    assert training_violations(_graph_from(tmp_path, files)) == expected


def _graph_from(tmp_path, files: dict[str, str]) -> dict[str, set[str]]:
    """The import graph of a throwaway tree laid out like the repo."""
    mods = {}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    folder_to_pkg = {v: k for k, v in PACKAGES.items()}
    for rel in files:
        parts = Path(rel).with_suffix("").parts
        parts = [folder_to_pkg[parts[0]], *parts[1:]]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = tmp_path / rel
    return {name: imports_of(name, path, mods) for name, path in mods.items()}


@pytest.mark.parametrize("files, expected", [
    ({"domino_envs/__init__.py": "", "domino_envs/env.py": "def f():\n    from domino_agents.registry import make_agent\n",
      "agents/__init__.py": "", "agents/registry.py": ""},
     ["domino_envs.env imports domino_agents.registry (upward: domino_envs is below domino_agents)"]),
    ({"domino_envs/__init__.py": "", "domino_envs/replay.py": "from . import __version__\n"},
     ["domino_envs.replay imports its package root domino_envs (import the module that holds the name)"]),
    ({"domino_envs/__init__.py": "", "domino_envs/core.py": "from .env import X\n", "domino_envs/env.py": ""},
     ["domino_envs.core imports domino_envs.env: the rules engine imports only "
      f"{sorted(ENGINE)} and the games"]),
    ({"training/__init__.py": "", "training/x.py": "import importlib\nimportlib.import_module('agents.pimc')\n"},
     ["domino_training.x imports agents.pimc: the installed name is domino_agents"]),
    ({"agents/__init__.py": "", "agents/registry.py": "import importlib\nm = 'pimc'\nimportlib.import_module(f'agents.{m}')\n"},
     ["domino_agents.registry imports agents: the installed name is domino_agents"]),
])
def test_the_check_names_each_kind_of_violation(tmp_path, files, expected):
    """The checker itself: a lazy upward import, a root import, a front imported by the engine and a
    folder name given to import_module are each reported."""
    assert layer_violations(_graph_from(tmp_path, files)) == expected


def test_the_check_finds_a_circle_through_a_lazy_import(tmp_path):
    graph = _graph_from(tmp_path, {
        "training/__init__.py": "", "training/learners/ppo.py": "def f():\n    from .imitate import clone\n",
        "training/learners/imitate.py": "from domino_training.learners.ppo import ActorCritic\n"})
    assert cycles(graph) == [["domino_training.learners.imitate", "domino_training.learners.ppo"]]
