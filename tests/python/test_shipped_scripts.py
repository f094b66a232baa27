"""What the project ships as scripts rather than compiled code still parses, so none rots unseen: every shell
script under bench/ and scripts/ (bash -n), and every Python file under bench/ and examples/ (compiled). The
benchmarks themselves are too long for the suite; the examples also run in test_launch, test_link_prediction
and test_pyg."""
import glob
import os
import py_compile
import subprocess

import pytest

from conftest import SOURCE_DIR

SHELL = sorted(glob.glob(os.path.join(SOURCE_DIR, "bench", "*.sh")) +
               [p for p in glob.glob(os.path.join(SOURCE_DIR, "scripts", "*"))
                if os.path.isfile(p) and open(p, errors="replace").readline().startswith("#!") and
                "bash" in open(p, errors="replace").readline()])
PYTHON = sorted(glob.glob(os.path.join(SOURCE_DIR, "bench", "*.py")) +
                glob.glob(os.path.join(SOURCE_DIR, "examples", "**", "*.py"), recursive=True))


def test_there_is_something_to_check():
    names = [os.path.basename(p) for p in SHELL + PYTHON]
    assert "link.sh" in names and "pyg_loader.py" in names and "hetero_sage.py" in names, names


@pytest.mark.parametrize("path", SHELL, ids=lambda p: os.path.relpath(p, SOURCE_DIR))
def test_shell_script_parses(path):
    r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("path", PYTHON, ids=lambda p: os.path.relpath(p, SOURCE_DIR))
def test_python_file_compiles(path, tmp_path):
    py_compile.compile(path, cfile=str(tmp_path / "out.pyc"), doraise=True)
