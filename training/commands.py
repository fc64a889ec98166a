"""What every `domino` subcommand's parser shares: a help formatter that shows each option's default.

The subcommands keep their examples epilog as written (raw description) and every option's help
ends with its default, unless the help already says it or there is none to show (None, False, an
empty list): `--deals DEALS  duplicate deals per matchup (default: 200)`.
"""
from __future__ import annotations

import argparse


def shows(default) -> bool:
    """Whether a default says something worth printing (0 does; None, False and [] do not)."""
    return not (default is None or default is False or default is argparse.SUPPRESS
                or (isinstance(default, list) and not default))


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (not shows(default) or "%(default)" in text or "default" in text
                or isinstance(action, argparse._HelpAction)):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"
