# kq: `make run` and `make test` are the two set-up commands. Both install
# what is missing (Debian 12 packages), configure with Ninja and ccache, and
# build; run starts kqd, test runs every test with ctest.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:7070
DATA_DIR ?= ./data

.PHONY: all deps configure build run test format format-check bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@echo "kqd on $(LISTEN), data in $(DATA_DIR); the CLI is $(BUILD_DIR)/bin/kq"
	@$(BUILD_DIR)/bin/kqd --listen=$(LISTEN) --data-dir=$(DATA_DIR)

test: build
	@bash scripts/check-format.sh
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

# Builds kq-bench (and kqd) and runs every benchmark: tables on stdout,
# appended to bench/RESULTS.md. About 12 minutes on 2 cores.
bench: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target kq-bench
	@$(BUILD_DIR)/bin/kq-bench all

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

format-check:
	@bash scripts/check-format.sh

clean:
	@rm -rf $(BUILD_DIR)
