# The README's two commands: `make run` and `make test`.  Both bootstrap first, so a fresh
# Debian 12 machine needs nothing else.
BUILD ?= build
BUILD_CLANG ?= build-clang-Release
BUILD_ASAN ?= build-asan
CTEST_ARGS ?= --output-on-failure -j2

.PHONY: all build run test test-asan test-clang format check-format clean bench-fio check-perf \
	check-builds
.PHONY: fuzz test-fuzz test-tsan test-fresh test-loaded test-qemu

all: build

build:
	scripts/bootstrap.sh $(BUILD)

# `make run` answers with llmio's own output: the build's (packages, cmake, the compiler) goes to
# $(BUILD)/make-run.log and is shown only when the build fails.  RUN_ARGS: arguments for llmio
# (default none: `llmio quick`).
RUN_ARGS ?=
BOOTSTRAP ?= scripts/bootstrap.sh
run:
	@mkdir -p $(BUILD)
	@echo "make run: building llmio (log: $(BUILD)/make-run.log)"
	@$(BOOTSTRAP) $(BUILD) >$(BUILD)/make-run.log 2>&1 || { cat $(BUILD)/make-run.log; \
		echo "make run: the build failed (above; log: $(BUILD)/make-run.log)"; exit 1; }
	@$(BUILD)/llmio $(RUN_ARGS)

# gcc build + its tests, clang Release build (-O3: warnings are errors there too, and the
# optimiser sees more), and the whole suite again under AddressSanitizer +
# UndefinedBehaviorSanitizer.  The correctness suite only (ctest -LE perf): it holds on a
# busy machine; the timing thresholds are `make check-perf`'s (docs/testing.md).
test: build check-format
	cd $(BUILD) && ctest $(CTEST_ARGS) -LE perf
	scripts/bootstrap.sh $(BUILD_CLANG) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release
	scripts/bootstrap.sh $(BUILD_ASAN) -DLLMIO_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest $(CTEST_ARGS) -LE perf

# CI's two stages of a day-one machine (docs/testing.md): `make run` on a machine that lacks one
# of the project's packages (scripts/ci_fresh.sh removes a leaf package first: root only), and
# the gcc suite again with two busy loops per core beside it (scripts/ci_loaded.sh).
test-fresh:
	scripts/ci_fresh.sh

test-loaded: build
	scripts/ci_loaded.sh $(BUILD)

# The performance tests (ctest label perf): thresholds against the clock, one at a time.  Each
# skips, naming the 1-minute load average and the CPU count, while the machine is busy (load
# above half the CPUs); first up to PERF_SETTLE seconds for the load of the build to decay.
PERF_SETTLE ?= 60
check-perf: build
	@tests/perf_gate.sh --settle $(PERF_SETTLE)
	@cd $(BUILD) && { ctest --output-on-failure -L perf; rc=$$?; \
		awk '/^[0-9]+\/[0-9]+ Test: /{n=$$3} /^SKIP: /{print "check-perf: " n ": " $$0}' \
			Testing/Temporary/LastTest.log; exit $$rc; }

# NVMe passthrough (uring_cmd) and polled I/O in a QEMU guest with an emulated NVMe controller
# (TCG, about a minute; also in `make test` as the ctest qemu_nvme): docs/engines.md, uring_cmd.
test-qemu: build
	bash tests/qemu/run_guest.sh $(BUILD)/llmio

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

check-format:
	@scripts/check_format.sh

# llmio and fio side by side (bench/vs_fio; BENCH_ARGS=--quick for a short smoke run).
bench-fio: build
	bench/vs_fio $(BENCH_ARGS)

# Fuzzing (docs/fuzzing.md): the libFuzzer harnesses of tests/fuzz, built with clang in their
# own directory.  `make fuzz` runs each for FUZZ_SECONDS and prints a table per harness;
# `make test-fuzz` is the short run: each harness over its seeds plus a few seconds.
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 10

fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD_FUZZ=$(BUILD_FUZZ) scripts/fuzz.sh

test-fuzz:
	@[ -f $(BUILD_FUZZ)/CMakeCache.txt ] || cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang \
		-DLLMIO_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD_FUZZ) --target fuzzers -j$$(nproc)
	cd $(BUILD_FUZZ) && ctest -L fuzz $(CTEST_ARGS)

# ThreadSanitizer (docs/fuzzing.md): the tests that run threads, built with clang
# -fsanitize=thread in their own directory; fails when ThreadSanitizer reports a race.
BUILD_TSAN ?= build-tsan

test-tsan:
	BUILD_TSAN=$(BUILD_TSAN) scripts/tsan.sh

# Every CMake build type with gcc and with clang, -Werror as always: compile only, each in its
# own build-<compiler>-<type> directory (the optimisers of Release and MinSizeRel see
# warnings, such as -Wformat-truncation, that the default RelWithDebInfo build does not).
BUILD_TYPES := Debug Release RelWithDebInfo MinSizeRel
BUILD_COMPILERS := gcc clang
check-builds:
	@failed=""; for cc in $(BUILD_COMPILERS); do for t in $(BUILD_TYPES); do \
		echo "check-builds: $$cc $$t"; \
		scripts/bootstrap.sh build-$$cc-$$t -DCMAKE_C_COMPILER=$$cc -DCMAKE_BUILD_TYPE=$$t \
			|| failed="$$failed $$cc-$$t"; \
	done; done; \
	if [ -n "$$failed" ]; then echo "check-builds: FAILED:$$failed (see above)"; exit 1; fi; \
	echo "check-builds: $(words $(BUILD_COMPILERS)) compilers x $(words $(BUILD_TYPES)) build types built, -Werror"

clean:
	rm -rf $(BUILD) $(BUILD_CLANG) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_TSAN) \
		$(foreach c,$(BUILD_COMPILERS),$(foreach t,$(BUILD_TYPES),build-$(c)-$(t)))
