"""Seeds derived from (seed, dataset, split, fold, ...), the same on every machine.

A hash of the parts, not a shared RNG stream, so results do not depend on
job order or on how many cores Snakemake uses.
"""

from __future__ import annotations

import hashlib


def derive_seed(*parts) -> int:
    """A 32-bit seed from the parts' string forms (stable across runs and platforms)."""
    key = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "little")
