"""The user tools behind `domino play|render|replay|bench` and `make demo`: human play, pictures and
animations, the replay viewer, the env speed benchmark, the demo run."""

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose usage error is one line on stderr (``PROG: error: ...``) and exit status 2,
    without argparse's usage block: the form every error of `domino play` and `domino replay` takes."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)
