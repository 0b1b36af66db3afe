#!/bin/bash
# Single-seed records of the token experiments with both policies, for scripts/neuralFindings.ts:
#   bash scripts/neuralSeeds.sh OUT_DIR [FIRST_SEED] [LAST_SEED] [EXPERIMENTS...]
# Skips runs whose record exists (restartable); runs at the lowest CPU priority.
set -euo pipefail
out=${1:?usage: neuralSeeds.sh OUT_DIR [FIRST] [LAST] [EXPERIMENTS...]}
first=${2:-1}
last=${3:-30}
shift $(( $# < 3 ? $# : 3 ))
experiments=${*:-mask aggregation truncation}
mkdir -p "$out"
for s in $(seq "$first" "$last"); do
  for e in $experiments; do
    for p in table neural; do
      dir="$out/${e}_${p}_$s"
      [ -f "$dir/record.json" ] && continue
      nice -n 19 npx tsx src/cli/main.ts run --experiment "$e" --seed "$s" --set "policy=$p" --out "$dir" > /dev/null
    done
  done
done
