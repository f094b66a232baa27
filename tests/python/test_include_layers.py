"""Includes go one way, as docs/design.md's "Layers" says: the diagram there (parts joined by `->`, parts of one step
in braces) is read from the page itself, and no file under src/ or include/tessera/ may include a part above its own,
or a part beside it in the same step. A part is the folder right under src/ (or include/tessera/): src/nn/kge is nn.
Also from that section: net depends on base only. Needs no build."""
import glob
import os
import re

import pytest

ROOT = os.path.abspath(os.environ.get("TESSERA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*"(?:tessera/)?([a-z_]+)/', re.M)


def diagram_ranks(section):
    """{part: the index of its step} in the first diagram under docs/design.md's heading `section`."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        page = f.read()
    diagram = re.search(r"### " + re.escape(section) + r"\n.*?```\n(.*?)```", page, re.S)
    assert diagram, f"docs/design.md has no diagram under ### {section}"
    ranks = {}
    for rank, step in enumerate(" ".join(diagram.group(1).split()).split("->")):
        for part in step.strip(" {}").split(","):
            ranks[part.strip()] = rank
    return ranks


def layer_ranks():
    return diagram_ranks("Layers")


def includes():
    """(file relative to the root, its part, the part it includes) for every project include."""
    files = glob.glob(os.path.join(ROOT, "src", "**", "*.*"), recursive=True) + \
        glob.glob(os.path.join(ROOT, "include", "tessera", "**", "*.h"), recursive=True)
    for path in sorted(files):
        rel = os.path.relpath(path, ROOT)
        folders = rel.split(os.sep)
        if len(folders) < (3 if folders[0] == "src" else 4):
            continue  # include/tessera/version.h and the like: no part
        part = folders[1] if folders[0] == "src" else folders[2]
        with open(path, encoding="utf-8", errors="replace") as f:
            for dep in INCLUDE.findall(f.read()):
                yield rel, part, dep


@pytest.fixture(scope="module")
def ranks():
    return layer_ranks()


def test_the_diagram_names_every_part(ranks):
    parts = {part for _, part, _ in includes()}
    assert parts <= set(ranks), f"parts the diagram in docs/design.md does not place: {sorted(parts - set(ranks))}"
    assert {"base", "net", "job", "server", "distributed", "tools"} <= set(ranks)


def test_no_include_runs_up_or_sideways(ranks):
    wrong = sorted(f"{rel} ({part}) includes {dep}/" for rel, part, dep in includes()
                   if dep in ranks and dep != part and ranks[dep] >= ranks[part])
    assert not wrong, "includes against docs/design.md's layers:\n" + "\n".join(wrong)


def test_net_depends_on_base_only():
    wrong = sorted(f"{rel} includes {dep}/" for rel, part, dep in includes() if part == "net" and dep not in ("net", "base"))
    assert not wrong, "\n".join(wrong)


PYTHON_PACKAGE = os.path.join(ROOT, "python", "tessera")


def python_layer_ranks():
    return diagram_ranks("The public API and the Python layer")


def python_imports():
    """(file, its package, the package it imports) for every relative import between the subpackages of tessera."""
    import ast
    packages = {d for d in os.listdir(PYTHON_PACKAGE) if os.path.isfile(os.path.join(PYTHON_PACKAGE, d, "__init__.py"))}
    for path in sorted(glob.glob(os.path.join(PYTHON_PACKAGE, "**", "*.py"), recursive=True)):
        folders = os.path.relpath(path, PYTHON_PACKAGE).split(os.sep)
        if len(folders) < 2:
            continue  # the root's own modules: above every package (it imports them all) and below (its names)
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            here = folders[:-1]
            target = here[:len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            names = target[:1] if target else [a.name for a in node.names]
            for name in names:
                if name in packages and name != folders[0]:
                    yield os.path.relpath(path, ROOT), folders[0], name


def test_python_packages_import_one_way():
    ranks = python_layer_ranks()
    found = list(python_imports())
    packages = {p for _, p, _ in found} | {d for _, _, d in found}
    assert packages <= set(ranks), f"packages the Python diagram does not place: {sorted(packages - set(ranks))}"
    wrong = sorted(f"{rel} ({pkg}) imports tessera.{dep}" for rel, pkg, dep in found if ranks[dep] >= ranks[pkg])
    assert not wrong, "imports against docs/design.md's Python layers:\n" + "\n".join(wrong)
