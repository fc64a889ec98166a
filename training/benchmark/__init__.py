"""`domino benchmark`: games x learners x seeds under one frozen protocol, aggregated across seeds.

    domino benchmark --profile quick                  # train, evaluate, rate, write benchmark.md here
    domino benchmark --profile quick --report docs/benchmark.md   # the checkout's page
    domino benchmark --profile quick --only draw      # some games (the rest resume later)
    domino benchmark --profile quick --learners rllib --out runs/benchmark/quick-rllib \\
        --report docs/benchmark_rllib.md              # an optional learner (its extra), its own page
    domino benchmark --profile full --learners ppo --only draw magic7 --seeds 1 \\
        --report /tmp/full.md                         # part of a profile: the page says what it holds
    domino benchmark --profile full --stage draw --workers 2 --report docs/benchmark_full.md \\
        --compare docs/benchmark/quick.json           # one game a sitting; its scores land beside the page
    domino benchmark --profile ci --out /tmp/b        # the seconds-long version CI runs
    domino benchmark --profile quick --workers 2      # two runs at a time, the same scores and page
    domino benchmark freeze --lock configs/benchmark/lock.json   # after bumping `version` (a checkout)
    domino benchmark --import my_learner.py ...       # a learner of your own (register_learner)

The suite is configs/benchmark/suite.yaml. Its `protocol` (games, deal seed, budgets in env steps,
marks, the evaluation ladder, deal counts), the frozen deals it names and the scoring rule (win shares
and ranks with ties, domino_envs/outcome.py) are fingerprinted in configs/benchmark/lock.json under the
suite's `version`; a protocol, a dealing engine or a scoring rule that no longer matches its version's
fingerprint is refused (`ProtocolError`), so published numbers stay
comparable: change the protocol by bumping `version` and running `domino benchmark freeze --lock ...`.

One run is (game, learner, seed). It trains through the learner interface (training/learners/interface.py)
to the profile's budget, saving a policy at every mark, and each saved policy is evaluated on the
first N frozen deals of its game (duplicate deals, seats rotated: training/evaluate.py) against the
ladder (random, greedy, heuristic), the final one also against the search agent. Everything lands
in the output folder (runs/benchmark/<profile> under the current folder by default): the learners' run folders, and
scores.jsonl with one line per (run, mark, opponent). A killed benchmark continues where it stopped:
learners resume from their checkpoints and evaluations already in scores.jsonl are not redone.

Aggregation (rliable's estimators): a run's score on a game against an opponent is its win share
divided by the fair share (1.0 = as good as a table of that opponent). Per learner and opponent: IQM
and mean over runs x games with stratified bootstrap 95% intervals; probability of improvement
between learners; performance profiles (rliable's own); IQM against env steps. The bootstrap is
vectorized here (rliable's calls its estimator once per resample, ~3 ms each) and checked against
rliable's in a test. Learners that ran fewer games (the slow ones) are
aggregated on their games, and every learner also on the games they all ran. Then cross-play: every
final policy and the ladder in a round robin on the frozen deals, rated in one pass
(training/benchmark/ratings.py), and in a partnership game each policy beside partners it never trained with.
Time to strength: env steps and training minutes until a run first beats greedy (interval above the
fair share) and first reaches the heuristic's level (mean at or above the fair share).

The report is Markdown (benchmark.md in the current folder for the quick profile; the checkout's page is
docs/benchmark.md), with a JSON of every score and the plots in a folder beside it (docs/benchmark/).

The package, lower modules first: suite (the suite and its lock), ratings (round-robin ratings, `domino
rate`) < runner (train and evaluate, scores.jsonl) < aggregate (IQM, intervals, time to strength,
cross-play; the statistics are training/stats.py) < cost (core-hours from the runs' clocks, the whole profile's
wall clock on N cores projected from its stages) < report (the page, the plots) < cli (the pipeline, stages and
`domino benchmark`).
"""
from domino_training.benchmark.cli import main, run_benchmark
from domino_training.benchmark.runner import ScoreFile
from domino_training.benchmark.suite import GameSpec, Suite, load_suite, read_suite_file, suite_folder

__all__ = ["GameSpec", "ScoreFile", "Suite", "load_suite", "main", "read_suite_file", "run_benchmark", "suite_folder"]
