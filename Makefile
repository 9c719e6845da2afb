# trainvitals front door. `make` builds the release CLI at build/release/trainvitals.
BUILD_DIR := build/release
CLI := $(BUILD_DIR)/trainvitals
# The project environment (scripts/deps.sh): Debian's python3 with its PyTorch,
# plus what the tests, the demo and the benchmarks need. Every Python thing runs
# through it, and the _core module is built for it.
VENV := build/venv
PYTHON := $(VENV)/bin/python
FUZZ_SECONDS ?= 180
# TEST_JOBS=3 runs the integration test files side by side (pytest-xdist, each
# file's tests in order in one process): they mostly wait on the training
# processes they watch (28 min serially, 11 min with 3 here). Some findings tests
# measure timing against the loop's own clock and can miss under that load, so
# the default, and CI, run them one after another.
TEST_JOBS ?= 1
PYTEST_JOBS := $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)
SOAK_SECONDS ?= 3600

.PHONY: all build deps test test-slow test-fleet test-helm test-multinode test-install demo bench lint format format-check fuzz sanitize soak docs clean

all: build

# Configures on first use, and afresh when the build directory was configured
# for another Python than the project environment's, or for other headers (a
# new Debian python3 behind the same path): FindPython keeps the first
# interpreter's headers in the cache otherwise.
build: $(PYTHON)
	@inc=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'); \
	  grep -qx 'Python_EXECUTABLE:FILEPATH=$(abspath $(PYTHON))' $(BUILD_DIR)/CMakeCache.txt 2>/dev/null \
	  && grep -qx "_Python_INCLUDE_DIR:INTERNAL=$$inc" $(BUILD_DIR)/CMakeCache.txt \
	  || cmake --preset release --fresh -DPython_EXECUTABLE:FILEPATH=$(abspath $(PYTHON)) >/dev/null
	cmake --build $(BUILD_DIR)

$(PYTHON):
	@scripts/deps.sh --venv

deps:
	@scripts/deps.sh

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j2
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q $(PYTEST_JOBS) --durations=25 -m "not install and not slow and not fleet and not helm and not multinode" tests/integration

# The slowest end-to-end tier: checks `make test` makes for one framework, made
# for the others too (tests marked `slow`).
test-slow: deps build
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q $(PYTEST_JOBS) -m slow tests/integration

# A fleet on this machine, as root: three nodes as network and PID namespaces,
# each with its own `trainvitals serve`, and one Prometheus with the shipped
# rules answering the fleet's questions (tests marked `fleet`).
test-fleet: deps build
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q -m fleet tests/integration

# One DDP job on two nodes of this machine, as root: network, PID and UTS
# namespaces joined by a bridge, torchrun over gloo, each node under its own
# `trainvitals run`, then `analyze` of both run directories as one job (tests
# marked `multinode`).
test-multinode: deps build
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q -m multinode tests/integration

# The Helm chart (deploy/helm/trainvitals) with the real Helm: lint, renders
# checked against the Kubernetes and Prometheus Operator types, the rules with
# promtool (tests marked `helm`). scripts/helm.sh builds Helm from its Go module
# into build/tools/bin first: minutes the first time, then a no-op.
test-helm: deps build
	@scripts/helm.sh
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q -m helm tests/integration

# The installation tier: `pip install .` into a fresh environment and `make demo`
# with only Debian on PATH (tests marked `install`; .ci/run runs it once).
test-install: deps build
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q -m install tests/integration

demo: deps build
	@scripts/demo.sh

# scripts/bench.sh, then `analyze` of a 24-hour job of 4 nodes x 8 GPUs,
# whose run directories (7.6 GB) are written once into build/bench-data/.
bench: build
	@scripts/deps.sh --bench
	@scripts/bench.sh
	@echo
	@echo "== trainvitals analyze --json of a 24-hour job, 4 nodes x 8 GPUs (target <= 5 s)"
	@$(PYTHON) bench/analyze_joined.py $(CLI)

# clang-format (fails on any difference) and a build with clang-tidy on every file.
lint: format-check
	@[ -f build/tidy/build.ninja ] || cmake --preset tidy >/dev/null
	cmake --build build/tidy

format-check:
	git ls-files --cached --others --exclude-standard '*.cc' '*.h' | xargs clang-format --dry-run --Werror

# libFuzzer targets of tests/fuzz, FUZZ_SECONDS each (clang, build/asan), one
# per core side by side (FUZZ_JOBS=N to choose).
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# Unit tests and the threaded integration tests under ASan+UBSan and TSan.
sanitize: build
	PYTHON=$(PYTHON) scripts/sanitize.sh

# SOAK_SECONDS at 100 Hz on a churning tree of 64 processes with scrapes and markers.
soak: build
	SOAK_SECONDS=$(SOAK_SECONDS) TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) scripts/soak.py

format:
	git ls-files --cached --others --exclude-standard '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build

docs: build
	scripts/gen-docs.sh $(CLI)
