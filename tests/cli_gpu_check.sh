#!/bin/bash
# cli_gpu_check.sh: the GPU check end to end in its dry mode, on the fake CUDA libraries:
#  - scripts/gpu_pack.sh gathers the binaries, the fakes, the runtime libraries (libaio.so.1
#    itself) and the script into one folder under 64 MiB that runs with its own lib/;
#  - the packed bench/gpu_check.sh --fake under a short deadline: it builds nothing, writes its
#    own cufile.json, runs every step under a timeout (a step that hangs is cut), and leaves
#    exactly one archive and one summary under $OUT;
#  - without a binary it says how to get one instead of building;
#  - scripts/bootstrap.sh refuses to run apt-get without a network, saying so.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$(dirname "$LLMIO")" && pwd)
[ -f "$BUILD/tests/fake_cuda/libcufile.so.0" ] && [ -x "$BUILD/tests/test_gpu" ] ||
	skip_all "no fake CUDA libraries or test_gpu in $BUILD"
clean=(env -u LLMIO_CUDART -u LLMIO_CUFILE -u CUFILE_ENV_PATH_JSON -u LLMIO_FAKE_CUDA
	-u LD_LIBRARY_PATH)

echo "== scripts/gpu_pack.sh"
P=$T/pack
run "${clean[@]}" "$SRC/scripts/gpu_pack.sh" --build "$BUILD" --out "$P" --no-build
check "gpu_pack.sh: exit 0 (exit $RC: $(tail -c 300 "$T/stderr"))" test "$RC" -eq 0
check "pack: llmio, test_gpu, the fakes, the script" test -x "$P/llmio" -a -x "$P/tests/test_gpu" \
	-a -f "$P/tests/fake_cuda/libcufile.so.0" -a -x "$P/gpu_check.sh"
check "pack: libaio.so.1 itself is carried" test -f "$P/lib/libaio.so.1"
check "pack: under 64 MiB" test "$(du -sb "$P" | cut -f1)" -lt $((64 * 1024 * 1024))
check "pack: every library llmio needs besides libc is in lib/" \
	test "$(ldd "$P/llmio" | awk '$3 ~ /^\// { print $1 }' |
		grep -vE '^(ld-linux|libc\.so|libm\.so|libpthread|libdl|librt|libgcc_s|libresolv)' |
		while read -r l; do [ -f "$P/lib/$l" ] || echo "$l"; done)" = ""

echo "== the packed gpu_check.sh --fake, with a step that hangs"
O=$T/out
run "${clean[@]}" OUT="$O" GPU_CHECK_TEST_HOOK="sleep 600" "$P/gpu_check.sh" --fake \
	--dir "$T/scratch" --size 8m --runtime 0.1 --deadline 150 --quick
check "gpu_check.sh --fake: exit 0" test "$RC" -eq 0
check "\$OUT holds exactly the archive and the summary" \
	test "$(cd "$O" && ls | tr '\n' ' ')" = "gpu-check.tar.gz summary.txt "
mkdir -p "$T/x"
check "the archive unpacks" tar xzf "$O/gpu-check.tar.gz" -C "$T/x"
X=$T/x/work
check "the hanging step was cut by its timeout" grep -q '^conformance-hook TIMEOUT' "$X/steps.txt"
check "facts recorded" grep -q '^effective cufile.json' "$X/facts.txt"
check "its own cufile.json: parallel I/O and compat mode allowed" \
	grep -q '"parallel_io": true' "$X/cufile.json"
check "engines listed" grep -q '^gds .*available' "$X/engines.txt"
check "conformance: test_gpu passed on the fakes" grep -q '^conformance-test_gpu ok' "$X/steps.txt"
for m in sync batch async; do
	check "conformance: gds mode=$m wrote and read" grep -q "^conform-gds-mode-$m-read ok" "$X/steps.txt"
done
check "conformance: cuda-bounce wrote and read" \
	grep -q '^conform-cuda-bounce-host-io_uring-read ok' "$X/steps.txt"
for e in io_uring cuda-bounce gds-mode-batch gds-mode-async-register-1; do
	check "the headline run of $e has a result" test -s "$X/runs/$e-read-1m-qd32-nj1.json"
	check "summary: a line for $e" grep -qE "^$e-read-1m-qd32-nj1 +[0-9.]+ " "$O/summary.txt"
done
check "summary: the PCIe copy ceiling" grep -qE '^pcie-h2d-4m-qd8 .* copy [0-9.]+ GB/s' "$O/summary.txt"
check "summary: compat mode proved per file (allow_compat_mode=false refused)" \
	grep -q '^# cuFile per file: compat (POSIX) mode' "$O/summary.txt"
check "summary: the steps, each with its outcome" grep -q '^# layout ok' "$O/summary.txt"
check "scratch files removed" test -z "$(ls "$T/scratch")"

echo "== no binary: it builds nothing and says how to get one"
mkdir -p "$T/bare"
cp "$SRC/bench/gpu_check.sh" "$T/bare/"
run "${clean[@]}" OUT="$T/out2" "$T/bare/gpu_check.sh" --fake --dir "$T/scratch2" --deadline 30
check "no binary: exit 1" test "$RC" -eq 1
check "no binary: says so, and what to carry" grep -q 'scripts/gpu_pack.sh.*builds nothing' "$T/stdout"
check "no binary: the summary is still there" test -f "$T/out2/summary.txt"

echo "== scripts/bootstrap.sh without a network"
mkdir -p "$T/apt/sources.list.d"
echo "deb http://no-network.invalid/debian bookworm main" >"$T/apt/sources.list"
run "${clean[@]}" BOOTSTRAP_EXTRA_PKGS=llmio-no-such-package BOOTSTRAP_APT_ETC="$T/apt" \
	"$SRC/scripts/bootstrap.sh" "$T/bs"
check "bootstrap: exit 1" test "$RC" -eq 1
expect_err "bootstrap: refuses apt-get without a network, saying so" "llmio-no-such-package" \
	"no network" "scripts/gpu_pack.sh"
check "bootstrap: nothing configured" test ! -e "$T/bs/CMakeCache.txt"

finish
