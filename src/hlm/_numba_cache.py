"""numba's on-disk cache when a compiled kernel uses another file's kernels or constants.

``@njit(cache=True)`` keeps a function's machine code in ``__pycache__`` and reuses it for as
long as the stamp of the function's own source file (mtime and size) is unchanged. That
machine code holds a copy of every compiled function it calls and every global value it
reads, including those defined in other files. numba doesn't check those files, so after
one of them is edited the cache keeps the old copy.

A module whose cached kernels call kernels (or read constants) of other hlm modules
declares those modules once, after its imports and before its first kernel::

    cache_depends_on(__name__, "hlm.svm._psvm.cholesky")

From then on, the stamp that numba saves with each of the module's cached kernels also
covers those modules' files (and, in turn, the modules those declare). When one of them is
edited, numba recompiles the caller, as it does when the caller itself is edited. numba
takes the stamp when the kernel is defined (at import), and so does this module. So a
process that still runs the old code after an edit writes cache entries with the old
stamp, and the next process does not trust them. Nothing is deleted.

How: numba asks its list of cache locators, in order, where to keep a function's cache and
what its source stamp is. For the declared modules only, this module puts subclasses of
numba's first three locators at the front of that list: a user-given ``NUMBA_CACHE_DIR``;
the source tree's ``__pycache__``; and, for a read-only install, the user-wide cache
directory. They keep numba's places and file names and change only the stamp. A declared
file that cannot be read gets the stamp None. Setting ``NUMBA_CACHE_LOCATOR_CLASSES``
replaces numba's list, and this guard with it.

tests/test_numba_cache.py checks two things. First, without the declaration a caller keeps
the stale callee, and with it the caller recompiles. Second, every module declares exactly
the hlm modules whose names its compiled kernels use.
"""

from __future__ import annotations

import importlib
import os
import sys

from numba.core import caching

#: module name -> the modules whose kernels or constants its cached kernels use
_DEPENDS: dict[str, tuple[str, ...]] = {}
#: normalised source file -> module name, for the modules in ``_DEPENDS``
_BY_FILE: dict[str, str] = {}


def cache_depends_on(module: str, *used: str) -> None:
    """Declare that the cached kernels of ``module`` (pass ``__name__``) use kernels or constants of the
    modules ``used`` (dotted names). Call it at the top of ``module``, before its first ``@njit(cache=True)``.

    An unknown module name raises ImportError (a typo should fail loudly, not leave a stale cache).
    """
    source = getattr(sys.modules.get(module), "__file__", None)
    if source is None:
        raise ValueError(f"cache_depends_on: {module!r} is not an imported module with a source file")
    for name in used:
        importlib.import_module(name)  # registers what it declares in turn
    _DEPENDS[module] = tuple(used)
    _BY_FILE[_normalised(source)] = module


def _normalised(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _closure(module: str) -> list[str]:
    """The modules ``module`` declares, and those they declare, and so on (sorted; without ``module``)."""
    seen: set[str] = set()
    todo = list(_DEPENDS.get(module, ()))
    while todo:
        name = todo.pop()
        if name != module and name not in seen:
            seen.add(name)
            todo.extend(_DEPENDS.get(name, ()))
    return sorted(seen)


def _file_stamp(module: str):
    """(mtime, size) of a module's source file, as numba stamps its own; None if it cannot be read."""
    try:
        st = os.stat(sys.modules[module].__file__)
    except (KeyError, AttributeError, TypeError, OSError):
        return None
    return st.st_mtime, st.st_size


class _DependencyStamp:
    """Mixin over one of numba's source-file locators: only for declared modules; the stamp gains
    the stamps of the modules they use."""

    _hlm_dependency_stamp = True

    @classmethod
    def from_function(cls, py_func, py_file):
        if _normalised(py_file) not in _BY_FILE:
            return None  # not declared: numba's own locators take it
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        module = _BY_FILE[_normalised(self._py_file)]
        return super().get_source_stamp(), tuple((name, _file_stamp(name)) for name in _closure(module))


class _UserProvidedLocator(_DependencyStamp, caching.UserProvidedCacheLocator):
    pass


class _InTreeLocator(_DependencyStamp, caching.InTreeCacheLocator):
    pass


class _UserWideLocator(_DependencyStamp, caching.UserWideCacheLocator):
    pass


# numba's order (user-given directory, source tree, user-wide), in front of numba's own; once, also on a reload
caching.CacheImpl._locator_classes = [
    _UserProvidedLocator, _InTreeLocator, _UserWideLocator,
    *(c for c in caching.CacheImpl._locator_classes if not getattr(c, "_hlm_dependency_stamp", False)),
]
