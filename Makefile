# The two commands of the README:
#   make run    set up this machine, build, evaluate a short tour of the examples
#               (examples/quick.json: a few minutes), print a table; then play the recorded
#               agent run (examples/agent/, no model server) and write its pages
#               (scripts/replay-demo.sh)
#   make test   set up, build, run every test this machine can run (GPU tests skip without one)
# make run-all evaluates every bundled example (examples/examples.json: tens of minutes on a CPU).
BUILD ?= build
export KBENCH_BUILD := $(BUILD)

.PHONY: all setup build run run-all test unit e2e gpu-test format clean

all: build

setup build:
	scripts/setup.sh

run: build
	$(BUILD)/kbench suite examples/quick.json
	scripts/replay-demo.sh $(BUILD)

run-all: build
	$(BUILD)/kbench suite examples/examples.json

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 1800

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

e2e: build
	cd $(BUILD) && ctest --output-on-failure -L e2e

gpu-test: build
	cd $(BUILD) && ctest --output-on-failure -L gpu

format:
	clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp')

clean:
	rm -rf $(BUILD)
