"""`cmake --install` installs the Python package beside the library, and the installed package imports and runs
on its own (its extension finds libtessera.so inside the prefix, not in the build tree)."""
import glob
import os
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, INSTALLED, run


def test_installed_package_imports_from_the_prefix(tmp_path):
    if INSTALLED:
        pytest.skip("the environment route tests pip's install (scripts/test-environment)")
    prefix = tmp_path / "prefix"
    r = run(["cmake", "--install", BUILD_DIR, "--prefix", str(prefix)])
    assert r.returncode == 0, r.stdout + r.stderr
    package = prefix / "lib" / "python3" / "dist-packages" / "tessera"
    assert glob.glob(str(package / "_C*.so")), os.listdir(package)
    for module in ("distributed/__init__.py", "dataloading/loader.py", "nn/sageconv.py", "dgl/nn/pytorch/__init__.py"):
        assert (package / module).is_file(), module
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(package.parent)}
    code = ("import tessera, tessera.dgl as dgl, torch\n"
            "print(tessera.__file__)\n"
            "import tessera._C as c\n"
            "x = torch.ones(3, 2, requires_grad=True)\n"
            "y = c.csr_aggregate(x, torch.tensor([0, 2]), torch.tensor([0, 2]), 'mean')\n"
            "y.sum().backward()\n"
            "print(tessera.__version__, y.tolist(), x.grad.sum().item())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(str(package))
    assert lines[1].endswith("[[1.0, 1.0]] 2.0")
    # The extension resolves libtessera.so from the prefix.
    ldd = subprocess.run(["ldd", glob.glob(str(package / "_C*.so"))[0]], capture_output=True, text=True).stdout
    line = next(l for l in ldd.splitlines() if "libtessera.so" in l)
    assert str(prefix) in line, line
