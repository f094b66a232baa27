"""The Python package in real jobs: `tessera launch` starts servers and trainers running Python scripts on
loopback machines; the example scripts reach their accuracy on Cora."""
import os
import statistics
import sys

from conftest import EXAMPLES, final_metrics, launch, python_env, run, shared, tessera

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")


def test_distributed_api_across_two_machines(small_graph, tmp_path):
    part = str(small_graph / "p2" / "small.json")
    r, _ = launch(str(tmp_path), part, f"python3 {SCRIPTS}/dist_api.py {part}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout


def test_a_dead_server_is_a_connection_error_not_a_hang(small_graph, tmp_path):
    part = str(small_graph / "p2" / "small.json")
    r, _ = launch(str(tmp_path), part, f"python3 {SCRIPTS}/dead_server.py {part} {tmp_path}/server1.pid",
                  timeout=120)
    assert r.returncode != 0
    assert "CONNECTION_ERROR" in r.stdout, r.stdout + r.stderr
    assert "m1/server/0" in r.stdout.split("CONNECTION_ERROR", 1)[1].splitlines()[0]


def example(name, part, seed, flags, directory):
    r, ip = launch(directory, part, f"python3 {EXAMPLES}/{name} --ip-config ip_config.txt --part-config {part} "
                                    f"--seed {seed} {flags}")
    assert r.returncode == 0, r.stdout + r.stderr
    m = final_metrics(r.stdout)
    assert m is not None, r.stdout
    return m


CORA_SAGE = ("--graph-name cora --num-epochs 60 --fan-out 10,25 --batch-size 32 --lr 0.01 --num-hidden 64 "
             "--dropout 0.6 --weight-decay 5e-4 --aggregator gcn")


def test_graphsage_example_on_cora_two_machines(cora, tmp_path):
    part = str(cora / "p2" / "cora.json")
    accs = [example("graphsage.py", part, s, CORA_SAGE, str(tmp_path))["test_acc"] for s in range(3)]
    print(f"GraphSAGE example, Cora, 2 machines: {accs}, mean {statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.79


def test_gat_example_on_cora_two_machines(cora, tmp_path):
    part = str(cora / "p2" / "cora.json")
    accs = [example("gat.py", part, s, "--graph-name cora", str(tmp_path))["test_acc"] for s in range(3)]
    print(f"GAT example, Cora, 2 machines: {accs}, mean {statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.78


def test_examples_run_standalone_from_plain_python(cora):
    part = str(cora / "p1" / "cora.json")
    r = run([sys.executable, f"{EXAMPLES}/graphsage.py", "--part-config", part, *CORA_SAGE.split()],
            env=python_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    m = final_metrics(r.stdout)
    assert m["trainers"] == 1 and m["test_acc"] >= 0.75


AIFB_RGCN = ("--graph-name aifb --num-epochs 30 --fanout 20,20 --batch-size 16 --lr 0.01 --sparse-lr 0.05 "
             "--use-self-loop --dropout 0.2")


def test_rgcn_example_on_aifb_two_machines(tmp_path):
    """Featureless node types learn DistEmbedding rows on the servers; 5 seeds, as bench/rgcn_accuracy.sh."""
    part = str(tmp_path / "p2" / "aifb.json")
    tessera("partition", "--input", shared("hetero/AIFB"), "--format", "rdf", "--graph-name", "aifb",
            "--num-parts", "2", "--balance-train", "--out", str(tmp_path / "p2"))
    accs = [example("rgcn.py", part, s, AIFB_RGCN, str(tmp_path))["test_acc"] for s in range(5)]
    print(f"R-GCN example, AIFB, 2 machines: {accs}, mean {statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.90
