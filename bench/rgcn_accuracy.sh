#!/usr/bin/env bash
# R-GCN entity-classification accuracy on an RDF dataset (AIFB), issue 5's
# way: the graph with reverse edges, mini-batch training distributed over 2
# partitions (1 server + 1 trainer per machine, loopback) and the same
# standalone on 1 partition, each over 5 seeds. Prints a table.
# Usage: bench/rgcn_accuracy.sh [DATASET_DIR] ["TRAIN FLAGS"]
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(realpath "${1:-../shared/data/hetero/AIFB}")
flags=${2:-"--n-epochs 30 --n-hidden 16 --fanout 20,20 --batch-size 16 --lr 0.01 --sparse-lr 0.05 --use-self-loop --dropout 0.2"}
name=$(basename "$data" | tr 'A-Z' 'a-z')
bin=${TESSERA_BIN:-$PWD/build/tessera}
dir=${BENCH_DIR:-/tmp/tessera-bench-rgcn-acc}/$name
rm -rf "$dir" && mkdir -p "$dir"
$bin partition --input "$data" --format rdf --graph-name "$name" --num-parts 2 --balance-train \
  --out "$dir/p2" >/dev/null 2>&1
$bin partition --input "$data" --format rdf --graph-name "$name" --num-parts 1 --out "$dir/p1" \
  >/dev/null 2>&1
trainer=rgcn
BENCH_PORT=${BENCH_PORT:-34450} . bench/accuracy_common.sh
run_mode() { run_trainer "$1" "$2"; }  # mode seed
echo "| $name ($flags) | seed 0 | seed 1 | seed 2 | seed 3 | seed 4 | mean test acc |"
echo "|---|---|---|---|---|---|---|"
for mode in distributed standalone; do
  a=(); for seed in 0 1 2 3 4; do a+=("$(run_mode $mode $seed)"); done
  mean=$(python3 -c "print(f'{sum([${a[0]},${a[1]},${a[2]},${a[3]},${a[4]}])/5:.4f}')")
  echo "| $mode | ${a[0]} | ${a[1]} | ${a[2]} | ${a[3]} | ${a[4]} | $mean |"
done
