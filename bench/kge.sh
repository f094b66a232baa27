#!/usr/bin/env bash
# KGE training throughput of all eight models on FB15k-237 with DGL-KE's FB15k
# settings (its multi-CPU/GPU scripts: d 400, batch 1000 in 5 chunks, 200
# shared negatives, -adv for TransE_l1/l2, DistMult, ComplEx; RESCAL d 500;
# TransR d 200; SimplE with ComplEx's; RotatE d 200 -de, batch 1024, 256
# negatives), standalone (2 worker threads sharing the tables); TransE_l2 and
# ComplEx also as a 2-machine loopback job (METIS partitions, 1 server + 1
# trainer per machine, entity rows on the servers). Prints positive
# triples/s, steps/s (job-wide), the share of the bound, the time split of
# trainer 0 (sample / pull / compute / push, seconds over the run) and peak RSS.
# The share of the bound is steps/s x the time of one step's own matrix
# products at the model's shapes (chunks x [K x D] x [D x N], forward and
# backward, plus RESCAL's and TransR's per-positive relation matrices;
# libtorch on the same 2 threads, best of 10: bench_matmul --kge-step),
# measured in the same run: 1.0 would be a step that costs nothing but its
# products.
# First, ComplEx with --train_mode 1vsAll --reciprocal (d 256, batch 512) and
# KvsAll (1,024 queries) against their own bound, the three GEMMs of the
# queries against every entity; 1vsAll also as a 2-machine job whose servers
# score their own shards, with its epoch time against the standalone one and
# the bytes a step sends beside those of pulling every entity row.
# Usage: bench/kge.sh [STEPS] (default 2000 per worker; RESCAL and TransR,
# whose steps take seconds, run $KGE_HEAVY_STEPS, default 2; 1vsAll
# $KGE_1VSALL_STEPS, default 100). Data: $BENCH_DIR.
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

bound_ms() {  # model chunks K D N: one step's products, best of 10, on 2 threads
  build/bench_matmul --kge-step "$2" "$3" "$4" "$5" 2 "$1" | awk '/^bound_ms/ {print $2}'
}

row() {  # model mode bound_ms: the final JSON line -> a table row
  python3 -c '
import json, sys
m = json.loads(sys.stdin.read().strip().splitlines()[-1].split("] ", 1)[-1])
bound = float(sys.argv[3]) / 1e3
rate = m["steps_per_s"]
cells = [sys.argv[1], sys.argv[2], "{:,.0f}".format(m["triples_per_s"]), ("%.1f" if rate >= 1 else "%.3f") % rate,
         "%.2f" % (m["steps_per_s"] * bound)]
cells += ["%.1f" % m[k] for k in ("train_s", "sample_s", "pull_s", "compute_s", "push_s")]
cells += ["%.0f MB" % m["peak_rss_mb"]]
print("| " + " | ".join(cells) + " |")
' "$1" "$2" "$3"
}
heavy_steps=${KGE_HEAVY_STEPS:-2}
echo "| model | mode | positive triples/s | steps/s | share of bound | train s | sample s | pull s | compute s | push s | peak RSS (trainer 0) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
bounds=""
# 1vsAll (beyond DGL-KE): ComplEx d 256, batch 512 with reciprocal relations, so 1,024 queries a step, each scored
# against every entity; the bound is the step's three GEMMs, [1024 x 256] x [256 x entities] and its two gradients.
# The data files end their lines in CR LF: stripped, or every tail counts twice (27,395 "entities" instead of
# 14,541, and a bound 1.9x too long).
entities=$(cat "$data"/train.txt "$data"/valid.txt "$data"/test.txt | tr -d '\r' | awk -F'\t' '{print $1; print $3}' |
  sort -u | wc -l)
bound=$(bound_ms ComplEx 1 1024 256 "$entities")
bounds="$bounds ComplEx 1vsAll $bound ms;"
one_vs_all="--model_name ComplEx --hidden_dim 256 --train_mode 1vsAll --reciprocal --lr 0.1 --batch_size 512 \
--max_step ${KGE_1VSALL_STEPS:-100} --log_interval 50 --checkpoint_interval 0 --no_save_emb"
$bin kge train --data_path "$data" $one_vs_all --save_path "$dir/ComplEx-1vsAll" 2>/dev/null > "$dir/1vsAll-1.log"
row ComplEx "1vsAll, reciprocal (d 256, batch 512, 1 worker)" "$bound" < "$dir/1vsAll-1.log"
# The same with the entity table on 2 machines' servers, each scoring its shard (steps/s job-wide, as above).
$bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/FB15k-237.json" --num-servers 1 --num-trainers 1 \
  "$bin kge train $one_vs_all --num_thread 1 --save_path $dir/ComplEx-1vsAll-2" 2>/dev/null | grep '^\[m0/trainer/0\]' \
  > "$dir/1vsAll-2.log"
row ComplEx "1vsAll, reciprocal, 2 machines (loopback), entities on the servers" "$bound" < "$dir/1vsAll-2.log"
# KvsAll: the same 1,024 queries a step (its batch counts queries) and so the same bound; its rate column counts queries.
$bin kge train --data_path "$data" --model_name ComplEx --hidden_dim 256 --train_mode KvsAll --reciprocal --lr 0.1 \
  --batch_size 1024 --max_step "${KGE_1VSALL_STEPS:-100}" --log_interval 50 --checkpoint_interval 0 --no_save_emb \
  --save_path "$dir/ComplEx-KvsAll" 2>/dev/null | row ComplEx "KvsAll, reciprocal (d 256, 1,024 queries, 1 worker)" "$bound"
for model in TransE_l1 TransE_l2 DistMult ComplEx SimplE RotatE RESCAL TransR; do
  # DGL-KE's FB15k settings of each model (RotatE: its FB15k-237 line; SimplE,
  # absent from its scripts: ComplEx's). Shape: chunks K D N of the bound.
  model_config=$config
  shape="5 200 400 200"
  case $model in
    TransE_l1) model_flags="--model_name TransE_l1 --gamma 16 --lr 0.01 -rc 1e-7" ;;
    TransE_l2) model_flags="--model_name TransE_l2 --gamma 19.9 --lr 0.25 -rc 1e-9" ;;
    DistMult) model_flags="--model_name DistMult --gamma 143 --lr 0.08" ;;
    ComplEx) model_flags="--model_name ComplEx --gamma 143 --lr 0.1" ;;
    SimplE) model_flags="--model_name SimplE --gamma 143 --lr 0.1" ;;
    RotatE)
      model_flags="--model_name RotatE --gamma 9 --lr 0.05 -de"
      model_config=${config/--hidden_dim 400 --batch_size 1000 --neg_sample_size 200/--hidden_dim 200 --batch_size 1024 --neg_sample_size 256}
      shape="4 256 400 256" ;;  # batch 1024 in chunks of 256, 256 negatives, 2 x d 200
    RESCAL)
      model_flags="--model_name RESCAL --gamma 24 --lr 0.03"
      model_config=${config/--hidden_dim 400/--hidden_dim 500}
      model_config=${model_config/--max_step $steps/--max_step $heavy_steps}
      shape="5 200 500 200" ;;
    TransR)
      model_flags="--model_name TransR --gamma 8 --lr 0.015 -rc 5e-8"
      model_config=${config/--hidden_dim 400/--hidden_dim 200}
      model_config=${model_config/--max_step $steps/--max_step $heavy_steps}
      shape="5 200 200 200" ;;
  esac
  bound=$(bound_ms $model $shape)
  bounds="$bounds $model $bound ms;"
  $bin kge train --data_path "$data" $model_flags $model_config --num_proc 2 \
    --save_path "$dir/$model-1" 2>/dev/null | row $model "standalone, 2 workers" "$bound"
  case $model in TransE_l2 | ComplEx) ;; *) continue ;; esac
  $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/FB15k-237.json" --num-servers 1 \
    --num-trainers 1 "$bin kge train $model_flags $model_config --num_thread 1 \
    --save_path $dir/$model-2" 2>/dev/null | row $model "2 machines (loopback)" "$bound"
done
echo
python3 -c '
import json, sys
last = lambda path: json.loads(open(path).read().strip().splitlines()[-1].split("] ", 1)[-1])
one, two = last(sys.argv[1]), last(sys.argv[2])
print("1vsAll with the entities on 2 machines: epoch %.2fx the standalone epoch (job-wide steps/s %.2f against %.2f); "
      "%.2f MB a step and trainer over the network, against %.2f MB to pull every entity row and push its gradient"
      % (one["steps_per_s"] / two["steps_per_s"], two["steps_per_s"], one["steps_per_s"],
         two["network_bytes_per_step"] / 1e6, two["all_rows_bytes_per_step"] / 1e6))
' "$dir/1vsAll-1.log" "$dir/1vsAll-2.log"
echo "bound (one step's products; libtorch, 2 threads, best of 10):$bounds"
build/bench_matmul | tail -2
