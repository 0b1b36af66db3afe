#!/usr/bin/env bash
# Few seeds: the default --jobs (workers only once they pay) and --jobs 2 against --jobs 1, paired.
# Usage: bash bench/fewSeeds.sh [pairs=5]   (after npm run build). LABS_BENCH_DIST=DIR times another
# build instead; LABS_BENCH_BEFORE=DIR also times that build's default in the same rounds. Prints the
# median wall ms of each and the speed-ups (--jobs 1 / this); for docs/bench-startup.md, "Few seeds".
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
dist=${LABS_BENCH_DIST:-dist}
before=${LABS_BENCH_BEFORE:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ms() { # build, then labs run arguments
  local s e d=$1
  shift
  rm -f "$out/r/record.json" # labs refuses to replace a record without --force
  s=$(date +%s%N)
  node "$d/cli/main.js" run --no-progress --out "$out/r" "$@" >/dev/null
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for run in "agent 1..4" "agent 1..16" "mask 1..4" "mask 1..16"; do
  set -- $run
  : >"$out/serial"; : >"$out/default"; : >"$out/two"; : >"$out/before"
  for _ in $(seq "$pairs"); do
    ms "$dist" -e "$1" --seeds "$2" --jobs 1 >>"$out/serial"
    ms "$dist" -e "$1" --seeds "$2" >>"$out/default"
    ms "$dist" -e "$1" --seeds "$2" --jobs 2 >>"$out/two"
    if [ -n "$before" ]; then ms "$before" -e "$1" --seeds "$2" >>"$out/before"; fi
  done
  s=$(median <"$out/serial"); d=$(median <"$out/default"); t=$(median <"$out/two")
  line=$(awk -v n="$1 $2" -v s="$s" -v d="$d" -v t="$t" 'BEGIN {printf "%-12s --jobs 1 %6.0f ms | default %6.0f ms (%.2fx) | --jobs 2 %6.0f ms (%.2fx)", n, s, d, s/d, t, s/t}')
  if [ -n "$before" ]; then
    b=$(median <"$out/before")
    line="$line$(awk -v s="$s" -v b="$b" 'BEGIN {printf " | before: default %6.0f ms (%.2fx)", b, s/b}')"
  fi
  echo "$line"
done
