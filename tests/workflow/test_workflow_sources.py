"""The workflow's own files (Snakefile, rules, job scripts, config): they import the installed hlm
package, name only modules that exist, and refer to nothing outside the repository."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = sorted([ROOT / "Snakefile", *(ROOT / "workflow").rglob("*.smk"), *(ROOT / "workflow").rglob("*.py")])
SCRIPTS = sorted((ROOT / "workflow/scripts").glob("*.py"))


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_nothing_puts_src_on_sys_path():
    """`make` installs the package (pip install -e .); workflow/rules/common.smk checks that it is this project's."""
    pattern = r"sys\.path\.(insert|append)|environ\[[\"']PYTHONPATH|PYTHONPATH[\"'],"
    found = [_rel(p) for p in WORKFLOW if re.search(pattern, p.read_text())]
    assert not found


def _resolves(dotted: str) -> bool:
    """``hlm.a.b.c``: a module, or an attribute of the longest module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _named(text: str) -> set[str]:
    return {m.rstrip(".") for m in re.findall(r"\bhlm(?:\.[A-Za-z_]\w*)+", text)} - {"hlm.yaml"}


@pytest.mark.parametrize("path", WORKFLOW, ids=_rel)
def test_docstrings_and_comments_name_existing_modules(path):
    text = path.read_text()
    if path.suffix == ".py":  # the docstring
        text = text.split('"""')[1] if text.startswith('"""') else ""
    else:  # the comments
        text = "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)
    missing = sorted(name for name in _named(text) if not _resolves(name))
    assert not missing, f"{_rel(path)} names {missing}, which do not exist"


@pytest.mark.parametrize("path", SCRIPTS, ids=_rel)
def test_each_script_names_the_function_it_runs(path):
    """A script's docstring says where its logic is, ``(logic: hlm.pipeline.<module>.<function>)``."""
    logic = re.search(r"\(logic: (hlm\.pipeline\.[\w.]+\.\w+)\)", path.read_text().split('"""')[1])
    assert logic and _resolves(logic.group(1))
    module, function = logic.group(1).rsplit(".", 1)
    assert re.search(rf"^from {re.escape(module)} import .*\b{function}\b", path.read_text(), re.M)


def test_no_references_outside_the_repository():
    """No tracker issue numbers in the workflow, config and library; no paths leaving the project in config."""
    files = [*WORKFLOW, *(ROOT / "config").glob("*.yaml"), *(ROOT / "src").rglob("*.py"),
             *(ROOT / "src").rglob("*.yaml")]
    issues = [_rel(p) for p in files if re.search(r"\bissues? #?\d+", p.read_text(), re.I)]
    assert not issues
    outside = [_rel(p) for p in (ROOT / "config").glob("*.yaml") if re.search(r"\.\./", p.read_text())]
    assert not outside
