# Thin entry point over CMake presets; see README.md.
PRESET ?= release
JOBS ?= $(shell nproc)

.PHONY: all deps build test demo fuzz format clean bench package

all: build

deps:
	@tools/install-deps

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET) -j $(JOBS)

# Every test (unit, integration, fuzz runs) through ctest; ctest's summary
# line is the last thing printed and its exit code is ours.
test: build
	ctest --preset $(PRESET) -j $(JOBS)

# The Debian packages swarmcast, swarmcast-tracker and swarmfan-dkms in
# build/packages/ (README.md, "Packages"). debhelper builds them from a
# copy of the tree, so this needs no `make build` first; ctest -L package
# builds, inspects and installs them.
package: deps
	packaging/build-debs --out $(CURDIR)/build/packages

# A local swarm on 127.0.0.x: tracker, one seed, four peers, 256 MiB.
demo: build
	SWARMCAST_BUILD=$(CURDIR)/build/$(PRESET) tools/demo

# The swarm benchmark (needs root): every system side by side on an
# emulated LAN; writes docs/bench/swarm/ and its section of
# docs/benchmarks.md. BENCH_ARGS=--quick for the small matrix.
BENCH_ARGS ?=
bench: build
	tools/bench/run-bench --publish --build $(CURDIR)/build/$(PRESET) $(BENCH_ARGS)

format:
	git ls-files '*.cc' '*.h' ':!kmod/*' | xargs clang-format -i

clean:
	rm -rf build
