# The README's two commands, as a thin wrapper over CMake:
#   make run    install what is missing, build, run the default suite on a local coordinator + worker
#   make test   install what is missing, build, run every test this machine can run
BUILD_DIR ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_CUDA=AUTO
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run test test-gpu bundle clean

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

clean:
	rm -rf $(BUILD_DIR)
