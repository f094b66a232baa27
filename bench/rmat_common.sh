# Sourced by bench/sage.sh and bench/python_sage.sh: builds, then makes (once) the RMAT graph both measure in
# $dir: 1,000,000 nodes, 20,000,000 directed edges (symmetric), 100 float features, 47 classes, 10% training
# nodes, as rmat/ and partitioned into 2 with METIS as p2/. Sets bin (the tessera binary: $TESSERA_BIN, for
# another tree's, or this build's).
scripts/build >/dev/null
bin=${TESSERA_BIN:-$PWD/build/tessera}
mkdir -p "$dir"
if [ ! -f "$dir/rmat/meta.json" ]; then
  $bin gen rmat --nodes 1000000 --edges 20000000 --symmetric --feat-dim 100 --classes 47 --train-frac 0.1 \
    --seed 0 --out "$dir/rmat" >/dev/null 2>&1
fi
[ -f "$dir/p2/rmat.json" ] || $bin partition --input "$dir/rmat" --graph-name rmat --num-parts 2 --balance-train \
  --out "$dir/p2" >/dev/null 2>&1
