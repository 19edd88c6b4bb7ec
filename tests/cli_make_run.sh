#!/bin/bash
# cli_make_run.sh: `make run`, the README's first command, answers with llmio's output, not the
# build's: the build's output goes to $(BUILD)/make-run.log and is shown only when it fails.
# The build is a stand-in (BOOTSTRAP=) that prints as much as a real one; BUILD holds the
# llmio under test.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
command -v make >/dev/null || skip_all "make is not installed"
B=$T/build
mkdir -p "$B"
ln -s "$LLMIO" "$B/llmio"
cat >"$T/bootstrap" <<'SH'
#!/bin/sh
i=0
while [ $i -lt 300 ]; do echo "[ $i%] Building C object noise.c.o"; i=$((i + 1)); done
echo "cmake: a warning on stderr" >&2
exit "${FAKE_BUILD_RC:-0}"
SH
chmod +x "$T/bootstrap"
MAKE_RUN=(make --no-print-directory -C "$SRC" run "BUILD=$B" "BOOTSTRAP=$T/bootstrap"
	"RUN_ARGS=engines --brief")

echo "== a build that works: llmio's output only"
run "${MAKE_RUN[@]}"
check "make run: exit 0" test "$RC" -eq 0
check "no build output on the terminal" test -z "$(grep -h 'Building C object\|cmake:' \
	"$T/stdout" "$T/stderr")"
check "llmio's answer is there" grep -Eq '^psync +available' "$T/stdout"
check "at most one line before it (where the build's log is)" \
	test "$(grep -nE '^null +' "$T/stdout" | cut -d: -f1)" -le 2
check "the build's output is in the log" grep -q 'Building C object' "$B/make-run.log"

echo "== a build that fails: its output shown, llmio not run"
FAKE_BUILD_RC=1 run "${MAKE_RUN[@]}"
check "make run: non-zero exit" test "$RC" -ne 0
check "the build's output is shown" grep -q 'Building C object noise' "$T/stdout"
check "and says that the build failed, and where its log is" \
	grep -qF "the build failed (above; log: $B/make-run.log)" "$T/stdout"
check "llmio did not run" test -z "$(grep -E '^psync +available' "$T/stdout")"

finish
