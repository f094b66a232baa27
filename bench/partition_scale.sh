#!/usr/bin/env bash
# Distributed partitioning at growing scale: for each graph size, single-machine METIS on the chunked input,
# then `mpirun -np R tessera partition --method parmetis` for R = 2, 3, 4 on the same chunks (12 per edge
# type, so every rank reads the same number), all on this host. Prints one row per run: time split, edge cut,
# and the peak RSS of every rank beside --dry-run's estimate. The ratios are to single-machine METIS into as many
# parts, on the same input in the same run: the edge cut, and the largest rank's peak RSS over METIS's peak.
#   GRAPH=rmat (default) or products-like; SIZES="200000:4000000 500000:10000000 1000000:20000000" (nodes:edges)
#   RANKS="2 3 4"; FLAGS="--balance-edges" (default; FLAGS="" balances nodes only), given to both partitioners;
#   data in $BENCH_DIR (default /tmp/tessera-bench-scale), removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
bin=$PWD/build/tessera
dir=${BENCH_DIR:-/tmp/tessera-bench-scale}
graph=${GRAPH:-rmat}
sizes=${SIZES:-"200000:4000000 500000:10000000 1000000:20000000"}
ranks_list=${RANKS:-"2 3 4"}
# ${FLAGS-...}: an unset FLAGS means --balance-edges, an empty one no flag at all.
read -r -a flags <<< "${FLAGS---balance-edges}"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)

printf 'partitioner flags: %s\n\n' "${flags[*]:-none (nodes balanced)}"
printf '| graph | nodes | edges | method | ranks | total s | assign s | edge cut | cut / METIS | peak RSS per rank (GB) | largest rank / METIS | dry-run estimate (GB) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for size in $sizes; do
  nodes=${size%%:*}
  edges=${size##*:}
  in="$dir/$graph-$nodes"
  $bin gen "$graph" --nodes "$nodes" --edges "$edges" --feat-dim 100 --seed 0 --layout chunked --num-chunks 12 \
    --out "$in" >/dev/null 2>&1
  for ranks in $ranks_list; do
    metis=$($bin partition --input "$in" --num-parts "$ranks" "${flags[@]}" --json --out "$dir/metis" 2>/dev/null)
    echo "$metis" | python3 -c "
import json, sys
r = json.load(sys.stdin)
print(f\"| $graph | $nodes | $edges | metis, 1 process | 1 | {r['total_s']:.1f} | {r['assign_s']:.1f} | \"
      f\"{100 * r['edge_cut_ratio']:.2f}% | 1 | {r['peak_rss_bytes'] / 1e9:.2f} | 1 | |\")"
    rm -rf "$dir/metis"
    estimate=$("${mpirun[@]}" -np "$ranks" "$bin" partition --input "$in" --num-parts "$ranks" --method parmetis \
      "${flags[@]}" --dry-run --out "$dir/p" 2>/dev/null | sed -n 's/.*peak about \([0-9.]*\) GB.*/\1/p' | sort -n | tail -1)
    r=$("${mpirun[@]}" -np "$ranks" "$bin" partition --input "$in" --num-parts "$ranks" --method parmetis \
      "${flags[@]}" --json --out "$dir/p" 2>/dev/null | tail -1)
    METIS="$metis" python3 -c "
import json, os, sys
r = json.loads(sys.argv[1])
m = json.loads(os.environ['METIS'])
rss = ', '.join(f'{b / 1e9:.2f}' for b in r['peak_rss_bytes'])
print(f\"| $graph | $nodes | $edges | parmetis | $ranks | {r['total_s']:.1f} | {r['assign_s']:.1f} | \"
      f\"{100 * r['edge_cut_ratio']:.2f}% | {r['edge_cut_ratio'] / m['edge_cut_ratio']:.2f} | {rss} | \"
      f\"{max(r['peak_rss_bytes']) / m['peak_rss_bytes']:.2f} | $estimate |\")" "$r"
    rm -rf "$dir/p"
  done
  rm -rf "$in"
done
