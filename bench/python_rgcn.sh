#!/usr/bin/env bash
# R-GCN from Python against the native trainer, on a small mag-like graph (20,000 nodes / 200,000 edges in OGB's
# raw layout, reverse edges added, 2 METIS partitions, 1 server + 1 trainer per machine on this host), with the
# seeds' ogbn-mag command line (fan-out 25,25, batch 512, 64 hidden, 2 bases, self-loop, layer norm, sparse
# embeddings at lr 0.06), REPEATS runs of each:
#   (a) `tessera train rgcn` (seed i);
#   (b) examples/python/rgcn.py with the same flags (seed i);
#   (c) DGL's own examples/distributed/rgcn/node_classification.py with only its DGL import lines changed (and its
#       unused ogb import dropped), when DGL_EXAMPLE names a copy of it (Tessera does not ship DGL's code): its
#       default path (torch.nn.Embedding under DDP, torch's SparseAdam) and its --dgl-sparse path
#       (DistEmbedding with dgl.distributed.optim.SparseAdam). DGL's script has no seed flag.
# Prints each run's test accuracy, the means, and each mean's difference from the native one, and each run's
# mean epoch time. CACHE=off runs every job without the remote-row cache of paper features (the native
# --cache-remote-features 0, TESSERA_CACHE_REMOTE_FEATURES=0 for the scripts); the default keeps 0.25.
# Usage: [DGL_EXAMPLE=path/node_classification.py] bench/python_rgcn.sh [EPOCHS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-10}
repeats=${2:-5}
dir=${BENCH_DIR:-/tmp/tessera-bench-python-rgcn}
scripts/build >/dev/null
bin=$PWD/build/tessera
py=${PYTHON:-/usr/bin/python3}
export PYTHONPATH=$PWD/build/python
export PATH=$(dirname "$py"):$PATH
examples=$PWD/examples/python
mkdir -p "$dir" && cd "$dir"
if [ ! -f p2/ogbn-mag.json ]; then
  $bin gen mag-like --nodes 20000 --edges 200000 --seed 1 --layout ogb --out raw >/dev/null 2>&1
  # DGL's example reads "labels"; the native trainer and the Python example read "label".
  for part in p2 r2; do
    $bin partition --input raw --format ogb-mag --add-reverse --graph-name ogbn-mag --num-parts 2 --balance-train \
      --balance-edges $([ $part = r2 ] && echo --rename label=labels || true) --out $part >/dev/null 2>&1
  done
fi
native_cache=""
if [ "${CACHE:-on}" = off ]; then
  export TESSERA_CACHE_REMOTE_FEATURES=0  # the launcher passes it to every process
  native_cache="--cache-remote-features 0"
fi
port=${BENCH_PORT:-34550}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > ip_config.txt
job() {  # job PART_CONFIG LOG COMMAND
  $bin launch --ip-config ip_config.txt --part-config "$1" --num-servers 1 --num-trainers 1 --num-samplers 1 \
    "$3" >"$2" 2>&1 || { tail -30 "$2"; exit 1; }
}
seeds="--fanout=25,25 --batch-size 512 --lr 0.01 --eval-batch-size 16 --dropout 0.5 --use-self-loop --n-bases 2 \
--layer-norm --sparse-lr 0.06"
dgl_only="--low-mem --sparse-embedding --n-hidden 64 --n-epochs $epochs"
if [ -n "${DGL_EXAMPLE:-}" ]; then
  # Only the lines that import DGL change; the ogb import goes (no Debian package ships it, and it is unused).
  sed -E -e 's/^import dgl$/import tessera.dgl as dgl/' -e 's/^import dgl\.(.*)$/import tessera.dgl.\1/' \
    -e 's/^from dgl(\.| )/from tessera.dgl\1/' -e '/^from ogb\./d' "$DGL_EXAMPLE" > dgl_example.py
fi
for ((i = 0; i < repeats; i++)); do
  job p2/ogbn-mag.json native$i.log "$bin train rgcn --graph-name ogbn-mag --dataset ogbn-mag $seeds $dgl_only \
    --seed $i --out $dir/out$i $native_cache"
  job p2/ogbn-mag.json python$i.log "python3 $examples/rgcn.py --graph-name ogbn-mag --ip-config ip_config.txt \
    --part-config p2/ogbn-mag.json $seeds --num-hidden 64 --num-epochs $epochs --eval-every $epochs --seed $i"
  if [ -n "${DGL_EXAMPLE:-}" ]; then
    for mode in default dgl-sparse; do
      extra=$([ $mode = dgl-sparse ] && echo --dgl-sparse || true)
      job r2/ogbn-mag.json dgl-$mode$i.log "python3 $dir/dgl_example.py --graph-name ogbn-mag --dataset ogbn-mag \
        --ip-config ip_config.txt --conf-path r2/ogbn-mag.json $seeds $dgl_only $extra"
    done
  fi
done

"$py" - "$repeats" <<'PY'
import json, os, re, statistics, sys
repeats = int(sys.argv[1])
def final(log):
    for line in reversed(open(log).read().splitlines()):
        m = re.match(r'\[m0/trainer/0\] (\{.*\})$', line)
        if m: return json.loads(m.group(1))
    sys.exit(f"no final metrics in {log}")
def metrics(log):
    return final(log)["test_acc"]
def dgl(log):
    found = re.findall(r'\[m0/trainer/0\] Val Acc [\d.]+, Test Acc ([\d.]+)', open(log).read())
    if not found: sys.exit(f"no test accuracy in {log}")
    return float(found[-1])
runs = {"tessera train rgcn": [metrics(f"native{i}.log") for i in range(repeats)],
        "examples/python/rgcn.py": [metrics(f"python{i}.log") for i in range(repeats)]}
if os.path.exists("dgl_example.py"):
    runs["DGL example, imports changed"] = [dgl(f"dgl-default{i}.log") for i in range(repeats)]
    runs["DGL example, imports changed, --dgl-sparse"] = [dgl(f"dgl-dgl-sparse{i}.log") for i in range(repeats)]
native = statistics.mean(runs["tessera train rgcn"])
print("| run | test accuracy per run | mean | mean - native |")
print("|---|---|---|---|")
for name, accs in runs.items():
    mean = statistics.mean(accs)
    print(f"| {name} | {' '.join(f'{a:.3f}' for a in accs)} | {mean:.4f} | {mean - native:+.4f} |")
if not os.path.exists("dgl_example.py"):
    print("| DGL example | (set DGL_EXAMPLE to run it) | | |")
print(f"\nremote-row cache of paper features: {os.environ.get('CACHE', 'on')}")
print("| run | epoch time per run (s, trainer 0) | mean |\n|---|---|---|")
for name, prefix in (("tessera train rgcn", "native"), ("examples/python/rgcn.py", "python")):
    times = [final(f"{prefix}{i}.log")["epoch_time_s"] for i in range(repeats)]
    print(f"| {name} | {' '.join(f'{t:.2f}' for t in times)} | {statistics.mean(times):.2f} |")
PY
