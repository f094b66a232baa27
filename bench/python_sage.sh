#!/usr/bin/env bash
# The Python package against the native trainer, side by side in one run, on bench/sage.sh's workload (RMAT
# 1,000,000 nodes / 20,000,000 edges, 100 features, 2 METIS partitions, 1 server + 1 trainer per machine, both
# machines on this host, fan-out 10,25, batch 1000, hidden 16, 1 intra-op thread and 1 sampler per trainer):
#   (a) `tessera train sage`;
#   (b) examples/python/graphsage.py with the same flags;
#   (c) DGL's own examples/distributed/graphsage/node_classification.py with only its DGL imports changed
#       (dgl -> tessera.dgl), when DGL_EXAMPLE names a copy of it (Tessera does not ship DGL's code);
#   (d) a 10,000-row feature pull into a torch tensor from Python against the same pull timed in C++;
#   (e) examples/pyg/graphsage.py (PyG's own GraphSAGE through tessera.pyg) with the same flags, and, apart
#       (bench/pyg_loader.py), the two loaders alone and the two models alone on batches from their own loaders,
#       and the ops PyG's step spends its CPU on, when PyG is on PYG_PATH (default ../shared/vendor).
# TESSERA_VENV=dir runs every job on the environment route instead: that venv's python, its pip-installed tessera
# package and command, and its own PyG (scripts/test-environment makes it: PyPI's torch 2.15, PyG 2.8.1).
# HIDDEN=w sets the hidden width of every run (default 16). After the table, the Python example's step by phase:
# wall and training-thread CPU per step, its process's CPU per step (sampler threads included), and its training
# thread's CPU beyond the native trainer's whole step (the Python side: interpreter, autograd nodes, allocations).
# Usage: [DGL_EXAMPLE=path/node_classification.py] [PYG_PATH=dir] [TESSERA_VENV=dir] [HIDDEN=16]
#        bench/python_sage.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-3}
dir=${BENCH_DIR:-/tmp/tessera-bench-sage}
source bench/rmat_common.sh
if [ -n "${TESSERA_VENV:-}" ]; then
  py=$TESSERA_VENV/bin/python3 bin=$TESSERA_VENV/bin/tessera
  export PYTHONPATH=
  pyg=$("$py" -c "import torch_geometric" 2>/dev/null && echo "the environment's" || true)
else
  py=${PYTHON:-/usr/bin/python3}
  export PYTHONPATH=$PWD/build/python
  pyg=${PYG_PATH:-$PWD/../shared/vendor}
  [ -d "$pyg/torch_geometric" ] && export PYTHONPATH=$PYTHONPATH:$pyg || pyg=""
fi
export PATH=$(dirname "$py"):$PATH
port=${BENCH_PORT:-34350}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
cd "$dir"
rm -f dgl.log pyg.log  # a table from this run only

job() {  # job PART_CONFIG LOG COMMAND
  $bin launch --ip-config ip_config.txt --part-config "$1" --num-servers 1 --num-trainers 1 --num-samplers 1 \
    --extra-envs "TESSERA_NUM_THREADS=1" "$3" >"$2" 2>&1 || { tail -30 "$2"; exit 1; }
}
hidden=${HIDDEN:-16}
flags="--graph-name rmat --num-epochs $epochs --fan-out 10,25 --batch-size 1000 --num-hidden $hidden --num-layers 2 \
  --eval-fan-out 10,25 --eval-every 1000 --log-every 1000"
job p2/rmat.json native.log "$bin train sage $flags --out $dir/out-\$TESSERA_MACHINE_ID"
job p2/rmat.json python.log "python3 $OLDPWD/examples/python/graphsage.py $flags --ip-config ip_config.txt \
  --part-config p2/rmat.json"
if [ -n "${DGL_EXAMPLE:-}" ]; then
  [ -f p2dgl/rmat.json ] || $bin partition --input rmat --graph-name rmat --num-parts 2 --balance-train \
    --rename feat=features,label=labels --out p2dgl >/dev/null 2>&1
  # Only the lines that import DGL change.
  sed -E -e 's/^import dgl$/import tessera.dgl as dgl/' -e 's/^import dgl\.(.*)$/import tessera.dgl.\1/' \
    -e 's/^from dgl(\.| )/from tessera.dgl\1/' "$DGL_EXAMPLE" > dgl_example.py
  job p2dgl/rmat.json dgl.log "python3 $dir/dgl_example.py --graph_name rmat --ip_config ip_config.txt \
    --part_config p2dgl/rmat.json --num_epochs $epochs --fan_out 10,25 --batch_size 1000 --num_hidden $hidden \
    --eval_every 1000 --log_every 1000"
fi
if [ -n "$pyg" ]; then
  job p2/rmat.json pyg.log "python3 $OLDPWD/examples/pyg/graphsage.py $flags --ip-config ip_config.txt \
    --part-config p2/rmat.json"
  job p2/rmat.json pyg_loader.log "python3 $OLDPWD/bench/pyg_loader.py rmat 60 p2/rmat.json"
fi
job p2/rmat.json pull.log "python3 $OLDPWD/bench/python_pull.py rmat"

"$py" - "$epochs" "$hidden" <<'PY'
import json, re, sys
def final(log):
    for line in reversed(open(log).read().splitlines()):
        m = re.match(r'\[m0/trainer/0\] (\{.*\})$', line)
        if m: return json.loads(m.group(1))
    sys.exit(f"no final metrics in {log}")
native, python = final("native.log"), final("python.log")
print(f"hidden {sys.argv[2]}\n")
print("| run | epoch time (s) | mini-batches/s (trainer 0) | vs native | test acc |")
print("|---|---|---|---|---|")
nb = native["mini_batches_per_s"]
print(f'| tessera train sage | {native["epoch_time_s"]:.2f} | {nb:.1f} | 1.00 | {native["test_acc"]:.3f} |')
print(f'| examples/python/graphsage.py | {python["epoch_time_s"]:.2f} | {python["batches_per_s"]:.1f} | '
      f'{python["batches_per_s"] / nb:.2f} | {python["test_acc"]:.3f} |')
steps = native["epochs"] * native["steps_per_epoch"]
native_step_cpu = 1e3 * native["step_cpu_s"] / steps
ms = python["step_ms"]
phases = ("wait", "inputs", "forward", "backward", "update")
python_side = sum(ms[p][1] for p in ("forward", "backward", "update")) - native_step_cpu
print("\n| examples/python/graphsage.py, ms per step | " + " | ".join(phases) +
      " | process CPU | Python side (CPU beyond the native step) |")
print("|---|" + "---|" * (len(phases) + 2))
print("| wall, CPU | " + " | ".join(f"{ms[p][0]:.2f}, {ms[p][1]:.2f}" for p in phases) +
      f' | {ms["process_cpu"]:.2f} | {python_side:.2f} (native step {native_step_cpu:.2f}) |')
s = ms["sampler"]
print(f'\nSampler thread per batch, ms (sample, fetch; wall / CPU): examples/python/graphsage.py '
      f'{s["sample"]:.2f} / {s["sample_cpu"]:.2f}, {s["fetch"]:.2f} / {s["fetch_cpu"]:.2f}; tessera train sage '
      + ", ".join(f'{1e3 * native[k + "_s"] / steps:.2f} / {1e3 * native[k + "_cpu_s"] / steps:.2f}'
                  for k in ("sample", "fetch")) + "\n")
try:
    pyg = final("pyg.log")
    print(f'| examples/pyg/graphsage.py (PyG GraphSAGE) | {pyg["epoch_time_s"]:.2f} | {pyg["batches_per_s"]:.1f} | '
          f'{pyg["batches_per_s"] / nb:.2f} | {pyg["test_acc"]:.3f} |')
    pyg_vs_python = pyg["batches_per_s"] / python["batches_per_s"]
except FileNotFoundError:
    print("| examples/pyg/graphsage.py | (PyG not on PYG_PATH) | | | |")
    pyg_vs_python = None
try:
    text = open("dgl.log").read()
    m = re.search(r'\[m0/trainer/0\] Summary.*TrainEpochTime\(mean\) ([\d.]+) \| TestAccuracy ([\d.]+)', text)
    # DGL's script averages the last 80% of its epochs; the native time above averages all of them.
    print(f'| DGL example, imports changed | {float(m.group(1)):.2f} (last 80%) | | '
          f'{float(m.group(1)) / native["epoch_time_s"]:.2f}x the epoch time | {float(m.group(2)):.3f} (its share) |')
except FileNotFoundError:
    print("| DGL example | (set DGL_EXAMPLE to run it) | | | |")
if pyg_vs_python is not None:
    print(f"\nPyG's loop against the tessera.dgl example, mini-batches/s: {pyg_vs_python:.2f}\n")
    print("| alone | DistNodeDataLoader; tessera.nn SAGE | tessera.pyg (Data); PyG GraphSAGE | PyG's rate / tessera.dgl's |")
    print("|---|---|---|---|")
    for line in open("pyg_loader.log"):
        if re.match(r"\[m0/trainer/0\] \| (loaders|models) alone", line): print(line.split("] ", 1)[1].rstrip())
    print("\n| PyG's step, by op (torch.profiler, 10 steps) | op | self CPU ms per step | share of the step |")
    print("|---|---|---|---|")
    for line in open("pyg_loader.log"):
        if line.startswith("[m0/trainer/0] | PyG step op"): print(line.split("] ", 1)[1].rstrip())
print()
print("| pull | C++ (ms) | Python (ms) | Python / C++ |")
print("|---|---|---|---|")
for line in open("pull.log"):
    if line.startswith("[m0/trainer/0] | 10,000"): print(line.split("] ", 1)[1].rstrip())
PY
