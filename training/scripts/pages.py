"""Every results page in docs/ from the data file committed beside it.

    python -m domino_training.scripts.pages            # write every page again from its data
    python -m domino_training.scripts.pages --check    # name the pages whose text would change (exit 1)

The script that measures a page writes its data file (JSON) first and then the page through the
page function named in PAGES, so no number on a results page is typed by hand: a page is its data
rendered, and tests/docs/test_pages.py renders each one again and compares. A figure in a page's
prose is computed from the data by the same function, or says where it comes from.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from domino_envs.registry import game_names, title
from domino_training.scripts import DOCS

BEGIN = "<!-- generated from {data} by `python -m domino_training.scripts.pages` (from a checkout): edit the data, not this section -->"
END = "<!-- end of the generated section -->"


@dataclass(frozen=True)
class Page:
    """A results page, its data file (both under docs/) and `module:function` that renders the data.
    `section`: the data renders one marked section of a hand-written page (between BEGIN and END),
    not the whole page. A section drawn from several data files names them all; its renderer gets
    {file name: data}."""

    page: str
    data: str | tuple[str, ...]
    render: str
    measured_by: str  # the command that measures the data and writes both files
    section: bool = False

    def text(self, docs: Path = DOCS) -> str:
        """The page as its data renders it."""
        module, function = self.render.split(":")
        if isinstance(self.data, str):
            data = json.loads((docs / self.data).read_text())
        else:
            data = {name: json.loads((docs / name).read_text()) for name in self.data}
        rendered = getattr(importlib.import_module(module), function)(data)
        if not self.section:
            return rendered
        current = (docs / self.page).read_text()
        names = [self.data] if isinstance(self.data, str) else list(self.data)
        begin = BEGIN.format(data=", ".join(Path(n).name for n in names))
        if current.count(begin) != 1 or END not in current.split(begin)[-1]:
            raise ValueError(f"docs/{self.page} must hold its generated section once, between {begin!r} and {END!r}")
        head, rest = current.split(begin)
        return f"{head}{begin}\n{rendered}{END}{rest.split(END, 1)[1]}"


SCRIPTS = "domino_training.scripts"
PAGES = [
    Page("trained.md", ("trained.json", "recipe_seeds.json"), f"{SCRIPTS}.ship:page",
         f"python -m {SCRIPTS}.ship --evaluate-only (and --recipe-seeds K ...)"),
    Page("baselines.md", "baselines.json", f"{SCRIPTS}.baselines:page", f"python -m {SCRIPTS}.baselines"),
    Page("ladder.md", ("ladder.json", "headroom.json", "trained.json"), f"{SCRIPTS}.ladder:page_with_headroom",
         f"python -m {SCRIPTS}.ladder --deals N; python -m {SCRIPTS}.headroom GAME"),
    Page("exploitability.md", "exploitability/results.json", f"{SCRIPTS}.exploit_pages:page",
         f"python -m {SCRIPTS}.exploit_pages report"),
    Page("benchmark_timing.md", "benchmark_timing.json", f"{SCRIPTS}.strength_timing:page",
         f"python -m {SCRIPTS}.strength_timing"),
    *(Page(page, data, "domino_training.benchmark.report:page_from_data", f"domino benchmark --profile {profile} ...")
      for page, data, profile in (("benchmark.md", "benchmark/quick.json", "quick"),
                                  ("benchmark_full.md", "benchmark_full/full.json", "full"),
                                  ("benchmark_rllib.md", "benchmark_rllib/quick.json", "quick --learners rllib"))),
    Page("benchmark_tuning.md", "benchmark_tuning.json", f"{SCRIPTS}.tuning:page", f"python -m {SCRIPTS}.tuning"),
    Page("ismcts.md", "ismcts.json", f"{SCRIPTS}.ismcts:page", f"python -m {SCRIPTS}.ismcts block_v0 --deals 1000 --workers 2"),
    Page("search.md", "search.json", f"{SCRIPTS}.search:page", f"python -m {SCRIPTS}.search GAME --deals 2000"),
    Page("speed.md", "speed.json", f"{SCRIPTS}.speed:page", f"domino bench, then python -m {SCRIPTS}.speed --bench FILE"),
    Page("scaling.md", "scaling.json", f"{SCRIPTS}.scaling:section", f"python -m {SCRIPTS}.scaling", section=True),
    Page("scaling.md", ("benchmark_full/full.json", "benchmark/quick.json"), "domino_training.benchmark.cost:section",
         "domino benchmark --profile full --stage GAME ... (a stage of the full profile)", section=True),
    Page("web.md", "web.json", f"{SCRIPTS}.webload:section", f"python -m {SCRIPTS}.webload --record", section=True),
    Page("llm.md", "llm.json", f"{SCRIPTS}.llmbench:section", f"python -m {SCRIPTS}.llmbench", section=True),
    Page("../README.md", ("baselines.json", "trained.json", "search.json", "ladder.json"), f"{SCRIPTS}.pages:readme_results",
         "the measurements of those pages", section=True),
]


def _games(names: list[str]) -> str:
    """Games by title, in the registry's order: "the Draw Game, Block Game and Sum 7"."""
    titles = [title(g) for g in game_names() if g in names]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1] if titles else "no game"


def readme_results(data: dict) -> str:
    """The README's Results paragraphs, said from the pages' data: which baselines, shipped policies and
    searches beat what (an interval above the fair share), and the ladder's strongest agents."""
    baselines, trained, search, ladder = (data[n] for n in ("baselines.json", "trained.json", "search.json", "ladder.json"))

    def holds(blob: dict, agent: str, opponent: str) -> bool:
        m = next(m for m in blob["matchups"] if m["agent"] == agent and m["opponent"] == opponent)
        return m["win_rate"]["lo"] > blob["fair_share"]

    def failing(pred, games) -> str:
        bad = [g for g in games if not pred(g)]
        return "in every game" if not bad else f"in every game but {_games(bad)}"

    pimc = "pimc:n=64,rollout=random"
    deals = sorted({b["deals"] for b in baselines.values()} | {r["deals"] for t in trained for r in t["rows"]})
    heur = failing(lambda g: holds(baselines[g], "heuristic", "random") and holds(baselines[g], "heuristic", "greedy"),
                   list(baselines))
    pimc_heur = failing(lambda g: holds(baselines[g], pimc, "heuristic"), list(baselines))
    beats = {t["game"]: {r["opponent"] for r in t["rows"] if r["win_lo"] > t["fair_share"]} for t in trained}
    base = failing(lambda g: {"random", "greedy", "heuristic"} <= beats[g], list(beats))
    above = [g for g in beats if pimc in beats[g]]
    short = [g for g in beats if pimc not in beats[g]]
    rows = {r["game"]: r for r in search["rows"]}
    guided = [g for g, r in rows.items() if r["win"]["lo"] > r["fair_share"]]
    tempered = [g for g, r in rows.items() if "temperature=" in r["agent"]]
    lines = [
        f"On {'/'.join(f'{d:,}' for d in deals)} duplicate deals per matchup, each heuristic beats random and greedy "
        f"{heur} and PIMC beats the heuristic {pimc_heur} ([baselines](docs/baselines.md)); the shipped agents beat "
        f"random, greedy and the heuristic {base} and PIMC-64 in {_games(above)} ([trained](docs/trained.md)"
        + (f"; what was tried in {_games(short)}, where they do not yet: "
           "[training results](docs/training_results.md#where-racehorse-and-seven-toed-pete-stop-short)" if short else "")
        + "), and PIMC playing its rollouts with them beats PIMC-64 "
        + ("in every game" if sorted(guided) == sorted(game_names()) else f"in {_games(guided)}")
        + (f" (in {_games(tempered)} with the rollouts' softmax at a temperature)" if tempered else "")
        + " ([search](docs/search.md)). Learner comparisons are on the [benchmark](docs/benchmark.md) pages, exact and "
        "learned exploitability on [exploitability](docs/exploitability.md).", ""]
    strongest: dict[str, list[str]] = {}
    with_trained = []
    for g, entry in ladder.items():
        r = entry["ratings"]
        top = max(r["ratings"], key=lambda x: x["rating"])
        strongest.setdefault(top["agent"], []).append(g)
        shipped = next((x for x in r["ratings"] if x["agent"] == "trained"), None)
        if shipped is not None and shipped is not top and shipped["hi"] >= top["rating"]:
            with_trained.append(g)
    lines += [
        "The [strength ladder](docs/ladder.md) rates every agent against every other on the same deals, game by game. "
        "The strongest agent is " + "; ".join(f"`{a}` in {_games(gs)}" for a, gs in strongest.items())
        + (f"; the shipped policy is not told apart from it in {_games(with_trained)}" if with_trained else "")
        + " (the page names, for each game, every agent its interval cannot tell apart from the strongest)."]
    return "\n".join(lines) + "\n"


def write_page(name: str) -> Path:
    """Write one page of PAGES again from its data (each of its generated sections, where it has several)."""
    path = DOCS / name
    for page in [p for p in PAGES if p.page == name]:
        path.write_text(page.text(DOCS))
    print(f"wrote {path.resolve()}")
    return path


def stale(docs: Path = DOCS) -> list[str]:
    """The pages whose committed text differs from their data rendered."""
    return [p.page for p in PAGES if p.text(docs) != (docs / p.page).read_text()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {SCRIPTS}.pages", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; name the pages that differ from their data")
    args = ap.parse_args(argv)
    if args.check:
        differ = stale()
        for name in differ:
            print(f"docs/{name} differs from its data rendered", file=sys.stderr)
        return 1 if differ else 0
    for name in dict.fromkeys(p.page for p in PAGES):
        write_page(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
