#!/usr/bin/env bash
# Single-seed records of `labs run --experiment explore`, one JSON file per seed, for
# scripts/exploreFindings.ts:
#   bash scripts/exploreSeeds.sh OUT_DIR POLICY FIRST LAST [extra labs args...]
#   e.g. bash scripts/exploreSeeds.sh runs/explore-neural-curriculum neural 1 20 \
#          --set 'sections=["curriculum"]'
# Writes OUT_DIR/POLICY-seedS.json (through a .tmp file, so a record exists only when complete)
# and skips seeds whose record exists, checked again just before each run (restartable; a second
# queue on the same directory may take over a range); runs at the lowest CPU priority.
# JOBS=N runs N seeds at a time (default 1), taken in seed order so that the finished seeds stay a
# prefix. LABS="node dist/cli/main.js" runs a built CLI instead of tsx (copy dist elsewhere first
# if you rebuild while it runs).
set -euo pipefail
out=${1:?usage: exploreSeeds.sh OUT_DIR POLICY FIRST LAST [extra labs args...]}
policy=${2:?policy: table or neural}
first=${3:?first seed}
last=${4:?last seed}
shift 4
labs=${LABS:-npx tsx src/cli/main.ts}
mkdir -p "$out"
for s in $(seq "$first" "$last"); do
  [ -s "$out/$policy-seed$s.json" ] || echo "$s"
done | xargs -P "${JOBS:-1}" -n 1 bash -c '
  labs=$1 out=$2 policy=$3; shift 3
  seed=${*: -1}; extra=("${@:1:$#-1}")
  f="$out/$policy-seed$seed.json"
  [ -s "$f" ] && exit 0 # written meanwhile by another queue on the same directory
  # the record appears only when the run succeeded (a failed or killed run leaves its .tmp)
  nice -n 19 $labs run --experiment explore --seed "$seed" --set "policy=$policy" "${extra[@]}" --json > "$f.tmp" &&
    mv "$f.tmp" "$f"
' _ "$labs" "$out" "$policy" "$@"
