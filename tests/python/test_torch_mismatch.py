"""A Tessera built for one torch and imported under another refuses with an ImportError that names both versions
and the command that rebuilds it, before its extension is loaded (which would fail on undefined symbols, or
crash). Runs where both routes are built: the build tree's package (Debian's libtorch 1.13) and the one pip
installed into the running environment (scripts/test-environment sets TESSERA_INSTALLED=1)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, INSTALLED

DEBIAN_PYTHON = "/usr/bin/python3"
IMPORT = "import tessera"


def imported(python, package_dir, tmp_path):
    """`import tessera` by `python`, with only that tessera package on its path (not its environment's torch)."""
    path = tmp_path / "only-tessera"
    path.mkdir()
    os.symlink(package_dir, path / "tessera")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(path)}
    return subprocess.run([python, "-c", IMPORT], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)


def versions(python):
    code = "import torch; print(torch.__version__)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120).stdout.strip()


def expect_refusal(r, built, running):
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:"), r.stderr
    assert f"built for torch {built}" in last and f"runs torch {running}" in last and "rebuild" in last, last


@pytest.fixture
def both_routes():
    if not INSTALLED:
        pytest.skip("needs the package pip installed into this environment (scripts/test-environment)")
    debian_package = os.path.join(BUILD_DIR, "python", "tessera")
    if not os.path.exists(os.path.join(debian_package, "_build_info.py")) or not shutil.which(DEBIAN_PYTHON):
        pytest.skip("needs the Debian route's build (scripts/build)")
    import tessera
    return debian_package, os.path.dirname(tessera.__file__)


def test_the_debian_build_refuses_the_environments_torch(both_routes, tmp_path):
    debian_package, _ = both_routes
    import tessera._build_info as mine
    built = open(os.path.join(debian_package, "_build_info.py")).read().split('TORCH_VERSION = "')[1].split('"')[0]
    assert built != mine.TORCH_VERSION
    expect_refusal(imported(sys.executable, debian_package, tmp_path), built, versions(sys.executable))


def test_the_environments_build_refuses_debians_torch(both_routes, tmp_path):
    _, installed_package = both_routes
    import tessera._build_info as mine
    expect_refusal(imported(DEBIAN_PYTHON, installed_package, tmp_path), mine.TORCH_VERSION, versions(DEBIAN_PYTHON))
