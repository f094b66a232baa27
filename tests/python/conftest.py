"""Fixtures of the Python package's tests: the tessera binary, partitions made by it, loopback ip_configs and a
runner for launched jobs. Everything is real: `tessera partition`, servers and trainers on 127.0.0.1."""
import importlib.util
import json
import os
import random
import shutil
import socket
import subprocess
import sys

import pytest

SOURCE_DIR = os.environ.get("TESSERA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
# TESSERA_INSTALLED=1: the package pip installed into the running interpreter's environment, and that
# environment's `tessera` (scripts/test-environment); otherwise the build tree's.
INSTALLED = os.environ.get("TESSERA_INSTALLED") == "1"
BUILD_DIR = os.environ.get("TESSERA_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
TESSERA = os.environ.get("TESSERA_BINARY") or (
    shutil.which("tessera", path=os.path.dirname(sys.executable)) if INSTALLED else os.path.join(BUILD_DIR, "tessera"))
SHARED = os.path.normpath(os.path.join(SOURCE_DIR, "..", "shared", "data"))
VENDOR = os.path.normpath(os.path.join(SOURCE_DIR, "..", "shared", "vendor"))
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "python")


def pyg_path():
    """What PYTHONPATH needs for PyG: nothing where the interpreter has its own (PyPI's, in an environment),
    else the vendored pure-Python package in ../shared/vendor; skips the test when neither is there."""
    if importlib.util.find_spec("torch_geometric") is not None:
        return ""
    if not os.path.isdir(os.path.join(VENDOR, "torch_geometric")):
        pytest.skip("needs PyG: torch_geometric in this Python, or ../shared/vendor/torch_geometric")
    return VENDOR


def shared(path):
    full = os.path.join(SHARED, path)
    if not os.path.exists(full):
        pytest.skip(f"needs ../shared/data/{path} (the shared datasets are absent)")
    return full


def run(args, timeout=600, cwd=None, env=None):
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    return r


def tessera(*args, **kwargs):
    r = run([TESSERA, *args], **kwargs)
    assert r.returncode == 0, f"tessera {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"
    return r


def _ephemeral_low():
    """The lowest port the kernel hands out on its own (port 0 binds, outgoing connections' source ports)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free_block(n):
    # Drawn below the ephemeral range: a port the kernel picked there could be taken, between this check and the
    # server's listen, by any process's outgoing connection (a job's clients, a test running beside this one).
    low, high = 10000, max(11000, _ephemeral_low())
    rng = random.Random(os.getpid() ^ int.from_bytes(os.urandom(4), "little"))
    for _ in range(200):
        base = rng.randrange(low, high - n)
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no block of free ports")


def loopback_ip_config(directory, machines, spacing=4):
    """`machines` machines on 127.0.0.1, each with room for one server and torch.distributed's port."""
    base = _free_block(machines * spacing)
    path = os.path.join(directory, "ip_config.txt")
    with open(path, "w") as f:
        for m in range(machines):
            f.write(f"127.0.0.1 {base + m * spacing}\n")
    return path


def python_env():
    env = dict(os.environ)
    package = [] if INSTALLED else [os.path.join(BUILD_DIR, "python")]
    env["PYTHONPATH"] = os.pathsep.join([*package, EXAMPLES, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # The launched command says `python3`: the interpreter running these tests.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def launch(directory, part_config, command, machines=2, trainers=1, samplers=1, timeout=600, extra=(), env=None):
    """`tessera launch` of `command`; `env`: variables added to the job's environment (every process gets it)."""
    ip = loopback_ip_config(directory, machines)
    args = [TESSERA, "launch", "--ip-config", ip, "--part-config", part_config, "--num-servers", "1",
            "--num-trainers", str(trainers), "--num-samplers", str(samplers), *extra, command]
    job_env = python_env()
    job_env.update(env or {})
    return run(args, timeout=timeout, cwd=directory, env=job_env), ip


def final_metrics(out):
    """The last JSON line trainer 0 printed (after the launcher's prefix)."""
    for line in reversed(out.splitlines()):
        text = line.split("] ", 1)[1] if line.startswith("[") else line
        if text.startswith("{"):
            return json.loads(text)
    return None


def add_edge_weights(dataset):
    """Edge data "w" for weighted sampling: 0 on every third edge, 1 or 2 on the others."""
    import numpy as np
    with open(dataset / "meta.json") as f:
        meta = json.load(f)
    count = np.load(dataset / meta["edge_types"][0]["edges"], mmap_mode="r").shape[-1]
    np.save(dataset / "edges" / "0_w.npy", (np.arange(count) % 3).astype(np.float32))
    meta["edge_types"][0]["data"] = {"w": "edges/0_w.npy"}
    with open(dataset / "meta.json", "w") as f:
        json.dump(meta, f)


@pytest.fixture(scope="session")
def small_graph(tmp_path_factory):
    """A generated products-like graph (no download), partitioned into 1 and 2."""
    d = tmp_path_factory.mktemp("small")
    tessera("gen", "products-like", "--nodes", "3000", "--edges", "30000", "--classes", "5", "--seed", "1",
            "--out", str(d / "data"))
    add_edge_weights(d / "data")
    for k in (1, 2):
        tessera("partition", "--input", str(d / "data"), "--graph-name", "small", "--num-parts", str(k),
                "--out", str(d / f"p{k}"))
    return d


@pytest.fixture(scope="session")
def mag_like(tmp_path_factory):
    """A generated mag-like graph in OGB's raw layout (4 node types, 8 relations with the reverses), partitioned
    into 1 and 2."""
    d = tmp_path_factory.mktemp("mag_like")
    tessera("gen", "mag-like", "--nodes", "3000", "--edges", "20000", "--seed", "1", "--layout", "ogb", "--out",
            str(d / "raw"))
    for k in (1, 2):
        tessera("partition", "--input", str(d / "raw"), "--format", "ogb-mag", "--add-reverse", "--graph-name",
                "mag", "--num-parts", str(k), "--out", str(d / f"p{k}"))
    return d


@pytest.fixture(scope="session")
def cora_links(tmp_path_factory):
    """Cora in 1 and 2 partitions with 5% of its node pairs held out for validation and 10% for test."""
    src = shared("node/cora")
    d = tmp_path_factory.mktemp("cora_links")
    for k in (1, 2):
        tessera("partition", "--input", src, "--graph-name", "cora", "--num-parts", str(k), "--valid-edges", "0.05",
                "--test-edges", "0.1", "--out", str(d / f"p{k}"))
    return d


@pytest.fixture(scope="session")
def cora(tmp_path_factory):
    src = shared("node/cora")
    d = tmp_path_factory.mktemp("cora")
    tessera("partition", "--input", src, "--graph-name", "cora", "--num-parts", "1", "--out", str(d / "p1"))
    tessera("partition", "--input", src, "--graph-name", "cora", "--num-parts", "2", "--balance-train",
            "--balance-edges", "--out", str(d / "p2"))
    return d


@pytest.fixture(scope="session")
def cora_dgl_names(tmp_path_factory):
    """Cora in 2 partitions with the node data named as DGL's example scripts read it (features, labels)."""
    src = shared("node/cora")
    d = tmp_path_factory.mktemp("cora_dgl")
    tessera("partition", "--input", src, "--graph-name", "cora", "--num-parts", "2", "--balance-train",
            "--balance-edges", "--rename", "feat=features,label=labels", "--out", str(d / "p2"))
    tessera("partition", "--input", src, "--graph-name", "cora", "--num-parts", "1", "--rename",
            "feat=features,label=labels", "--out", str(d / "p1"))
    return d
