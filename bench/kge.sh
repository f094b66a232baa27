#!/usr/bin/env bash
# KGE training throughput: DGL-KE's FB15k configuration (--hidden_dim 400
# --batch_size 1000 --neg_sample_size 200 -adv) for TransE_l2, DistMult and
# ComplEx on FB15k-237, and RotatE's (d 200 -de, batch 1024, 256 negatives),
# standalone (2 worker threads sharing the tables); TransE_l2 and ComplEx also
# as a 2-machine loopback job (METIS partitions, 1 server + 1 trainer per
# machine, entity rows on the servers). Prints positive triples/s, steps/s
# (job-wide), the share of the bound, the time split of trainer 0 (sample /
# pull / compute / push, seconds over the run) and peak RSS.
# The share of the bound is steps/s x the time of one step's own matrix
# products at the model's shapes (chunks x [K x D] x [D x N], forward and
# backward; libtorch on the same 2 threads, best of 30: bench_matmul
# --kge-step), measured in the same run: 1.0 would be a step that costs
# nothing but its products.
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

bound_ms() {  # chunks K D N: one step's products, best of 30, on 2 threads
  build/bench_matmul --kge-step "$@" 2 | awk '/^bound_ms/ {print $2}'
}

row() {  # model mode bound_ms: the final JSON line -> a table row
  python3 -c '
import json, sys
m = json.loads(sys.stdin.read().strip().splitlines()[-1].split("] ", 1)[-1])
bound = float(sys.argv[3]) / 1e3
cells = [sys.argv[1], sys.argv[2], "{:,.0f}".format(m["triples_per_s"]), "%.1f" % m["steps_per_s"],
         "%.2f" % (m["steps_per_s"] * bound)]
cells += ["%.1f" % m[k] for k in ("train_s", "sample_s", "pull_s", "compute_s", "push_s")]
cells += ["%.0f MB" % m["peak_rss_mb"]]
print("| " + " | ".join(cells) + " |")
' "$1" "$2" "$3"
}
fb15k_bound=$(bound_ms 5 200 400 200)   # batch 1000 in chunks of 200, 200 negatives, d 400
rotate_bound=$(bound_ms 4 256 400 256)  # batch 1024 in chunks of 256, 256 negatives, 2 x d 200
echo "| model | mode | positive triples/s | steps/s | share of bound | train s | sample s | pull s | compute s | push s | peak RSS (trainer 0) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for model in TransE_l2 DistMult ComplEx RotatE; do
  # DGL-KE's FB15k settings of each model (RotatE: its FB15k-237 line).
  bound=$fb15k_bound
  model_config=$config
  case $model in
    TransE_l2) model_flags="--model_name TransE_l2 --gamma 19.9 --lr 0.25 -rc 1e-9" ;;
    DistMult) model_flags="--model_name DistMult --gamma 143 --lr 0.08" ;;
    ComplEx) model_flags="--model_name ComplEx --gamma 143 --lr 0.1" ;;
    RotatE)
      model_flags="--model_name RotatE --gamma 9 --lr 0.05 -de"
      model_config=${config/--hidden_dim 400 --batch_size 1000 --neg_sample_size 200/--hidden_dim 200 --batch_size 1024 --neg_sample_size 256}
      bound=$rotate_bound ;;
  esac
  $bin kge train --data_path "$data" $model_flags $model_config --num_proc 2 \
    --save_path "$dir/$model-1" 2>/dev/null | row $model "standalone, 2 workers" "$bound"
  case $model in TransE_l2 | ComplEx) ;; *) continue ;; esac
  $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/FB15k-237.json" --num-servers 1 \
    --num-trainers 1 "$bin kge train $model_flags $model_config --num_thread 1 \
    --save_path $dir/$model-2" 2>/dev/null | row $model "2 machines (loopback)" "$bound"
done
echo
echo "bound: FB15k configuration $fb15k_bound ms a step, RotatE's $rotate_bound ms (libtorch, 2 threads, best of 30)"
build/bench_matmul | tail -2
