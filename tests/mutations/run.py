"""Plant each bug of issues 16, 21-24, 42-44, 46 and 55 on a copy of the repo, one at a time, and check the tests catch it.

    .venv/bin/python tests/mutations/run.py            # every mutation (~15 min: the first copy
                                                       # compiles its numba kernels cold, the rest
                                                       # reuse them; see "Where the copies go")
    .venv/bin/python -m tests.mutations.run pete_sample_hidden d5_last_winner   # some of them
    .venv/bin/python tests/mutations/run.py --list
    .venv/bin/python tests/mutations/run.py --table tests/mutations/verdicts.md   # the committed table of a full run

For each mutation: copy the repo (without .git, .venv, caches) to a folder of its own, apply its
textual replacements (each anchored on a snippet that must occur exactly once: a missing or
ambiguous anchor stops the run loudly, so an edit that moved the code shows up as an error, not as
a silently unplanted bug), run its test selection there with pytest, and report "caught" (the
tests failed) or "MISSED" (they passed). First the same selections run unmutated in the repo
itself: they must pass, or "caught" would mean nothing. Exit status 1 if any mutation is missed
or errs. Not part of the normal suite (slow); re-run it after merging changes to the mutated code,
and after any change to training (training/, and the learners' pieces in domino_envs: wrappers.py,
replay.py): issue 21's mutations pin what decides whether the learners learn.

Where the copies go: one fixed folder per checkout under the user's cache
(``~/.cache/domino_envs/mutations/<hash of the checkout's path>/repo``, 0700, emptied before each
mutation), so that numba's cache, which is keyed on each source file's folder path and timestamp,
serves every copy and only what a mutation changes compiles again (minutes saved a mutation). That
is as safe as the package's own cache: domino_envs keys its cache folder on a hash of all its
sources (a mutation in domino_envs gets a fresh folder, so no kernel that inlines the mutated code
is reused), a mutated file elsewhere gets a new timestamp (compiled code outside domino_envs, in
agents/pimc.py, training/learners/ppo.py and tools/envspeed.py, inlines only its own file's and domino_envs'
functions, except the heuristic kernels agents/heuristic_*.py, which inline agents/heuristics.pick_best: a planting
there goes in the kernel's own file), and
NUMBA_CACHE_DIR is dropped from the copies' environment so that the package's keyed folder is used. ``--fresh`` copies into a
new temporary folder for each mutation instead (everything compiles cold, as before). Two runs of
the script on one checkout at once: the second stops (the folder is locked).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1200


@dataclass
class Mutation:
    name: str
    what: str
    path: str
    replacements: list[tuple[str, str]]
    tests: list[str] = field(default_factory=list)  # pytest arguments (files, -k ...)


MUTATIONS = [
    Mutation(
        "pete_sample_hidden", "Seven-Toed Pete's sample_hidden hands the next seat its true hand",
        "domino_envs/games/pete.py",
        [("        allowed[j] = unseen & ~forbid\n",
          "        allowed[j] = s[HANDS + j] if j == (v + 1) % NP else unseen & ~forbid\n")],
        ["tests/engine/test_sampling.py", "-k", "pete"]),
    Mutation(
        "matchup_rotation_deal", "run_matchup plays a different deal in each seat rotation",
        "training/evaluate.py",
        [("totals = play_hand(game, state, seats, engine_seed, agent_seeds, recorder=recorder, infos=infos)",
          "totals = play_hand(game, state, seats, mix_seed(engine_seed, k), agent_seeds, recorder=recorder, infos=infos)")],
        ["tests/training/test_matchup_rotation.py", "tests/training/test_evaluate.py", "-k", "matchup or rotation or evaluate or deal"]),
    Mutation(
        "d5_last_winner", "D-5 read as 'the last hand's winner leads'",
        "domino_envs/games/draw.py",
        [("        first = s[LAST_PLACER]\n",
          "        first = s[LAST_WINNER] if s[LAST_WINNER] >= 0 else s[LAST_PLACER]\n")],
        ["tests/games/test_draw_regressions.py", "tests/games/test_draw.py", "-k", "d5"]),
    Mutation(
        "draw_voids_never_reset", "Draw voids never reset after kept draws",
        "domino_envs/core.py",  # the draw until playable of every drawing game (issue 59)
        [("s[lacks + seat] = shown if kept > 0 else (s[lacks + seat] | shown)",
          "s[lacks + seat] = s[lacks + seat] | shown")],
        ["tests/games/test_draw_regressions.py", "-k", "voids"]),
    Mutation(
        "draw_obs_absolute_seats", "Draw/Block played_by and voids in absolute seats",
        "domino_envs/games/draw.py",
        [("s[PLAYED_MASK + (v + r if v + r < n else v + r - n)]", "s[PLAYED_MASK + r]"),
         ("s[VOID + (v + r if v + r < n else v + r - n)]", "s[VOID + r]")],
        ["tests/games/test_draw_regressions.py", "-k", "seat_relative"]),
    Mutation(
        "vector_finals_after_reset", "the vector env copies final_states after the auto-reset",
        "domino_envs/vector.py",
        [("            if not _reset_to_decision(g, s, next_seed(s, H_RNG), p):\n"
          "                return n_final, i, NO_DECISION\n", ""),
         ("        if done:\n", "        if done:\n            _reset_to_decision(g, s, next_seed(s, H_RNG), p)\n")],
        ["tests/fronts/test_vector_final_states.py", "-k", "final_states and draw"]),
    Mutation(
        "pimc_worst_action", "PIMC picks the worst action",
        "agents/pimc.py",
        [("primary, secondary = (win, ret) if self.objective == \"win\" else (ret, win)",
          "primary, secondary = (-win, -ret) if self.objective == \"win\" else (-ret, -win)")],
        ["tests/agents/test_pimc.py", "-k", "clearly"]),
    # ---------------------------------------------------------------- issue 21: the learners
    Mutation(
        "win_reward_last_actor_only", "a game's end pays its win reward only to the seat that acted last",
        "training/learners/ppo.py",
        [("            _, _, _, rewards, terminated, truncated, _ = venv.step(actions)\n",
          "            acted = seats.copy()\n"
          "            _, _, _, rewards, terminated, truncated, _ = venv.step(actions)\n"),
         ("                self._end_games(buf, ended, win_mode)\n",
          "                self._end_games(buf, ended, win_mode, acted[ended])\n"),
         ("    def _end_games(self, buf: Buffer, ended: np.ndarray, win_mode: bool) -> None:\n",
          "    def _end_games(self, buf: Buffer, ended: np.ndarray, win_mode: bool, acted=None) -> None:\n"),
         ("            self.chains.add_rewards(buf, centered_win_shares(totals).astype(np.float32), ended)\n",
          "            pay = centered_win_shares(totals).astype(np.float32)\n"
          "            if acted is not None:\n"
          "                pay *= np.arange(self.n)[None, :] == acted[:, None]\n"
          "            self.chains.add_rewards(buf, pay, ended)\n")],
        ["tests/learners/test_learners.py", "-k", "final_transition"]),
    Mutation(
        "ties_paid_as_wins", "a tie at the top pays every tied seat a full win (no longer zero-sum)",
        "domino_envs/outcome.py",
        [("    return winners / winners.sum(axis=-1, keepdims=True)\n",
          "    return winners.astype(np.float64)\n")],
        ["tests/learners/test_learners.py", "tests/engine/test_outcome.py", "-k", "ties or final_transition or callers"]),
    Mutation(
        "compiled_ties_exact", "the compiled twin of the outcome rule counts only exactly equal returns as tied",
        "domino_envs/outcome.py",
        [("        if returns[k] >= top - TIE_TOLERANCE:\n", "        if returns[k] == top:\n")],
        ["tests/engine/test_outcome.py"]),
    Mutation(
        "logp_over_all_actions", "the sampler's log-probability normalised over all actions, not the legal ones",
        "training/learners/pool.py",
        [("    logp_all = z - zmax - np.log(np.exp(z - zmax).sum(axis=1, keepdims=True))\n",
          "    lmax = logits.max(axis=1, keepdims=True)\n"
          "    logp_all = logits - lmax - np.log(np.exp(logits - lmax).sum(axis=1, keepdims=True))\n")],
        ["tests/learners/test_learners.py", "-k", "log_prob"]),
    Mutation(
        "ent_coef_wrong_field", "ppo_update reads the entropy coefficient from a field that does not exist (a default)",
        "training/learners/ppo.py",
        [("            loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss\n",
          "            loss = pg_loss - getattr(cfg, \"entropy_coef\", 0.01) * entropy + cfg.vf_coef * v_loss\n")],
        ["tests/learners/test_learners.py", "-k", "coef"]),
    Mutation(
        "vf_coef_ignored", "the value loss weighted 0.5 whatever ppo.vf_coef says",
        "training/learners/ppo.py",
        [("            loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss\n",
          "            loss = pg_loss - cfg.ent_coef * entropy + 0.5 * v_loss\n")],
        ["tests/learners/test_learners.py", "-k", "coef"]),
    Mutation(
        "lr_anneal_in_env_steps", "learning-rate annealing counts env steps against a number of updates",
        "training/learners/ppo.py",
        [("max(0.0, 1.0 - self.update / self.lr_updates)", "max(0.0, 1.0 - self.env_steps / self.lr_updates)")],
        ["tests/learners/test_learners.py", "-k", "lr_schedule"]),
    Mutation(
        "lr_below_zero", "the annealed learning rate goes negative past the budget (gradient ascent)",
        "training/learners/ppo.py",
        [("max(0.0, 1.0 - self.update / self.lr_updates)", "(1.0 - self.update / self.lr_updates)")],
        ["tests/learners/test_learners.py", "-k", "lr_schedule"]),
    Mutation(
        "update_threads_ignored", "the PPO update left on one torch thread whatever ppo.torch_threads says",
        "training/learners/ppo.py",
        [("        with torch_threads(p.torch_threads):\n            stats = ppo_update(",
          "        with torch_threads(1):\n            stats = ppo_update(")],
        ["tests/learners/test_training.py", "-k", "torch_thread"]),
    Mutation(
        "lr_horizon_ignored", "ppo.lr_horizon read but the schedule still ends at the budget",
        "training/learners/ppo.py",
        [("(self.cfg.ppo.lr_horizon or self.cfg.budget.env_steps)", "(self.cfg.budget.env_steps)")],
        ["tests/learners/test_learners.py", "-k", "lr_horizon"]),
    Mutation(
        "pool_weight_dropped", "the pool's greedy weight silently 0 (the weights listed by hand, one forgotten)",
        "training/learners/ppo.py",
        [("        self.pool_weights = np.array([getattr(cfg.opponents, k) for k in POOL_KINDS], dtype=np.float64)\n",
          "        o = cfg.opponents\n"
          "        self.pool_weights = np.array([o.self_play, o.snapshot, o.random, 0.0, o.heuristic, o.target],\n"
          "                                     dtype=np.float64)\n")],
        ["tests/learners/test_learners.py", "-k", "pool_weights"]),
    Mutation(
        "heuristic_games_self_play", "games drawn for the heuristic are played as self-play",
        "training/learners/ppo.py",
        [('"heuristic": HEURISTIC, "target": TARGET}', '"heuristic": LEARNER, "target": TARGET}')],
        ["tests/learners/test_learners.py", "-k", "pool_weights or heuristic"]),
    Mutation(
        "snapshots_never_added", "no snapshot is ever added to the pool",
        "training/learners/ppo.py",
        [("        if self.update % self.cfg.opponents.snapshot_every == 0:\n"
          "            self.collector.add_snapshot(self.model.actor_layers())\n", "")],
        ["tests/learners/test_learners.py", "-k", "snapshot"]),
    Mutation(
        "snapshots_not_restored", "a resumed run's snapshots are not restored (only their count)",
        "training/learners/ppo.py",
        [("        self.snapshots, self.snapshot_count = snapshots, count\n", "        self.snapshot_count = count\n")],
        ["tests/learners/test_learners.py", "-k", "resume and snapshot"]),
    Mutation(
        "demos_obs_shifted", "demonstrations pair each action and mask with the next observation",
        "training/learners/imitate.py",
        [("        obs_out.append(obs.copy())\n", ""),
         ("        obs, masks, seats, rewards, term, trunc, _ = venv.step(actions)\n",
          "        obs, masks, seats, rewards, term, trunc, _ = venv.step(actions)\n        obs_out.append(obs.copy())\n")],
        ["tests/learners/test_learners.py", "-k", "demonstrations"]),
    Mutation(
        "resume_keeps_logged_rows", "a resumed run keeps the log rows written after its checkpoint (logged twice)",
        "training/learners/run_folder.py",
        [("        self.csv.truncate_after(env_steps)\n", "")],
        ["tests/learners/test_learners.py", "-k", "log_row"]),
    Mutation(
        "sb3_export_value_net", "the SB3 actor exported to policy.npz from the value net (same widths)",
        "training/learners/sb3.py",
        [("policy.mlp_extractor.policy_net if isinstance", "policy.mlp_extractor.value_net if isinstance")],
        ["tests/learners/test_learners.py", "-k", "sb3_actor"]),
    Mutation(
        "single_seat_no_rotation", "SingleSeatEnv's seat='rotate' keeps the learner in seat 0",
        "domino_envs/wrappers.py",
        [("        seat = episode % n if self.seat_mode == \"rotate\" else self.seat\n",
          "        seat = 0 if self.seat_mode == \"rotate\" else self.seat\n")],
        ["tests/fronts/test_wrappers.py", "-k", "rotate"]),
    Mutation(
        "replay_step_rewards_unchecked", "replay verification checks the returns but not each step's rewards",
        "domino_envs/replay.py",
        [("            if len(st.rewards) != n or rewards != st.rewards:\n", "            if len(st.rewards) != n:\n")],
        ["tests/fronts/test_replay.py", "-k", "moved"]),
    # issue 22: the learners and the benchmark
    Mutation(
        "dmc_target_wrong_seat", "DMC's regression target is seat 0's final value for every seat's decision",
        "training/learners/dmc.py",
        [("        target = values[pos[done], self.st_seat[done]].astype(np.float32)\n",
          "        target = values[pos[done], 0].astype(np.float32)\n")],
        ["tests/learners/test_learner_interface.py", "-k", "dmc_finish"]),
    Mutation(
        "benchmark_keyed_by_trained_steps", "benchmark scores keyed by the learner's own step count, not the mark",
        "training/benchmark/runner.py",
        [("                rows.append({\"game\": game_name, \"learner\": learner, \"seed\": seed, \"env_steps\": p.mark,",
          "                rows.append({\"game\": game_name, \"learner\": learner, \"seed\": seed, \"env_steps\": p.env_steps,")],
        ["tests/benchmark/test_benchmark.py", "-k", "ci_profile"]),
    # issue 23: the learned best response's measure
    Mutation(
        "br_edge_unpaired", "the learned best response's edge forgets to subtract the target's own return",
        "training/exploit/best_response.py",
        [("        e = np.asarray(p[\"returns\"]) - base[p[\"deals\"]]\n", "        e = np.asarray(p[\"returns\"])\n")],
        ["tests/exploit/test_best_response.py", "-k", "result_pairs"]),
    Mutation(
        "response_gains_seat_sign", "the exact gain of a response in seat 1 counted with seat 0's sign",
        "training/exploit/exact.py",
        [("        sign = 1 if p == 0 else -1\n", "        sign = 1\n")],
        ["tests/exploit/test_best_response.py", "-k", "sampled_edge or at_most"]),
    Mutation(
        "target_seats_random", "games drawn for the target opponent seat random players instead",
        "training/learners/ppo.py",
        [('"heuristic": HEURISTIC, "target": TARGET}', '"heuristic": HEURISTIC, "target": RANDOM}')],
        ["tests/exploit/test_best_response.py", "-k", "one_learner_seat"]),
    # issue 24: policy-guided search
    Mutation(
        "pimc_policy_rollout_drops_rewards", "policy rollouts forget the rewards of every step after the searched one",
        "agents/pimc.py",
        [("            tot[i, k] += s[H_REWARD + k]\n", "            tot[i, k] += s[H_REWARD + k] * (steps[i] < 0)\n")],
        ["tests/agents/test_pimc.py", "-k", "policy"]),
    Mutation(
        "pimc_policy_independent_draws", "policy rollouts of one sample draw independent numbers (no common random numbers)",
        "agents/pimc.py",
        [("            u = self._rng.random(n)[sample_of[idx]] * cum[:, -1]", "            u = self._rng.random(idx.size) * cum[:, -1]")],
        ["tests/agents/test_pimc.py", "-k", "policy"]),
    Mutation(
        "pimc_policy_ignores_temperature", "policy rollouts draw from the plain softmax whatever the temperature",
        "agents/pimc.py",
        [("astype(np.float64) / self.temperature", "astype(np.float64)")],
        ["tests/agents/test_pimc.py", "-k", "one_rollout_at_a_time"]),
    Mutation(
        "distill_skips_due_round_on_resume", "a session does not run the rounds due when it starts (pre-PPO ones, one interrupted)",
        "training/learners/distill.py",
        [("            self.catch_up()\n\n    def catch_up", "\n    def catch_up")],
        ["tests/learners/test_distill.py", "-k", "alternate"]),
    Mutation(
        "distill_forgets_rounds_done", "a resumed distillation starts its rounds again from the first",
        "training/learners/distill.py",
        [("    return done\n", "    return 0\n")],
        ["tests/learners/test_distill.py", "-k", "resumes"]),
    # issue 43: the measurement layer (ratings, the benchmark's statistics and lock, the exploit walk
    # and CFR+, the heuristic kernels, distillation's settings, DMC's exploration, replay and targets)
    Mutation(
        "ratings_anchor_first_listed", "ratings anchored on the first agent listed instead of random",
        "training/benchmark/ratings.py",
        [("    return names.index(ANCHOR) if ANCHOR in names else 0\n", "    return 0\n")],
        ["tests/benchmark/test_ratings.py", "-k", "order or anchor"]),
    Mutation(
        "ratings_no_rotation", "play_table keeps every agent in the seat it is listed for (no rotation)",
        "training/benchmark/ratings.py",
        [("            seat_of = [(p + r) % n for p in range(n)]\n", "            seat_of = list(range(n))\n")],
        ["tests/benchmark/test_ratings.py", "-k", "seat"]),
    Mutation(
        "ratings_first_rotation_only", "two-sided ratings count only the first rotation of each deal",
        "training/benchmark/ratings.py",
        [("            share[d] += sum(w[p] for p in range(n) if side_of(game, p) == 0) / n\n",
          "            share[d] += sum(w[p] for p in range(n) if side_of(game, p) == 0) * (r == 0)\n")],
        ["tests/benchmark/test_ratings.py", "-k", "seat or order"]),
    Mutation(
        "ratings_teams_wrong_sides", "partnerships read as seats 0 & 1 against 2 & 3",
        "training/benchmark/ratings.py",
        [("    return seat % 2\n", "    return int(seat >= game.num_players // 2)\n")],
        ["tests/benchmark/test_ratings.py", "-k", "teams"]),
    # issue 60: the 3+ player ratings fitted in one batch by rank-breaking
    Mutation(
        "ffa_finish_order_reversed", "3+ player ratings read a finishing rank of 0 as last, not first",
        "training/benchmark/ratings.py",
        [("                above[d, i, j] += 1.0 if ri < rj else 0.5 if ri == rj else 0.0\n",
          "                above[d, i, j] += 1.0 if ri > rj else 0.5 if ri == rj else 0.0\n")],
        ["tests/benchmark/test_ratings.py", "-k", "free_for_all"]),
    Mutation(
        "ffa_ties_win_both_ways", "a tie at a 3+ player table counts as a win for both agents",
        "training/benchmark/ratings.py",
        [("                above[d, i, j] += 1.0 if ri < rj else 0.5 if ri == rj else 0.0\n",
          "                above[d, i, j] += 1.0 if ri <= rj else 0.0\n")],
        ["tests/benchmark/test_ratings.py", "-k", "free_for_all"]),
    Mutation(
        "ffa_bootstrap_ignores_resample", "the 3+ player bootstrap refits every deal once instead of the resample",
        "training/benchmark/ratings.py",
        [("    weight = np.ones(len(above)) if pick is None else np.bincount(pick, minlength=len(above)).astype(float)\n",
          "    weight = np.ones(len(above))\n")],
        ["tests/benchmark/test_ratings.py", "-k", "free_for_all"]),
    Mutation(
        "benchmark_lock_unchecked", "domino benchmark runs without checking the protocol against its lock",
        "training/benchmark/cli.py",
        [("    check_protocol(data, read_lock(lock_path))\n", "")],
        ["tests/benchmark/test_benchmark.py", "-k", "command_refuses"]),
    Mutation(
        "improvement_reversed", "the probability of improvement of a over b reported as b's over a",
        "training/benchmark/aggregate.py",
        [('"p": float(improvement(full[a], full[b]))', '"p": float(improvement(full[b], full[a]))')],
        ["tests/benchmark/test_benchmark.py", "-k", "rliable_on"]),
    Mutation(
        "improvement_interval_against_itself", "the improvement interval bootstraps a against a resample of a",
        "training/benchmark/aggregate.py",
        [("stratified_resamples(full[b], reps, rng))", "stratified_resamples(full[a], reps, rng))")],
        ["tests/benchmark/test_benchmark.py", "-k", "rliable_on"]),
    Mutation(
        "profile_taus_shifted", "performance profiles reported at other thresholds than they were computed at",
        "training/benchmark/aggregate.py",
        [('result["profiles"][opp] = {"taus": taus.tolist(),', 'result["profiles"][opp] = {"taus": (taus * 1.05).tolist(),')],
        ["tests/benchmark/test_benchmark.py", "-k", "rliable_on"]),
    Mutation(
        "exact_gains_swapped", "exact() reports the best-response gains seat 1's first",
        "training/exploit/exact.py",
        [('"best_response_gains": gains,', '"best_response_gains": gains[::-1],')],
        ["tests/exploit/test_exact.py", "-k", "order or player_improvements"]),
    Mutation(
        "best_response_near_ties", "the tree walk's best response takes a later action within 1e-3 of the best",
        "training/exploit/tree.py",
        [("                    if q[o + k] > q[o + b]:\n", "                    if q[o + k] >= q[o + b] - 1e-3:\n")],
        ["tests/exploit/test_exact.py", "-k", "order or player_improvements"]),
    Mutation(
        "cfr_plus_uniform_average", "CFR+ averages its policies with equal weights, not by iteration",
        "training/exploit/tree.py",
        [("            cum[o + k] += it * r[p, i] * sigma[o + k]\n", "            cum[o + k] += r[p, i] * sigma[o + k]\n")],
        ["tests/exploit/test_exact.py", "-k", "compiled_walk"]),
    Mutation(
        "cfr_plus_regrets_not_floored", "CFR+ keeps negative cumulative regrets (plain CFR's regret matching)",
        "training/exploit/tree.py",
        [("            if regret[o + k] < 0:\n", "            if regret[o + k] < -1e300:\n")],
        ["tests/exploit/test_exact.py", "-k", "compiled_walk"]),
    Mutation(
        "line_heuristic_next_seat_block", "the line heuristic weighs blocking the next seat like any other",
        "agents/heuristic_line.py",
        [("                block += (0.5 if lacks else 0.0) * (2.0 if r == 1 else 1.0)\n",
          "                block += (0.5 if lacks else 0.0)\n")],
        ["tests/agents/test_heuristic_kernels.py"]),
    # planted in the kernel's own file: the kernels inline agents/heuristics.py's pick_best, and numba
    # keys a cached kernel on its own file's timestamp only, so a planting in heuristics.py would leave
    # stale kernels in the shared cache folder for the mutations after it
    Mutation(
        "line_heuristic_ties_first", "the line heuristic's kernel always takes the first of tied actions",
        "agents/heuristic_line.py",
        [("            actions[i] = pick_best(scores[i], masks[i], rng)\n",
          "            actions[i] = np.argmax(np.where(masks[i] != 0, scores[i], -np.inf))\n")],
        ["tests/agents/test_heuristic_kernels.py"]),
    Mutation(
        "distill_window_first_rounds", "distillation's window fits the first rounds instead of the last",
        "training/learners/distill.py",
        [("keep = have[3] > r - cfg.window if cfg.window", "keep = have[3] < cfg.window if cfg.window")],
        ["tests/learners/test_distill.py", "-k", "window"]),
    Mutation(
        "distill_temperature_multiplies", "distillation's softmax targets multiply the win shares by the temperature",
        "training/learners/distill.py",
        [("z = np.exp((win - win.max()) / temperature)", "z = np.exp((win - win.max()) * temperature)")],
        ["tests/learners/test_distill.py", "-k", "softmax"]),
    Mutation(
        "distill_teacher_moves_inverted", "the teacher plays the share of moves the student should",
        "training/learners/distill.py",
        [("if teacher_moves > 0 and rng.random() < teacher_moves:", "if teacher_moves > 0 and rng.random() >= teacher_moves:")],
        ["tests/learners/test_distill.py", "-k", "teacher_moves"]),
    Mutation(
        "distill_teacher_other_seat", "the searching teacher labels each position for the next seat",
        "training/learners/distill.py",
        [("target = teacher_targets(teacher, game, state, seat, returns, mask, temperature)",
          "target = teacher_targets(teacher, game, state, (seat + 1) % game.num_players, returns, mask, temperature)")],
        ["tests/learners/test_distill.py", "-k", "acting_seat"]),
    Mutation(
        "dmc_epsilon_class_default", "DMC explores with the class default epsilon whatever dmc.epsilon says",
        "training/learners/dmc.py",
        [("rng.random(learner.size) < d.epsilon", "rng.random(learner.size) < type(d).epsilon")],
        ["tests/learners/test_dmc.py", "-k", "epsilon"]),
    Mutation(
        "dmc_tie_is_a_loss", "DMC's win target counts a tie at the top as a loss",
        "training/learners/dmc.py",
        [("                    value = centered_win_shares(totals)\n",
          "                    value = (totals > np.sort(totals, axis=1)[:, [-2]]) - 1.0 / self.n\n")],
        ["tests/learners/test_dmc.py", "-k", "collect"]),
    Mutation(
        "dmc_replay_no_wrap", "DMC's replay stops at its last slot instead of wrapping around",
        "training/learners/dmc.py",
        [("idx = (self.rp_ptr + np.arange(obs.shape[0])) % R", "idx = np.minimum(self.rp_ptr + np.arange(obs.shape[0]), R - 1)")],
        ["tests/learners/test_dmc.py", "-k", "replay"]),
    Mutation(
        "dmc_replay_keeps_oldest", "a push larger than DMC's replay keeps its oldest decisions",
        "training/learners/dmc.py",
        [("obs, act, target = obs[-R:], act[-R:], target[-R:]", "obs, act, target = obs[:R], act[:R], target[:R]")],
        ["tests/learners/test_dmc.py", "-k", "replay"]),
    Mutation(
        "dmc_regresses_max_q", "DMC regresses the highest Q of the position instead of the action played",
        "training/learners/dmc.py",
        [("pred = self.q(obs).gather(1, act[:, None]).squeeze(1)", "pred = self.q(obs).max(1).values")],
        ["tests/learners/test_dmc.py", "-k", "regresses"]),
    Mutation(
        "dmc_new_game_keeps_old_id", "a new game in a DMC row keeps the finished game's id",
        "training/learners/dmc.py",
        [("                self.episode[ended] = self.next_episode + np.arange(ended.size)\n", "")],
        ["tests/learners/test_dmc.py", "-k", "collect"]),
    Mutation(
        "imitation_tie_is_a_loss", "imitation's value targets count a tie at the top as a loss",
        "training/learners/imitate.py",
        [("            share = centered_win_shares(returns[i])\n",
          "            share = (returns[i] > np.sort(returns[i])[-2]).astype(np.float64) - 1.0 / n\n")],
        ["tests/learners/test_learners.py", "-k", "demonstration"]),
    Mutation(
        "snapshots_live_weights", "the pool's snapshots hold views of the learner's live weights",
        "training/learners/ppo.py",
        [("            self.collector.add_snapshot(self.model.actor_layers())\n",
          "            self.collector.add_snapshot([(m.weight.detach().numpy(), m.bias.detach().numpy())\n"
          "                                         for m in self.model.actor if isinstance(m, torch.nn.Linear)])\n"),
         ("        self.snapshots[self.snapshot_count % len(self.snapshots)] = PolicyBatch(layers)\n",
          "        snap = PolicyBatch(layers)\n        snap.layers = list(layers)\n"
          "        self.snapshots[self.snapshot_count % len(self.snapshots)] = snap\n")],
        ["tests/learners/test_learners.py", "-k", "frozen or memory"]),
    Mutation(
        "pimc_temperature_class_default", "PIMC keeps temperature 1 whatever its spec says",
        "agents/pimc.py",
        [("        self.temperature = float(temperature)\n", "        self.temperature = 1.0\n")],
        ["tests/agents/test_pimc.py", "-k", "temperature"]),
    # ---------------------------------------------------------------- issue 44: the learner on a device
    Mutation(
        "collector_obs_not_moved", "collection feeds the actor observations that never went to ppo.device",
        "training/learners/ppo.py",
        [("obs_t = torch.from_numpy(obs).to(self.device)", "obs_t = torch.from_numpy(obs)")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_ppo"]),
    Mutation(
        "ppo_update_mask_not_moved", "the PPO update leaves the rollout's masks on the CPU",
        "training/learners/ppo.py",
        [("mask = torch.from_numpy(buf.mask[:B]).to(dev)", "mask = torch.from_numpy(buf.mask[:B])")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_ppo"]),
    Mutation(
        "distill_fit_not_moved", "a distillation round fits the actor on positions left on the CPU",
        "training/learners/distill.py",
        [("o, m, t = (torch.from_numpy(a).to(dev) for a in (obs, masks, targets))",
          "o, m, t = (torch.from_numpy(a) for a in (obs, masks, targets))")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_ppo"]),
    Mutation(
        "dmc_minibatch_not_moved", "DMC's minibatch targets stay on the CPU",
        "training/learners/dmc.py",
        [("target = torch.from_numpy(self.rp_target[j]).to(dev)", "target = torch.from_numpy(self.rp_target[j])")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_dmc"]),
    Mutation(
        "dmc_layers_numpy_on_device", "DMC's export reads the weights with .numpy() on the device",
        "training/learners/dmc.py",
        [("m.bias.detach().cpu().numpy().copy())\n                for m in self.q",
          "m.bias.detach().numpy().copy())\n                for m in self.q")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_dmc"]),
    Mutation(
        "cuda_without_a_gpu", "ppo.device=cuda is accepted where torch sees no CUDA device",
        "training/learners/network.py",
        [("        if backend is None or not backend.is_available():\n            refuse",
          "        if backend is None:\n            refuse")],
        ["tests/learners/test_device.py", "-k", "cuda or entry_point"]),
    Mutation(
        "dmc_device_unchecked", "dmc.device is never checked",
        "training/learners/dmc.py",
        [('device: str = bounded("cpu", verify=check_device)', 'device: str = bounded("cpu")')],
        ["tests/learners/test_device.py", "-k", "entry_point"]),
    Mutation(
        "dmc_resume_needs_same_device", "a DMC checkpoint resumes only on the device it was written on",
        "training/learners/dmc.py",
        [('theirs, mine = self._resumable(data["run"]), self._resumable(self._run())',
          'theirs, mine = data["run"], self._run()')],
        ["tests/learners/test_device.py", "-k", "resumes_on_another"]),
    Mutation(
        "collect_values_copied_apart", "collection brings the values back in a copy of their own each step",
        "training/learners/ppo.py",
        [("                buf.value[idx] = out[:, -1]\n", "                buf.value[idx] = value.float().cpu().numpy()\n")],
        ["tests/learners/test_device.py", "-k", "copies_each"]),
    Mutation(
        "update_reads_each_minibatch", "the PPO update reads a loss off the device at every minibatch",
        "training/learners/ppo.py",
        [("                per_minibatch.append(torch.stack([",
          "                _ = float(pg_loss)\n                per_minibatch.append(torch.stack([")],
        ["tests/learners/test_device.py", "-k", "copies_each"]),
    Mutation(
        "compile_notice_every_time", "the compile notice is printed at every compilation, not once",
        "domino_envs/_numba_cache.py",
        [("            if not self.said:\n                self.said = True\n", "            if True:\n")],
        ["tests/fronts/test_compile_notice.py", "-k", "announced_once"]),
    Mutation(
        "domino_compiles_silently", "the domino command does not announce compilation",
        "training/cli.py",
        [("    announce_compiling(games=", "    dict(games=")],
        ["tests/fronts/test_compile_notice.py", "-k", "warm_compiles"]),
    Mutation(
        "warm_skips_the_learners", "domino warm leaves the learners' kernels to the first training",
        "training/tools/warm.py",
        [("        _tiny_training(game_name)\n", "")],
        ["tests/fronts/test_compile_notice.py", "-k", "warm_compiles"]),
    Mutation(
        "ppo_two_threads_by_default", "ppo trains on 2 torch threads unless told otherwise",
        "training/learners/ppo.py",
        [("    torch_threads: int = bounded(1, min=1)  # torch intra-op threads of the update",
          "    torch_threads: int = bounded(2, min=1)  # torch intra-op threads of the update")],
        ["tests/learners/test_training.py", "-k", "one_torch_thread"]),
    # issue 55: results pages are their data rendered; plantings select tests
    Mutation(
        "speed_ratio_wrong_column", "speed.md's own-env-steps ratio divides the learner samples instead of the decisions",
        "training/scripts/speed.py",
        [("f\"{ppo['decisions_per_s'] / sb3['steps_per_s']:.1f}x in each library's own env steps; \"",
          "f\"{ppo['samples_per_s'] / sb3['steps_per_s']:.1f}x in each library's own env steps; \"")],
        ["tests/docs/test_pages.py", "-k", "speed"]),
    Mutation(
        "benchmark_page_without_per_game", "the benchmark page rendered from its JSON drops the per-game finals",
        "training/benchmark/report.py",
        [("                    coverage, facts[\"command\"], finals, extra)",
          "                    coverage, facts[\"command\"], None, extra)")],
        ["tests/docs/test_pages.py", "-k", "benchmark"]),
    Mutation(
        "readme_verdict_from_the_mean", "the README calls a policy above PIMC-64 by its mean, not its interval",
        "training/scripts/pages.py",
        [("{r[\"opponent\"] for r in t[\"rows\"] if r[\"win_lo\"] > t[\"fair_share\"]}",
          "{r[\"opponent\"] for r in t[\"rows\"] if r[\"win\"] > t[\"fair_share\"]}")],
        ["tests/docs/test_pages.py", "-k", "readme"]),
    Mutation(
        "search_row_policy_unrecorded", "a search row does not record which policy its rollouts used",
        "training/scripts/search.py",
        [("\"policy_env_steps\": shipped_env_steps(game), \"deals\": deals,", "\"policy_env_steps\": 0, \"deals\": deals,")],
        ["tests/docs/test_page_scripts.py", "-k", "search_measures"]),
    Mutation(
        "selection_ignores_k", "a planting's selection is resolved without its -k expression",
        "tests/mutations/run.py",
        [("    k = args[args.index(\"-k\") + 1] if \"-k\" in args else None",  # escaped: this line is not the anchor
          "    k = None")],
        ["tests/project/test_mutation_anchors.py", "-k", "selection_helper"]),
    # issue 46: a shipped policy's recipe in stages, and the teacher's strength each round
    Mutation(
        "ship_stage_starts_afresh", "a later stage of a recipe starts from a fresh actor, not the stage before's",
        "training/scripts/ship.py",
        [("        previous = run_dir / \"policy.npz\"\n", "")],
        ["tests/scripts/test_ship.py", "-k", "two_workers"]),
    Mutation(
        "teacher_strength_of_student", "a round's teacher strength is measured for the opponent's seat",
        "training/learners/distill.py",
        [("    win = report.matchups[(spec, opponent)].win_stat", "    win = report.matchups[(opponent, spec)].win_stat")],
        ["tests/learners/test_distill.py", "-k", "teacher_strength or same_deals"]),
    # issue 55: resume, time and interruptions, and the benchmark lock
    Mutation(
        "run_identity_has_device", "the device is part of a run's identity again: a resume on another device is refused",
        "training/learners/run_folder.py",
        [("        flat.update((k, v) for k, v in params.items() if not where_it_runs(k))\n",
          "        flat.update(params.items())\n")],
        ["tests/learners/test_train_command.py", "tests/benchmark/test_benchmark.py", "-k",
         "folder_alone or refused_in_one_line or another_device"]),
    Mutation(
        "budget_counts_compiling", "the time budget's clock counts numba's compiling (started before the kernels compiled)",
        "training/learners/run_folder.py",
        [("        return now() - self.started - self._compiled() - self.paused_s\n",
          "        return now() - self.started - self.paused_s\n")],
        ["tests/learners/test_learner_interface.py", "-k", "compiling_does_not_count"]),
    Mutation(
        "budget_counts_warm_start", "the time budget's clock runs through the imitation warm start",
        "training/learners/ppo.py",
        [("        with log.uncounted():  # the time budget caps PPO (docs/training.md): the warm start comes on top\n"
          "            stats = trainer.warm_start()\n", "        stats = trainer.warm_start()\n")],
        ["tests/learners/test_learner_interface.py", "-k", "warm_start_does_not_count"]),
    Mutation(
        "resume_ignores_stored_flags", "domino train --resume builds the run from the config file and the flags given "
        "now, not from the run folder's train.yaml",
        "training/learners/train.py",
        [("    from_folder = args.resume and not args.config  # the run folder's train.yaml is the base\n",
          "    from_folder = False\n")],
        ["tests/learners/test_train_command.py", "-k", "folder_alone or refused_in_one_line"]),
    Mutation(
        "lock_skips_scoring", "the benchmark lock's check ignores the scoring rule's fingerprint",
        "training/benchmark/suite.py",
        [("    if want[\"scoring\"] != got[\"scoring\"]:\n", "    if False:\n")],
        ["tests/benchmark/test_benchmark.py", "-k", "scoring_rule"]),
    # issue 55: tests that keep their promise, and code no test ran
    Mutation(
        "snapshot_games_self_play", "a game drawn for a snapshot is played by the live actor in every seat",
        "training/learners/ppo.py",
        [("        ctrl[kinds == SELF_PLAY] = LEARNER\n", "        ctrl[(kinds == SELF_PLAY) | snap] = LEARNER\n")],
        ["tests/learners/test_pool_seats.py"]),
    Mutation(
        "snapshot_rows_to_live_actor", "the live actor decides (and trains on) the rows of the snapshots' seats",
        "training/learners/ppo.py",
        [("learner = np.flatnonzero(who == LEARNER)", "learner = np.flatnonzero((who == LEARNER) | (who >= SNAPSHOT0))")],
        ["tests/learners/test_pool_seats.py"]),
    Mutation(
        "ppo_boot_values_off_device_by_asarray", "the bootstrap values go into the numpy buffer straight off the device",
        "training/learners/ppo.py",
        [("buf.boot[idx] = model.value(cin).float().cpu().numpy()", "buf.boot[idx] = model.value(cin).float()")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_ppo_run"]),
    Mutation(
        "dmc_greedy_q_asarray_on_device", "DMC's greedy actions read the Q values with np.asarray on the device",
        "training/learners/dmc.py",
        [("q = self.q(torch.from_numpy(obs).to(self.device)).cpu().numpy()",
          "q = np.asarray(self.q(torch.from_numpy(obs).to(self.device)))")],
        ["tests/learners/test_device.py", "-k", "every_tensor_of_a_dmc_run"]),
    Mutation(
        "cfr_merged_keys_miscounted", "the tabular file's count of keys shared by both seats misses them all",
        "training/exploit/cfr.py",
        [("merged += len(all_probs) > 1", "merged += len(all_probs) > 2")],
        ["tests/exploit/test_exact.py", "-k", "cfr_plus_falls"]),
    Mutation(
        "mutation_name_reused", "a planting copied from another keeps the other's name (one of the two never runs)",
        "tests/mutations/run.py",
        [('"ratings_first_' 'rotation_only", "two-sided', '"ratings_no_' 'rotation", "two-sided')],
        ["tests/project/test_mutation_anchors.py", "-k", "names"]),
    Mutation(
        "dmc_sample_reuse_ignored", "DMC takes one minibatch per batch_size new decisions whatever dmc.sample_reuse says",
        "training/learners/dmc.py",
        [("steps = max(1, round(made * d.sample_reuse / d.batch_size))", "steps = max(1, round(made / d.batch_size))")],
        ["tests/learners/test_dmc.py", "-k", "sample_reuse"]),
    Mutation(
        "numba_cache_never_pruned", "the stale cache folders are looked for inside the current one (none is removed)",
        "domino_envs/_numba_cache.py",
        [('for old in base.glob("numba-*"):', 'for old in keep.glob("numba-*"):')],
        ["tests/engine/test_numba_cache.py"]),
    Mutation(
        "teams_partners_of_other_seeds", "the partner table is played for every seed's policy but seed 0's",
        "training/benchmark/aggregate.py",
        [('if not label.endswith("/0"):', 'if label.endswith("/0"):')],
        ["tests/benchmark/test_teams.py"]),
    Mutation(
        "baselines_hold_on_the_mean", "the baselines page says a matchup holds when its mean, not its interval, beats the fair share",
        "training/scripts/baselines.py",
        [('holds = "yes" if w["lo"] > fair else', 'holds = "yes" if w["mean"] > fair else')],
        ["tests/scripts/test_baselines.py"]),
    # issue 55: parallel proven, one failure contract
    Mutation(
        "pool_of_one_process", "the process pool is capped at one process whatever --workers says",
        "training/parallel.py",
        [("    pool = ProcessPoolExecutor(max_workers=workers,", "    pool = ProcessPoolExecutor(max_workers=1,")],
        ["tests/training/test_parallel.py", "-k", "two_processes or where_its_shards"]),
    Mutation(
        "worker_threads_not_limited", "a worker starts without setting one torch and one BLAS thread",
        "training/parallel.py",
        [('    one_thread_per_worker()\n    if announce is not None:', '    if announce is not None:')],
        ["tests/training/test_parallel.py", "-k", "two_processes"]),
    Mutation(
        "worker_blas_by_variables_only", "a worker limits BLAS by environment variables only, read before it starts",
        "training/parallel.py",
        [("    threadpool_limits(limits=1)  #", "    pass  # threadpool_limits(limits=1)")],
        ["tests/training/test_parallel.py", "-k", "two_processes"]),
    Mutation(
        "address_falls_back_to_local", "--address without Ray runs the jobs in local processes, saying nothing",
        "training/parallel.py",
        [("    except ImportError as err:\n        raise ValueError(f\"--address {address!r} runs",
          "    except ImportError as err:\n        return  # no Ray: run_jobs runs them here\n"
          "        raise ValueError(f\"--address {address!r} runs"),
         ("    if address is not None:\n        for i, result in _run_on_ray(",
          "    if address is not None and sys.modules.get(\"ray\"):\n        for i, result in _run_on_ray(")],
        ["tests/training/test_parallel.py", "-k", "address"]),
    Mutation(
        "unguarded_main_not_named", "a worker importing an unguarded script starts workers (spawn's error, a broken pool)",
        "training/parallel.py",
        [('    if getattr(multiprocessing.current_process(), "_inheriting", False):',
          '    if getattr(multiprocessing.current_process(), "inheriting", False):')],
        ["tests/training/test_parallel.py", "-k", "main_guard"]),
    Mutation(
        "ctrl_c_inside_ctypes_raised", "the domino command's Ctrl-C raises inside ctypes.cast, where numba's Generator "
        "conversion crashes on it",
        "training/interrupt.py",
        [("    return frame is not None and frame.f_code.co_filename == ctypes.__file__\n",
          "    return False\n")],
        ["tests/learners/test_train_command.py", "-k", "inside_numbas_conversion"]),
    Mutation(
        "job_error_reraised", "a failed job re-raises the worker's own error, not a JobError naming the job",
        "training/parallel.py",
        [("        raise failed(i, err) from err\n", "        raise err\n")],
        ["tests/training/test_parallel.py", "-k", "fails"]),
    Mutation(
        "tuning_job_failure_traceback", "the tuning script lets a failed setting's JobError out as a traceback",
        "training/scripts/tuning.py",
        [("    except ValueError as err:  # a bad sweep or suite", "    except ConfigError as err:  # a bad sweep or suite")],
        ["tests/scripts/test_tuning.py", "-k", "two_workers"]),
    # issue 55: a fresh install, and every documented command as written
    Mutation(
        "doc_script_flag_renamed", "a maintainer-script line of the docs names a flag its parser does not have",
        "docs/training.md",
        [("python -m domino_training.scripts.ship --evaluate-only ", "python -m domino_training.scripts.ship --eval-only ")],
        ["tests/docs/test_docs.py", "-k", "maintainer_script and training"]),
    Mutation(
        "script_flag_renamed", "a maintainer script renames a flag its docs still name",
        "training/scripts/ship.py",
        [('"--evaluate-only"', '"--reevaluate"')],
        ["tests/docs/test_docs.py", "-k", "maintainer_script and training"]),
    Mutation(
        "doc_benchmark_import_unlisted", "the docs benchmark a learner of one's own with a suite that does not list it",
        "docs/learners.md",
        [("--import docs/examples/my_learner.py --suite docs/examples/my_suite.yaml --profile quick",
          "--import docs/examples/my_learner.py --profile quick")],
        ["tests/docs/test_docs.py", "-k", "commands_parse and learners"]),
    Mutation(
        "benchmark_help_cut", "domino benchmark --help describes it with the first line of a wrapped docstring",
        "training/benchmark/cli.py",
        [('prog="domino benchmark", description=DESCRIPTION)', 'prog="domino benchmark", description=__doc__.split("\\n")[0])')],
        ["tests/fronts/test_command_help.py", "-k", "whole_sentences"]),
    # issue 56/57: text
    Mutation(
        "text_moves_numbered_from_zero", "the text parser reads a move's number 0-based while the view numbers 1..k",
        "domino_envs/text.py",
        [("        if not 1 <= k <= count:\n", "        if not 0 <= k < count:\n"),
         ("        return legal[k - 1]\n", "        return legal[k]\n")],
        ["tests/engine/test_text.py", "-k", "round_trips"]),
    Mutation(
        "text_seat_rows_mirrored", "the text view maps an observation's row r to seat me - r, not me + r",
        "domino_envs/text.py",
        [("    return r if me is None else (me + r) % n\n", "    return r if me is None else (me - r) % n\n")],
        ["tests/engine/test_text.py", "-k", "seat_that_acted"]),
    Mutation(
        "text_hand_as_a_count", "the seat's text gives its hand as a count, not its tiles",
        "domino_envs/text.py",
        [('    lines.append(f"your hand ({int((hand > 0).sum())}): {_tiles(name, hand)}")\n',
          '    lines.append(f"your hand: {int((hand > 0).sum())} tiles")\n')],
        ["tests/engine/test_text.py", "-k", "own_hand"]),
    Mutation(
        "mcp_result_before_the_end", "domino mcp's result tool answers before the game is over (returns of a hand in play)",
        "training/tools/mcp_server.py",
        [("            if not live.over:\n                raise GameError(", "            if False:\n                raise GameError(")],
        ["tests/tools/test_mcp_server.py", "-k", "refusals"]),
    # issue 56/57: the web app (domino serve) and its live game
    Mutation(
        "web_origin_unchecked", "domino serve takes a POST whatever its Origin (a page elsewhere can play here)",
        "training/web/app.py",
        [('        if scope["method"] not in ("GET", "HEAD"):\n', '        if False:\n')],
        ["tests/web/test_refusals.py", "-k", "origin"]),
    Mutation(
        "web_host_unchecked", "domino serve answers any Host header (DNS rebinding)",
        "training/web/app.py",
        [("        if not host or (allowed is not None and name.lower() not in allowed):",
          "        if not host:")],
        ["tests/web/test_refusals.py", "-k", "host"]),
    Mutation(
        "live_refusal_bumps_version", "a refused move still counts as a move (the version moves on)",
        "training/tools/live.py",
        [('        g = self.game\n        if self.over:\n            raise NotYourTurn("the game is over")',
          '        g = self.game\n        self.version += seat == self.turn\n        if self.over:\n'
          '            raise NotYourTurn("the game is over")')],
        ["tests/web/test_refusals.py", "-k", "illegal or not_your_turn or bad_move_field"]),
    Mutation(
        "web_table_every_hand", "the game page draws every hand face up (the opponents' tiles on the human's page)",
        "training/tools/live.py",
        [("        return describe(self.game, self.state, self.viewer(seat))",
          '        return describe(self.game, self.state, "full" if seat is not None else None)')],
        ["tests/web/test_no_leak.py", "-k", "whatever_the_hidden"]),
    Mutation(
        "live_log_full_names", "the log tells another seat's move by its full name (Magic-7's killed tile)",
        "training/tools/live.py",
        [('        return [e["full"] if viewer == e["seat"] else e["public"][viewer] for e in self.events]',
          '        return [e["full"] for e in self.events]')],
        ["tests/web/test_no_leak.py", "-k", "kill"]),
    # issue 56/57: language-model agents
    Mutation(
        "llm_first_move", "the reply contract reads the first {\"move\": N} object instead of the last",
        "agents/llm.py",
        [('            found = obj["move"]\n', '            found = obj["move"] if found is None else found\n')],
        ["tests/agents/test_llm.py", "-k", "contract"]),
    Mutation(
        "llm_single_move_calls", "a single legal move still asks the model",
        "agents/llm.py",
        [("        if len(legal) == 1:\n            return int(legal[0])\n", "")],
        ["tests/agents/test_llm.py", "-k", "single_legal"]),
    Mutation(
        "llm_cache_key_without_messages", "the reply cache's key leaves the messages out",
        "agents/llm.py",
        [('blob = json.dumps({"model": model, "endpoint": endpoint, "messages": messages, "params": params,',
          'blob = json.dumps({"model": model, "endpoint": endpoint, "params": params,')],
        ["tests/agents/test_llm.py", "-k", "cache"]),
    Mutation(
        "llm_key_in_spec_echoed", "a key in an llm: spec is not refused up front, so the unknown-parameter error echoes it",
        "agents/registry.py",
        [("        refuse_keys(spec_items(spec))\n", "")],
        ["tests/agents/test_llm.py", "-k", "bad_specs"]),
    Mutation(
        "llm_forfeit_not_a_loss", "a hand given up by on_fail=forfeit is scored on its returns as played",
        "training/evaluate.py",
        [("    if not forfeit or len(forfeit) == totals.size:\n", "    if True:\n")],
        ["tests/agents/test_llm.py", "-k", "forfeit"]),
    Mutation(
        "llm_refusal_echoes_key", "an endpoint's 401 that quotes the key back is put in the error line as it came",
        "agents/llm.py",
        [("                    said = self._scrub(r.text[:300])\n", "                    said = r.text[:300]\n")],
        ["tests/agents/test_llm.py", "-k", "refused_key"]),
    # issue 56/57: the SVG painter and the HTML replay
    Mutation(
        "svg_label_unescaped", "the SVG painter drops bad characters but leaves a label's markup unescaped",
        "domino_envs/svg.py",
        [('    return html.escape(_NOT_XML.sub("", str(text)).translate(_SPACES), quote=True)',
          '    return _NOT_XML.sub("", str(text)).translate(_SPACES)')],
        ["tests/fronts/test_svg.py", "-k", "hostile or any_label"]),
    Mutation(
        "svg_back_face_up", "a face-down tile is drawn face up (a 0-0 face where its back should be)",
        "domino_envs/pictures.py",
        [("    if not face_up:\n        out.append(RRect(rect, rad, fill=_BACK",
          "    if face_up is None:\n        out.append(RRect(rect, rad, fill=_BACK")],
        ["tests/fronts/test_svg.py", "-k", "lie_where"]),
    Mutation(
        "html_replay_facts_unescaped", "the HTML replay writes the replay's agent names into the page as markup",
        "training/tools/replay_html.py",
        [('facts="".join(f"<p>{e(f)}</p>" for f in facts)', 'facts="".join(f"<p>{f}</p>" for f in facts)')],
        ["tests/tools/test_replay_html.py", "-k", "saved_replay"]),
    # issue 59: shared flags
    Mutation(
        "shared_flag_declared_again", "a command declares --workers by hand again (its own help, no check)",
        "training/evaluate.py",
        [('    add_workers(p, "play the deals")\n',
          '    p.add_argument("--workers", type=int, default=1, metavar="N", help="processes that play the deals")\n')],
        ["tests/fronts/test_shared_flags.py"]),
    Mutation(
        "workers_flag_unchecked", "the shared --workers flag lets 0 through (its bound off by one)",
        "training/commands.py",
        [("    if workers < 1:\n        raise argparse.ArgumentTypeError(f\"workers=",
          "    if workers < 0:\n        raise argparse.ArgumentTypeError(f\"workers=")],
        ["tests/fronts/test_shared_flags.py"]),
    Mutation(
        "exploit_param_still_accepted", "domino exploit takes the old --param as --set silently",
        "training/exploit/cli.py",
        [("    if args.old_param:\n", "    args.set += args.old_param\n    if False:\n")],
        ["tests/fronts/test_shared_flags.py"]),
    Mutation(
        "exploit_params_read_as_rules", "domino exploit's --set hands the learner's dotted params to the game as rule keys",
        "training/exploit/cli.py",
        [("        args.set, args.param = split_set(args.set)", "        args.set, args.param = list(args.set), {}")],
        ["tests/fronts/test_shared_flags.py"]),
    # issue 59: learners (each learner whole in its module; bounds on the fields and one checker)
    Mutation(
        "game_file_params_skipped", "a learner's settings skip the game file's params for it (every learner takes "
        "its params the same way: its defaults, the file's, the run's)",
        "training/learners/interface.py",
        [("        apply(settings, defaults, name, sections, RUN_SET)\n", "        pass\n")],
        ["tests/learners/test_training.py", "-k", "game_files_params"]),
    Mutation(
        "old_train_format_read", "a game file's train section in the format before per-learner params is "
        "refused without naming the new spelling",
        "training/configs.py",
        [("        if key not in RUN_SECTION_KEYS:\n", "        if False:\n")],
        ["tests/learners/test_training.py", "-k", "format_before"]),
    Mutation(
        "checker_skips_sections", "the one settings checker does not look inside a settings section",
        "training/settings.py",
        [('            check(value, key + ".")\n', "            pass\n")],
        ["tests/learners/test_learner_interface.py", "-k", "bad_value_in_any"]),
    Mutation(
        "checker_gt_as_min", "a bound 'gt' (value > bound) accepts the bound itself",
        "training/settings.py",
        [('("gt" not in bounds or value > bounds["gt"])', '("gt" not in bounds or value >= bounds["gt"])')],
        ["tests/learners/test_learner_interface.py", "-k", "bad_value_in_any"]),
    Mutation(
        "checker_ignores_max", "the one settings checker never checks a field's upper bound",
        "training/settings.py",
        [(' and ("max" not in bounds or value <= bounds["max"]))', ")")],
        ["tests/learners/test_learner_interface.py", "-k", "bad_value_in_any"]),
    Mutation(
        "checker_names_the_field_not_the_key", "a bad value's error names the field, not its dotted key",
        "training/settings.py",
        [('            raise ConfigError(f"{key}={value!r} is not allowed; {_allowed(f.metadata)}")',
          '            raise ConfigError(f"{f.name}={value!r} is not allowed; {_allowed(f.metadata)}")')],
        ["tests/learners/test_learner_interface.py", "-k", "bad_value_in_any"]),
    Mutation(
        "best_response_settings_unchecked", "BRSettings.check skips the field bounds",
        "training/exploit/best_response.py",
        [('        check(self, "best response ")\n', "")],
        ["tests/learners/test_learner_interface.py", "-k", "best_response_settings"]),
    Mutation(
        "registry_never_imports_a_builtin", "the registry looks a built-in up without importing its module",
        "training/learners/interface.py",
        [("        if name not in self.entries and name in self.lazy:", "        if name in self.entries and name in self.lazy:")],
        ["tests/learners/test_learner_interface.py", "-k", "every_builtin_non_optional or import_no_torch"]),
    Mutation(
        "learners_package_imports_torch", "the learners package imports a learner's module (and torch) with itself",
        "training/learners/__init__.py",
        [("from domino_training.learners.interface import (",
          "from domino_training.learners.dmc import dmc_settings  # noqa: F401\n"
          "from domino_training.learners.interface import (")],
        ["tests/learners/test_learner_interface.py", "-k", "import_no_torch"]),
    # issue 59: engines
    Mutation(
        "step_template_no_legality", "the engines' step template skips the game's legality check",
        "domino_envs/core.py",
        [("    if code == OK and not is_legal(s, p, a):\n        code = ERR_ILLEGAL\n", "")],
        ["tests/engine/test_plumbing.py", "-k", "step_template"]),
    Mutation(
        "step_template_rewards_kept", "the step template plays before clearing the last step's rewards",
        "domino_envs/core.py",
        [("    step_begin(s)\n    play(s, p, a)\n", "    play(s, p, a)\n    step_begin(s)\n")],
        ["tests/engine/test_plumbing.py", "-k", "step_template"]),
    Mutation(
        "draw_into_the_reserve", "the draw until playable draws one tile past the stock's end (Racehorse's reserve)",
        "domino_envs/core.py",
        [("    while s[pos] < end:\n", "    while s[pos] <= end and s[pos] < deck.shape[0] - at:\n")],
        ["tests/engine/test_plumbing.py", "-k", "stocks_end"]),
    Mutation(
        "drawn_tile_not_flagged", "a seat that drew a playable tile is not marked as holding it (it may wait)",
        "domino_envs/core.py",
        [("            got = True\n            s[just_drew] = 1\n", "            got = True\n")],
        ["tests/engine/test_plumbing.py", "-k", "playable"]),
    # issue 60: each recipe on three seeds
    Mutation(
        "recipe_rerun_seed_dropped", "a recipe's rerun on seed K trains with the shipped seed (a copy, not a rerun)",
        "training/scripts/ship.py",
        [("list(args.set) + ([] if k is None else [f\"seed={k}\"])", "list(args.set)")],
        ["tests/scripts/test_ship.py", "-k", "rerun_on_other_seeds"]),
    Mutation(
        "recipe_rows_kept_at_the_end", "the reruns' rows are written only when every rerun is done (a stopped session loses them)",
        "training/scripts/ship.py",
        [("            results.append(res)\n        write_pages()\n", "            results.append(res)\n")],
        ["tests/scripts/test_ship.py", "-k", "rerun_on_other_seeds"]),
    Mutation(
        "recipe_outlier_by_means", "the shipped file is judged below its reruns by its mean, not its whole interval",
        "training/scripts/ship.py",
        [("    if shipped[\"win_hi\"] < min(r[\"win_lo\"] for r in reruns):",
          "    if shipped[\"win\"] < min(r[\"win\"] for r in reruns):")],
        ["tests/scripts/test_ship.py", "-k", "below_every"]),
    # issue 60: OpenSpiel's ISMCTS on our games
    Mutation(
        "resample_returns_the_truth", "resample hands back the true history instead of a redealt one",
        "domino_envs/openspiel.py",
        [("    found = replay(new, 0)\n", "    found = state.clone()\n")],
        ["tests/fronts/test_openspiel.py", "-k", "resampled_block_state"]),
    Mutation(
        "resample_no_forced_search", "resample replays only the recorded moves: a move forced in the record but a choice "
        "in the redeal finds no history",
        "domino_envs/openspiel.py",
        [("        if at.player != seat:  # a move the engine forced", "        if False:  # a move the engine forced")],
        ["tests/fronts/test_openspiel.py", "-k", "resampled_block_state"]),
    Mutation(
        "resample_line_unchecked", "resample's replay does not check each move against the placements the seat saw",
        "domino_envs/openspiel.py",
        [("    truth = engine.line(node.rows[0]) if hasattr(engine, \"line\") else None\n",
          "    truth = None\n")],
        ["tests/fronts/test_openspiel.py", "-k", "forced_move_of_the_record"]),
]


@contextmanager
def _nothing():
    yield


def _ignore(folder, names):
    """What a mutated copy leaves out: caches, and at the top the git folder, the venvs and run folders
    (gigabytes, and files a training run writes and renames while the copy is made)."""
    top = {".git", ".venv", ".venv-rllib", "runs"} if Path(folder).resolve() == ROOT.resolve() else set()
    return {n for n in names if n in top or n in ("__pycache__", ".pytest_cache", ".hypothesis")}


def apply(mutation: Mutation, root: Path) -> None:
    path = root / mutation.path
    src = path.read_text()
    for anchor, new in mutation.replacements:
        count = src.count(anchor)
        if count != 1:
            raise SystemExit(f"mutation {mutation.name}: anchor found {count} times in {mutation.path} "
                             f"(must be exactly once): {anchor!r}")
        src = src.replace(anchor, new)
    path.write_text(src)


def pytest_run(cwd: Path, tests: list[str]) -> tuple[int, str, list[str]]:
    """(pytest's exit status, its last line, its FAILED/ERROR summary lines: which test caught it and why)."""
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_CACHE_DIR", None)  # the package's own cache folder, keyed on its sources (module doc)
    env["COLUMNS"] = "240"  # room for the reason on pytest's FAILED lines
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", *tests]
    try:
        out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_S} s", []
    lines = (out.stdout + out.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return out.returncode, lines[-1] if lines else "", failed


def selected_by(args: list[str], collected: dict[str, list[str]]) -> list[str]:
    """The node ids of `collected` (node id -> the names `-k` matches) that pytest would run for `args`
    (test files or node ids, and at most one `-k EXPR`): pytest's own -k expression, matched as its
    KeywordMatcher matches (a case-insensitive substring of any name)."""
    from _pytest.mark.expression import Expression

    paths = [a for a in args if a.startswith("tests/")]
    k = args[args.index("-k") + 1] if "-k" in args else None
    expr = Expression.compile(k) if k else None
    chosen = []
    for node, names in collected.items():
        if not any(node == p or node.startswith(p + "::") for p in paths):
            continue
        if expr is None or expr.evaluate(_matcher([n.lower() for n in names])):
            chosen.append(node)
    return chosen


def _matcher(lowered: list[str]):
    """pytest's KeywordMatcher over these (lower-cased) names: a case-insensitive substring of one."""
    return lambda sub, **_: any(sub.lower() in n for n in lowered)


def verdict_table(results: list[tuple[Mutation, str, str, float]], caught_by: dict[str, list[str]]) -> str:
    """The run's verdicts as Markdown: one row a planting, the test that failed on it."""
    lines = ["# Mutation run", "", f"`python tests/mutations/run.py --table FILE`: {len(results)} plantings, "
             f"{sum(v == 'caught' for _, v, _, _ in results)} caught.", "",
             "| planting | what | verdict | seconds | first failing test |", "|---|---|---|---|---|"]
    for m, verdict, _, secs in results:
        first = caught_by.get(m.name, [""])[0].split(" - ")[0].removeprefix("FAILED ").removeprefix("ERROR ")
        lines.append(f"| {m.name} | {m.what.replace('|', '/')} | {verdict} | {secs:.0f} | {first or '-'} |")
    return "\n".join(lines) + "\n"


def lay_installed_names(copy: Path) -> None:
    """Give the copy's folders their installed names (pyproject.toml's package-dir) as links, so that
    with the copy first on PYTHONPATH its own agents/, training/ and configs/ are what is imported."""
    (copy / "domino_agents").symlink_to("agents", target_is_directory=True)
    (copy / "domino_training").symlink_to("training", target_is_directory=True)
    (copy / "training" / "game_configs").symlink_to("../configs", target_is_directory=True)


def check_imports_from(cwd: Path) -> None:
    """The copy's modules must be the ones imported (not the editable install's)."""
    env = dict(os.environ, PYTHONPATH=str(cwd))
    code = ("import domino_envs, domino_agents, domino_training, domino_training.game_configs as c; "
            "print(domino_envs.__file__, domino_agents.__file__, domino_training.__file__, c.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
    paths = out.stdout.split()
    if out.returncode != 0 or not paths or not all(p.startswith(str(cwd)) for p in paths):
        raise SystemExit(f"the copy at {cwd} is not what Python imports: {out.stdout}{out.stderr}")


def work_folder() -> Path:
    """The folder the copies are made in (module doc): under the user's cache, private to this user
    (the checks of the package's numba cache folder), named for this checkout."""
    from domino_envs._numba_cache import _unusable

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "domino_envs" / "mutations"
    folder = base / hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]
    problem = _unusable(folder)
    if problem:
        raise SystemExit(f"the mutation folder {folder} {problem}; pass --fresh to use temporary folders")
    return folder


@contextmanager
def locked(folder: Path):
    """Hold `folder`'s lock for the run: a second run of the script on this checkout stops."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks here: nothing to hold
        yield
        return
    with open(folder / "lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SystemExit(f"another run of the mutation script holds {folder}; wait for it or pass --fresh") from None
        yield


@contextmanager
def mutated_copy(mutation: Mutation, folder: Path | None):
    """The repo copied (in `folder`, or a new temporary folder when None), `mutation` planted, the
    installed names laid out and checked; removed afterwards."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix=f"mut-{mutation.name}-") as tmp:
            copy = Path(tmp) / "repo"
            _make_copy(mutation, copy)
            yield copy
        return
    copy = folder / "repo"
    shutil.rmtree(copy, ignore_errors=True)
    try:
        _make_copy(mutation, copy)
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _make_copy(mutation: Mutation, copy: Path) -> None:
    shutil.copytree(ROOT, copy, ignore=_ignore)  # copy2: timestamps kept, so numba's cache matches
    apply(mutation, copy)
    lay_installed_names(copy)
    check_imports_from(copy)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="mutations to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    ap.add_argument("--table", metavar="FILE", help="also write the verdicts as a Markdown table to FILE")
    ap.add_argument("--fresh", action="store_true",
                    help="copy each mutation into a new temporary folder (everything compiles cold)")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:30} {m.what}")
        return 0
    known = {m.name: m for m in MUTATIONS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        raise SystemExit(f"unknown mutations {unknown}; known: {list(known)}")
    chosen = [known[n] for n in args.names] if args.names else MUTATIONS
    if not args.no_baseline:
        for m in chosen:
            code, last, _ = pytest_run(ROOT, m.tests)
            if code != 0:
                raise SystemExit(f"baseline: {m.name}'s tests fail on the unmutated repo ({last}); fix that first")
        print("baseline: every selection passes unmutated", flush=True)
    folder = None if args.fresh else work_folder()
    results, caught_by = [], {}
    with locked(folder) if folder is not None else _nothing():
        for m in chosen:
            t0 = time.time()
            with mutated_copy(m, folder) as copy:
                code, last, failed = pytest_run(copy, m.tests)
            verdict = {0: "MISSED", 1: "caught"}.get(code, f"ERROR (pytest exit {code})")
            results.append((m, verdict, last, time.time() - t0))
            caught_by[m.name] = failed
            print(f"{m.name:30} {verdict:8} {time.time() - t0:6.0f} s  {last}", flush=True)
            for line in failed:
                print(f"    {line[:240]}", flush=True)
    if args.table:
        Path(args.table).write_text(verdict_table(results, caught_by))
    print(f"\n{'mutation':30} result    what")
    for m, verdict, _, _ in results:
        print(f"{m.name:30} {verdict:9} {m.what}")
    return 0 if all(v == "caught" for _, v, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
