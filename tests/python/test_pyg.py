"""tessera.pyg: PyG's batches from a Tessera partition, checked against brute force (standalone and on two
machines), PyG's own GraphSAGE trained on Cora across two machines, link prediction ranked as `tessera train
link` ranks it, and Tessera without PyG. PyG 2.3's pure-Python package comes from ../shared/vendor."""
import importlib.util
import os
import statistics
import subprocess
import sys

import pytest

from conftest import (TESSERA, VENDOR, final_metrics, launch, loopback_ip_config, pyg_path, python_env, run, shared,
                      tessera)

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
PYG_EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "pyg")
@pytest.fixture
def pyg(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", pyg_path())


def test_tessera_runs_without_pyg_and_the_loader_says_how_to_get_it():
    if importlib.util.find_spec("torch_geometric") is not None:
        pytest.skip("this Python has PyG installed (the environment route)")
    env = python_env()
    env["PYTHONPATH"] = env["PYTHONPATH"].replace(VENDOR, "")
    code = ("import tessera, tessera.pyg as tpyg\n"
            "try:\n    tpyg.DistNeighborLoader(None, [2])\nexcept ImportError as e:\n    print('IMPORT', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "IMPORT" in r.stdout and "pip install torch_geometric" in r.stdout, r.stdout


def test_batches_match_brute_force_standalone(pyg, small_graph):
    part = str(small_graph / "p1" / "small.json")
    r = run([sys.executable, f"{SCRIPTS}/pyg_loaders.py", part, str(small_graph / "data")], env=python_env(),
            cwd=str(small_graph), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


def test_batches_match_brute_force_across_two_machines(pyg, small_graph, tmp_path):
    part = str(small_graph / "p2" / "small.json")
    r, _ = launch(str(tmp_path), part, f"python3 {SCRIPTS}/pyg_loaders.py {part} {small_graph / 'data'}",
                  trainers=2, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout


def test_server_client_mode_trainers_on_a_machine_without_a_partition(pyg, small_graph, tmp_path):
    """GLT's server-client placement: two machines hold the partitions and run only servers; the third holds
    nothing and runs the trainer, whose every sample and row comes over RPC (init_client joins it)."""
    part = str(small_graph / "p2" / "small.json")
    ip = loopback_ip_config(str(tmp_path), 3)
    with open(ip) as f:
        lines = f.read().split("\n")
    lines[2] += " client"
    with open(ip, "w") as f:
        f.write("\n".join(lines))
    r = run([TESSERA, "launch", "--ip-config", ip, "--part-config", part, "--num-servers", "1", "--num-trainers",
             "1", "--num-samplers", "1", f"python3 {SCRIPTS}/pyg_loaders.py {part} {small_graph / 'data'}"],
            cwd=str(tmp_path), env=python_env(), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m2/trainer/0] OK" in r.stdout and "[m0/trainer" not in r.stdout, r.stdout


def test_typed_batches_are_hetero_data(pyg, mag_like):
    r = run([sys.executable, f"{SCRIPTS}/pyg_hetero.py", str(mag_like / "p1" / "mag.json")], env=python_env(),
            cwd=str(mag_like), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


CORA_SAGE = ("--graph-name cora --num-epochs 60 --fan-out 10,25 --batch-size 32 --lr 0.01 --num-hidden 64 "
             "--dropout 0.6 --weight-decay 5e-4")


def pyg_example(name, part, flags, directory):
    r, _ = launch(directory, part, f"python3 {PYG_EXAMPLES}/{name} --ip-config ip_config.txt --part-config {part} "
                                   f"{flags}")
    assert r.returncode == 0, r.stdout + r.stderr
    return final_metrics(r.stdout)


def test_pyg_graphsage_learns_cora_on_two_machines(pyg, cora, tmp_path):
    part = str(cora / "p2" / "cora.json")
    accs = [pyg_example("graphsage.py", part, f"{CORA_SAGE} --seed {s}", str(tmp_path))["test_acc"] for s in range(2)]
    print(f"PyG GraphSAGE through tessera.pyg, Cora, 2 machines: {accs}, mean {statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.78


CORA_LINK = "--decoder mlp --dropout 0.5 --num-epochs 10 --batch-size 256 --num-hidden 64"


def test_pyg_link_prediction_ranks_as_train_link(pyg, cora_links, tmp_path):
    part = str(cora_links / "p2" / "cora.json")
    r, _ = launch(str(tmp_path), part, f"{TESSERA} train link --part-config {part} {CORA_LINK} --out {tmp_path}/run")
    assert r.returncode == 0, r.stdout + r.stderr
    native = final_metrics(r.stdout)["test_mrr"]
    python = pyg_example("link_prediction.py", part, f"--graph-name cora {CORA_LINK}", str(tmp_path))["test_mrr"]
    print(f"Cora link prediction, 2 machines: tessera train link MRR {native:.4f}, PyG example {python:.4f}")
    assert abs(python - native) <= 0.02


def test_to_hetero_model_learns_aifb_on_two_machines(pyg, tmp_path):
    part = str(tmp_path / "p2" / "aifb.json")
    tessera("partition", "--input", shared("hetero/AIFB"), "--format", "rdf", "--graph-name", "aifb",
            "--num-parts", "2", "--balance-train", "--out", str(tmp_path / "p2"))
    # AIFB's test split is 36 nodes, and a seed moves the result by up to 0.17. Seeds 0-4, measured: Debian's
    # torch 1.13 + PyG 2.3 0.944 0.944 0.917 0.778 0.833; PyPI's torch 2.15 + PyG 2.8 0.889 0.889 0.917 0.917
    # 0.917. Two seeds at 0.90 held on the first route only by the luck of its first two; three seeds at 0.88
    # hold on both (0.935, 0.898).
    accs = [pyg_example("hetero_sage.py", part, f"--graph-name aifb --seed {s}", str(tmp_path))["test_acc"]
            for s in range(3)]
    print(f"PyG to_hetero GraphSAGE through tessera.pyg, AIFB, 2 machines: {accs}, mean {statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.88
