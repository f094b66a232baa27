"""DGL's graph services (sample_neighbors, in_subgraph, find_edges, degrees, to_block, edge_subgraph), the edge
loader with negatives and exclusion, and DistDataLoader's collate thread, checked against brute force: in one
process (standalone) and across two machines under `tessera launch`, on a graph of one type and on a typed one."""
import os
import sys

from conftest import launch, python_env, run

SCRIPT = os.path.join(os.path.dirname(__file__), "scripts", "graph_services.py")
TYPED = os.path.join(os.path.dirname(__file__), "scripts", "typed_graph_services.py")


def test_graph_services_standalone(small_graph):
    part = str(small_graph / "p1" / "small.json")
    r = run([sys.executable, SCRIPT, part, str(small_graph / "data")], env=python_env(), cwd=str(small_graph),
            timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


def test_graph_services_across_two_machines(small_graph, tmp_path):
    part = str(small_graph / "p2" / "small.json")
    r, _ = launch(str(tmp_path), part, f"python3 {SCRIPT} {part} {small_graph / 'data'}", trainers=2, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout


def test_typed_graph_services_standalone(mag_like):
    part = str(mag_like / "p1" / "mag.json")
    r = run([sys.executable, TYPED, part, str(mag_like / "raw")], env=python_env(), cwd=str(mag_like), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


def test_typed_graph_services_across_two_machines(mag_like, tmp_path):
    part = str(mag_like / "p2" / "mag.json")
    r, _ = launch(str(tmp_path), part, f"python3 {TYPED} {part} {mag_like / 'raw'}", trainers=2, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout
