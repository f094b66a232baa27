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
bin=$PWD/build/tessera
dir=${BENCH_DIR:-/tmp/tessera-bench-acc}/$name
rm -rf "$dir" && mkdir -p "$dir"
$bin partition --input "$data" --graph-name "$name" --num-parts 2 --balance-train --balance-edges --out "$dir/p2" >/dev/null 2>&1
$bin partition --input "$data" --graph-name "$name" --num-parts 1 --out "$dir/p1" >/dev/null 2>&1
port=${BENCH_PORT:-34350}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"

acc() { tail -n 1 | sed 's/^\[[^]]*\] //' | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_acc"])'; }
run_mode() {  # mode seed
  local mode=$1 seed=$2 out="$dir/$1-$2"
  case $mode in
    distributed) $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/$name.json" --num-servers 1 \
                   --num-trainers 1 --num-samplers 1 "$bin train sage --graph-name $name $flags --seed $seed --out $out" \
                   2>/dev/null | acc ;;
    standalone) $bin train sage --standalone --part-config "$dir/p1/$name.json" $flags --seed "$seed" --out "$out" \
                   2>/dev/null | acc ;;
    full-batch) $bin train sage --standalone --part-config "$dir/p1/$name.json" $flags --seed "$seed" --out "$out" \
                   --fan-out -1 --eval-fan-out -1 --batch-size 100000000 --num-epochs "$full_epochs" \
                   --eval-every "$full_epochs" 2>/dev/null | acc ;;
    mlp) $bin train sage --standalone --part-config "$dir/p1/$name.json" $flags --seed "$seed" --out "$out" \
                   --fan-out 0 --eval-fan-out 0 2>/dev/null | acc ;;
  esac
}
echo "| $name | seed 0 | seed 1 | seed 2 | mean test acc |"
echo "|---|---|---|---|---|"
for mode in distributed standalone full-batch mlp; do
  a=(); for seed in 0 1 2; do a+=("$(run_mode $mode $seed)"); done
  mean=$(python3 -c "print(f'{(${a[0]}+${a[1]}+${a[2]})/3:.4f}')")
  echo "| $mode | ${a[0]} | ${a[1]} | ${a[2]} | $mean |"
done
