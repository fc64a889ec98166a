"""python -m domino_training.benchmark: the same as `domino benchmark`."""
import sys

from domino_training.benchmark.cli import main

sys.exit(main())
