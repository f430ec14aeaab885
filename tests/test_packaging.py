"""The pins agree everywhere: pyproject.toml, requirements.lock, envs/hlm.yaml."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    return dict(line.strip().split("==", 1) for line in lines if "==" in line and not line.startswith("#"))


def test_pins_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = _pins(project["dependencies"])
    lock = _pins((ROOT / "requirements.lock").read_text().splitlines())
    env = yaml.safe_load((ROOT / "envs/hlm.yaml").read_text())
    conda_pip = _pins(next(d for d in env["dependencies"] if isinstance(d, dict))["pip"])
    norm = lambda d: {k.lower(): v for k, v in d.items()}  # noqa: E731
    direct, lock, conda_pip = norm(direct), norm(lock), norm(conda_pip)
    assert all(lock[name] == version for name, version in direct.items()), "pyproject vs requirements.lock"
    # the conda env carries every pin the jobs need (snakemake itself runs outside it)
    assert {k: v for k, v in direct.items() if k != "snakemake"} == conda_pip
    assert "python=3.11" in env["dependencies"]
