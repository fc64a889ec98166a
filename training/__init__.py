"""domino_training: learning on the domino envs, and measuring what was learned.

Layers, lower first (tests/project/test_layers.py enforces them; a module imports only from its own
layer's part or lower ones):

    settings              the one settings pattern: a dataclass declares each param, its default and
                          meaning; --set, a learner's params and the docs tables come from it
    stats, configs,       intervals and aggregates; YAML configs and --set overrides; job lists over
    parallel, commands,   processes or a Ray cluster; what every subcommand's parser shares; the
    user_code, interrupt  commands' --import of a user's modules; the command's Ctrl-C handler
    evaluate              the duplicate-deal harness (`domino evaluate`)
    learners/             ppo, dmc, sb3, rllib, imitation, distillation, the opponent pool, the run folder,
                          the learner interface (register_learner, train_learner: the one driver) and
                          the `domino train` command
    benchmark/, exploit/  the benchmark (suite and lock, runner, aggregates, report, ratings) and
                          exploitability (exact, CFR+, learned best responses), side by side
    tools/                play, render, replay view, env speed, the demo
    cli                   the `domino` command

scripts/ holds the maintainer scripts (page and checkpoint regenerators, one-off experiments): they
import the library, nothing imports them, and the wheel does not ship them. No library module writes
into its own folder: outputs go where --out/--report/--run-dir say, by default under the current folder.
"""
