"""The user tools behind `domino play|render|replay|bench` and `make demo`: human play, pictures and
animations, the replay viewer, the env speed benchmark, the demo run."""

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose usage error is one line on stderr (``PROG: error: ...``) and exit status 2,
    without argparse's usage block: the form every error of `domino play` and `domino replay` takes."""

    def error(self, message):
        raise SystemExit(self.fail(message))

    def fail(self, message) -> int:
        """A command's error after parsing, in the same form: one line on stderr; returns the exit status 2."""
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        return 2

    def parse(self, argv):
        """parse_args, with a usage error (already reported) or --help given back as its exit status (an int)
        rather than raised, for a `main` that returns its status."""
        try:
            return self.parse_args(argv)
        except SystemExit as exit_:
            return int(exit_.code or 0)
