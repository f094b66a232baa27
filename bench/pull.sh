#!/usr/bin/env bash
# DistTensor pull throughput against the machine's limits (memcpy bandwidth,
# one raw loopback TCP stream), measured in one run of a real 2-machine job
# on localhost: 500,000 nodes in 2 random partitions, 1 server and 1 trainer
# per machine; trainer 0 pulls 100-float rows in batches of 10,000 random
# IDs from its own partition and from the other one. Targets: local pulls
# >= 50% of memcpy, remote pulls >= 50% of raw loopback TCP. The job runs
# twice: with the default CURVE encryption, then with --insecure
# (authenticated, not encrypted), so the cost of encryption shows beside it.
# Usage: bench/pull.sh. Data goes to $BENCH_DIR (default /tmp/tessera-bench-pull).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
dir=${BENCH_DIR:-/tmp/tessera-bench-pull}
rm -rf "$dir" && mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
bin=build/tessera
$bin gen rmat --nodes 500000 --edges 1000000 --feat-dim 4 --out "$dir/data" 2>/dev/null
$bin partition --input "$dir/data" --graph-name g --num-parts 2 --method random --out "$dir/parts" >/dev/null 2>&1
port=${BENCH_PORT:-34150}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"
for mode in "" --insecure; do
  echo "== ${mode:-encrypted (CURVE, the default)}"
  $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/parts/g.json" --num-servers 1 --num-trainers 1 \
    $mode "$PWD/build/bench_pull" 2>/dev/null | sed -n 's/^\[m0\/trainer\/0\] //p'
done
