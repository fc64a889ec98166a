"""The layers hold: every import of the project's modules (lazy ones inside functions too) goes down
the stack domino_envs < domino_agents < domino_training, the rules engine imports no front, no module
imports its own package root or the repo's folder names, and no two modules import each other
through any chain (no circles).

The imports are read from the source with `ast`, not by importing, so a lazy import that a test run
never reaches counts as much as one at the top of a file.
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
        "training/__init__.py": "", "training/ppo.py": "def f():\n    from .imitate import clone\n",
        "training/imitate.py": "from domino_training.ppo import ActorCritic\n"})
    assert cycles(graph) == [["domino_training.imitate", "domino_training.ppo"]]
