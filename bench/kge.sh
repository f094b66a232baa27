#!/usr/bin/env bash
# KGE training throughput, issue 6's way: DGL-KE's FB15k configuration
# (--hidden_dim 400 --batch_size 1000 --neg_sample_size 200 -adv) for
# TransE_l2 and ComplEx on FB15k-237, standalone (2 worker threads sharing
# the tables) and as a 2-machine loopback job (METIS partitions, 1 server +
# 1 trainer per machine, entity rows on the servers). Prints positive
# triples/s, steps/s, the time split of trainer 0 (sample / pull / compute /
# push, seconds over the run) and peak RSS, then libtorch's GEMM rate: the
# physical limit of the scoring, which is one [1000 x 400] x [400 x 200]-sized
# product per chunk forward and two backward.
# Usage: bench/kge.sh [STEPS] (default 2000 per worker). Data: $BENCH_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
steps=${1:-2000}
data=$(realpath "${KGE_DATA:-../shared/data/kg/FB15k-237}")
dir=${BENCH_DIR:-/tmp/tessera-bench-kge}
bin=$PWD/build/tessera
rm -rf "$dir" && mkdir -p "$dir"
$bin kge partition --data_path "$data" -k 2 --out "$dir/p2" | tail -1
port=${BENCH_PORT:-34850}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
config="--hidden_dim 400 --batch_size 1000 --neg_sample_size 200 -adv --max_step $steps --log_interval 500 \
--checkpoint_interval 0 --no_save_emb"

row() {  # model mode: the final JSON line -> a table row
  python3 -c '
import json, sys
m = json.loads(sys.stdin.read().strip().splitlines()[-1].split("] ", 1)[-1])
cells = [sys.argv[1], sys.argv[2], "{:,.0f}".format(m["triples_per_s"]), "%.1f" % m["steps_per_s"]]
cells += ["%.1f" % m[k] for k in ("train_s", "sample_s", "pull_s", "compute_s", "push_s")]
cells += ["%.0f MB" % m["peak_rss_mb"]]
print("| " + " | ".join(cells) + " |")
' "$1" "$2"
}
echo "| model | mode | positive triples/s | steps/s | train s | sample s | pull s | compute s | push s | peak RSS (trainer 0) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for model in TransE_l2 ComplEx; do
  # DGL-KE's FB15k settings of each model.
  model_flags="--model_name TransE_l2 --gamma 19.9 --lr 0.25 -rc 1e-9"
  [ $model = ComplEx ] && model_flags="--model_name ComplEx --gamma 143 --lr 0.1"
  $bin kge train --data_path "$data" $model_flags $config --num_proc 2 \
    --save_path "$dir/$model-1" 2>/dev/null | row $model "standalone, 2 workers"
  $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/FB15k-237.json" --num-servers 1 \
    --num-trainers 1 "$bin kge train $model_flags $config --num_thread 1 \
    --save_path $dir/$model-2" 2>/dev/null | row $model "2 machines (loopback)"
done
echo
build/bench_matmul | tail -2
