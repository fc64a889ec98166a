"""The user tools behind `domino play|render|replay|bench` and `make demo`: human play, pictures and
animations, the replay viewer, the env speed benchmark, the demo run."""
