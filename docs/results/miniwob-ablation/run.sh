#!/usr/bin/env bash
# Issue 18's ablations on the MiniWoB++ bench: the bench's own setting (22 tasks from scratch,
# 30 minutes, 4 browsers, 20 greedy test episodes per task) with one mechanism switched off per
# arm. The arm with every mechanism on is the bench itself (docs/results/miniwob-bench).
# Each run alone on the machine; a run whose JSON exists is skipped, so the script resumes
# where it stopped (a run is not resumable: a stopped one leaves only a .tmp to delete).
# Seed 0 of every arm first, then seed 1, then seed 2. From the repository root:
#   bash docs/results/miniwob-ablation/run.sh [SEED ...]     (default: seeds 0 1 2)
# ARMS="no-curriculum no-novelty" runs only those arms (default: the four ablations, in the
# order below). Variants, not ablations, run only when named: every mechanism on and one setting
# changed. curriculum-unsolved: curriculum families without a success in their window keep score
# 0.5 (docs/design.md §7.13). horizon-10: 10 steps an episode instead of the miniwob preset's 6
# (the two-field forms need 5-6 steps at best, so 6 leaves no slack to explore; training and test
# episodes alike). horizon-10-unsolved: both changes. horizon-10-unsolved-success-cost: both, and
# the step cost charged on successful episodes only (aride.step_cost_on_failure=false, design.md
# §7.12), so that on a task not yet solved the shortest failure (tapping Submit at once) is no
# better than a longer one. focus-typing: TYPE offered only on screens with a focused field
# (explore.type_needs_focus, design.md §7.12), so the TYPE logit learns only where typing acts.
# horizon-10-unsolved-focus: horizon-10-unsolved with that gate as well; -prior: and a TYPE
# prior of 2 on focused screens (explore.focused_type_prior); -emptyprior: the gate and a TYPE
# prior of 2 only while the focused field is empty (explore.empty_field_type_prior), so the
# prior stops pushing a second text into a filled field.
set -euo pipefail
out=docs/results/miniwob-ablation
seeds=("$@")
((${#seeds[@]})) || seeds=(0 1 2)
# The arms above the "default-" ones predate the bench's own settings (miniwob_bench.py,
# FROM_SCRATCH_SETTINGS, since 2026-12-04): they ran with the miniwob preset's 6 steps and
# curriculum.unsolved_score=0, which $before now states where an arm did not set them.
before="env.miniwob.horizon=6 curriculum.unsolved_score=0"
declare -A arms=(
  [no-curriculum]="--methods both curriculum.enabled=false success_replay.share=0.1 $before"
  [no-success-replay]="--methods both curriculum.enabled=true success_replay.share=0 $before"
  [no-candidate-prior]="--methods novelty curriculum.enabled=true success_replay.share=0.1 $before"
  [no-novelty]="--methods candidate_prior curriculum.enabled=true success_replay.share=0.1 $before"
  [curriculum-unsolved]="--methods both curriculum.enabled=true success_replay.share=0.1
    curriculum.unsolved_score=0.5 env.miniwob.horizon=6"
  [horizon-10]="--methods both curriculum.enabled=true success_replay.share=0.1
    env.miniwob.horizon=10 curriculum.unsolved_score=0"
  [horizon-10-unsolved]="--methods both curriculum.enabled=true success_replay.share=0.1
    curriculum.unsolved_score=0.5 env.miniwob.horizon=10"
  [horizon-10-unsolved-success-cost]="--methods both curriculum.enabled=true success_replay.share=0.1
    curriculum.unsolved_score=0.5 env.miniwob.horizon=10 aride.step_cost_on_failure=false"
  [focus-typing]="--methods both curriculum.enabled=true success_replay.share=0.1
    explore.type_needs_focus=true $before"
  [horizon-10-unsolved-focus]="--methods both curriculum.enabled=true success_replay.share=0.1
    curriculum.unsolved_score=0.5 env.miniwob.horizon=10 explore.type_needs_focus=true"
  [horizon-10-unsolved-focus-prior]="--methods both curriculum.enabled=true
    success_replay.share=0.1 curriculum.unsolved_score=0.5 env.miniwob.horizon=10
    explore.type_needs_focus=true explore.focused_type_prior=2"
  [horizon-10-unsolved-focus-emptyprior]="--methods both curriculum.enabled=true
    success_replay.share=0.1 curriculum.unsolved_score=0.5 env.miniwob.horizon=10
    explore.type_needs_focus=true explore.empty_field_type_prior=2"
  # One mechanism off the bench's own settings (every mechanism on; the arm just above is
  # those settings, named before they became the bench's).
  [default-no-curriculum]="curriculum.enabled=false"
  [default-no-success-replay]="success_replay.share=0"
  [default-no-candidate-prior]="explore.candidate_prior=0"
  [default-no-novelty]="explore.novelty_bonus=0"
  [default-no-focus-gate]="explore.type_needs_focus=false"
  [default-no-empty-prior]="explore.empty_field_type_prior=0"
  [default-horizon-6]="env.miniwob.horizon=6"
)
read -ra order <<< "${ARMS:-no-candidate-prior no-novelty no-curriculum no-success-replay}"
for arm in "${order[@]}"; do
  [[ -v "arms[$arm]" ]] || { echo "ARMS: no arm named '$arm' (${!arms[*]})" >&2; exit 2; }
done
for s in "${seeds[@]}"; do
  for arm in "${order[@]}"; do
    json=$out/$arm-seed$s.json
    [[ -s $json ]] && continue
    # shellcheck disable=SC2086  # the arm's words are separate arguments
    .venv/bin/distrl bench miniwob --seed "$s" --json --run-root /tmp/miniwob-ablation-runs \
      ${arms[$arm]} > "$json.tmp"
    mv "$json.tmp" "$json"
  done
done
