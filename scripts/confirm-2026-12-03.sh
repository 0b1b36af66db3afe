#!/usr/bin/env bash
# The confirmation runs behind docs/findings/corrections-2026-12-03.md (issue 31, items 2-3) that
# no findings manifest covers yet: each re-measures a docs statement about a tabular run on fresh
# seeds (1001..1060 unless SEEDS says otherwise), with the options its docs page used for the
# discovery run. One run at a time, one job (--jobs 1). The runs a manifest now covers (aggregation,
# truncation, saturation, filter agent/token binary: same seeds and options) are rebuilt by
# `npm run findings -- NAME` instead (docs/findings/NAME.json), and are no longer here.
#   bash scripts/confirm-2026-12-03.sh OUT_DIR [name ...]    # default: every run, in this order
#   SEEDS=1..30 bash scripts/confirm-2026-12-03.sh OUT_DIR/discovery mask_table   # neural.md's table seeds
# Writes OUT_DIR/<name>/record.json (+ seeds/*.json per seed) and OUT_DIR/<name>.txt (the summary);
# skips a run whose record.json exists. Every record is deterministic per seed: rerunning reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: confirm-2026-12-03.sh OUT_DIR [name ...]}
shift
labs=${LABS:-node dist/cli/main.js}
seeds=${SEEDS:-1001..1060}
run() {
  local name=$1
  shift
  if [ -s "$out/$name/record.json" ]; then return; fi
  mkdir -p "$out"
  local t0=$SECONDS
  $labs run "$@" --seeds "$seeds" --jobs 1 --no-progress --out "$out/$name" --force >"$out/$name.txt"
  echo "$name done $(date -u +%H:%M:%S) ($((SECONDS - t0)) s)"
}
args() {
  case $1 in
    # docs/experiments/explore.md: tabular, the full 4 x 4 lever grid (the defaults), levers section
    # only (the curriculum and task-class sections are not re-measured here). ~25 s per seed on the
    # shared machine, so 1001..1030 were used: SEEDS=1001..1030 bash ... explore_levers (the per-seed
    # records under seeds/ are what scripts/confirmStats.ts reads; the explore manifest now
    # covers this run: npm run findings -- explore)
    explore_levers) a=(-e explore --set policy=table --set 'sections=["levers"]'
      --set 'temperatures=[0.7,1,1.5,2]' --set 'entropy_coefs=[0,0.001,0.01,0.05]') ;;
    # docs/experiments/clip.md, reference arm (kl_loss_coefs 0.1, 0.3 vs 0; 150 updates) on 1001..1060
    # (the clip manifest's confirmation set is 1001..1040, with the full sweep). The clip
    # sweep is cut to one cell: the reference runs draw from their own seeded stream (clipLab.ts
    # trainWithReferenceKl), so their numbers do not depend on the sweep options.
    clip_reference) a=(-e clip --set 'clip_ratios=[0.2]' --set include_no_clip=false
      --set clip_ratio_high=0 --set dual_clip=on --set 'ppo_epochs=[1]' --set 'mini_batches=[1]'
      --set 'optimizers=["adam"]' --set 'adam_lrs=[0.05]' --set batches=1) ;;
    # docs/experiments/rollout.md: sequence-level weights vs sync and unbounded:none (steps to 0.9)
    rollout_seq) a=(-e rollout --set rows=sync,unbounded:none,unbounded:is,unbounded:seq_is,unbounded:seq_tis) ;;
    # docs/experiments/neural.md's tabular column (seeds 1..30 there; run with SEEDS=1..30): the
    # per-seed shape of the observation-token rise under a flipped mask, beside the neural one
    mask_table) a=(-e mask --set policy=table) ;;
    *) echo "unknown run $1" >&2; exit 2 ;;
  esac
}
order=(explore_levers clip_reference rollout_seq)
[ $# -gt 0 ] && order=("$@")
for name in "${order[@]}"; do
  args "$name"
  run "$name" "${a[@]}"
done
