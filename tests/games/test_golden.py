"""Golden playthroughs: every committed transcript replays line for line (see tests/golden/__init__.py).

A failure names the first differing line (file and line number, recorded vs replayed) and the
command that regenerates the transcript after an intended change.
"""
from __future__ import annotations

import pytest

from domino_envs.games.draw import DrawGame
from domino_envs.registry import GAMES
from tests.golden import FAMILIES, GOLDEN_DIR, REGENERATE_CMD, differing_pieces, path_of, recorded_actions, transcript

REGISTERED_ENVS = set(GAMES)


def first_difference(path, recorded: list[str], replayed: list[str]) -> str | None:
    """None if equal, else a message naming the first differing line."""
    try:
        path = path.relative_to(GOLDEN_DIR.parent.parent)
    except ValueError:
        pass
    for i in range(max(len(recorded), len(replayed))):
        was = recorded[i] if i < len(recorded) else "<end of file>"
        now = replayed[i] if i < len(replayed) else "<end of replay>"
        if was != now:
            context = "\n".join(f"      {line}" for line in recorded[max(0, i - 3):i])
            pieces = differing_pieces(was, now)
            named = f"  observation pieces that differ: {', '.join(pieces)}\n" if pieces else ""
            return (f"{path}:{i + 1}: golden transcript differs from the replay\n"
                    f"  lines before it:\n{context}\n"
                    f"  recorded: {was}\n"
                    f"  replayed: {now}\n{named}"
                    f"If the change is intended: {REGENERATE_CMD} {path.stem}  (then review git diff {path})")
    return None


@pytest.mark.parametrize("family", list(FAMILIES))
def test_golden_transcript_replays(family):
    path = path_of(family)
    assert path.exists(), f"{path} is missing; create it with: {REGENERATE_CMD} {family}"
    recorded = path.read_text().splitlines()
    replayed = transcript(family, recorded_actions(recorded))
    message = first_difference(path, recorded, replayed)
    assert message is None, message


def test_golden_files_match_the_families():
    """Every registered env has transcripts, no family plays an env that is not registered, and no
    transcript is left over from a removed family."""
    assert {name for name, _, _ in FAMILIES.values()} == REGISTERED_ENVS
    on_disk = {p.stem for p in GOLDEN_DIR.glob("*.txt")}
    assert on_disk == set(FAMILIES), (
        f"transcripts without a family: {sorted(on_disk - set(FAMILIES))}; "
        f"families without a transcript: {sorted(set(FAMILIES) - on_disk)}"
    )


def test_replay_reports_the_first_differing_line(tmp_path):
    """The diff helper names file, line, both texts and the regenerate command."""
    path = tmp_path / "draw_2p.txt"
    msg = first_difference(path, ["a", "b", "c"], ["a", "x", "c"])
    assert f"{path}:2:" in msg and "recorded: b" in msg and "replayed: x" in msg
    assert f"{REGENERATE_CMD} draw_2p" in msg
    assert first_difference(path, ["a"], ["a"]) is None
    assert "<end of replay>" in first_difference(path, ["a", "b"], ["a"])


def test_replay_flags_an_illegal_recorded_action():
    """A recorded action that is not legal where it was taken ends the replay with a line saying so."""
    family = "draw_2p"
    lines = path_of(family).read_text().splitlines()
    actions = recorded_actions(lines)
    seed = next(iter(actions))
    first_mask_line = next(line for line in lines if line.startswith("step 1 "))
    legal = {int(a) for a in first_mask_line.split("mask=")[1].split(",")}
    illegal = next(a for a in range(10_000) if a not in legal)
    replayed = transcript(family, {**actions, seed: [illegal] + actions[seed][1:]})
    assert any(line.startswith(f"!! action {illegal} is not among the legal ids") for line in replayed)


def test_replay_catches_a_changed_mask(monkeypatch):
    """A mask that drops one legal id (as a rules change would) makes the replay differ from the
    transcript at that step's line."""
    real = DrawGame._mask_kernel

    def mask_without_highest_id(s, p, out):
        real(s, p, out)
        legal = out.nonzero()[0]
        if len(legal) > 1:
            out[legal[-1]] = 0

    family = "draw_2p"
    path = path_of(family)
    recorded = path.read_text().splitlines()
    monkeypatch.setattr(DrawGame, "_mask_kernel", staticmethod(mask_without_highest_id))
    message = first_difference(path, recorded, transcript(family, recorded_actions(recorded)))
    assert message is not None and "recorded: step " in message and "mask=" in message


def test_a_changed_observation_piece_is_named_in_the_diff(tmp_path):
    """An obs line whose 'ends' digest moved: the message names that piece and no other."""
    path = tmp_path / "draw_2p.txt"
    was = "  obs player_0 hand=aaaa1111 played_by=bbbb2222 ends=cccc3333"
    now = "  obs player_0 hand=aaaa1111 played_by=bbbb2222 ends=dddd4444"
    msg = first_difference(path, ["step 1 player_0 mask=1", was], ["step 1 player_0 mask=1", now])
    assert "observation pieces that differ: ends\n" in msg
    assert differing_pieces(was, was) == [] and differing_pieces("step 1", "step 2") == []
