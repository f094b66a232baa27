"""Every DGL-style script the suite and examples/ hold, as users run them: standalone and as 2 machines, on a small
graph of each kind it supports (homogeneous with features; heterogeneous with typed features and featureless
types), with the options users set and the remote-row cache on and off (TESSERA_CACHE_REMOTE_FEATURES=0 turns it
off without touching a script). Each run must exit 0 and its loss must fall. Generated graphs only: no download,
so the matrix runs wherever the suite does."""
import os
import sys

import pytest

from conftest import EXAMPLES, final_metrics, launch, pyg_path, python_env, run, tessera

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
PYG_EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "pyg")
CACHE_OFF = {"TESSERA_CACHE_REMOTE_FEATURES": "0"}


@pytest.fixture(scope="module")
def homogeneous(small_graph):
    """The small products-like graph with its node data named as DGL's GraphSAGE scripts read it."""
    d = small_graph / "dgl_names"
    for k in (1, 2):
        if not (d / f"p{k}").exists():
            tessera("partition", "--input", str(small_graph / "data"), "--graph-name", "small", "--num-parts", str(k),
                    "--rename", "feat=features,label=labels", "--out", str(d / f"p{k}"))
    return d


def launched(tmp_path, part, command, env=None):
    r, _ = launch(str(tmp_path), part, command, timeout=300, env=env)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return r.stdout


def standalone(args):
    r = run([sys.executable, *args], env=python_env(), timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return r.stdout


def losses_fall(out):
    """The epochs' losses from the final JSON line, or every 'Loss x' a script logged."""
    m = final_metrics(out)
    losses = m.get("losses") if m else None
    if not losses:
        losses = [float(line.split("Loss ", 1)[1].split()[0]) for line in out.splitlines() if "| Loss " in line]
    assert len(losses) >= 2, out[-3000:]
    assert losses[-1] < losses[0], f"the loss did not fall: {losses}"
    return m


ENTITY = "--graph-name mag --fanout 25,25 --batch-size 128 --n-hidden 16 --n-epochs 4 --lr 0.01"
HETERO_RUNS = {  # name -> (flags, environment)
    "seeds-options-cache-on": ("--sparse-embedding --use-self-loop --layer-norm", {}),
    "dgl-sparse-low-mem-cache-off": ("--dgl-sparse --low-mem --use-self-loop", CACHE_OFF),
    "dense-embeddings": ("--layer-norm", {}),
}


@pytest.mark.parametrize("name", sorted(HETERO_RUNS))
def test_entity_classification_as_two_machines(mag_like, tmp_path, name):
    flags, env = HETERO_RUNS[name]
    part = str(mag_like / "p2" / "mag.json")
    out = launched(tmp_path, part, f"python3 {SCRIPTS}/entity_classify.py {ENTITY} --ip-config ip_config.txt "
                                   f"--conf-path {part} {flags}", env)
    m = losses_fall(out)
    assert 0 <= m["test_acc"] <= 1


@pytest.mark.parametrize("flags", ["--sparse-embedding --use-self-loop --layer-norm", "--dgl-sparse --low-mem"])
def test_entity_classification_standalone(mag_like, flags):
    part = str(mag_like / "p1" / "mag.json")
    losses_fall(standalone([f"{SCRIPTS}/entity_classify.py", *ENTITY.split(), "--conf-path", part, "--standalone",
                            *flags.split()]))


def test_typed_reads_through_the_cache_are_the_servers_rows(mag_like, tmp_path):
    part = str(mag_like / "p2" / "mag.json")
    out = launched(tmp_path, part, f"python3 {SCRIPTS}/typed_cache_reads.py {part}")
    assert "[m0/trainer/0] OK" in out, out[-3000:]


@pytest.mark.parametrize("env", [{}, CACHE_OFF], ids=["cache-on", "cache-off"])
def test_rgcn_example_on_typed_features(mag_like, tmp_path, env):
    part = str(mag_like / "p2" / "mag.json")
    losses_fall(launched(tmp_path, part, f"python3 {EXAMPLES}/rgcn.py --graph-name mag --ip-config ip_config.txt "
                                         f"--part-config {part} --num-epochs 4 --fanout 10,10 --batch-size 64 "
                                         f"--use-self-loop --layer-norm --log-every 1", env))


@pytest.mark.parametrize("env", [{}, CACHE_OFF], ids=["cache-on", "cache-off"])
def test_guides_sampler_code_as_two_machines(homogeneous, tmp_path, env):
    part = str(homogeneous / "p2" / "small.json")
    losses_fall(launched(tmp_path, part, f"python3 {SCRIPTS}/guide_sage.py --graph-name small --part-config {part} "
                                         f"--num-epochs 3 --batch-size 256", env))


UNSUPERVISED = "--graph_name small --num_epochs 3 --batch_size 512 --num_hidden 16"


def test_unsupervised_sage_as_two_machines(homogeneous, tmp_path):
    part = str(homogeneous / "p2" / "small.json")
    losses_fall(launched(tmp_path, part, f"python3 {SCRIPTS}/unsupervised_sage.py {UNSUPERVISED} --part_config {part}",
                         CACHE_OFF))


def test_unsupervised_sage_standalone(homogeneous):
    part = str(homogeneous / "p1" / "small.json")
    losses_fall(standalone([f"{SCRIPTS}/unsupervised_sage.py", *UNSUPERVISED.split(), "--part_config", part,
                            "--standalone"]))


GRAPHSAGE = "--graph-name small --num-epochs 3 --batch-size 128 --log-every 1"


@pytest.mark.parametrize("env", [{}, CACHE_OFF], ids=["cache-on", "cache-off"])
def test_graphsage_example_as_two_machines(small_graph, tmp_path, env):
    part = str(small_graph / "p2" / "small.json")
    losses_fall(launched(tmp_path, part, f"python3 {EXAMPLES}/graphsage.py {GRAPHSAGE} --ip-config ip_config.txt "
                                         f"--part-config {part}", env))


def test_graphsage_example_standalone(small_graph):
    part = str(small_graph / "p1" / "small.json")
    losses_fall(standalone([f"{EXAMPLES}/graphsage.py", *GRAPHSAGE.split(), "--part-config", part]))


@pytest.mark.parametrize("example,graph", [("graphsage.py", "small"), ("hetero_sage.py", "mag")])
def test_pyg_examples_as_two_machines(small_graph, mag_like, tmp_path, example, graph):
    extra = pyg_path()
    part = str((small_graph if graph == "small" else mag_like) / "p2" / f"{graph}.json")
    losses_fall(launched(tmp_path, part, f"python3 {PYG_EXAMPLES}/{example} --graph-name {graph} --ip-config "
                                         f"ip_config.txt --part-config {part} --num-epochs 3 --batch-size 128 "
                                         f"--log-every 1", {"PYTHONPATH": os.pathsep.join(
                                             p for p in (python_env()["PYTHONPATH"], extra) if p)}))
