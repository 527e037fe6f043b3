# Thin entry points; the real build is CMake + Ninja (see README.md).
BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# Let ccache share objects between checkouts in different folders (CI clones).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps configure build test unit-test fuzz-test demo dev-cluster dev-cluster-down format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS); \
	fi

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every suite: unit, conformance, simulation, a bounded CEL fuzz run and
# end-to-end (real control plane).
test: build fuzz-test
	@scripts/prepare-e2e.sh
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# libFuzzer run of the CEL engine (parse + check + eval) for 30 s, seeded
# with the cel-spec conformance expressions. Needs clang (installed by deps).
FUZZ_DIR ?= build-fuzz
fuzz-test: deps
	@if [ ! -f $(FUZZ_DIR)/build.ninja ]; then \
	  CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DGANTRY_FUZZ=ON -DGANTRY_BUILD_BENCH=OFF > $(FUZZ_DIR).log 2>&1 || { cat $(FUZZ_DIR).log; exit 1; }; \
	fi
	cmake --build $(FUZZ_DIR) --target cel_fuzz -j $(JOBS)
	ctest --test-dir $(FUZZ_DIR) -L fuzz --output-on-failure

# Unit suites only (no control plane).
unit-test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

demo: build
	$(BUILD_DIR)/bin/gantry simulate --cluster bench/snapshots/ai-small.yaml --seed 1 \
	  --report $(BUILD_DIR)/demo-report.json

dev-cluster:
	@test/e2e/controlplane.sh up

dev-cluster-down:
	@test/e2e/controlplane.sh down

format:
	find src include plugins test bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
