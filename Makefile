# The README's two commands: `make run` and `make test`.  Both bootstrap first, so a fresh
# Debian 12 machine needs nothing else.
BUILD ?= build
BUILD_CLANG ?= build-clang
BUILD_ASAN ?= build-asan
CTEST_ARGS ?= --output-on-failure -j2

.PHONY: all build run test test-asan test-clang format check-format clean bench-fio

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

clean:
	rm -rf $(BUILD) $(BUILD_CLANG) $(BUILD_ASAN)
