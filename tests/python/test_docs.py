"""The documentation keeps up with the code: every relative link in README.md and docs/ resolves (and its #anchor,
when it points into a Markdown file, names a heading there), every `tessera` subcommand registered in the source
has its page (docs/cli/<name>.md; a nested one such as `train sage` its own page docs/cli/train-sage.md or a
heading in its parent's page), and every TESSERA_* environment variable the code reads or sets for a child
process has a row in docs/environment.md.

Needs no build: it reads the source tree only (TESSERA_SOURCE_DIR, else two folders up from this file)."""
import os
import re

import pytest

ROOT = os.path.abspath(os.environ.get("TESSERA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", ".."))


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def markdown_files():
    files = ["README.md"]
    for folder, _, names in os.walk(os.path.join(ROOT, "docs")):
        for name in sorted(names):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(folder, name), ROOT))
    return sorted(files)


# ---------------------------------------------------------------------------------------------------------------
# Markdown: links and headings

FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
# [text](target) and ![alt](target); the target may carry a "title" after a space.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """The lines outside fenced code blocks, with their line numbers."""
    inside = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line.lstrip()):
            inside = not inside
            continue
        if not inside:
            yield number, line


def github_slug(heading):
    """GitHub's anchor for a heading: the text of links kept, lower case, punctuation other than '-' and '_'
    dropped, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file defines (duplicates numbered -1, -2, ... as GitHub does)."""
    seen = {}
    result = set()
    for _, line in prose_lines(read(path)):
        m = HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def links(path):
    """(line, target) of every link in the file's prose (code spans and fenced blocks are not links)."""
    for number, line in prose_lines(read(path)):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            yield number, m.group(1)


def is_external(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None  # http:, https:, mailto:, ...


def test_markdown_files_exist():
    files = markdown_files()
    assert "README.md" in files and len(files) > 1, f"expected README.md and docs/*.md under {ROOT}, found {files}"


@pytest.mark.parametrize("path", markdown_files())
def test_relative_links_resolve(path):
    problems = []
    for number, target in links(path):
        if is_external(target):
            continue
        file_part, _, anchor = target.partition("#")
        if file_part:
            resolved = os.path.normpath(os.path.join(os.path.dirname(os.path.join(ROOT, path)), file_part))
            if not os.path.exists(resolved):
                problems.append(f"{path}:{number}: link [{target}] -> {os.path.relpath(resolved, ROOT)} does not exist")
                continue
        else:
            resolved = os.path.join(ROOT, path)  # a pure #anchor: into this file
        if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if anchor not in anchors(os.path.relpath(resolved, ROOT)):
                problems.append(f"{path}:{number}: link [{target}]: {os.path.relpath(resolved, ROOT)} has no heading "
                                f"with the anchor #{anchor}")
    assert not problems, "broken links:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# Subcommands: parsed from the CLI11 registrations, never listed here

COMMAND_SOURCES = ["apps"] + [os.path.join("src", "tools")]
# `<receiver>.add_subcommand("name"` or `<receiver>->add_subcommand(\n "name"`: the receiver is `app` for a
# top-level command, else the variable (or parameter) holding the parent command, named after it.
ADD_SUBCOMMAND = re.compile(r"\b(\w+)\s*(?:\.|->)\s*add_subcommand\(\s*\"([^\"]+)\"")
# What apps/tessera.cc registers: `tessera::add_<name>_command(app)`.
ADD_COMMAND_CALL = re.compile(r"\badd_(\w+)_command\(\s*app\s*\)")


def source_files():
    for folder in COMMAND_SOURCES:
        for base, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(names):
                if name.endswith((".cc", ".h")):
                    yield os.path.relpath(os.path.join(base, name), ROOT)


def subcommands():
    """{top-level name: set of nested names}, from the add_subcommand calls of apps/ and src/tools/."""
    found = []  # (file, receiver, name)
    for path in source_files():
        for m in ADD_SUBCOMMAND.finditer(read(path)):
            found.append((path, m.group(1), m.group(2)))
    top = {name: set() for _, receiver, name in found if receiver == "app"}
    for path, receiver, name in found:
        if receiver == "app":
            continue
        if receiver in top:
            parent = receiver
        else:
            in_file = [n for p, r, n in found if p == path and r == "app"]
            assert len(in_file) == 1, (f"{path}: cannot tell which command `{receiver}.add_subcommand(\"{name}\")` "
                                       f"belongs to; name the parent's variable after its command")
            parent = in_file[0]
        top[parent].add(name)
    return top


def test_subcommands_are_found():
    commands = subcommands()
    registered = set(ADD_COMMAND_CALL.findall(read(os.path.join("apps", "tessera.cc"))))
    assert registered, "apps/tessera.cc registers no add_<name>_command(app): has main() changed shape?"
    missing = registered - set(commands)
    assert not missing, (f"apps/tessera.cc registers {sorted(missing)} but no add_subcommand(\"<name>\") with "
                         f"receiver `app` was found for them in apps/ or src/tools/: update this test's parser")


def cli_page(name):
    return os.path.join("docs", "cli", name + ".md")


def test_every_subcommand_has_a_page():
    problems = []
    for name, nested in sorted(subcommands().items()):
        page = cli_page(name)
        if not os.path.isfile(os.path.join(ROOT, page)):
            problems.append(f"`tessera {name}` has no page: {page} does not exist")
            continue
        headings = [m.group(2) for _, line in prose_lines(read(page)) for m in [HEADING.match(line)] if m]
        for child in sorted(nested):
            own = cli_page(f"{name}-{child}")
            if os.path.isfile(os.path.join(ROOT, own)):
                continue
            mention = re.compile(rf"\b{re.escape(name)}\s+{re.escape(child)}\b")
            if not any(mention.search(h) for h in headings):
                problems.append(f"`tessera {name} {child}` has no entry: neither {own} exists nor does {page} have "
                                f"a heading mentioning `{name} {child}`")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# Environment variables

# Where the code that runs reads its environment (not tests/, not CMake files: compile definitions such as
# TESSERA_SOURCE_DIR and options such as TESSERA_KERNEL_LEVELS are not environment variables).
ENV_SOURCES = ["src", "include", "apps", "python", "scripts"]
# In C++ and Python a variable's name appears as a whole string literal exactly where it is read or set:
# std::getenv("TESSERA_X"), the job environment's helpers get("TESSERA_X") / require_int("TESSERA_X", ...),
# os.environ.get("TESSERA_X"), and the launcher's {"TESSERA_X", value} / emplace_back("TESSERA_X", ...) for its
# children. Macros (TESSERA_VERSION_MAJOR) are never quoted whole, and messages that mention a variable are
# longer literals, so neither is taken for one.
QUOTED_NAME = re.compile(r"[\"'](TESSERA_[A-Z0-9_]+)[\"']")
# In shell scripts: a reference ($TESSERA_X, ${TESSERA_X...}) or an assignment (TESSERA_X=..., also inside
# --extra-envs "TESSERA_X=1" or after export). Comment lines are skipped.
SHELL_NAME = re.compile(r"\$\{?(TESSERA_[A-Z0-9_]+)|(?<![\w$])(TESSERA_[A-Z0-9_]+)=")


def is_shell_script(path):
    if path.endswith(".sh"):
        return True
    if os.path.splitext(path)[1]:
        return False
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def variables_read():
    """{name: first file:line that reads or sets it}."""
    found = {}
    for folder in ENV_SOURCES:
        for base, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(names):
                path = os.path.join(base, name)
                if name.endswith((".cc", ".h", ".cpp", ".hpp", ".py")):
                    pattern, skip = QUOTED_NAME, None
                elif is_shell_script(path):
                    pattern, skip = SHELL_NAME, "#"
                else:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        if skip and line.lstrip().startswith(skip):
                            continue
                        for m in pattern.finditer(line):
                            var = next(g for g in m.groups() if g)
                            found.setdefault(var, f"{os.path.relpath(path, ROOT)}:{number}")
    return found


def documented_variables():
    """The names in backticks on the table rows of docs/environment.md."""
    names = set()
    for _, line in prose_lines(read(os.path.join("docs", "environment.md"))):
        if line.lstrip().startswith("|"):
            names.update(re.findall(r"`(TESSERA_[A-Z0-9_]+)`", line))
    return names


def test_variables_are_found():
    # The launcher's job environment is always there; finding none of it means the extraction broke.
    found = variables_read()
    assert {"TESSERA_ROLE", "TESSERA_KEY_FILE"} <= set(found), f"extraction found only {sorted(found)}"


def test_every_variable_has_a_row():
    documented = documented_variables()
    missing = {var: where for var, where in variables_read().items() if var not in documented}
    assert not missing, "docs/environment.md has no table row for:\n" + "\n".join(
        f"  {var} (read or set at {where})" for var, where in sorted(missing.items()))


# ---------------------------------------------------------------------------------------------------------------
# design.md's "Changing the model": every file it names holds the name given beside it, so the checklist moves
# with the code it lists.

def test_changing_the_model_names_real_places():
    page = read(os.path.join("docs", "design.md"))
    section = re.search(r"#### Changing the model\n(.*?)\n#", page, re.S)
    assert section, "docs/design.md has no #### Changing the model section"
    rows = re.findall(r"^\|[^|\n]*\| `([^`]+)` \| `([^`]+)` \|$", section.group(1), re.M)
    assert len(rows) >= 10, f"expected the checklist's rows of file and name, found {rows}"
    missing = [f"{path}: no such file" for path, _ in rows if not os.path.isfile(os.path.join(ROOT, path))]
    missing += [f"{path} does not contain {name}" for path, name in rows
                if os.path.isfile(os.path.join(ROOT, path)) and name not in read(path)]
    assert not missing, "docs/design.md's Changing the model is out of date:\n" + "\n".join(missing)
