#!/usr/bin/env bash
# GraphSAGE accuracy on a real node-classification dataset, issue 4's way:
# mini-batch training distributed over 2 partitions (1 server + 1 trainer
# per machine, loopback), the same standalone, a full-batch reference
# (all neighbours, all training nodes in one batch) and an MLP (no
# neighbours), each over 3 seeds, on the dataset's own split. Prints a table.
# Usage: bench/sage_accuracy.sh DATASET_DIR "TRAIN FLAGS" [FULL_BATCH_EPOCHS]
# e.g.   bench/sage_accuracy.sh ../shared/data/node/acm "--num-epochs 30 --batch-size 256 ..." 200
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(realpath "$1")
flags=$2
full_epochs=${3:-200}
name=$(basename "$data")
bin=${TESSERA_BIN:-$PWD/build/tessera}
dir=${BENCH_DIR:-/tmp/tessera-bench-acc}/$name
rm -rf "$dir" && mkdir -p "$dir"
$bin partition --input "$data" --graph-name "$name" --num-parts 2 --balance-train --balance-edges --out "$dir/p2" >/dev/null 2>&1
$bin partition --input "$data" --graph-name "$name" --num-parts 1 --out "$dir/p1" >/dev/null 2>&1
trainer=sage
. bench/accuracy_common.sh
run_mode() {  # mode seed
  case $1 in
    distributed|standalone) run_trainer "$1" "$2" ;;
    full-batch) run_trainer standalone "$2" --fanout -1 --eval-fanout -1 --batch-size 100000000 \
                  --num-epochs "$full_epochs" --eval-every "$full_epochs" ;;
    mlp) run_trainer standalone "$2" --fanout 0 --eval-fanout 0 ;;
  esac
}
echo "| $name | seed 0 | seed 1 | seed 2 | mean test acc |"
echo "|---|---|---|---|---|"
for mode in distributed standalone full-batch mlp; do
  a=(); for seed in 0 1 2; do a+=("$(run_mode $mode $seed)"); done
  mean=$(python3 -c "print(f'{(${a[0]}+${a[1]}+${a[2]})/3:.4f}')")
  echo "| $mode | ${a[0]} | ${a[1]} | ${a[2]} | $mean |"
done
