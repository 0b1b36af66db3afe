#!/usr/bin/env bash
# Regenerates the multi-seed runs behind docs/experiments/filter.md: seeds 1..30 of the filter
# experiment on both environments (binary reward) and with the noisy partial-credit reward under the
# exact and the range zero-variance rule. Sequential and niced: about 12 minutes of one core.
#   bash scripts/filter-seeds.sh            # writes runs/filter-seeds/<name>/record.json
#   node scripts/filter-paired.mjs          # prints the paired tables of the doc from those records
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
run agent_binary --set env=agent
run token_binary --set env=token
run agent_noisy_exact --set env=agent --set reward=partial_noisy --set zero_variance_rule=exact
run agent_noisy_range --set env=agent --set reward=partial_noisy --set zero_variance_rule=range
