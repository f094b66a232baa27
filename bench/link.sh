#!/usr/bin/env bash
# Link prediction's speed, each figure a ratio taken in this one run, on bench/sage.sh's graph (RMAT 1,000,000
# nodes / 20,000,000 directed edges, symmetric, 100 features), 2 METIS partitions, 1 server + 1 trainer + 1
# sampler thread per machine, both machines on this host, fan-out 10,25, 1 intra-op thread per trainer:
#   (a) an edge mini-batch (B positive edges, 5 uniform negatives each, with its input features) against a node
#       mini-batch of the same nodes, and of as many uniformly drawn nodes, all sampled on the trainer's thread;
#   (b) examples/python/link_prediction.py against `tessera train link`, same flags (batches of B edges): edge
#       mini-batches/s, the median of ROUNDS (default 5) alternating runs of each, since one pair of runs on a
#       2-core host varies by up to 2x;
#   (c) the guide's path (sample_neighbors + to_block in a DistDataLoader collate_fn, features read) against
#       DistNodeDataLoader's, batch 1000: mini-batches/s.
# Usage: bench/link.sh [B] [STEPS]. Data goes to $BENCH_DIR (default /tmp/tessera-bench-sage, shared with sage.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
edges=${1:-200}
steps=${2:-120}
dir=${BENCH_DIR:-/tmp/tessera-bench-sage}
source bench/rmat_common.sh
[ -f "$dir/p2link/rmat.json" ] || $bin partition --input "$dir/rmat" --graph-name rmat --num-parts 2 \
  --balance-train --test-edges 1000 --out "$dir/p2link" >/dev/null 2>&1
py=${PYTHON:-/usr/bin/python3}
export PYTHONPATH=$PWD/build/python:$PWD/examples/python
export PATH=$(dirname "$py"):$PATH
port=${BENCH_PORT:-34450}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
src=$PWD
cd "$dir"
job() {  # job LOG COMMAND
  /usr/bin/time -f "%M" -o "$1.rss" $bin launch --ip-config ip_config.txt --part-config p2link/rmat.json \
    --num-servers 1 --num-trainers 1 --num-samplers 1 --extra-envs "TESSERA_NUM_THREADS=1" "$2" >"$1" 2>&1 \
    || { tail -30 "$1"; exit 1; }
}
flags="--graph-name rmat --num-epochs 1 --max-batches $steps --fan-out 10,25 --eval-fan-out 10,25 \
  --batch-size $edges --num-hidden 16 --num-negs 5 --eval-negatives 20 --log-every 1000"
job paths.log "python3 $src/bench/link_paths.py rmat $edges $steps"
rounds=${ROUNDS:-5}
for r in $(seq 1 "$rounds"); do
  job native-$r.log "$bin train link $flags --out $dir/link-\$TESSERA_MACHINE_ID"
  job python-$r.log "python3 $src/examples/python/link_prediction.py $flags --ip-config ip_config.txt \
    --part-config p2link/rmat.json"
done

"$py" - "$edges" "$rounds" <<'PY'
import json, re, statistics, sys
def final(log):
    for line in reversed(open(log).read().splitlines()):
        m = re.match(r'\[m0/trainer/0\] (\{.*\})$', line)
        if m: return json.loads(m.group(1))
    sys.exit(f"no final metrics in {log}")
rss = lambda log: int(open(log + ".rss").read().split()[-1]) / 1024
paths = final("paths.log")
b, rounds = int(sys.argv[1]), int(sys.argv[2])
natives = [final(f"native-{r}.log")["mini_batches_per_s"] for r in range(1, rounds + 1)]
pythons = [final(f"python-{r}.log")["batches_per_s"] for r in range(1, rounds + 1)]
native_rate, python_rate = statistics.median(natives), statistics.median(pythons)
print("| measure | this | against | ratio | bound | peak RSS of the launch (MB) |")
print("|---|---|---|---|---|---|")
for what, key in (("its own nodes", "same_nodes_batch_s"), ("as many uniform nodes", "uniform_nodes_batch_s")):
    print(f'| (a) edge batch ({b} edges x 5 negatives, {paths["edge_batch_nodes"]:.0f} nodes) vs a node batch of '
          f'{what}, s | {paths["edge_batch_s"]:.4f} | {paths[key]:.4f} | {paths["edge_batch_s"] / paths[key]:.2f} | '
          f'<= 1.2 | {rss("paths.log"):.0f} |')
print(f'| (b) Python example vs tessera train link, edge mini-batches/s (median of {rounds}) | {python_rate:.2f} | '
      f'{native_rate:.2f} | {python_rate / native_rate:.2f} | >= 0.9 | {rss("python-1.log"):.0f} / '
      f'{rss("native-1.log"):.0f} |')
print(f'| (c) guide path vs DistNodeDataLoader, mini-batches/s | {paths["guide_batches_per_s"]:.2f} | '
      f'{paths["node_loader_batches_per_s"]:.2f} | '
      f'{paths["guide_batches_per_s"] / paths["node_loader_batches_per_s"]:.2f} | >= 0.7 | {rss("paths.log"):.0f} |')
print()
print("(b) round by round, Python / native: " + ", ".join(f"{p / n:.2f}" for p, n in zip(pythons, natives)))
PY
