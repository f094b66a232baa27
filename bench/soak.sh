#!/usr/bin/env bash
# A soak of the runtime: a 2-machine `tessera train sage` on the RMAT graph of bench/sage.sh (1 server + 1
# trainer with 2 sampler threads per machine, loopback) and beside it a 2-machine KGE job on FB15k-237
# (TransE_l2, entity rows on the servers), both for MINUTES; every 10 s each server's and trainer's RSS, open
# file descriptors and threads are sampled from /proc (bench/soak.py). Prints, per process, the figures at the end
# of the warm-up (5 minutes, or a quarter of a shorter soak) and at the end: RSS growth, and the descriptors and
# threads, which should not move. Samples go to $BENCH_DIR/soak.csv; the jobs' logs beside them.
# Usage: bench/soak.sh [MINUTES] (default 60). Data: $BENCH_DIR (default /tmp/tessera-bench-sage, shared with
# bench/sage.sh); FB15k-237 from $KGE_DATA (default ../shared/data/kg/FB15k-237).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
dir=${BENCH_DIR:-/tmp/tessera-bench-sage}
source bench/rmat_common.sh
kg=$(realpath "${KGE_DATA:-../shared/data/kg/FB15k-237}")
[ -d "$kg" ] || { echo "soak: no FB15k-237 at $kg (set KGE_DATA)" >&2; exit 1; }
soak=$dir/soak
rm -rf "$soak" && mkdir -p "$soak"
$bin kge partition --data_path "$kg" -k 2 --out "$soak/kg" >/dev/null
port=${BENCH_PORT:-35150}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$soak/sage_ip.txt"
printf '127.0.0.1 %d\n127.0.0.1 %d\n' $((port + 40)) $((port + 50)) > "$soak/kge_ip.txt"

# Both jobs run longer than the soak; it stops them (SIGINT: the launcher stops every process) when it ends.
$bin launch --ip-config "$soak/sage_ip.txt" --part-config "$dir/p2/rmat.json" --num-servers 1 --num-trainers 1 \
  --num-samplers 2 "$bin train sage --graph-name rmat --num-epochs 1000000 --fan-out 10,25 --batch-size 1000 \
  --num-hidden 16 --eval-every 1000000 --log-every 100000 --out $soak/sage-\$TESSERA_MACHINE_ID" \
  > "$soak/sage.log" 2>&1 &
sage=$!
$bin launch --ip-config "$soak/kge_ip.txt" --part-config "$soak/kg/FB15k-237.json" --num-servers 1 \
  --num-trainers 1 "$bin kge train --model_name TransE_l2 --gamma 19.9 --lr 0.25 -rc 1e-9 --hidden_dim 400 \
  --batch_size 1000 --neg_sample_size 200 -adv --max_step 100000000 --log_interval 100000 --num_thread 1 \
  --checkpoint_interval 0 --no_save_emb --save_path $soak/kge" > "$soak/kge.log" 2>&1 &
kge=$!
stop() { kill -INT "$sage" "$kge" 2>/dev/null || true; wait "$sage" "$kge" 2>/dev/null || true; }
trap stop EXIT

seconds=$((minutes * 60))
warmup=$((seconds / 4 < 300 ? seconds / 4 : 300))
echo "## soak: $minutes min, job 0 = train sage (RMAT, 2 machines), job 1 = kge train (FB15k-237, 2 machines)"
python3 bench/soak.py "$seconds" "$warmup" 10 "$soak/soak.csv" "$sage" "$kge"
echo "epochs done by train sage: $(grep -c '"epoch"' "$soak/sage-0/metrics.jsonl" 2>/dev/null || echo 0)"
