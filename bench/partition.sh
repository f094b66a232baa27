#!/usr/bin/env bash
# Generation and partitioning at benchmark scale. Prints a table: generation
# time, partition time split into phases (read, METIS, reshuffle, write),
# edge cut and peak RSS of each process.
#   (a) RMAT, 1,000,000 nodes / 20,000,000 directed edges, symmetric, 100
#       features, into 2 METIS parts (DGL 2.0.0: 39.7 s, METIS 11.2 s, 5.0 GB,
#       edge cut 19.9%; target <= 20 s, <= 2.5 GB, cut no worse)
#   (b) ogbn-products scale (2,449,029 nodes, 61,859,140 edges, 100 features,
#       47 classes) into 4 METIS parts with --balance-train --balance-edges
# Usage: bench/partition.sh [a|b|all] (default all). Data goes to $BENCH_DIR
# (default /tmp/tessera-bench) and is removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
which=${1:-all}
dir=${BENCH_DIR:-/tmp/tessera-bench}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
bin=build/tessera
rows=()

gen() {  # name, args...
  local name=$1; shift
  local log="$dir/$name.gen.log"
  local start end
  start=$(date +%s.%N)
  $bin gen "$@" --out "$dir/$name" 2>"$log"
  end=$(date +%s.%N)
  gen_s=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  gen_rss=$(sed -n 's/.*peak RSS \([0-9.]*\) GB.*/\1/p' "$log")
}

part() {  # label, input, parts, extra flags...
  local label=$1 input=$2 parts=$3; shift 3
  local j
  j=$($bin partition --input "$dir/$input" --graph-name g --num-parts "$parts" --method metis "$@" --json \
        --out "$dir/$input-parts" 2>/dev/null)
  jget() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p" <<<"$j"; }
  rows+=("$(awk -v l="$label" -v g="$gen_s" -v gr="$gen_rss" -v r="$(jget read_s)" -v a="$(jget assign_s)" \
      -v s="$(jget reshuffle_s)" -v w="$(jget write_s)" -v t="$(jget total_s)" -v m="$(jget peak_rss_bytes)" \
      -v c="$(jget edge_cut_ratio)" 'BEGIN { printf "%-38s %7.1f %7s %7.2f %7.2f %9.2f %7.2f %8.2f %8.2f %8.2f%%\n",
      l, g, gr, r, a, s, w, t, m / 1e9, 100 * c }')")
  rm -rf "$dir/$input-parts"
}

if [[ $which == a || $which == all ]]; then
  gen rmat rmat --nodes 1000000 --edges 20000000 --symmetric --feat-dim 100 --classes 47 --seed 0
  part "(a) rmat 1M/20M, 2 parts" rmat 2
  part "(a) rmat 1M/20M, 2 parts, train" rmat 2 --balance-train
  part "(a) rmat 1M/20M, 2 parts, train+edges" rmat 2 --balance-train --balance-edges
  rm -rf "${dir:?}/rmat"
fi
if [[ $which == b || $which == all ]]; then
  gen products products-like --nodes 2449029 --edges 61859140 --feat-dim 100 --classes 47 --seed 0
  part "(b) products-scale, 4 parts, balanced" products 4 --balance-train --balance-edges
  rm -rf "${dir:?}/products"
fi

printf '%-38s %7s %7s %7s %7s %9s %7s %8s %8s %9s\n' workload gen_s gen_GB read_s metis_s reshuffle write_s total_s peak_GB edge_cut
printf '%s\n' "${rows[@]}"
