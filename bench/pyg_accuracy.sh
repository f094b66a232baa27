#!/usr/bin/env bash
# PyG's GraphSAGE through tessera.pyg against `tessera train sage` on a products-like graph (200,000 nodes,
# 2,000,000 edges, 100 features, 47 classes), 2 METIS partitions, 1 server + 1 trainer per machine on this host,
# the same fan-out, batch size, epochs and hidden size; test accuracy over 3 seeds each. Needs PyG on PYG_PATH
# (default ../shared/vendor).
# Usage: [PYG_PATH=dir] bench/pyg_accuracy.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-3}
scripts/build >/dev/null
bin=$PWD/build/tessera
pyg=${PYG_PATH:-$PWD/../shared/vendor}
[ -d "$pyg/torch_geometric" ] || { echo "PyG not found on PYG_PATH ($pyg)" >&2; exit 1; }
py=${PYTHON:-/usr/bin/python3}
export PYTHONPATH=$PWD/build/python:$pyg PATH=$(dirname "$py"):$PATH
dir=${BENCH_DIR:-/tmp/tessera-bench-pyg}
mkdir -p "$dir"
[ -f "$dir/data/meta.json" ] || $bin gen products-like --nodes 200000 --edges 2000000 --seed 0 --out "$dir/data" >/dev/null
[ -f "$dir/p2/products.json" ] || $bin partition --input "$dir/data" --graph-name products --num-parts 2 \
  --balance-train --out "$dir/p2" >/dev/null 2>&1
port=${BENCH_PORT:-34450}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
src=$PWD
cd "$dir"
flags="--num-epochs $epochs --fan-out 10,25 --batch-size 1000 --num-hidden 64 --lr 0.003 --dropout 0.5"
final() {  # the last JSON line trainer 0 printed, field $2
  "$py" -c "import json,sys,re
for l in reversed(open(sys.argv[1]).read().splitlines()):
    m = re.match(r'\[m0/trainer/0\] (\{.*\})$', l)
    if m: print(round(json.loads(m.group(1))[sys.argv[2]], 4)); break" "$1" "$2"
}
job() {  # LOG COMMAND
  $bin launch --ip-config ip_config.txt --part-config p2/products.json --num-servers 1 --num-trainers 1 \
    --num-samplers 1 "$2" >"$1" 2>&1 || { tail -30 "$1"; exit 1; }
}
echo "| run | seed 0 | seed 1 | seed 2 | mean test acc |"
echo "|---|---|---|---|---|"
for run in native pyg; do
  a=()
  for seed in 0 1 2; do
    if [ $run = native ]; then
      job $run-$seed.log "$bin train sage --graph-name products $flags --seed $seed --out $dir/out-$seed"
    else
      job $run-$seed.log "python3 $src/examples/pyg/graphsage.py --graph-name products --ip-config ip_config.txt \
        --part-config p2/products.json $flags --seed $seed"
    fi
    a+=("$(final $run-$seed.log test_acc)")
  done
  mean=$("$py" -c "print(f'{(${a[0]}+${a[1]}+${a[2]})/3:.4f}')")
  name=$([ $run = native ] && echo "tessera train sage" || echo "examples/pyg/graphsage.py (PyG GraphSAGE)")
  echo "| $name | ${a[0]} | ${a[1]} | ${a[2]} | $mean |"
done
