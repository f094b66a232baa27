"""DGL's graph services (sample_neighbors, in_subgraph, find_edges, degrees, to_block, edge_subgraph), the edge
loader with negatives and exclusion, and DistDataLoader's collate thread, checked against brute force: in one
process (standalone) and across two machines under `tessera launch`, on a graph of one type and on a typed one."""
import os
import sys

import pytest

from conftest import launch, python_env, run

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
# (script, fixture of its graph, partition config under it, the input its brute force reads)
GRAPHS = {"one type": ("graph_services.py", "small_graph", "small.json", "data"),
          "typed": ("typed_graph_services.py", "mag_like", "mag.json", "raw")}


@pytest.mark.parametrize("graph", GRAPHS)
def test_standalone(graph, request):
    script, fixture, config, data = GRAPHS[graph]
    d = request.getfixturevalue(fixture)
    r = run([sys.executable, os.path.join(SCRIPTS, script), str(d / "p1" / config), str(d / data)],
            env=python_env(), cwd=str(d), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


@pytest.mark.parametrize("graph", GRAPHS)
def test_across_two_machines_two_trainers_each(graph, request, tmp_path):
    script, fixture, config, data = GRAPHS[graph]
    d = request.getfixturevalue(fixture)
    part = str(d / "p2" / config)
    r, _ = launch(str(tmp_path), part, f"python3 {os.path.join(SCRIPTS, script)} {part} {d / data}", trainers=2,
                  timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout
