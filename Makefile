# trainvitals front door. `make` builds the release CLI at build/release/trainvitals.
BUILD_DIR := build/release
CLI := $(BUILD_DIR)/trainvitals
PYTHON ?= python3

.PHONY: all build deps test demo bench lint format docs clean

all: build

build:
	@[ -f $(BUILD_DIR)/build.ninja ] || cmake --preset release >/dev/null
	cmake --build $(BUILD_DIR)

deps:
	@scripts/deps.sh

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j2
	TRAINVITALS_BUILD=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest -q tests/integration

demo: deps build
	@scripts/demo.sh

bench: build
	@scripts/deps.sh --bench
	@scripts/bench.sh

lint:
	@[ -f build/tidy/build.ninja ] || cmake --preset tidy >/dev/null
	cmake --build build/tidy

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build

docs: build
	scripts/gen-docs.sh $(CLI)
