"""numba's on-disk cache across files (hlm._numba_cache).

A cached kernel's machine code holds copies of the other files' kernels it calls and of the
constants it reads, but numba checks only the kernel's own file. First, on tiny modules in a
temporary folder: without a declaration, a caller keeps a stale copy of an edited callee; with
one, it recompiles. Then the sources: every hlm module whose compiled kernels use names from
another hlm module declares exactly those modules.
"""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hlm

SRC = Path(hlm.__file__).resolve().parent

# ---------------------------------------------------------------- the hazard and its fix, in fresh processes
CALLEE = """
from numba import njit

OFFSET = {offset}


@njit(cache=True)
def value():
    return {value}
"""
PLAIN = """
from numba import njit

from callee import OFFSET, value


@njit(cache=True)
def total():
    return value() + OFFSET
"""
GUARDED = """
from numba import njit

from callee import OFFSET, value
from hlm._numba_cache import cache_depends_on

cache_depends_on(__name__, "callee")


@njit(cache=True)
def total():
    return value() + OFFSET
"""
# declares only ``guarded``: reaches ``callee`` through guarded's declaration
OUTER = """
from numba import njit

from guarded import total
from hlm._numba_cache import cache_depends_on

cache_depends_on(__name__, "guarded")


@njit(cache=True)
def outer():
    return 100 + total()
"""
REPORT = """
import callee, guarded, outer, plain
values = [callee.value(), plain.total(), guarded.total(), outer.outer()]
hits = [sum(f.stats.cache_hits.values()) for f in (plain.total, guarded.total, outer.outer)]
print(*values, *hits)
"""


def _write_callee(folder: Path, value: int, offset: int, mtime: float) -> None:
    path = folder / "callee.py"
    path.write_text(CALLEE.format(value=value, offset=offset))
    os.utime(path, (mtime, mtime))  # distinct stamps even where the clock is coarse


def _run(folder: Path, cache_dir: Path | None) -> tuple[list[int], list[int]]:
    """(callee.value(), plain.total(), guarded.total(), outer.outer()) and the cache hits of the last three."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["PYTHONPATH"] = str(folder)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", REPORT], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    numbers = [int(x) for x in out.stdout.split()]
    return numbers[:4], numbers[4:]


@pytest.mark.parametrize("where", ["__pycache__", "NUMBA_CACHE_DIR"])
def test_a_declared_caller_recompiles_after_its_callee_is_edited_and_an_undeclared_one_does_not(tmp_path, where):
    folder = tmp_path / "modules"
    folder.mkdir()
    cache_dir = tmp_path / "numba-cache" if where == "NUMBA_CACHE_DIR" else None
    for name, text in (("plain", PLAIN), ("guarded", GUARDED), ("outer", OUTER)):
        (folder / f"{name}.py").write_text(textwrap.dedent(text))
    _write_callee(folder, value=1, offset=10, mtime=1_000_000_000)

    values, hits = _run(folder, cache_dir)
    assert values == [1, 11, 11, 111] and hits == [0, 0, 0]  # compiled, and cached
    cached = list((cache_dir or folder / "__pycache__").rglob("*.nbi"))
    assert {p.name.split(".")[0] for p in cached} >= {"plain", "guarded", "outer"}

    values, hits = _run(folder, cache_dir)
    assert values == [1, 11, 11, 111] and hits == [1, 1, 1]  # the declaration keeps the cache in use

    _write_callee(folder, value=2, offset=20, mtime=1_000_000_100)  # edit the callee's kernel and constant
    values, hits = _run(folder, cache_dir)
    assert values[0] == 2  # numba sees the edit of the callee's own file
    assert values[1] == 11 and hits[0] == 1  # the hazard: the undeclared caller still runs the old callee
    assert values[2:] == [22, 122] and hits[1:] == [0, 0]  # declared (directly or through guarded): recompiled

    values, hits = _run(folder, cache_dir)
    assert values[2:] == [22, 122] and hits[1:] == [1, 1]  # and cached again


# ---------------------------------------------------------------- every module declares what its kernels use
def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_njit(decorator: ast.expr) -> bool:
    """``@njit``, ``@njit(...)``, ``@numba.njit(...)``, ``@jit(...)`` and the like."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("njit", "jit", "generated_jit", "vectorize", "guvectorize", "cfunc")


def _is_cached(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and any(
        kw.arg == "cache" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in decorator.keywords
    )


def _hlm_imports(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound by imports of hlm modules -> the hlm module they come from (a name that
    is itself a module maps to that module)."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hlm":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = (SRC.parent / sub.replace(".", "/")).with_suffix(".py").is_file() or (
                    SRC.parent / sub.replace(".", "/") / "__init__.py").is_file()
                names[alias.asname or alias.name] = sub if is_module else node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hlm" and alias.asname:
                    names[alias.asname] = alias.name
    return names


def _declared(tree: ast.Module) -> tuple[set[str], int | None]:
    """The modules of the module's ``cache_depends_on(__name__, ...)`` call and its line (None: no call)."""
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "cache_depends_on":
            assert isinstance(call.args[0], ast.Name) and call.args[0].id == "__name__"
            return {a.value for a in call.args[1:]}, node.lineno
    return set(), None


def _kernel_dependencies() -> dict[str, tuple[set[str], set[str], bool]]:
    """Per module with cached kernels: (the hlm modules whose names its compiled functions use, the
    modules it declares, whether the declaration comes before its first compiled function)."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef) and any(map(_is_njit, n.decorator_list))]
        if not any(_is_cached(d) for k in kernels for d in k.decorator_list):
            continue
        imported = _hlm_imports(tree)
        used = {imported[n.id] for k in kernels for n in ast.walk(k) if isinstance(n, ast.Name) and n.id in imported}
        declared, line = _declared(tree)
        early = line is None or line < min(min(d.lineno for d in k.decorator_list) for k in kernels)
        found[_module_name(path)] = (used, declared, early)
    return found


def test_every_module_declares_the_modules_whose_kernels_and_constants_its_cached_kernels_use():
    found = _kernel_dependencies()
    assert "hlm.svm._psvm.solver" in found and "hlm.local_sda._kernels.core" in found  # the scan works
    for module, (used, declared, early) in found.items():
        assert used == declared, (f"{module}: its compiled kernels use names of {sorted(used)}; declare exactly "
                                  f"those with hlm._numba_cache.cache_depends_on(__name__, ...)")
        assert early, f"{module}: call cache_depends_on before the first compiled function"
    assert found["hlm.svm._psvm.solver"][1] == {"hlm.svm._psvm.cholesky"}
    assert found["hlm.local_sda._kernels.pairwise"][1] == {"hlm.local_sda._kernels.core",
                                                                  "hlm.local_sda._kernels.local"}


def test_the_static_check_sees_a_missing_declaration(tmp_path, monkeypatch):
    """The scan above on a module that uses another's kernel without declaring it: reported."""
    package = tmp_path / "hlm"
    (package / "models").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models" / "__init__.py").write_text("")
    (package / "models" / "callee.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef f():\n"
                                                 "    return 1\n")
    (package / "models" / "caller.py").write_text("from numba import njit\n\nfrom hlm.models.callee import f\n\n\n"
                                                 "@njit(cache=True)\ndef g():\n    return f()\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", package)
    found = _kernel_dependencies()
    assert found["hlm.models.caller"] == ({"hlm.models.callee"}, set(), True)
    assert found["hlm.models.callee"] == (set(), set(), True)
