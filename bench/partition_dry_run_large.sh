#!/usr/bin/env bash
# What one machine needs to partition Freebase and ogbn-papers100M with `--method parmetis` on 4, 8 and 16
# machines, from `--dry-run` (the estimate bench/partition_scale.sh checks against measured peaks). The chunked
# inputs have the real counts and shapes but are sparse files (headers only, no bytes on disk): the dry run reads
# metadata.json and each chunk's numpy header, never an edge. Ranks run on this host; the estimate is per rank.
#   Freebase (DGL-KE): 86,054,151 entities, 338,586,276 triples, a relation ID per edge.
#   ogbn-papers100M: 111,059,956 nodes, 1,615,685,872 edges, 128 float features, a label and a train mask.
#   RANKS="4 8 16"; data in $BENCH_DIR (default /tmp/tessera-bench-large), removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
bin=$PWD/build/tessera
dir=${BENCH_DIR:-/tmp/tessera-bench-large}
ranks_list=${RANKS:-"4 8 16"}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
# Debian's python3 has numpy (python3-numpy); a python3 earlier on PATH may not.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)

# Writes DIR/NAME/metadata.json and sparse chunks: NAME NODES EDGES CHUNKS, then node arrays name:dtype:width and
# edge arrays after a lone "--".
"$python" - "$dir" <<'PY'
import json, os, sys
import numpy as np

def sparse(path, dtype, shape):
    np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape).flush()

def pieces(n, k):
    return [(c + 1) * n // k - c * n // k for c in range(k)]

def write(root, name, nodes, edges, chunks, node_arrays, edge_arrays):
    out = os.path.join(root, name)
    os.makedirs(out, exist_ok=True)
    etype = "_N:_E:_N"
    meta = {"graph_name": name, "node_type": ["_N"], "num_nodes_per_chunk": [pieces(nodes, chunks)],
            "edge_type": [etype], "num_edges_per_chunk": [pieces(edges, chunks)],
            "edges": {etype: {"format": {"name": "numpy"}, "data": []}}, "node_data": {"_N": {}},
            "edge_data": {etype: {}}}
    for c, e in enumerate(pieces(edges, chunks)):
        sparse(f"{out}/edges-{c}.npy", np.int64, (e, 2))
        meta["edges"][etype]["data"].append(f"edges-{c}.npy")
    for kind, arrays, counts in (("node_data", node_arrays, pieces(nodes, chunks)),
                                 ("edge_data", edge_arrays, pieces(edges, chunks))):
        for array, dtype, width in arrays:
            files = []
            for c, rows in enumerate(counts):
                sparse(f"{out}/{array}-{c}.npy", dtype, (rows, width) if width > 1 else (rows,))
                files.append(f"{array}-{c}.npy")
            key = "_N" if kind == "node_data" else etype
            meta[kind][key][array] = {"format": {"name": "numpy"}, "data": files}
    with open(f"{out}/metadata.json", "w") as f:
        json.dump(meta, f)

root = sys.argv[1]
write(root, "freebase", 86054151, 338586276, 16, [], [("rel", np.int64, 1)])
write(root, "papers100M", 111059956, 1615685872, 16,
      [("feat", np.float32, 128), ("label", np.float32, 1), ("train_mask", np.uint8, 1)], [])
PY

printf '| graph | nodes | edges | machines | largest rank, estimate (GB) | adjacency | PT-Scotch | partition and data |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for graph in freebase papers100M; do
  for ranks in $ranks_list; do
    "${mpirun[@]}" -np "$ranks" "$bin" partition --input "$dir/$graph" --num-parts "$ranks" --method parmetis \
      --balance-edges --dry-run --out "$dir/out" 2>/dev/null | python3 -c "
import json, re, sys
meta = json.load(open('$dir/$graph/metadata.json'))
nodes, edges = sum(map(sum, meta['num_nodes_per_chunk'])), sum(map(sum, meta['num_edges_per_chunk']))
worst = max((tuple(float(x) for x in re.search(r'peak about ([0-9.]+) GB \(adjacency ([0-9.]+), PT-Scotch ([0-9.]+), '
                                                 r'partition and data ([0-9.]+)', line).groups())
             for line in sys.stdin if 'peak about' in line))
print(f'| $graph | {nodes:,} | {edges:,} | $ranks | {worst[0]:.2f} | {worst[1]:.2f} | {worst[2]:.2f} | {worst[3]:.2f} |')"
  done
done
