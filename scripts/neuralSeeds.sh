#!/bin/bash
# Single-seed records of the token experiments with both policies, for scripts/neuralFindings.ts:
#   bash scripts/neuralSeeds.sh OUT_DIR [FIRST_SEED] [LAST_SEED] [EXPERIMENTS...]
# Skips runs whose record exists (restartable); runs at the lowest CPU priority.
# JOBS=N runs N records at a time (default 1), taken in seed order so that the finished
# seeds stay a prefix. LABS="node dist/cli/main.js" runs a built CLI instead of tsx.
# POLICIES="neural" runs only those policies (default "table neural"); ARGS="--set budget=36" is
# passed to every run.
set -euo pipefail
out=${1:?usage: neuralSeeds.sh OUT_DIR [FIRST] [LAST] [EXPERIMENTS...]}
first=${2:-1}
last=${3:-30}
shift $(( $# < 3 ? $# : 3 ))
experiments=${*:-mask aggregation truncation}
labs=${LABS:-npx tsx src/cli/main.ts}
mkdir -p "$out"
for s in $(seq "$first" "$last"); do
  for e in $experiments; do
    for p in ${POLICIES:-table neural}; do
      [ -f "$out/${e}_${p}_$s/record.json" ] || echo "$e $p $s"
    done
  done
done | xargs -P "${JOBS:-1}" -L 1 sh -c \
  'nice -n 19 '"$labs"' run --experiment "$0" --seed "$2" --set "policy=$1" '"${ARGS:-}"' --out "'"$out"'/${0}_${1}_$2" > /dev/null'
