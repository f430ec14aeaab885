# Two commands set everything up on a fresh machine:
#   make run    venv + pinned install + the default pipeline (snakemake --cores $(CORES)); make paper and
#               make scale run the other profiles
#   make test   venv + pinned install + the linter (ruff, rules in pyproject.toml) + the test
#               suite, then its numerical part again on the code paths of a CPU without
#               AVX-512 (see test-no-avx512)
CORES ?= 2
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export PATH := $(abspath $(BIN)):$(PATH)
export MLFLOW_DISABLE_TELEMETRY := true

# numpy, OpenBLAS and numba pick their kernels by CPU (numpy at import). This environment makes an
# AVX-512 machine take the paths of an AVX2 machine: numpy's dispatch without AVX-512 (names the
# CPU lacks are ignored), OpenBLAS's Haswell kernels and numba code generated for Haswell. The last
# two need AVX2, so on a CPU without it they are left alone (it already takes the baseline paths).
NO_AVX512 := NPY_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
ifneq ($(shell grep -m1 -ow avx2 /proc/cpuinfo 2>/dev/null),)
NO_AVX512 += OPENBLAS_CORETYPE=Haswell NUMBA_CPU_NAME=haswell
endif

.PHONY: run paper scale test test-no-avx512 test-cluster install install-cluster lint report ui clean

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $(STAMP)

# the SLURM executor plugin and dask-jobqueue (profiles/slurm; hmac.scheduler on a SLURMCluster)
install-cluster: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev,cluster]'

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

# The other profiles (README, "Profiles"): every experiment of the five papers; Letter and Satellite at scale
paper: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/paper.yaml

scale: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/scale.yaml

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest
	$(MAKE) --no-print-directory test-no-avx512

# The pipeline and HMAC's Dask on a one-node SLURM cluster that the tests start on this machine (root: Debian's
# slurm-wlm, slurmdbd, munge and mariadb-server are installed if missing), then the kill-and-resume tests
# (tests/cluster/, tests/workflow/test_faults.py; 13 minutes measured on 2 cores)
test-cluster: install-cluster
	HLM_CLUSTER_TESTS=1 $(BIN)/python -m pytest tests/cluster tests/workflow/test_faults.py

# The numerical code's tests (not the workflow, scikit-learn's API checks, the pipeline's plumbing or aeon's
# elastic distances, which compare aeon's numba code with itself and would only be compiled again), on the other
# CPU dispatch.
test-no-avx512: $(STAMP)
	$(NO_AVX512) $(BIN)/python -m pytest -m "not workflow and not checks and not plumbing and not aeon"

lint: $(STAMP)
	$(BIN)/snakemake --lint

# MLflow's UI on the run's store; prints the address of the results view
ui: $(STAMP)
	$(BIN)/hlm ui

report: $(STAMP)
	$(BIN)/snakemake --report results/report.html

clean:
	rm -rf results logs mlruns mlflow.db .snakemake
