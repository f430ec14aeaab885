"""Test oracles: reference implementations the tests compare production code against.

Importable from the tests as ``oracles.<module>`` (pytest's default "prepend"
import mode puts ``tests/`` on ``sys.path``; scripts outside ``tests/``, e.g.
``benchmarks/bench_psvm.py``, add it themselves).
"""
