#!/usr/bin/env bash
# `labs run --experiment agent --seed 7` under extra V8 flags, against node -e "" and the build as is.
# For each quoted set of flags: a copy of dist/ whose bin sets them (beside --semi-space-growth-factor=1)
# and a code cache written under them (V8 refuses a cache made under other flags); then PAIRS rounds
# timing every variant once each, in the same order; prints the median wall ms of each.
# Usage (after npm run build): bash bench/startupFlags.sh [PAIRS=21] '--always-sparkplug' '--no-parallel-scavenge' ...
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=21
if [[ ${1:-} =~ ^[0-9]+$ ]]; then pairs=$1; shift; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=(node asis)
flags=("" "")
mk() { # name, flags
  cp -r dist "$work/$1"
  rm -f "$work/$1"/cli/*.v8cache
  sed -i "s/--semi-space-growth-factor=1/--semi-space-growth-factor=1 $2/" "$work/$1/cli/main.js"
  rm -f "$work/out/record.json" # labs refuses to replace a record without --force
  LABS_WRITE_CODE_CACHE=1 node "$work/$1/cli/main.js" run --experiment agent --seed 7 --out "$work/out" >/dev/null
}
mk asis ""
i=0
for f in "$@"; do i=$((i + 1)); names+=("v$i"); flags+=("$f"); mk "v$i" "$f"; done
ms() { local s; s=$(date +%s%N); node "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - s) / 100000)); }
for n in "${names[@]}"; do : >"$work/t.$n"; done
for _ in $(seq "$pairs"); do
  for n in "${names[@]}"; do
    if [ "$n" = node ]; then ms -e "" >>"$work/t.$n"
    else rm -f "$work/out/record.json"; ms "$work/$n/cli/main.js" run --experiment agent --seed 7 --out "$work/out" >>"$work/t.$n"; fi
  done
done
for k in "${!names[@]}"; do
  n=${names[$k]}
  med=$(sort -n "$work/t.$n" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]/10}')
  label=${flags[$k]:-$([ "$n" = node ] && echo 'node -e ""' || echo 'as built')}
  echo "$med ms  $label"
done
