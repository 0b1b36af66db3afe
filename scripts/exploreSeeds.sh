#!/usr/bin/env bash
# Runs `labs run --experiment explore` once per seed and writes one JSON record per seed:
#   bash scripts/exploreSeeds.sh OUT_DIR POLICY FIRST LAST [extra --set args...]
# then `npx tsx scripts/exploreFindings.ts OUT_DIR` prints the paired differences with t 95% CIs.
set -euo pipefail
out=$1; policy=$2; first=$3; last=$4; shift 4
mkdir -p "$out"
for s in $(seq "$first" "$last"); do
  f="$out/$policy-seed$s.json"
  [ -s "$f" ] && continue
  npx tsx src/cli/main.ts run --experiment explore --seed "$s" --set "policy=$policy" "$@" --json > "$f.tmp"
  mv "$f.tmp" "$f"
done
