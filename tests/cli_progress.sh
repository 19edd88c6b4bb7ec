#!/bin/bash
# shellcheck disable=SC2317 # screen and lines run from check
# cli_progress.sh: the progress line of quick, run, the workload recipes, replay and report.
#
#  - without a terminal nothing is drawn; --progress draws into a file anyway, --no-progress
#    and --quiet never, and on a terminal (script(1)'s pty) it is drawn unasked;
#  - its format: quick says point k of N (every k once, N the points run) and the ETA; a
#    recipe says the phase, the stream, the bytes done of the phase's, the rate and the ETA;
#    report says its step; a job laying out its files (run, a recipe's stream) says the bytes
#    done of its files', then the rate and the ETA; no line is wider than 99 columns (it must
#    never wrap);
#  - nothing is printed over it: with stdout and stderr in one file, what a terminal would
#    show (\r returns to the start, ESC[K erases) holds no progress fragment, and the tables
#    are whole.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$T/w
mkdir -p "$W"
# a checkpoint slow enough (--rate) for the job's once-a-second figures
CKPT=(run --workload ckpt --model gpt2 --scale 0.005 --dp 2 --ranks 2 --directory "$W"
	--engine psync --direct 0 --rate 2m)

# lines FILE: the progress lines drawn into FILE, one per line (each draw starts "\r ESC[K")
lines() { python3 -c '
import sys
data = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
for part in data.split("\r\x1b[K")[1:]:
    if part and not part.startswith("\n"):
        print(part.split("\n")[0])' "$1"; }
# screen FILE: what a terminal shows for FILE: \r returns to the line's start, ESC[K erases
# to its end
screen() { python3 -c '
import sys
data = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read().replace("\x1b[K", "\x00")
out, line, col = [], [], 0
for ch in data:
    if ch == "\n":
        out.append("".join(line)); line, col = [], 0
    elif ch == "\r":
        col = 0
    elif ch == "\x00":
        del line[col:]
    else:
        if col < len(line): line[col] = ch
        else: line.append(ch)
        col += 1
out.append("".join(line))
print("\n".join(out))' "$1"; }
absent() { ! grep -qE -- "$1" "$2"; } # absent ERE FILE
nothing_drawn() { ! grep -q $'\r' "$1" && ! grep -qE '\[(point|phase) ' "$1"; }

echo "== without a terminal: no progress line"
expect_rc 0 "quick, stderr a file" quick --dir "$T/q" --size 16m --runtime 100ms
check "quick: nothing drawn" nothing_drawn "$T/stderr"
expect_rc 0 "ckpt, stderr a file" "${CKPT[@]}"
check "ckpt: nothing drawn" nothing_drawn "$T/stderr"

echo "== --progress into a file: quick's point k of N and its ETA"
expect_rc 0 "quick --progress" quick --dir "$T/q" --size 16m --runtime 100ms --progress \
	--json "$T/q.json"
lines "$T/stderr" >"$T/ql"
check "quick: every point once, k of N with N the points run, each with an ETA" python3 - \
	"$T/ql" "$T/q.json" <<'PY'
import json, re, sys
n = len(json.load(open(sys.argv[2]))["jobs"])
ks, bad = set(), []
for line in open(sys.argv[1]).read().splitlines():
    m = re.match(r"^\[point (\d+)/(\d+)\] \S+ .+ QD\d+: ", line)
    if not m or int(m.group(2)) != n or (int(m.group(1)) < n and not re.search(r"ETA [0-9.]+ (ns|us|ms|s)$", line)):
        bad.append(line)
    elif m:
        ks.add(int(m.group(1)))
if bad or ks != set(range(1, n + 1)):
    print("bad lines:", bad[:3], "points seen:", sorted(ks), "of", n)
    sys.exit(1)
PY
check "quick: no progress line wider than 99 columns" \
	test "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/ql")" -le 99

echo "== --progress into a file: a recipe's phase, stream, bytes, rate and ETA"
expect_rc 0 "ckpt --progress" "${CKPT[@]}" --progress
lines "$T/stderr" >"$T/cl"
check "ckpt: each phase starts with its line" grep -qx '\[phase 1: save\] starting' "$T/cl"
check "ckpt: the stream's file preparation is said" \
	grep -qx '\[phase 2: save-restore\] ranks-read: preparing its files' "$T/cl"
check "ckpt: bytes done of the phase's, rate and ETA" grep -qE \
	'^\[phase [12]: save(-restore)?\] ranks-(write|read): [0-9.]+ [KM]iB of [0-9.]+ MiB, [0-9.]+ (kB|MB)/s, ETA [0-9.]+ (ns|us|ms|s)$' \
	"$T/cl"

echo "== --progress into a file: a job laying out its files (bytes of the total, rate, ETA)"
# layout LINES PREFIX TOTAL: every layout line of LINES is PREFIX's, with bytes done of TOTAL
# never going back; the first says 0 B (drawn before the first write), every later one has
# the rate and the ETA; none wider than 99 columns
layout() {
	python3 - "$@" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if sys.argv[2] in l]
pat = re.compile(re.escape(sys.argv[2]) + r" ([0-9.]+) (B|KiB|MiB|GiB) of " + re.escape(sys.argv[3])
                 + r"(, [0-9.]+ (B|kB|MB|GB)/s(, ETA [0-9.]+ (ns|us|ms|s))?)?$")
mult = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
bad, last = [], -1
for i, l in enumerate(lines):
    m = pat.match(l)
    if not m or len(l) > 99:
        bad.append(l)
        continue
    done = float(m.group(1)) * mult[m.group(2)]
    if done < last or (i == 0) != (done == 0) or (i > 0 and not m.group(3)):
        bad.append(l)
    last = done
if not lines or bad:
    print("layout lines:", lines[:3], "bad:", bad[:3])
    sys.exit(1)
PY
}
expect_rc 0 "run --progress, a new 192 MiB file to read" run --ioengine=psync \
	--filename="$T/lay" --size=192m --rw=read --io_size=1m --progress
lines "$T/stderr" >"$T/ll"
check "run: the layout drawn, 0 B first, then bytes of 192 MiB with rate and ETA" \
	layout "$T/ll" "[laying out files]" "192 MiB"
expect_rc 0 "the same file again, complete" run --ioengine=psync --filename="$T/lay" \
	--size=192m --rw=read --io_size=1m --progress
check "run: nothing to lay out, nothing drawn of it" absent 'laying out' "$T/stderr"
rm -f "$T/lay"
mkdir -p "$T/ld"
expect_rc 0 "a load recipe --progress" run --workload load --model gpt2 --scale 0.01 \
	--strategy sequential --directory "$T/ld" --engine psync --direct 0 --progress
lines "$T/stderr" >"$T/ll"
check "load: the phase and stream laying out their file, then its bytes" \
	layout "$T/ll" "[phase 1: load-sequential-cold] sequential: laying out" "6.77 MiB"
check "load: the phase's own progress after it" \
	grep -q '^\[phase 2: load-sequential-warm\] starting$' "$T/ll"

echo "== --progress into a file: report's steps"
expect_rc 0 "report --progress" report "$SRC/tests/data/sweep.jsonl" -o "$T/rep" --no-charts \
	--progress
lines "$T/stderr" >"$T/rl"
check "report: reading, then building" test "$(cut -c1-5 "$T/rl" | uniq | tr '\n' ' ')" = \
	"[1/3] [2/3] "

echo "== nothing printed over a progress line (stdout and stderr in one file)"
_show "llmio ${CKPT[*]} --progress >FILE 2>&1"
"$LLMIO" "${CKPT[@]}" --progress >"$T/both" 2>&1
screen "$T/both" >"$T/seen"
check "ckpt: a terminal would show no progress fragment" absent '\[phase [0-9]+: ' "$T/seen"
check "ckpt: the table's header line is whole" grep -qE '^  phase +time +rate +moved +device +cores$' \
	"$T/seen"
# (a long scratch path wraps the line after "from": the path goes on the next)
check "ckpt: the file line is whole" grep -qE '^removed 2 files, [0-9.]+ MiB from( |$)' "$T/seen"
check "ckpt: the progress was drawn, in that same file" grep -q '\[phase 1: save\]' "$T/both"
# The same case 20 times with two busy loops per core beside it (a loaded machine is where a
# draw that raced an erase showed), and pretrain, whose readers draw from their own thread
# while its checkpoints draw from the recipe's: every run's screen whole.
busy=()
for _ in $(seq $((2 * $(nproc)))); do
	timeout 600 sh -c 'while :; do :; done' &
	busy+=($!)
done
on_exit() { kill "${busy[@]}" 2>/dev/null; }
PT=(run --workload pretrain --model gpt2 --files 4 --samples_per_file 8 --seq_len 512
	--steps 6 --ckpt_every 2 --scale 0.01 --directory "$W" --engine psync --direct 0)
bad=0
for i in $(seq 20); do
	"$LLMIO" "${CKPT[@]}" --rate 64m --progress >"$T/both" 2>&1
	screen "$T/both" >"$T/seen"
	if grep -qE '\[phase [0-9]+: ' "$T/seen" || ! grep -qE '^removed 2 files, [0-9.]+ MiB from( |$)' \
		"$T/seen" || ! grep -q '\[phase 1: save\]' "$T/both"; then
		bad=$((bad + 1))
		cp "$T/both" "$T/bad-ckpt-$i"
	fi
done
check "ckpt under load: 20 of 20 screens whole ($bad not; kept as \$T/bad-ckpt-N)" test "$bad" -eq 0
bad=0
for i in $(seq 5); do
	"$LLMIO" "${PT[@]}" --progress >"$T/both" 2>&1 || { bad=$((bad + 1)); continue; }
	screen "$T/both" >"$T/seen"
	if grep -qE '\[phase [0-9]+: ' "$T/seen" || ! grep -qE '^  phase +time +rate +moved' "$T/seen"
	then
		bad=$((bad + 1))
		cp "$T/both" "$T/bad-pretrain-$i"
	fi
done
check "pretrain (readers and checkpoints drawing from two threads) under load: 5 of 5 whole" \
	test "$bad" -eq 0
kill "${busy[@]}" 2>/dev/null
_show "llmio quick ... --progress >FILE 2>&1"
"$LLMIO" quick --dir "$T/q" --size 16m --runtime 100ms --progress >"$T/both" 2>&1
screen "$T/both" >"$T/seen"
check "quick: a terminal would show no progress fragment" absent '\[point ' "$T/seen"
check "quick: the table's header line is whole" grep -qE '^phase +pattern +engine +direct +GB/s ' \
	"$T/seen"

echo "== a terminal: drawn unasked; --no-progress and --quiet draw nothing"
if command -v script >/dev/null && script -qfec true /dev/null >/dev/null 2>&1; then
	tty_run() { # tty_run LOG ARGS...: llmio ARGS on a pseudo-terminal, everything into LOG
		local log=$1; shift
		_show "script: llmio $* (on a terminal)"
		timeout -k 5 120 script -qfec "$(printf '%q ' "$LLMIO" "$@")" "$log" >/dev/null 2>&1
	}
	tty_run "$T/tty" "${CKPT[@]}"
	check "on a terminal: the progress line is drawn" grep -q '\[phase 1: save\] starting' "$T/tty"
	tty_run "$T/tty" "${CKPT[@]}" --no-progress
	check "--no-progress: nothing drawn" absent '\[phase ' "$T/tty"
	check "--no-progress: the table still printed" grep -q 'removed 2 files' "$T/tty"
	tty_run "$T/tty" "${CKPT[@]}" --quiet
	check "--quiet: nothing drawn" absent '\[phase ' "$T/tty"
	tty_run "$T/tty" run --ioengine=psync --filename="$T/lay" --size=64m --rw=read \
		--io_size=1m
	check "run on a terminal: the layout drawn unasked" grep -q 'laying out files\] 0 B of 64' \
		"$T/tty"
	screen "$T/tty" >"$T/seen"
	check "run on a terminal: erased before the table" absent 'laying out' "$T/seen"
	check "run on a terminal: the table printed" grep -q 'read' "$T/seen"
	rm -f "$T/lay"
else
	note "script(1) cannot make a terminal here: the terminal checks are skipped"
fi

finish
