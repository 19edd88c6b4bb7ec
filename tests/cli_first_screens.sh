#!/bin/bash
# cli_first_screens.sh: what a person reads first says something.
#   - a migration phase's row shows its step, the bytes its transfers moved and their rate
#     (from its own metrics: the simulated step and the tier bytes), "-" where no job counted,
#     never a row of zeros;
#   - a usage error of a recipe prints its one error line and nothing about files on disk (it
#     made none), for a directory with and without a work directory in it.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/d"
echo "== a migration phase's row"
expect_rc 0 "migrate --simulate" run --workload migrate --model gpt2 --budget 1g --scale 0.01 \
	--policy lru --simulate
check "no row of zeros" test -z "$(grep -E '0\.00 s +0 B/s +0 B +0 B +0\.00' "$T/stdout")"
row=$(grep -E '^  simulate-lru ' "$T/stdout")
check "the row: its step, a rate, the bytes moved, '-' for device and cores ($row)" \
	python3 - "$row" <<'PY'
import re, sys
f = sys.argv[1].split()
assert f[0] == "simulate-lru", f
assert re.fullmatch(r"[0-9.]+", f[1]) and f[2] in ("ns", "us", "ms", "s") and float(f[1]) > 0, f
assert f[4].endswith("B/s") and float(f[3]) > 0, f
assert float(f[5]) > 0 and f[6].endswith("B"), f
assert f[7:] == ["-", "-"], f
PY
bytes=$(awk '/^      host (out|in) bytes/ || /^      ssd (out|in) bytes/' "$T/stdout" | wc -l)
check "its metrics still listed below it (tier bytes: $bytes lines)" test "$bytes" -eq 4
check "the step is the row's time, not repeated below" test -z "$(grep -E '^      step ' \
	"$T/stdout")"

echo "== a recipe's usage error says nothing about files"
expect_rc 2 "ckpt --tp 0" run --workload ckpt --model gpt2 --directory "$T/d" --tp 0
check "ckpt: nothing on stdout" test ! -s "$T/stdout"
expect_rc 2 "migrate --policy nope" run --workload migrate --model gpt2 --directory "$T/d" \
	--policy nope
check "migrate: nothing on stdout" test ! -s "$T/stdout"
check "no work directory left behind" test ! -e "$T/d/llmio-work"

finish
