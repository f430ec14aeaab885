# Two commands set everything up on a fresh machine:
#   make run    venv + pinned install + the default pipeline (snakemake --cores $(CORES))
#   make test   venv + pinned install + the test suite
CORES ?= 2
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export PATH := $(abspath $(BIN)):$(PATH)
export MLFLOW_DISABLE_TELEMETRY := true

.PHONY: run test install lint report clean

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/snakemake --lint

report: $(STAMP)
	$(BIN)/snakemake --report results/report.html

clean:
	rm -rf results logs mlruns mlflow.db .snakemake
