"""One self-contained HTML replay of a game (``domino render --html FILE``): every position as SVG
(domino_envs/svg.py) from each view asked for, a slider, first / previous / play / next / last,
the arrow keys, a seat-view switch and the move log with the moves the engine made by itself.

It opens from disk with no server and no network: the frames travel inside the file, gzipped
JSON in base64 (a 60-move game from five views is ~10 MB of SVG, ~1 MB so), unpacked by the
browser's own DecompressionStream; its script and style are inline (nothing is fetched). Every
text from the replay (agent names, move names) is escaped.
"""
from __future__ import annotations

import base64
import gzip
import html
import json

import numpy as np

from domino_envs.core import H_TURN
from domino_envs.svg import picture_svg
from domino_envs.text import forced_moves, move_names


def moves_of(game, rows: list, steps: list[tuple[int, int]]) -> list[dict]:
    """The move log of a game: for each decision (seat, action) between rows[i] and rows[i + 1], its
    seat, name and the moves the engine then made by itself (as `domino replay` prints them)."""
    names = move_names(game)
    out = []
    for i, (seat, action) in enumerate(steps):
        before = game.decode(game.observe(rows[i], seat))
        after = game.decode(game.observe(rows[i + 1], seat))
        forced = [line.strip() for line in forced_moves(game, names, seat, before, after, seat, action)]
        out.append({"seat": int(seat), "name": names[action], "forced": forced})
    return out


def views_for(game, viewer) -> list[tuple[str, str, object]]:
    """(key, label, viewer) of the views drawn: the one asked for (a seat or "full"), else the open
    table and every seat's."""
    if viewer == "full":
        return [("full", "open table", "full")]
    if viewer is not None:
        return [(str(viewer), f"seat {viewer}'s view", int(viewer))]
    return [("full", "open table", "full")] + [(str(k), f"seat {k}'s view", k) for k in range(game.num_players)]


def replay_html(game, rows: list[np.ndarray], moves: list[dict], title: str, facts: list[str],
                viewer=None) -> str:
    """The HTML page: `rows` the positions (the start, then after each decision), `moves` their log
    (`moves_of`), `facts` lines under the title (seed, agents, result), `viewer` as `views_for`."""
    if len(rows) != len(moves) + 1:
        raise ValueError(f"{len(rows)} positions for {len(moves)} moves: need one more position than moves")
    views = views_for(game, viewer)
    frames = {key: [picture_svg(game, row, v) for row in rows] for key, _, v in views}
    to_act = [None if row[1] else int(row[H_TURN]) for row in rows]  # row[1] is H_DONE
    data = {"n": len(rows), "frames": frames, "to_act": to_act}
    packed = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), 6, mtime=0)).decode()
    e = html.escape
    options = "".join(f'<option value="{e(key)}">{e(label)}</option>' for key, label, _ in views)
    log = []
    for i, m in enumerate(moves, start=1):
        forced = "".join(f"<li>{e(line)}</li>" for line in m["forced"])
        log.append(f'<li id="move-{i}" data-step="{i}">seat {m["seat"]}: {e(m["name"])}'
                   + (f'<ul class="forced">{forced}</ul>' if forced else "") + "</li>")
    n = len(rows) - 1
    return _PAGE.format(
        title=e(title), facts="".join(f"<p>{e(f)}</p>" for f in facts), last=n, options=options,
        hide_view="" if len(views) > 1 else " hidden", first=frames[views[0][0]][0], log="".join(log),
        packed=packed, script=_SCRIPT, style=_STYLE)


_STYLE = """
body{font-family:system-ui,sans-serif;background:#1c1612;color:#eeeee8;margin:0 auto;max-width:1060px;padding:12px}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem}header p{margin:.1rem 0;color:#cfd8cf}
.controls{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.6rem 0}
button,select{font-size:1rem;padding:.25rem .7rem;background:#f4eedc;color:#1c1612;border:1px solid #776;border-radius:4px}
button:focus-visible,select:focus-visible,input:focus-visible{outline:3px solid #fac83c;outline-offset:2px}
input[type=range]{flex:1;min-width:200px}
#frame svg{width:100%;height:auto;display:block}
#now{min-height:1.4em;color:#fac83c}
#log li.current{background:#3a3020;color:#fac83c}#log li.later{color:#8a9a8e}
.forced{font-size:.9em;color:#b8c8bc}
"""

_SCRIPT = """
(async function () {
  const $ = (id) => document.getElementById(id);
  const bytes = Uint8Array.from(atob($("frames").textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const data = JSON.parse(await new Response(stream).text());
  const step = $("step"), view = $("view"), frame = $("frame"), items = document.querySelectorAll("#log > li");
  let k = 0, timer = null;
  function show(i) {
    k = Math.max(0, Math.min(data.n - 1, i));
    step.value = k;
    frame.innerHTML = data.frames[view.value][k];
    $("where").textContent = "position " + k + " of " + (data.n - 1);
    const seat = data.to_act[k];
    $("now").textContent = (k === 0 ? "the deal" : "after move " + k + ": " + items[k - 1].firstChild.textContent)
      + (seat === null ? " (the game is over)" : " (seat " + seat + " to play)");
    items.forEach((li, j) => {
      li.classList.toggle("current", j === k - 1);
      li.classList.toggle("later", j >= k);
      if (j === k - 1) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
    });
    document.body.dataset.step = k;
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; $("play").textContent = "Play"; } }
  $("first").onclick = () => { stop(); show(0); };
  $("prev").onclick = () => { stop(); show(k - 1); };
  $("next").onclick = () => { stop(); show(k + 1); };
  $("last").onclick = () => { stop(); show(data.n - 1); };
  $("play").onclick = () => {
    if (timer) { stop(); return; }
    if (k >= data.n - 1) show(0);
    $("play").textContent = "Pause";
    timer = setInterval(() => { if (k >= data.n - 1) stop(); else show(k + 1); }, 700);
  };
  step.oninput = () => { stop(); show(Number(step.value)); };
  view.onchange = () => show(k);
  items.forEach((li, j) => { li.onclick = () => { stop(); show(j + 1); }; });
  document.addEventListener("keydown", (ev) => {
    if (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowRight") { stop(); show(k + 1); }
    else if (ev.key === "ArrowLeft") { stop(); show(k - 1); }
  });
  show(0);
  document.body.dataset.ready = "1";
})();
"""

_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{style}</style></head>
<body data-step="0">
<header><h1>{title}</h1>{facts}</header>
<main>
<div class="controls" role="group" aria-label="replay controls">
<button id="first" type="button" aria-label="first position">&laquo;</button>
<button id="prev" type="button" aria-label="previous position">&#x25C0;</button>
<button id="play" type="button">Play</button>
<button id="next" type="button" aria-label="next position">&#x25B6;</button>
<button id="last" type="button" aria-label="last position">&raquo;</button>
<label for="step">Position</label><input id="step" type="range" min="0" max="{last}" value="0">
<output id="where" for="step">position 0 of {last}</output>
<span{hide_view}><label for="view">View</label> <select id="view">{options}</select></span>
</div>
<p id="now" aria-live="polite">the deal</p>
<div id="frame">{first}</div>
<h2>Moves</h2>
<ol id="log">{log}</ol>
</main>
<script id="frames" type="application/octet-stream">{packed}</script>
<script>{script}</script>
</body>
</html>
"""
