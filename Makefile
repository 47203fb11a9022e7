# kq: `make run` and `make test` are the two set-up commands. Both install
# what is missing (Debian 12 packages), configure with Ninja and ccache, and
# build; run starts kqd, test runs every test with ctest.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:7070
DATA_DIR ?= ./data

.PHONY: all deps configure build run test format format-check include-check bench clean

all: build

# test and bench also install Slurm, which bench/slurm/compare.sh runs.
deps:
	@bash scripts/install-deps.sh $(DEPS_FLAGS)

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@echo "kqd on $(LISTEN), data in $(DATA_DIR); the CLI is $(BUILD_DIR)/bin/kq"
	@$(BUILD_DIR)/bin/kqd --listen=$(LISTEN) --data-dir=$(DATA_DIR)

test: DEPS_FLAGS = --with-slurm
test: build
	@bash scripts/check-format.sh
	@python3 scripts/check-includes.py
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

# Builds kq-bench, kqd and kq and runs every benchmark, the Slurm comparison
# last: tables on stdout, appended to bench/RESULTS.md. About 10 minutes on
# 2 cores.
bench: DEPS_FLAGS = --with-slurm
bench: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target kq-bench kqd kq
	@$(BUILD_DIR)/bin/kq-bench all
	@bash -o pipefail -c 'bash bench/slurm/compare.sh --build-dir $(BUILD_DIR) | tee -a bench/RESULTS.md'

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

format-check:
	@bash scripts/check-format.sh

include-check:
	@python3 scripts/check-includes.py

clean:
	@rm -rf $(BUILD_DIR)
