# Sourced by bench/sage_accuracy.sh and bench/rgcn_accuracy.sh: runs one
# trainer as 2 machines on loopback or standalone and prints its test
# accuracy. Needs: bin (the tessera binary), dir (with p2/ and p1/
# partitions of $name), name, flags, trainer (sage | rgcn).

port=${BENCH_PORT:-34350}
printf '127.0.0.1 %d\n127.0.0.1 %d\n' "$port" $((port + 10)) > "$dir/ip_config.txt"

# The test accuracy of a run's final JSON line (launcher prefix stripped).
acc() { tail -n 1 | sed 's/^\[[^]]*\] //' | python3 -c 'import json,sys; print(json.load(sys.stdin)["test_acc"])'; }

# run_trainer distributed|standalone SEED [EXTRA FLAGS...]
run_trainer() {
  local mode=$1 seed=$2 out="$dir/$1-$2"
  shift 2
  if [ "$mode" = distributed ]; then
    $bin launch --ip-config "$dir/ip_config.txt" --part-config "$dir/p2/$name.json" --num-servers 1 \
      --num-trainers 1 --num-samplers 1 "$bin train $trainer --graph-name $name $flags --seed $seed --out $out $*" \
      2>/dev/null | acc
  else
    $bin train "$trainer" --standalone --part-config "$dir/p1/$name.json" $flags --seed "$seed" --out "$out" "$@" \
      2>/dev/null | acc
  fi
}
