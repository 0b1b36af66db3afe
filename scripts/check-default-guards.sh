#!/usr/bin/env bash
# Shows that changing a default of any experiment makes `npm test` fail (test/records.test.ts):
# changes one default per experiment in the working tree, runs the fixture test, prints which tests
# failed, and restores the file with `git checkout`. Refuses to run when those files have
# uncommitted changes (they would be lost).
#
#   bash scripts/check-default-guards.sh
set -u
cd "$(dirname "$0")/.."
FILES="src/experiments/agent/agent.ts src/train/eventSim.ts src/experiments/advantage/advantage.ts src/experiments/mask/mask.ts src/experiments/tokenLab.ts src/experiments/truncation/truncation.ts"
if ! git diff --quiet -- $FILES; then
  echo "check-default-guards: commit or stash your changes to $FILES first" >&2
  exit 2
fi
status=0
try() { # file, sed expression, label
  sed -i "$2" "$1"
  if git diff --quiet -- "$1"; then
    echo "== $3: the edit did not apply to $1 (the declaration moved?)"
    status=1
    return
  fi
  echo "== $3"
  local out
  out=$(npx vitest run test/records.test.ts 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
  echo "$out" | grep -E "^ FAIL .*>" | sort -u
  if ! echo "$out" | grep -q "failed"; then
    echo "   NO TEST FAILED"
    status=1
  fi
  git checkout -q -- "$1"
}
try src/experiments/agent/agent.ts '/^  lr: option($/,/^  ),$/ s/^    2,$/    1.5,/' 'agent: lr 2 -> 1.5'
try src/train/eventSim.ts 's/^  eta: 2,$/  eta: 3,/' 'rollout: eta 2 -> 3 (EVENT_SIM_DEFAULTS, read by the rollout options)'
try src/experiments/advantage/advantage.ts '/^  ratio_noise: option($/,/^  ),$/ s/^    0.3,$/    0.25,/' 'advantage: ratio_noise 0.3 -> 0.25'
try src/experiments/mask/mask.ts "/loss_agg_mode: option(/,/^  ),/ s/^    'token-mean',$/    'seq-mean-token-sum',/" 'mask: loss_agg_mode token-mean -> seq-mean-token-sum'
try src/experiments/tokenLab.ts '/^  tool_error_rate: option($/,/^  ),$/ s/^    0.3,$/    0.25,/' 'aggregation (shared token-lab option): tool_error_rate 0.3 -> 0.25'
try src/experiments/truncation/truncation.ts 's/withDefault(TOKEN_LAB_OPTIONS.shape.budget, 25)/withDefault(TOKEN_LAB_OPTIONS.shape.budget, 24)/' 'truncation: budget 25 -> 24'
try src/experiments/agent/agent.ts '/^  updates: option(/ s/, 150,/, 100,/' 'agent: updates 150 -> 100 (an option the fixture overrides)'
exit $status
