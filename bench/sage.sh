#!/usr/bin/env bash
# GraphSAGE benchmark of issue 4, in one run, on a generated RMAT graph:
# 1,000,000 nodes, 20,000,000 directed edges (symmetric, no self-loops or
# duplicates), 100 float features, 47 classes, 10% training nodes; fan-out
# 10,25, batch 1000, 2 layers, hidden 16 (DistDGL's example defaults).
#   (a) single-process sampling throughput with 2 sampler threads
#       (standalone, 1 partition), sampling alone and with feature fetch;
#   (b0) one training step alone against its bound: the step's GEMMs at
#       their shapes plus its aggregation's memory traffic at the gather
#       bandwidth measured on the same blocks (bench_sage_step);
#   (b) the distributed job: 2 METIS partitions, 1 server + 1 trainer per
#       partition (2 sampler threads each), both "machines" on this host:
#       epoch time, mini-batches/s summed over trainers, the time split,
#       each trainer's step against its bound at that trainer's own batch
#       shapes (bench_sage_step --bound-at; wall and CPU time) and the job's,
#       peak RSS per process;
#   (b') the same with --insecure: the cost of CURVE encryption, beside it
#       (sockets in PLAIN, the gradient all-reduce on Gloo in the clear);
#   (b'') the same, encrypted, with --cache-remote-features 0: every remote
#       row pulled every time, as DistDGL does (the cache's worth);
#   (b''') the same, encrypted, but the all-reduce on Gloo in the clear
#       (TESSERA_BENCH_COLLECTIVES=gloo): the secured collectives' own cost,
#       which (b') mixes with the servers' CURVE traffic;
#   (c) the same in server-client mode: the 2 trainers on a third machine
#       that holds no partition;
#   (d) the all-reduce alone: 1, 16 and 64 MB on the secured ring and on
#       Gloo, against loopback TCP's bandwidth measured in the same run, and
#       what any 2-member all-reduce can reach here: the ring's exchange on
#       plain sockets, and that plus the fastest AEAD cipher's work.
# DGL 2.0.0 on this machine type: (a) 204 mini-batches/s, (b) 3.5 s per epoch
# of 50 mini-batches per trainer (28-29/s summed).
# Usage: bench/sage.sh [EPOCHS]. Data goes to $BENCH_DIR (default /tmp/tessera-bench-sage).
#   (w) the width column: at each hidden width of WIDTHS (default 16 64 256) the step alone against its bound
#       (bench_sage_step --hidden) and the (b) job at that width, then one table of both.
# PARTS="a b" runs only those parts (a, b, b1 = (b'), b2 = (b''), b3 = (b'''), c, d, w). HIDDEN sets (b)-(c)'s
# hidden width (default 16).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-3}
dir=${BENCH_DIR:-/tmp/tessera-bench-sage}
source bench/rmat_common.sh
[ -f "$dir/p1/rmat.json" ] || $bin partition --input "$dir/rmat" --graph-name rmat --num-parts 1 --method random \
  --out "$dir/p1" >/dev/null 2>&1

# Whether part $1 is asked for (all when PARTS is unset).
want() { [[ -z "${PARTS:-}" || " $PARTS " == *" $1 "* ]]; }

if want a; then
  echo "## (a) single-process sampling, 2 sampler threads"
  build/bench_sampling "$dir/p1/rmat.json" --samplers 2 --batches 600
fi

# Runs the job on an ip_config and prints its table:
# run_job TITLE IP_CONFIG TRAINERS LOG [LAUNCH FLAGS] [TRAINER FLAGS]
run_job() {
  echo
  echo "## $1"
  # Intra-op threads: the trainers' default (half the host's cores over its
  # trainers: 1 here) unless THREADS says. Two sampler threads per trainer
  # unless SAMPLERS says: with the input layer aggregated on the sampler
  # threads, one of them was the job's bottleneck (docs/benchmarks.md,
  # "One node per layer, and the input layer's aggregation on the sampler").
  $bin launch --ip-config "$2" --part-config "$dir/p2/rmat.json" --num-servers 1 --num-trainers "$3" \
    --num-samplers "${SAMPLERS:-2}" ${THREADS:+--extra-envs TESSERA_NUM_THREADS=$THREADS} ${5:-} \
    "$bin train sage --graph-name rmat --num-epochs $epochs --fan-out 10,25 --batch-size 1000 --num-hidden ${HIDDEN:-16} \
     --num-layers 2 --eval-every 1000 --eval-fan-out 10,25 --log-every 1000 ${6:-} --out $dir/out-\$TESSERA_MACHINE_ID" \
    >"$4" 2>&1 || { cat "$4"; exit 1; }
  python3 - "$4" <<'PY'
import json, os, re, sys
finals, servers = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'\[(m\d+)/trainer/(\d+)\] (\{.*\})$', line.strip())
    if m: finals[m.group(1) + "/trainer/" + m.group(2)] = json.loads(m.group(3))
    m = re.search(r'server (m\d+/server/\d+): shut down \(peak RSS (\d+) MB\)', line)
    if m: servers[m.group(1)] = int(m.group(2))
if not finals: sys.exit("no final metrics in the log")
print("| epoch time (s) | steps/epoch/trainer | mini-batches/s summed | sample (s) | fetch (s) | wait (s) | compute (s) | all-reduce (s) | remote rows from cache | test acc |")
print("|---|---|---|---|---|---|---|---|---|---|")
name, f = sorted(finals.items())[0]  # rank 0 prints the job's record
summed = f["trainers"] * f["mini_batches_per_s"]
hits = f.get("feature_cache_remote_hit_rate")
cached = "off" if hits is None else f'{100 * hits:.0f}% ({f["feature_cache_rows"]} rows)'
print(f'| {f["epoch_time_s"]:.2f} | {f["steps_per_epoch"]} | {summed:.1f} | {f["sample_s"]:.2f} | {f["fetch_s"]:.2f} | {f["wait_s"]:.2f} | {f["compute_s"]:.2f} | {f["allreduce_s"]:.2f} | {cached} | {f["test_acc"]:.3f} |')
# Each trainer's step against its bound at that trainer's own batch shapes
# (its mean_blocks: a partition's batches differ from the whole graph's of
# (b0); here the heavier partition's layer 0 had ~2x the other's rows),
# taken by bench_sage_step --bound-at after the job, on the idle host, as
# (b0)'s. Compute is wall time on the trainer's thread; compute CPU that
# thread's CPU time in the step less the all-reduce's (step CPU holds both):
# the step's own work without the time the other processes of the 2 cores
# held it. The job's share is the trainers' bounds summed over their
# compute summed (each ran as many steps). The sampler threads' CPU time per
# batch: what sampling and the feature fetch cost, less sensitive than their
# wall times to the host's other load.
import subprocess
def bound_at(blocks):
    if not os.path.exists("build/bench_sage_step") or not blocks: return float("nan")
    shapes = "/".join(f'{l["src"]:.0f},{l["dst"]:.0f},{l["edges"]:.0f}' for l in blocks)
    out = subprocess.run(["build/bench_sage_step", os.environ["BOUND_GRAPH"], "--threads", os.environ["BOUND_THREADS"],
                          "--hidden", os.environ.get("HIDDEN", "16"), "--bound-at", shapes],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split("bound_ms")[1])
print()
print("| trainer | layer 0 rows | layer 1 edges | compute per mini-batch (ms) | compute CPU per mini-batch (ms) | step CPU with all-reduce (ms) | bound at its shapes (ms) | share of bound (compute) | share of bound (compute CPU) | sampling CPU per mini-batch (ms) | fetch CPU per mini-batch (ms) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
share = lambda b, ms: "—" if ms != ms or b != b else f"{min(1, b / ms):.2f}"  # NaN: not measured
# Rank 0 logs every trainer's epoch times (per_trainer) in its metrics.jsonl.
trainers = {}
machine = re.match(r"m(\d+)/", name).group(1)
for line in open(os.path.join(os.environ["BENCH_DIR_OF_RUN"], f"out-{machine}", "metrics.jsonl")):
    for e in json.loads(line).get("per_trainer", []):
        t = trainers.setdefault(e["process"], {"steps": 0, "blocks": []})
        t["steps"] += e["steps"]
        for key in ("compute_s", "step_cpu_s", "allreduce_cpu_s", "sample_cpu_s", "fetch_cpu_s"):
            t[key] = t.get(key, 0) + e.get(key, float("nan"))
        for i, l in enumerate(e.get("mean_blocks", [])):  # weighted by the epoch's steps
            if len(t["blocks"]) <= i: t["blocks"].append({"src": 0, "dst": 0, "edges": 0})
            for k in l: t["blocks"][i][k] += l[k] * e["steps"]
sums = [0.0, 0.0, 0.0]
for name, t in sorted(trainers.items()):
    steps = t["steps"]
    blocks = [{k: v / steps for k, v in l.items()} for l in t["blocks"]]
    per_step = lambda key: 1e3 * t.get(key, float("nan")) / steps
    compute_ms, cpu_ms = per_step("compute_s"), per_step("step_cpu_s")
    compute_cpu_ms = cpu_ms - per_step("allreduce_cpu_s")
    bound = bound_at(blocks)
    sums = [sums[0] + bound, sums[1] + compute_ms, sums[2] + compute_cpu_ms]
    rows = f'{blocks[0]["dst"]:.0f}' if blocks else "—"
    edges = f'{blocks[-1]["edges"]:.0f}' if blocks else "—"
    print(f"| {name} | {rows} | {edges} | {compute_ms:.2f} | {compute_cpu_ms:.2f} | {cpu_ms:.2f} | {bound:.3f} | {share(bound, compute_ms)} | {share(bound, compute_cpu_ms)} | {per_step('sample_cpu_s'):.2f} | {per_step('fetch_cpu_s'):.2f} |")
n = len(trainers)
print(f"| job (mean) | | | {sums[1] / n:.2f} | {sums[2] / n:.2f} | | {sums[0] / n:.3f} | {share(sums[0], sums[1])} | {share(sums[0], sums[2])} | | |")
print()
print("| process | peak RSS (MB) |")
print("|---|---|")
print(f'| {name} | {f["peak_rss_mb"]:.0f} |')
for server, rss in sorted(servers.items()): print(f'| {server} | {rss} |')
PY
}

# The bound of (b)'s step: one step's GEMMs and aggregation traffic at the
# bench's shapes, measured here on the same sampled batches as the step
# alone (bench_sage_step, 1-partition graph, the trainers' thread count).
if want b; then
  echo
  echo "## (b0) one GraphSAGE step alone against its bound (bench_sage_step, ${THREADS:-1} thread)"
  build/bench_sage_step "$dir/p1/rmat.json" --threads "${THREADS:-1}" > "$dir/step.txt"
  grep -v '_ms ' "$dir/step.txt"
fi
# The trainers' bounds at their own shapes (run_job): the same graph and threads.
export BOUND_GRAPH="$dir/p1/rmat.json" BOUND_THREADS="${THREADS:-1}" BENCH_DIR_OF_RUN="$dir"

port=${BENCH_PORT:-34250}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
want b && run_job "(b) distributed GraphSAGE: 2 partitions, 1 server + 1 trainer each, $epochs epochs" \
  "$dir/ip_config.txt" 1 "$dir/sage.log"
# Encryption's cost: the same job with --insecure (authenticated, in the clear;
# the gradient all-reduce on Gloo instead of the secured ring).
want b1 && run_job "(b') the same with --insecure (PLAIN: authenticated, not encrypted; all-reduce on Gloo)" \
  "$dir/ip_config.txt" 1 "$dir/sage_insecure.log" --insecure
# The cache's worth: the same encrypted job pulling every remote row every time.
want b2 && run_job "(b'') the same, encrypted, with --cache-remote-features 0 (every remote row pulled each time, as DistDGL)" \
  "$dir/ip_config.txt" 1 "$dir/sage_nocache.log" "" "--cache-remote-features 0"
# The collectives' own cost: everything encrypted as in (b) but the gradients,
# which go on Gloo's clear pairs (a bench-only hook).
want b3 && run_job "(b''') the same, encrypted, the all-reduce on Gloo in the clear (the secured ring's own cost)" \
  "$dir/ip_config.txt" 1 "$dir/sage_gloo.log" "--extra-envs TESSERA_BENCH_COLLECTIVES=gloo"
# (c) The same partitions and trainers, placed apart: every row and sample
# of the trainers now crosses the network (GraphLearn-for-PyTorch's mode).
printf '127.0.0.1 %d\n127.0.0.1 %d\n127.0.0.1 %d client\n' "$port" $((port + 10)) $((port + 20)) \
  > "$dir/ip_config_server_client.txt"
want c && run_job "(c) server-client: machines 0 and 1 serve the 2 partitions, 2 trainers on client machine 2, $epochs epochs" \
  "$dir/ip_config_server_client.txt" 2 "$dir/sage_server_client.log"

if want w; then
  for h in ${WIDTHS:-16 64 256}; do
    echo
    echo "## (w) hidden $h: the step alone (bench_sage_step --hidden $h, ${THREADS:-1} thread), then the (b) job"
    build/bench_sage_step "$dir/p1/rmat.json" --threads "${THREADS:-1}" --hidden "$h" > "$dir/step_w$h.txt"
    grep -v '_ms ' "$dir/step_w$h.txt" | tail -4
    HIDDEN=$h run_job "(w) the (b) job at hidden $h, $epochs epochs" "$dir/ip_config.txt" 1 "$dir/sage_w$h.log"
  done
  echo
  echo "## (w) the width column"
  python3 - "$dir" ${WIDTHS:-16 64 256} <<'PY'
import json, re, sys
d = sys.argv[1]
print("| hidden | step alone (ms) | its bound (ms) | share of bound | job: mini-batches/s summed | job: epoch (s) | job: compute per mini-batch (ms) |")
print("|---|---|---|---|---|---|---|")
for h in sys.argv[2:]:
    step = {k: float(v) for k, v in (line.split() for line in open(f"{d}/step_w{h}.txt") if re.match(r"\w+_ms \S+$", line))}
    final = None
    for line in open(f"{d}/sage_w{h}.log"):
        m = re.match(r'\[m0/trainer/0\] (\{.*\})$', line.strip())
        if m: final = json.loads(m.group(1))
    s, b = step["step_ms"], step["bound_ms"]
    steps = final["epochs"] * final["steps_per_epoch"]
    print(f'| {h} | {s:.2f} | {b:.2f} | {b / s:.2f} | {final["trainers"] * final["mini_batches_per_s"]:.1f} | '
          f'{final["epoch_time_s"]:.2f} | {1e3 * final["compute_s"] / steps:.2f} |')
PY
fi

if want d; then
  echo
  echo "## (d) the trainers' all-reduce: secured ring against Gloo, against loopback TCP and its bounds"
  build/bench_collectives --rounds 5
fi
