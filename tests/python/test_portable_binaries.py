"""Portability, read from the binaries: outside the kernels' glibc-hwcaps builds (cmake/kernels.cmake), nothing a build
or a pip install holds uses an instruction beyond x86-64-v2, so it runs on any x86-64 CPU its torch runs on; the
hwcaps builds do use their level's (they are what the CPU's best gets). Reads the Debian route's build tree, or, with
TESSERA_INSTALLED=1, the package pip installed (what a wheel holds)."""
import glob
import importlib.util
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD_DIR, INSTALLED

# Mnemonics of x86-64-v3 and v4 (AVX, AVX2, FMA, F16C and AVX-512 are all VEX/EVEX-encoded: "v..."; BMI1/2,
# LZCNT, MOVBE are not). tzcnt is absent on purpose: GCC's generic code emits `rep bsf`, which objdump names tzcnt
# and which older CPUs run as bsf.
BEYOND_V2 = re.compile(r"^(v(?!err|erw|m)\w+|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|"
                       r"lzcnt|movbe)$")
V4_REGISTER = re.compile(r"%zmm\d|%k[1-7]\b")


def binaries():
    """(portable files, {level: kernel build}) of the route under test."""
    if INSTALLED:
        package = importlib.util.find_spec("tessera").submodule_search_locations[0]
        lib = os.path.join(package, "lib")
        portable = [*glob.glob(os.path.join(lib, "*.so*")), *glob.glob(os.path.join(package, "_C*.so")),
                    os.path.join(package, "bin", "tessera")]
    else:
        lib = BUILD_DIR
        portable = [os.path.join(BUILD_DIR, "tessera"), os.path.join(BUILD_DIR, "libtessera.so"),
                    os.path.join(BUILD_DIR, "libtessera_kernels.so"),
                    *glob.glob(os.path.join(BUILD_DIR, "python", "tessera", "_C*.so"))]
    portable = sorted({p for p in portable if os.path.isfile(p)})
    levels = {os.path.basename(os.path.dirname(p)): p
              for p in glob.glob(os.path.join(lib, "glibc-hwcaps", "*", "libtessera_kernels.so"))}
    return portable, levels


def mnemonics(path):
    """Each instruction of the file's code as (mnemonic, operands)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--no-addresses", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split(None, 1)
        if line.startswith(("\t", " ")) and parts:
            yield parts[0], parts[1] if len(parts) > 1 else ""


@pytest.fixture(scope="module")
def route():
    if shutil.which("objdump") is None:
        pytest.skip("needs objdump (binutils)")
    portable, levels = binaries()
    assert any("libtessera_kernels" in p for p in portable), f"no baseline kernels among {portable}"
    return portable, levels


def test_nothing_outside_the_kernel_levels_needs_more_than_x86_64_v2(route):
    portable, _ = route
    for path in portable:
        found = sorted({m for m, _ in mnemonics(path) if BEYOND_V2.match(m)})
        assert not found, f"{path} uses instructions beyond x86-64-v2: {found[:20]}"


def test_each_kernel_level_uses_its_instructions(route):
    # The check above can fail: the v3 build has AVX2/FMA code and the v4 build AVX-512 registers.
    _, levels = route
    assert set(levels) == {"x86-64-v3", "x86-64-v4"}, levels
    v3 = list(mnemonics(levels["x86-64-v3"]))
    assert any(m.startswith("vfmadd") for m, _ in v3) and not any(V4_REGISTER.search(o) for _, o in v3)
    assert any(V4_REGISTER.search(o) for _, o in mnemonics(levels["x86-64-v4"]))
