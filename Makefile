# The README's two commands, as a thin wrapper over CMake:
#   make run    install what is missing, build, run the default suite on a local coordinator + worker
#   make test   install what is missing, build, run every test this machine can run
# And two slower checks (tests/fuzz/README.md):
#   make fuzz      the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/, each FUZZ_SECONDS on its corpus
#   make sanitize  the unit and e2e tests built with AddressSanitizer + UBSan in build-asan/ (no CUDA)
BUILD_DIR ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_CUDA=AUTO
JOBS ?= $(shell nproc)
# cmake --build runs make under this one; without this every sub-make prints "Entering directory".
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build run test test-gpu bundle clean fuzz sanitize

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/run-local.sh $(BUILD_DIR)

# GPU tests run too when a GPU is visible; on a machine without one they are excluded.
test: build
	@if scripts/have-gpu.sh; then \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2; \
	else \
	  echo "make test: no GPU visible; running every test but those labelled gpu"; \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2 -LE gpu; \
	fi

# On a GPU host a skip is a failure: KBENCH_REQUIRE_GPU=1 makes the GPU tests fail where they would
# skip for want of a GPU, and a test that CTest still reports Skipped fails the target.
test-gpu: build
	@{ KBENCH_REQUIRE_GPU=1 ctest --test-dir $(BUILD_DIR) --output-on-failure -L gpu; echo $$? >$(BUILD_DIR)/test-gpu.rc; } \
	  2>&1 | tee $(BUILD_DIR)/test-gpu.log
	@rc=$$(cat $(BUILD_DIR)/test-gpu.rc); \
	if grep -q '(Skipped)' $(BUILD_DIR)/test-gpu.log; then \
	  echo "make test-gpu: tests skipped on a GPU host (a failure):"; grep '(Skipped)' $(BUILD_DIR)/test-gpu.log; exit 1; \
	fi; exit $$rc

bundle: build
	deploy/bundle.sh $(BUILD_DIR) $(BUILD_DIR)/kbench-bundle
	tar czf $(BUILD_DIR)/kbench-bundle.tgz -C $(BUILD_DIR) kbench-bundle
	@echo "bundle: $(BUILD_DIR)/kbench-bundle.tgz ($$(du -h $(BUILD_DIR)/kbench-bundle.tgz | cut -f1)): copy it to a GPU node, untar, run kbench-bundle/bin/..."

# The compiler cache, when there is one: the sanitized builds share nothing with the main one.
CCACHE_FLAGS := $(if $(shell command -v ccache),-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# libFuzzer needs clang; the instrumentation flags come from KBENCH_FUZZ (CMakeLists.txt). Only the
# fuzz targets and the libraries they link are built. Exits non-zero on any crash, naming the reproducer.
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 30
fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DKBENCH_CUDA=OFF -DKBENCH_FUZZ=ON -DKBENCH_BUILD_TESTS=OFF -DKBENCH_BUILD_WORKER=OFF -DKBENCH_BUILD_SERVER=OFF \
	  $(CCACHE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target kbench_fuzzers
	@tests/fuzz/run.sh $(FUZZ_BUILD_DIR)/fuzz $(FUZZ_SECONDS)

# Every test but the GPU ones, in a Debug build with AddressSanitizer and UBSan; any report fails the
# test. deploy_docker_check is left out: it checks that the images' packages bring every library the
# binaries link, and sanitized binaries link the sanitizer runtimes, which no image installs.
ASAN_BUILD_DIR ?= build-asan
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
sanitize: deps
	@cmake -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Debug -DKBENCH_CUDA=OFF $(CCACHE_FLAGS) \
	  -DCMAKE_C_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS)" >/dev/null
	@cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD_DIR) --output-on-failure -j 2 -LE gpu -E '^deploy_docker_check$$'

clean:
	rm -rf $(BUILD_DIR)
