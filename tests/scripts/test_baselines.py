"""training/scripts/baselines.py (regenerates docs/baselines.md) on a tiny budget: the four ladder matchups of
each game chosen, each row's numbers those of the JSON it writes beside the page, *holds* exactly where the
interval's lower end is above the fair share, the same page for the same seed, and an unknown game refused
by name."""
from __future__ import annotations

import json
import re

import pytest

from domino_training.scripts import baselines


def _run(tmp_path, name: str, deals: int, games: list[str]) -> tuple[str, dict]:
    md, js = tmp_path / f"{name}.md", tmp_path / f"{name}.json"
    baselines.main(["--deals", str(deals), "--seed", "3", "--games", *games, "--markdown", str(md), "--json", str(js),
                    "--no-progress"])
    return md.read_text(), json.loads(js.read_text())


def test_the_page_has_the_ladder_of_each_game_as_its_json_says(tmp_path):
    games = ["block_v0", "seven_toed_pete_v0"]
    text, data = _run(tmp_path, "a", 6, games)
    assert list(data) == games
    assert "--deals 6 --seed 3" in text.splitlines()[2]
    rows = [r for r in text.splitlines() if re.match(r"\| \w+_v0 \| \d \| ", r)]
    verdicts = set()
    assert len(rows) == 4 * len(games)
    for row, (game, (first, second)) in zip(rows, [(g, pair) for g in games for pair in baselines.LADDER]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[:3] == [game, str(data[game]["num_players"]), f"{first} vs {second}"]
        (m,) = [m for m in data[game]["matchups"] if (m["agent"], m["opponent"]) == (first, second)]
        w, fair = m["win_rate"], data[game]["fair_share"]
        assert m["deals"] == 6
        assert cells[3] == f"{w['mean']:.3f} [{w['lo']:.3f}, {w['hi']:.3f}]" and cells[4] == f"{fair:.3f}"
        assert cells[5] == ("yes" if w["lo"] > fair else "**no**")
        verdicts.add(cells[5])
    assert verdicts == {"yes", "**no**"}  # both sides of the rule seen on these deals
    assert data["seven_toed_pete_v0"]["fair_share"] == pytest.approx(1 / data["seven_toed_pete_v0"]["num_players"])
    again, _ = _run(tmp_path, "b", 6, games)
    strip = re.compile(r"\(\d+ s on this machine\)")  # the page's timings are the only difference
    assert strip.sub("", again) == strip.sub("", text)


def test_an_unknown_game_is_refused_naming_it(tmp_path):
    with pytest.raises(SystemExit, match=r"unknown game\(s\) \['nope_v0'\]; registered games: "):
        _run(tmp_path, "c", 2, ["nope_v0"])
    assert not (tmp_path / "c.md").exists()
