#!/usr/bin/env bash
# The peer in the project's own bench: DistDGL (PyPI's dgl 2.1.0, the newest with a Python 3.11 wheel there, on
# PyPI's torch 2.2.1 in a venv of its own) against Tessera on bench/sage.sh's workload (RMAT 1,000,000 nodes /
# 20,000,000 edges, 100 features, 47 classes, fan-out 10,25, batch 1000, 2 layers), as 2 machines: 2 network
# namespaces on one bridge, each with its own /dev/shm (DistDGL names its shared memory by graph name only, so two
# "machines" sharing one /dev/shm overwrite each other's partition book) - tests/cluster/netns_hosts.sh's hosts.
# 1 server + 1 trainer per machine, 1 intra-op thread per trainer; at each hidden width of WIDTHS (default 16 256):
#   dgl      bench/dgl_sage.py (GraphSAGE written against DGL's API) on DGL, METIS partitions made by DGL's
#            partition_graph (bench/dgl_partition.py), DGL_SAMPLERS sampler processes per trainer (default 0:
#            sampling in the trainer, as DGL's README runs its example);
#   tessera.dgl  the same script on Tessera (only its imports differ), Tessera's METIS partitions, 1 sampler;
#   example  examples/python/graphsage.py, Tessera's Python example, 1 sampler;
#   native   `tessera train sage`, 1 sampler.
# Every job is encrypted on Tessera's side (its default); DGL's sockets are in the clear (it has no other mode).
# Prints each run's mini-batches/s summed over the 2 trainers, its ratio to DGL's, the step split and test accuracy.
# Needs root (network namespaces). DGL_VENV (default ~/.cache/tessera/venv-dgl-2.1.0) is made on first use (PyPI).
# Usage: [WIDTHS="16 256"] [DGL_SAMPLERS=0] bench/distdgl.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
epochs=${1:-3}
dir=${BENCH_DIR:-/tmp/tessera-bench-sage}
source bench/rmat_common.sh
venv=${DGL_VENV:-$HOME/.cache/tessera/venv-dgl-2.1.0}
if ! "$venv/bin/python" -c "import dgl" 2>/dev/null; then
  python3 -m venv "$venv"
  # dgl 2.1.0's graphbolt library is built for torch 2.0-2.2, and that torch for numpy 1 (so pandas, which
  # dgl.graphbolt imports, from before numpy 2).
  "$venv/bin/pip" install -q dgl==2.1.0 torch==2.2.1 torchdata==0.7.1 "numpy<2" "pandas<2.3" pyyaml pydantic
fi
dglpy=$venv/bin/python
[ -f "$dir/p2dgl_dgl/rmat.json" ] || "$dglpy" bench/dgl_partition.py "$dir/rmat" rmat 2 "$dir/p2dgl_dgl" >/dev/null
[ -f "$dir/p2dgl/rmat.json" ] || $bin partition --input "$dir/rmat" --graph-name rmat --num-parts 2 --balance-train \
  --rename feat=features,label=labels --out "$dir/p2dgl" >/dev/null

hosts=$dir/hosts
tests/cluster/netns_hosts.sh down "$hosts" 2>/dev/null || true
tests/cluster/netns_hosts.sh up "$hosts" 2 >/dev/null
trap 'tests/cluster/netns_hosts.sh down "$hosts"' EXIT
mapfile -t addr <"$hosts/hosts"
# A job that has not finished in JOB_TIMEOUT s (default 1800) is stopped.
on_host() { timeout "${JOB_TIMEOUT:-1800}" nsenter -t "$(cat "$hosts/h$1/sshd.pid")" -m -n -- /bin/sh -c "$2"; }
port=${BENCH_PORT:-30050}
printf '%s %d\n%s %d\n' "${addr[0]}" "$port" "${addr[1]}" "$port" >"$dir/ip_config_hosts.txt"
samplers=${DGL_SAMPLERS:-0}

# DistDGL's processes, started as its launch tool starts them (the environment it sets), one set per host.
dgl_job() {  # dgl_job HIDDEN LOG
  local common="DGL_NUM_SAMPLER=$samplers DGL_NUM_CLIENT=$((2 * (1 + samplers))) DGL_CONF_PATH=$dir/p2dgl_dgl/rmat.json \
    DGL_IP_CONFIG=$dir/ip_config_hosts.txt DGL_NUM_SERVER=1 DGL_GRAPH_FORMAT=csc OMP_NUM_THREADS=1 \
    GLOO_SOCKET_IFNAME=eth0"
  local args="--backend dgl --graph_name rmat --ip_config $dir/ip_config_hosts.txt --part_config \
    $dir/p2dgl_dgl/rmat.json --num_epochs $epochs --num_hidden $1"
  local servers=() trainers=()
  for i in 0 1; do
    on_host $i "cd $dir && env DGL_ROLE=server DGL_SERVER_ID=$i $common $dglpy $repo/bench/dgl_sage.py $args" \
      >"$2.server$i" 2>&1 &
    servers+=($!)
  done
  for i in 0 1; do
    on_host $i "cd $dir && env DGL_DIST_MODE=distributed DGL_ROLE=client $common $dglpy -m torch.distributed.run \
      --nproc_per_node 1 --nnodes 2 --node_rank $i --master_addr ${addr[0]} --master_port $((port + 100)) \
      $repo/bench/dgl_sage.py $args" >"$2.trainer$i" 2>&1 &
    trainers+=($!)
  done
  # The servers exit once the trainers leave; a failed trainer leaves them waiting, so they are stopped.
  local status=0
  for pid in "${trainers[@]}"; do wait "$pid" || status=1; done
  [ $status -eq 0 ] || for i in 0 1; do on_host $i "pkill -f bench/dgl_sage.py" || true; done
  for pid in "${servers[@]}"; do wait "$pid" || true; done
  cat "$2.trainer0" >"$2"
  [ $status -eq 0 ] || { tail -n 20 "$2".*; exit 1; }
}

# Tessera's jobs, launched from host 0 over ssh as on a cluster.
tessera_job() {  # tessera_job PART_CONFIG LOG COMMAND
  on_host 0 "cd $dir && $bin launch --ip-config ip_config_hosts.txt --part-config $1 --num-servers 1 \
    --num-trainers 1 --num-samplers 1 --ssh-key $hosts/key --ssh-option UserKnownHostsFile=$hosts/known_hosts \
    --extra-envs 'TESSERA_NUM_THREADS=1 GLOO_SOCKET_IFNAME=eth0 PYTHONPATH=${PYTHONPATH:-$repo/build/python}' \"$3\"" >"$2" 2>&1 \
    || { tail -30 "$2"; exit 1; }
}

for h in ${WIDTHS:-16 256}; do
  dgl_job "$h" "$dir/distdgl_h$h.log"
  tessera_job p2dgl/rmat.json "$dir/tdgl_h$h.log" "/usr/bin/python3 $repo/bench/dgl_sage.py --backend tessera \
    --graph_name rmat --ip_config ip_config_hosts.txt --part_config p2dgl/rmat.json --num_epochs $epochs \
    --num_hidden $h"
  flags="--graph-name rmat --num-epochs $epochs --fan-out 10,25 --batch-size 1000 --num-hidden $h --num-layers 2 \
    --eval-fan-out 10,25 --eval-every 1000 --log-every 1000"
  tessera_job p2/rmat.json "$dir/texample_h$h.log" "/usr/bin/python3 $repo/examples/python/graphsage.py $flags \
    --ip-config ip_config_hosts.txt --part-config p2/rmat.json"
  tessera_job p2/rmat.json "$dir/tnative_h$h.log" "$bin train sage $flags --out $dir/out-distdgl"
done

python3 - "$dir" "$epochs" ${WIDTHS:-16 256} <<'PY'
import json, re, sys
d, epochs = sys.argv[1], sys.argv[2]
def final(log):
    for line in reversed(open(log).read().splitlines()):
        m = re.search(r'(\{".*\})\s*$', line)
        if m and ("mini_batches_per_s" in m.group(1) or "batches_per_s" in m.group(1)): return json.loads(m.group(1))
    sys.exit(f"no final metrics in {log}")
print(f"{epochs} epochs, 2 machines (network namespaces), 1 server + 1 trainer each\n")
print("| hidden | run | mini-batches/s summed | vs DistDGL | epoch (s) | test acc | step split, ms (wait / inputs / forward / backward / update) |")
print("|---|---|---|---|---|---|---|")
for h in sys.argv[3:]:
    runs = [("DistDGL, bench/dgl_sage.py", final(f"{d}/distdgl_h{h}.log")),
            ("tessera.dgl, bench/dgl_sage.py", final(f"{d}/tdgl_h{h}.log")),
            ("examples/python/graphsage.py", final(f"{d}/texample_h{h}.log")),
            ("tessera train sage", final(f"{d}/tnative_h{h}.log"))]
    # dgl_sage.py reports its own trainer's rate; the examples and train sage theirs and the trainer count.
    rate = lambda f: f.get("mini_batches_per_s", f.get("batches_per_s")) * f.get("trainers", 2)
    base = rate(runs[0][1])
    for name, f in runs:
        split = f.get("step_ms", {})
        split = " / ".join(f'{(v[0] if isinstance(v, list) else v):.1f}' for k, v in split.items()
                           if k in ("wait", "inputs", "forward", "backward", "update"))
        print(f'| {h} | {name} | {rate(f):.1f} | {rate(f) / base:.2f} | {f["epoch_time_s"]:.2f} | '
              f'{f["test_acc"]:.3f} | {split or "—"} |')
PY
