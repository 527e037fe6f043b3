# Thin entry points; the real build is CMake + Ninja (see README.md).
BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# Let ccache share objects between checkouts in different folders (CI clones).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps configure build test unit-test fuzz-build fuzz-test fuzz sanitize-test sanitize-all asan-test tsan-test \
	demo dev-cluster dev-cluster-down format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS); \
	fi

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every suite: unit, conformance and simulation (also under ASan + UBSan),
# the threaded suites under TSan, bounded fuzz runs and end-to-end (real
# control plane). See docs/reliability.md for what runs where.
test: build fuzz-test sanitize-test
	@scripts/prepare-e2e.sh
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# Sanitizer builds, each in its own folder (scripts/sanitize.sh): the subset
# `make test` runs, and every suite (outside CI, slower).
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan
export ASAN_DIR TSAN_DIR JOBS
sanitize-test: deps
	scripts/sanitize.sh asan ci
	scripts/sanitize.sh tsan ci

sanitize-all: deps
	scripts/sanitize.sh asan all
	scripts/sanitize.sh tsan all

asan-test: deps
	scripts/sanitize.sh asan all

tsan-test: deps
	scripts/sanitize.sh tsan all

# libFuzzer targets (test/fuzz, clang, ASan + UBSan): fuzz-test runs each for
# FUZZ_CI_SECONDS (part of `make test`), fuzz for FUZZ_SECONDS. Only the fuzz
# targets are built in $(FUZZ_DIR).
FUZZ_DIR ?= build-fuzz
FUZZ_CI_SECONDS ?= 10
FUZZ_SECONDS ?= 600
fuzz-build: deps
	@if [ ! -f $(FUZZ_DIR)/build.ninja ]; then \
	  CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
	    -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" -DCMAKE_C_FLAGS_SANITIZE="-O1 -g1" \
	    -DGANTRY_FUZZ=ON -DGANTRY_BUILD_BENCH=OFF > $(FUZZ_DIR).log 2>&1 || { cat $(FUZZ_DIR).log; exit 1; }; \
	fi
	cmake --build $(FUZZ_DIR) --target gantry_fuzzers -j $(JOBS)

fuzz-test: fuzz-build
	FUZZ_SECONDS=$(FUZZ_CI_SECONDS) ctest --test-dir $(FUZZ_DIR) -L fuzz --output-on-failure

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) nice -n 19 scripts/fuzz.sh $(FUZZ_DIR)

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
