"""Every (environment, config) the generic tests run: API, properties, leakage, bad input.

A new game adds its configurations here (every flag value at least once) and the generic tests
cover it at once. A registered env listed nowhere here still runs in its default config (added
from registry.GAMES below), so no registered game goes untested.
"""
from __future__ import annotations

from domino_envs.registry import GAMES

CONFIGS: list[tuple[str, dict]] = [
    # Draw Game: 2-4 players, double-six and double-nine, match mode, fixed first seat
    ("draw_v0", {}),
    ("draw_v0", {"num_players": 3}),
    ("draw_v0", {"num_players": 4}),
    ("draw_v0", {"max_pip": 9}),
    ("draw_v0", {"max_pip": 9, "num_players": 3}),
    ("draw_v0", {"max_pip": 9, "num_players": 4}),
    ("draw_v0", {"match": True, "target": 100}),
    ("draw_v0", {"match": True, "target": 250, "num_players": 3, "first_seat": 1}),
    # Block Game
    ("block_v0", {}),
    ("block_v0", {"num_players": 3}),
    ("block_v0", {"num_players": 4, "hand_size": 7}),
    ("block_v0", {"max_pip": 9, "num_players": 4, "first_seat": 2}),
    ("block_v0", {"match": True, "target": 100}),
    # the small configs (configs/small/: double-two and double-three sets, exploitability walks)
    ("draw_v0", {"max_pip": 2, "hand_size": 2}),
    ("draw_v0", {"max_pip": 3, "hand_size": 3, "first_seat": 0}),
    ("block_v0", {"max_pip": 2, "hand_size": 2}),
    ("block_v0", {"max_pip": 3, "hand_size": 3}),
    # Sum 7: 2-4 players, both deals, every zero rule, match mode
    ("sum7_v0", {}),
    ("sum7_v0", {"num_players": 3}),
    ("sum7_v0", {"num_players": 4}),
    ("sum7_v0", {"deal": "seven_up", "num_players": 3, "zero_rule": "strict"}),
    ("sum7_v0", {"deal": "seven_up", "num_players": 4, "zero_rule": "wild"}),
    ("sum7_v0", {"zero_rule": "strict"}),
    ("sum7_v0", {"zero_rule": "wild", "num_players": 3}),
    ("sum7_v0", {"match": True, "target": 100, "num_players": 3}),
    # Seven-Toed Pete: single hand, double_extra_turn (P-2), match mode (P-7), fixed first leader (P-5)
    ("seven_toed_pete_v0", {}),
    ("seven_toed_pete_v0", {"double_extra_turn": True}),
    ("seven_toed_pete_v0", {"match": True}),
    ("seven_toed_pete_v0", {"match": True, "chips_to_win": 2, "double_extra_turn": True, "first_leader": 3}),
    # Racehorse: 2-4 players, teams, every spinner and award value, match mode, fixed first setter
    ("racehorse_v0", {}),
    ("racehorse_v0", {"num_players": 3}),
    ("racehorse_v0", {"num_players": 4}),
    ("racehorse_v0", {"num_players": 4, "teams": True}),
    ("racehorse_v0", {"spinner": "first_double"}),
    ("racehorse_v0", {"num_players": 3, "spinner": "all_doubles", "award": "per_five"}),
    ("racehorse_v0", {"num_players": 4, "teams": True, "spinner": "first_double", "award": "per_five"}),
    ("racehorse_v0", {"match": True}),
    ("racehorse_v0", {"match": True, "num_players": 4, "teams": True, "spinner": "all_doubles", "first_setter": 2}),
    ("racehorse_v0", {"match": True, "num_players": 3, "target": 200, "max_hands": 2}),
    # Magic-7: 2-6 players (default 4), match mode over num_games, fixed first starter (M7-7)
    ("magic7_v0", {}),
    ("magic7_v0", {"num_players": 2}),
    ("magic7_v0", {"num_players": 3}),
    ("magic7_v0", {"num_players": 5}),
    ("magic7_v0", {"num_players": 6}),
    ("magic7_v0", {"num_players": 3, "num_games": 3}),
    ("magic7_v0", {"num_players": 6, "num_games": 2, "first_seat": 5}),
]
CONFIGS += [(name, {}) for name in GAMES if name not in {n for n, _ in CONFIGS}]


def config_id(name: str, kwargs: dict) -> str:
    return name + ("-" + "-".join(f"{k}={v}" for k, v in sorted(kwargs.items())) if kwargs else "")


CONFIG_IDS = [config_id(n, k) for n, k in CONFIGS]
