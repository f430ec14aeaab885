"""Provenance of a result: the config hash and the git commit.

Light on imports, so the Snakefile can compute both at parse time and hand
them to jobs through environment variables (``HLM_CONFIG_HASH``,
``HLM_GIT_COMMIT``): environment variables, unlike params, are not rerun
triggers, so a new commit or an unrelated config edit does not rerun jobs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess


def config_hash(config: dict) -> str:
    """First 12 hex digits of the sha256 of ``config`` as canonical JSON (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def git_commit(path: str | os.PathLike = ".") -> str:
    """HEAD commit of the repository at ``path``; "unknown" outside git.

    A ``-dirty`` suffix marks uncommitted changes to tracked files (untracked
    files are ignored). Uses ``--no-optional-locks`` so it never takes the index
    lock of a repository someone is committing to.
    """
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "--no-optional-locks", "-C", str(path), *args],
            capture_output=True, text=True, check=True, timeout=30,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}-dirty" if dirty else commit


def run_tags() -> dict:
    """Tags for tracking, from the environment the Snakefile set (computed here if absent)."""
    return {
        "config_hash": os.environ.get("HLM_CONFIG_HASH", "unknown"),
        "git_commit": os.environ.get("HLM_GIT_COMMIT") or git_commit(os.getcwd()),
    }
