"""User-facing errors.

Every error a user can cause (bad config, bad data file) is raised as an
``HLMError`` whose message is one line naming the entry/file/field and the
problem. Entry points (``hlm`` CLI, workflow scripts) print it without a
traceback, through :func:`print_error`, the one place that writes that line.
"""

import sys

#: exit status of every command and pipeline job stopped by bad input (as argparse's usage errors)
EXIT_BAD_INPUT = 2


class HLMError(Exception):
    """An error caused by user input; its message is shown as-is, on one line."""


class ConfigError(HLMError):
    """Invalid pipeline configuration or data set registry entry."""


class DataError(HLMError, ValueError):
    """Invalid data: a matrix or labels file that cannot be used.

    Also a ``ValueError``, which scikit-learn raises for bad input to ``fit``/``predict``,
    so that library users catching ``ValueError`` catch it.
    """


def error_line(error: BaseException | str) -> str:
    """``hlm: error: <first line of the message>`` (the exception's type name if it has none)."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    return f"hlm: error: {first}"


def print_error(error: BaseException | str) -> int:
    """Write :func:`error_line` to stderr; return the exit status for bad input."""
    print(error_line(error), file=sys.stderr)
    return EXIT_BAD_INPUT
