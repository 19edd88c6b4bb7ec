#!/bin/bash
# cli_uring_peak.sh: bench/uring_peak's own arithmetic and its one-command run.
#
# 1. t/io_uring's IOPS are the mean of its per-second lines (K and M suffixes), not its
#    "Maximum IOPS" line; without --t-io-uring or --fio-src the script gives the reason.
# 2. With fio installed: table 1 on a small file, one repetition, without t/io_uring: every
#    other tool has its row with IOPS, and the table says why t/io_uring was left out.
# 3. The paired table (two CPUs) with a stand-in t/io_uring that prints fixed per-second
#    lines and the CPUs it was allowed: llmio's row, t/io_uring's, their ratio, and the
#    stand-in ran once on each CPU.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

PEAK=$(cd "$(dirname "$0")/.." && pwd)/bench/uring_peak
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3 (bench/uring_peak's interpreter)"

cat >"$T/unit.py" <<'PYEOF'
import importlib.machinery
import importlib.util
import sys
import types

loader = importlib.machinery.SourceFileLoader("uring_peak", sys.argv[1])
spec = importlib.util.spec_from_loader("uring_peak", loader)
u = importlib.util.module_from_spec(spec)
loader.exec_module(u)
fails = 0


def check(desc, ok):
    global fails
    print(("ok:   " if ok else "FAIL: ") + desc)
    fails += 0 if ok else 1


out = """Engine=io_uring, sq_ring=32, cq_ring=32
IOPS=1.10M, BW=4296MiB/s, IOS/call=32/32
IOPS=900.00K, BW=3515MiB/s, IOS/call=32/32
IOPS=1000, BW=3MiB/s, IOS/call=32/32
Exiting on timeout
Maximum IOPS=1.10M
"""
check("t/io_uring IOPS: the mean of the per-second lines",
      abs(u.iops_of("tio", out) - (1.1e6 + 0.9e6 + 1000) / 3) < 1e-6)
check("t/io_uring without per-second lines: no figure", u.iops_of("tio", "Maximum IOPS=5\n") is None)
check("llmio / fio IOPS from their JSON",
      u.iops_of("llmio", 'x\n{"jobs": [{"read": {"iops": 123.5}}]}') == 123.5)
a = types.SimpleNamespace(t_io_uring=None, fio_src=None)
path, why = u.t_io_uring(a)
check("no t/io_uring given: skipped with the reason",
      path is None and "--t-io-uring" in why and "--fio-src" in why)
a.t_io_uring = "/nonexistent/t/io_uring"
path, why = u.t_io_uring(a)
check("a t/io_uring path that is not there is named", path is None and "/nonexistent" in why)
sys.exit(1 if fails else 0)
PYEOF
if "$PY" "$T/unit.py" "$PEAK" >"$T/unit.log" 2>&1; then
	pass "uring_peak arithmetic ($(grep -c '^ok:' "$T/unit.log") checks)"
else
	fail "uring_peak arithmetic:"
	cat "$T/unit.log"
fi

if ! command -v fio >/dev/null 2>&1; then
	note "fio is not installed (scripts/bootstrap.sh installs it): the live run is skipped"
	finish
fi
run env -u T_IO_URING -u FIO_SRC "$PEAK" --llmio "$LLMIO" --dir "$T" --size 64m --reps 1 \
	--runtime 1 --tables peak --out "$T/out"
if [ "$RC" = 0 ] && [ -f "$T/out/tables.md" ]; then
	pass "uring_peak runs table 1 in one command"
else
	fail "uring_peak exit $RC: $(tail -c 600 "$T/stderr")"
fi
for row in "llmio defaults" "fio io_uring, fio's defaults" "fio io_uring hand-tuned"; do
	if grep -E "^\| $row \| [0-9.]+[kM]? / \*\*[0-9.]+[kM]?\*\*" "$T/out/tables.md" >/dev/null; then
		pass "table 1 has IOPS for $row"
	else
		fail "table 1 lacks IOPS for $row: $(cat "$T/out/tables.md")"
	fi
done
check "table 1 says why t/io_uring is not in it" grep -q "t/io_uring skipped: no t/io_uring" \
	"$T/out/tables.md"
if [ "$(nproc)" -lt 2 ]; then
	note "one CPU: the paired table is not checked"
	finish
fi
cat >"$T/tio" <<EOF
#!/bin/bash
# t/io_uring's stand-in: -rN seconds of per-second lines; the CPUs it may use go to a file
taskset -pc \$\$ | sed 's/.*: //' >>"$T/tio.cpus"
n=1; for a in "\$@"; do case \$a in -r*) n=\${a#-r};; esac; done
for ((i = 0; i < n; i++)); do sleep 0.2; echo "IOPS=100.00K, BW=390MiB/s, IOS/call=32/32"; done
EOF
chmod +x "$T/tio"
run "$PEAK" --llmio "$LLMIO" --dir "$T" --size 64m --reps 1 --runtime 1 --tables paired \
	--t-io-uring "$T/tio" --out "$T/pair"
check "the paired table runs (exit $RC)" test "$RC" = 0
check "paired: llmio's row has IOPS" grep -qE "^\| llmio defaults \| [0-9.]+[kM]? / \*\*" \
	"$T/pair/tables.md"
check "paired: t/io_uring at its per-second mean, with the ratio" \
	grep -qE "^\| t/io_uring \| 100k / \*\*100k\*\* / 100k \| [0-9.]+/[0-9.]+/[0-9.]+ \|" \
	"$T/pair/tables.md"
check "paired: the stand-in ran once pinned to each of two CPUs" \
	test "$(sort -u "$T/tio.cpus" | grep -cE '^[0-9]+$')" = 2 -a "$(wc -l <"$T/tio.cpus")" = 2
finish
