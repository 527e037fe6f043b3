# Thin entry points; the real build is CMake + Ninja (see README.md).
BUILD_DIR ?= build
CLANG_FORMAT ?= $(shell command -v clang-format-16 || command -v clang-format)
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# Let ccache share objects between checkouts in different folders (CI clones).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps configure build test unit-test fuzz-build fuzz-test fuzz sanitize-test sanitize-all asan-test tsan-test \
	soak demo dev-cluster dev-cluster-down format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS); \
	fi

# The module map (docs/architecture.md) is checked before compiling: an
# include that points up the map fails the build with the rule it breaks.
build: configure
	python3 scripts/check-includes.py
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every suite: unit, conformance and simulation (also under ASan + UBSan),
# the threaded suites under TSan, bounded fuzz runs and end-to-end (real
# control plane). See docs/reliability.md for what runs where.
test: build sanitize-test fuzz-test
	@scripts/prepare-e2e.sh
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# Sanitizer builds, each in its own folder (scripts/sanitize.sh): ASan +
# UBSan (clang, -O0; also builds the fuzz targets CI runs) and TSan.
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
# FUZZ_CI_SECONDS (part of `make test`) from the -O0 ASan folder; fuzz runs
# them for FUZZ_SECONDS from $(FUZZ_DIR), an -O1 build of only the fuzz
# targets (several times the executions per second).
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

fuzz-test: deps
	FUZZ_SECONDS=$(FUZZ_CI_SECONDS) scripts/sanitize.sh asan fuzz

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) nice -n 19 scripts/fuzz.sh $(FUZZ_DIR)

# Soak (not part of `make test`): two replicas under churn and faults against
# the real control plane for SOAK_MINUTES; see docs/reliability.md.
SOAK_MINUTES ?= 30
soak: build
	@GANTRY_REQUIRE_E2E=1 scripts/prepare-e2e.sh
	python3 bench/soak/soak.py $(BUILD_DIR)/bin/gantry --minutes $(SOAK_MINUTES) \
	  --report $(BUILD_DIR)/soak-report.json

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
	find src include plugins test bench -name '*.h' -o -name '*.cc' | xargs $(CLANG_FORMAT) -i

clean:
	rm -rf $(BUILD_DIR)

# kube-scheduler's own e2e scheduling tests (e2e.test v1.37.2, kwok as kubelet), once with
# upstream kube-scheduler and once with Gantry, side by side. Long (see docs/conformance.md);
# not part of `make test`.
.PHONY: test-upstream-e2e
test-upstream-e2e: build
	GANTRY_BIN=$${GANTRY_BIN:-$(BUILD_DIR)/bin/gantry} test/upstream-e2e/run.sh
