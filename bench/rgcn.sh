#!/usr/bin/env bash
# R-GCN on the full-scale mag-like graph (ogbn-mag's sizes: 1,939,743 nodes,
# 21,111,007 edges, 349 classes, 128-float paper features), issue 5's way:
# written in OGB's raw layout, read back by the ogb-mag reader, partitioned
# with reverse edges by METIS into 2 parts, then DistDGL's ogbn-mag command
# line on 2 machines over loopback (1 server, 1 trainer with 4 sampler
# threads each). Prints the epoch's time split, how much of it the trainer
# waited for sampling + fetch, how busy the host's cores were, each
# process's peak RSS, and the accuracy against the majority class and an MLP
# on paper features (the same model with no neighbours).
# Usage: bench/rgcn.sh [EPOCHS]. Data goes to $BENCH_DIR (default
# /tmp/tessera-bench-rgcn); KEEP=1 reuses a partitioned graph found there.
# MAX_BATCHES=N stops each epoch after N steps (a before/after in minutes);
# TESSERA_BIN runs another tree's tessera binary on the same data. CACHE=off
# runs without the remote-row cache of paper features (--cache-remote-features
# 0, DistDGL's way); the default keeps 0.25 of the other machine's papers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
epochs=${1:-1}
dir=${BENCH_DIR:-/tmp/tessera-bench-rgcn}
bin=${TESSERA_BIN:-$PWD/build/tessera}
if [ "${KEEP:-0}" != 1 ] || [ ! -f "$dir/p2/ogbn-mag.json" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  $bin gen mag-like --seed 0 --layout ogb --out "$dir/raw" 2>&1 | tail -1
  $bin partition --input "$dir/raw" --format ogb-mag --add-reverse --graph-name ogbn-mag --num-parts 2 \
    --balance-train --balance-edges --out "$dir/p2" 2>&1 | tail -1
fi
port=${BENCH_PORT:-34750}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
seed_flags="--graph-name ogbn-mag --dataset ogbn-mag --fanout=25,25 --batch-size 512 --n-hidden 64 --lr 0.01 \
--eval-batch-size 16 --low-mem --dropout 0.5 --use-self-loop --n-bases 2 --layer-norm --ip-config ip_config.txt \
--num-workers 4 --num-servers 1 --sparse-embedding --sparse-lr 0.06 --log-every 100"
run() {  # name, extra flags
  (cd "$dir" && $bin launch --ip-config ip_config.txt --part-config p2/ogbn-mag.json --num-servers 1 \
     --num-trainers 1 --num-samplers 4 "$bin train rgcn $seed_flags $2 --out $dir/$1") > "$dir/$1.log" 2>&1
}
cache_flag=$([ "${CACHE:-on}" = off ] && echo "--cache-remote-features 0" || true)
run rgcn "--n-epochs $epochs ${MAX_BATCHES:+--max-batches $MAX_BATCHES} $cache_flag"
run mlp "--n-epochs 1 --fanout=0,0"
python3 - "$dir" <<'PY'
import gzip, json, re, sys, collections
d = sys.argv[1]
def final(name):
    for line in reversed(open(f"{d}/{name}.log").read().splitlines()):
        if line.startswith("[m0/trainer/0] {"):
            return json.loads(line.split("] ", 1)[1])
    sys.exit(f"{name}: no final metrics in {d}/{name}.log")
r, m = final("rgcn"), final("mlp")
labels = [int(x) for x in gzip.open(f"{d}/raw/raw/node-label/paper/node-label.csv.gz", "rt").read().split()]
valid = [int(x) for x in gzip.open(f"{d}/raw/split/time/paper/valid.csv.gz", "rt").read().split()]
majority = collections.Counter(labels[i] for i in valid).most_common(1)[0][1] / len(valid)
epoch = r["epoch_time_s"]
print(f"\nR-GCN, DistDGL's ogbn-mag command line, full-scale mag-like graph, 2 machines on loopback, "
      f"{r['steps_per_epoch']} steps per trainer per epoch\n")
print("| measurement | value |\n|---|---|")
rows = [("epoch time (mean)", f"{epoch:.1f} s"), ("seeds/s (trainer 0)", f"{r['seeds_per_s']:.0f}"),
        ("trainer 0: sample (sampler threads)", f"{r['sample_s']:.1f} s"),
        ("trainer 0: fetch (sampler threads)", f"{r['fetch_s']:.1f} s"),
        ("trainer 0: waited for sample + fetch", f"{r['wait_s']:.1f} s = {100 * r['wait_fraction']:.1f}% of the epochs"),
        ("trainer 0: compute", f"{r['compute_s']:.1f} s"), ("trainer 0: all-reduce", f"{r['allreduce_s']:.1f} s"),
        ("trainer 0: sparse embedding update", f"{r['sparse_update_s']:.1f} s"),
        ("host CPU busy over the epochs (2 cores)", f"{100 * r['host_cpu_busy']:.0f}%"),
        ("paper-feature cache: rows per trainer, remote hit rate",
         f"{r['feature_cache_rows']}, {r['feature_cache_remote_hit_rate']:.3f}" if "feature_cache_rows" in r
         else "off")]
for line in open(f"{d}/rgcn.log"):
    g = re.search(r"\] (server|trainer) (\S+): .*peak RSS (\d+) MB", line)
    if g: rows.append((f"peak RSS {g.group(2)}", f"{g.group(3)} MB"))
rows += [("validation accuracy, R-GCN", f"{r['val_acc']:.4f}"), ("test accuracy, R-GCN", f"{r['test_acc']:.4f}"),
         ("validation accuracy, MLP on paper features (1 epoch)", f"{m['val_acc']:.4f}"),
         ("validation accuracy, majority class", f"{majority:.4f}")]
for k, v in rows: print(f"| {k} | {v} |")
PY
