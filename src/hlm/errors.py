"""User-facing errors.

Every error a user can cause (bad config, bad data file) is raised as an
``HLMError`` whose message is one line naming the entry/file/field and the
problem. Entry points (``hlm`` CLI, workflow scripts) print it without a
traceback.
"""


class HLMError(Exception):
    """An error caused by user input; its message is shown as-is, on one line."""


class ConfigError(HLMError):
    """Invalid pipeline configuration or data set registry entry."""


class DataError(HLMError):
    """Invalid data: a matrix or labels file that cannot be used."""
