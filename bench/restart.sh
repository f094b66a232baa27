#!/usr/bin/env bash
# What a failure and a checkpoint cost (issue 23), 2 "machines" on this host
# with 1 server + 1 trainer each, in one run:
#   (1) no checkpoints;                (2) a checkpoint every epoch;
#   (3) as (2) with --max-restarts 1 and the trainer of machine 1 killed
#       (SIGKILL) once trainer 0 has logged epoch EPOCHS/2-1;
#   (4) the same with machine 1's server killed.
# Prints wall time, test accuracy, restarts and where each run resumed, then
# what one checkpoint holds on disk and the time its writing took (the
# trainers' "checkpoint ... written" lines).
#
#   bench/restart.sh sage [EPOCHS]   GraphSAGE, products-like graph of 200,000
#                                    nodes / 4M edges (the main job's), 6 epochs
#   bench/restart.sh rgcn [EPOCHS]   R-GCN, full-scale mag-like graph (ogbn-mag's
#                                    sizes, bench/rgcn.sh's command line), 4
#                                    epochs of 40 steps (--max-batches): the
#                                    checkpoint (1.2M learnable embedding rows
#                                    with Adam state, on the servers) is what is
#                                    measured, not a whole 600-step epoch
# Data goes to $BENCH_DIR (default /tmp/tessera-bench-restart-MODEL).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-sage}
dir=${BENCH_DIR:-/tmp/tessera-bench-restart-$model}
scripts/build >/dev/null
bin=$PWD/build/tessera
mkdir -p "$dir"
port=${BENCH_PORT:-34350}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
case $model in
  sage)
    epochs=${2:-6}
    [ -f "$dir/data/meta.json" ] || $bin gen products-like --nodes 200000 --edges 4000000 --seed 0 --out "$dir/data" >/dev/null 2>&1
    [ -f "$dir/p2/products.json" ] || $bin partition --input "$dir/data" --graph-name products --num-parts 2 \
      --method metis --balance-train --balance-edges --out "$dir/p2" >/dev/null 2>&1
    part_config=$dir/p2/products.json samplers=1
    train="train sage --graph-name products --num-epochs $epochs --fan-out 10,25 --batch-size 1000 --num-hidden 64 \
--lr 0.003 --eval-every 1000 --log-every 100000"
    ;;
  rgcn)
    epochs=${2:-4}
    [ -f "$dir/raw/meta.json" ] || [ -d "$dir/raw/raw" ] || $bin gen mag-like --seed 0 --layout ogb --out "$dir/raw" >/dev/null 2>&1
    [ -f "$dir/p2/ogbn-mag.json" ] || $bin partition --input "$dir/raw" --format ogb-mag --add-reverse \
      --graph-name ogbn-mag --num-parts 2 --balance-train --balance-edges --out "$dir/p2" >/dev/null 2>&1
    part_config=$dir/p2/ogbn-mag.json samplers=4
    train="train rgcn --graph-name ogbn-mag --dataset ogbn-mag --fanout=25,25 --batch-size 512 --n-hidden 64 \
--lr 0.01 --eval-batch-size 16 --low-mem --dropout 0.5 --use-self-loop --n-bases 2 --layer-norm --sparse-embedding \
--sparse-lr 0.06 --num-epochs $epochs --max-batches 40 --eval-every 1000 --log-every 100000"
    ;;
  *) echo "usage: bench/restart.sh sage|rgcn [EPOCHS]" >&2; exit 2 ;;
esac

# The tessera process of job $1 with role $2 on machine 1 (not its shell),
# by its first argument: a library renames the main thread while it runs.
victim() {
  for p in /proc/[0-9]*; do
    [ "$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null | head -1 | xargs -r basename 2>/dev/null)" = tessera ] || continue
    env=$(tr '\0' '\n' < "$p/environ" 2>/dev/null) || continue
    grep -qx "TESSERA_JOB_ID=$1" <<<"$env" && grep -qx "TESSERA_ROLE=$2" <<<"$env" &&
      grep -qx "TESSERA_MACHINE_ID=1" <<<"$env" && echo "${p#/proc/}"
  done
}

# run NAME CHECKPOINT_EVERY [ROLE TO KILL]: prints one table row.
run() {
  local name=$1 every=$2 role=${3:-} out=$dir/out-$1 log=$dir/$1.log
  rm -rf "$out"
  local start=$SECONDS
  $bin launch --ip-config "$dir/ip_config.txt" --part-config "$part_config" --num-servers 1 \
    --num-trainers 1 --num-samplers $samplers --max-restarts 1 --extra-envs "TESSERA_NUM_THREADS=1" \
    "$bin $train --checkpoint-every $every --out $out" >"$log" 2>&1 &
  local job=$!
  if [ -n "$role" ]; then
    local mark
    mark=$(printf '[m0/trainer/0] Epoch %05d | Time' $((epochs / 2 - 1)))
    until grep -qF "$mark" "$log"; do sleep 0.2; done
    local id
    id=$(sed -n 's/^launch: job \([A-Za-z0-9_-]*\):.*/\1/p' "$log" | head -1)
    kill -9 "$(victim "$id" "$role")"
  fi
  wait $job || { cat "$log"; exit 1; }
  local wall=$((SECONDS - start))
  python3 - "$log" "$name" "$wall" "$(grep -c 'restart 1 of 1' "$log" || true)" <<'PY'
import json, re, sys
log, name, wall, restarts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
final = None
for line in open(log):
    m = re.match(r'\[m0/trainer/0\] (\{.*\})$', line.strip())
    if m: final = json.loads(m.group(1))
resumed = re.findall(r'resuming after epoch (\d+)', open(log).read())
print(f"| {name} | {wall} | {final['test_acc']:.4f} | {restarts} | {resumed[-1] if resumed else '-'} |")
PY
}

echo "| run | wall (s) | test acc | restarts | resumed after epoch |"
echo "|---|---|---|---|---|"
run no-checkpoints 0
run checkpoint-every-epoch 1
run killed-trainer 1 trainer
run killed-server 1 server
ckpt=$dir/out-checkpoint-every-epoch/checkpoints
echo
for share in "$ckpt"/*/; do
  last=$(ls -d "$share"epoch-* | sort -t- -k2 -n | tail -1)
  echo "$(basename "$share"): $(du -sk "$last" | cut -f1) KiB in $(basename "$last") ($(ls "$last" | wc -l) files)"
done
grep -h 'checkpoint after epoch' "$dir/checkpoint-every-epoch.log" | sed 's/^/  /'
