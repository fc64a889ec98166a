"""The shipped-agents table (training/scripts/ship.py): a column per baseline and per search an env was
measured against, "-" where it was not, and each interval judged against its env's fair share."""
from __future__ import annotations

from domino_training.scripts.ship import markdown


def _row(opponent, win, lo, hi, deals):
    return {"opponent": opponent, "deals": deals, "win": win, "win_lo": lo, "win_hi": hi}


def test_the_table_has_a_column_per_search_and_marks_intervals_not_above_the_fair_share():
    base = [_row(o, 0.6, 0.55, 0.65, 2000) for o in ("random", "greedy", "heuristic")]
    results = [
        {"game": "draw_v0", "num_players": 2, "fair_share": 0.5, "env_steps": 4_100_000,
         "rows": base + [_row("pimc:n=64,rollout=random", 0.52, 0.505, 0.535, 2000)]},
        {"game": "magic7_v0", "num_players": 4, "fair_share": 0.25, "env_steps": 3_400_000,
         "rows": base + [_row("pimc:n=16", 0.238, 0.217, 0.259, 300)]},
    ]
    lines = markdown(results, 7).splitlines()
    header = next(line for line in lines if line.startswith("| env"))
    assert header.endswith("| vs heuristic | vs pimc:n=64,rollout=random | vs pimc:n=16 |")
    draw = next(line for line in lines if line.startswith("| draw_v0"))
    magic = next(line for line in lines if line.startswith("| magic7_v0"))
    assert draw.endswith("| 0.520 [0.505, 0.535] | - |")
    assert magic.endswith("| - | 0.238 [0.217, 0.259] (not above fair share) |")
    assert "evaluation seed 7" in lines[2]
    assert lines[-1] == "Deals per matchup: baselines 2000, `pimc:n=64,rollout=random` 2000, `pimc:n=16` 300."
