#!/usr/bin/env bash
# Regenerates the multi-seed runs behind docs/experiments/filter.md: seeds 1..30 of the filter
# experiment at its defaults (150 updates x 16 groups x 8) on both environments with the binary reward,
# and with the noisy partial-credit reward under the exact and the range zero-variance rule.
# Two lanes in parallel, niced (measured: 9 minutes on the shared 2-core machine).
#   bash scripts/filter-seeds.sh        # writes runs/filter-seeds/<name>/record.json and <name>.txt
#   npx tsx scripts/filter-paired.ts    # prints the paired tables of the doc from those records
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/filter-seeds
mkdir -p "$out"
run() {
  local name=$1
  shift
  nice -n 10 npx tsx src/cli/main.ts run --experiment filter --seeds 1..30 --no-progress \
    --out "$out/$name" "$@" >"$out/$name.txt"
  echo "$name done $(date -u +%H:%M:%S)"
}
(
  run agent_binary --set env=agent
  run agent_noisy_exact --set env=agent --set reward=partial_noisy --set zero_variance_rule=exact
  run agent_noisy_range --set env=agent --set reward=partial_noisy --set zero_variance_rule=range
) &
(
  run token_binary --set env=token
  run token_noisy_range --set env=token --set reward=partial_noisy --set zero_variance_rule=range
) &
wait
