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


def layer_ranks():
    """{part: the index of its step in the diagram}."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        page = f.read()
    diagram = re.search(r"### Layers\n.*?```\n(.*?)```", page, re.S)
    assert diagram, "docs/design.md has no diagram under ### Layers"
    ranks = {}
    for rank, step in enumerate(" ".join(diagram.group(1).split()).split("->")):
        for part in step.strip(" {}").split(","):
            ranks[part.strip()] = rank
    return ranks


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
