# The README's two commands: `make run` and `make test`.  Both bootstrap first, so a fresh
# Debian 12 machine needs nothing else.
BUILD ?= build
BUILD_CLANG ?= build-clang
BUILD_ASAN ?= build-asan
CTEST_ARGS ?= --output-on-failure -j2

.PHONY: all build run test test-asan test-clang format check-format clean bench-fio
.PHONY: fuzz test-fuzz test-tsan

all: build

build:
	scripts/bootstrap.sh $(BUILD)

run: build
	$(BUILD)/llmio

# gcc build + its tests, clang build (warnings are errors there too), and the whole suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
test: build check-format
	cd $(BUILD) && ctest $(CTEST_ARGS)
	scripts/bootstrap.sh $(BUILD_CLANG) -DCMAKE_C_COMPILER=clang
	scripts/bootstrap.sh $(BUILD_ASAN) -DLLMIO_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest $(CTEST_ARGS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

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

clean:
	rm -rf $(BUILD) $(BUILD_CLANG) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_TSAN)
