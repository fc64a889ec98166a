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


# ------------------------------------------------------------------------------------------- shared flags
# Each flag that several commands take is declared once here, with its help and its check; a command
# says only what its own work is (tests/fronts/test_shared_flags.py fails on a second declaration).
SHARED_FLAGS = ("--workers", "--address", "--import", "--set", "--seed")


def workers_count(text: str) -> int:
    """`--workers N`: an integer >= 1, in the words of the library's own check (parallel.check_workers,
    which sits beside this module and so is not imported)."""
    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"workers={workers!r} must be an integer >= 1 (1 runs every job in this "
                                         f"process)")
    return workers


def seed_value(text: str) -> int:
    """`--seed N`: an integer seed in 0..2**64-1, checked as every front checks one (rng.check_seed)."""
    from domino_envs.rng import check_seed

    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    try:
        return check_seed(seed, "--seed")  # ConfigError "--seed: seed=-4 is not allowed; ..."
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--seed: ")) from None


def add_workers(parser, work: str, *, default: int = 1, unit: str = "processes", same: bool = True,
                note: str = "") -> None:
    """`--workers N`: how many `unit` do `work` ("play the deals"); `same`: the results do not depend on N."""
    here = ": this process" if unit == "processes" and default == 1 else ""
    parser.add_argument("--workers", type=workers_count, default=default, metavar="N",
                        help=f"{unit} that {work} (default {default}{here})"
                             + ("; the results are the same for every N" if same else "") + (f". {note}" if note else ""))


def add_address(parser, work: str, note: str = "") -> None:
    """`--address auto|HOST:PORT`: run `work` ("play the shards") as Ray tasks on a cluster; the `ray` extra
    is checked before any work by parallel.check_address (in the library, so every caller gets it)."""
    parser.add_argument("--address", default=None, metavar="auto|HOST:PORT",
                        help=f"{work} as Ray tasks on this cluster (the `ray` extra)" + (f"; {note}" if note else ""))


def add_import(parser, registers: str = "an agent of your own: its register_agent call") -> None:
    """`--import MODULE_OR_FILE` (repeatable, into `args.imports`): user code imported first, by
    user_code.import_all, in every worker too."""
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_FILE",
                        help=f"import a module or .py file first, in every process the command starts "
                             f"({registers}); repeatable")


def add_set(parser, learner_params: bool = False) -> None:
    """`--set KEY=VALUE` (repeatable): a rule key of the game (checked by the game's config,
    registry.config_from_pairs); where the command trains (`learner_params`), a dotted key is one of the
    learner's params (ppo.lr=3e-4)."""
    text = ("a rule key of the game, or a learner's param under its dotted name, e.g. --set num_players=3 "
            "--set ppo.lr=3e-4 (repeatable)" if learner_params else
            "a rule key of the game, e.g. --set num_players=3 (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=text)


def add_seed(parser, of: str = "the deals", *, default: int | None = 0, note: str = "") -> None:
    """`--seed N`: the seed of `of` ("the deals"), an integer in 0..2**64-1; the same seed, the same results."""
    parser.add_argument("--seed", type=seed_value, default=default,
                        help=f"seed of {of} (the same seed, the same results)"
                             + (f"; {note}" if note else ""))
