#!/bin/bash
# llmio replay: a traced program's reads and writes re-run through each engine reproduce its
# per-file byte totals; its fsyncs are re-issued; --timeline keeps the original schedule;
# imported strace logs replay; errors; hostile traces are refused before anything is sized.
. "$(dirname "$0")/lib.sh"

TR=$(dirname "$LLMIO")/libllmio_trace.so
[ -e "$TR" ] || skip_all "the tracer library $TR is not built"
command -v dd >/dev/null || skip_all "dd is missing"
D=$T/replay
mkdir -p "$D"

# 16 x 64 KiB written, then read back in 4 KiB reads, a pause, then read again in 128 KiB
expect_rc 0 "trace a program" trace -o "$T/t.trace" --quiet -- sh -c "
	dd if=/dev/zero of=$T/data bs=64k count=16 status=none
	dd if=$T/data of=/dev/null bs=4k status=none
	sleep 0.4
	dd if=$T/data of=/dev/null bs=128k status=none"

for e in psync libaio io_uring mmap; do
	"$LLMIO" engines 2>/dev/null | grep -q "^$e  *available" || continue
	expect_rc 0 "replay on $e" replay "$T/t.trace" --dir "$D" --engine "$e" --quiet --keep \
		--json "$T/r.json"
	json_check "$T/r.json" "replay/$e: writes 1 MiB and reads 2 MiB, as traced" \
		"sum(j['write']['io_bytes'] for p in d['runs'][0]['phases'] for j in p['jobs']) == 1048576 and sum(j['read']['io_bytes'] for p in d['runs'][0]['phases'] for j in p['jobs']) == 2097152"
	check "replay/$e: the file is re-created at its traced size" \
		test "$(stat -c %s "$D"/llmio-work/replay-00000-data)" -eq 1048576
done

# a checkpoint: written, then fsync (dd conv=fsync) or fdatasync; both replayed as fsync, on
# every engine, after the writes before them (their bytes are all in before the sync)
expect_rc 0 "trace a checkpoint with fsync and fdatasync" trace -o "$T/ck.trace" --quiet -- sh -c "
	dd if=/dev/zero of=$T/ck1 bs=64k count=4 conv=fsync status=none
	dd if=/dev/zero of=$T/ck2 bs=64k count=2 conv=fdatasync status=none"
for e in psync libaio io_uring mmap; do
	"$LLMIO" engines 2>/dev/null | grep -q "^$e  *available" || continue
	expect_rc 0 "replay the checkpoint on $e" replay "$T/ck.trace" --dir "$D" --engine "$e" \
		--quiet --json "$T/ck.json"
	json_check "$T/ck.json" "replay/$e: 2 fsyncs timed by the job and counted per phase, 384 KiB written" \
		"sum(j['sync']['total_ios'] for p in d['runs'][0]['phases'] for j in p['jobs']) == 2 and sum(v for p in d['runs'][0]['phases'] for k, v in p['metrics'].items() if k.endswith('.fsyncs')) == 2 and sum(j['write']['io_bytes'] for p in d['runs'][0]['phases'] for j in p['jobs']) == 393216"
done

# as fast as possible skips the 0.4 s pause; the timeline keeps it
expect_rc 0 "replay as fast as possible" replay "$T/t.trace" --dir "$D" --engine psync \
	--quiet --json "$T/fast.json"
if perf_mode; then
	json_check "$T/fast.json" "fast replay is shorter than the pause" \
		"d['runs'][0]['phases'][0]['wall_s'] < 0.35"
fi
expect_rc 0 "replay on the timeline" replay "$T/t.trace" --dir "$D" --engine psync \
	--timeline 1 --quiet --json "$T/tl.json"
# the same I/O with and without the 0.4 s pause: on a busy machine both are slower, but the
# pause is only on the timeline
check "fast replay is shorter than the timeline replay" python3 -c "
import json, sys
f, t = (json.load(open(p))['runs'][0]['phases'][0]['wall_s'] for p in sys.argv[1:])
sys.exit(0 if f < t else 1)" "$T/fast.json" "$T/tl.json"
json_check "$T/tl.json" "timeline replay keeps the pause (>= 0.4 s)" \
	"d['runs'][0]['phases'][0]['wall_s'] >= 0.4"
json_check "$T/tl.json" "per-phase original and replay times are reported" \
	"any(k.endswith('.original_s') for k in d['runs'][0]['phases'][0]['metrics']) and any(k.endswith('.replay_s') for k in d['runs'][0]['phases'][0]['metrics'])"

# an strace log imported, then replayed
SAMPLE=$(dirname "$0")/data/strace_sample.log
if [ -e "$SAMPLE" ]; then
	expect_rc 0 "import an strace log" trace import-strace "$SAMPLE" -o "$T/s.trace"
	expect_rc 0 "replay the imported trace" replay "$T/s.trace" --dir "$D" --engine psync \
		--quiet
fi

# as a workload stream
expect_rc 0 "replay as a workload recipe" run --workload replay --trace "$T/t.trace" \
	--directory "$D" --direct 0 --quiet

# errors
expect_rc 2 "no trace" replay
expect_rc 2 "missing trace file" replay "$T/nope.trace" --dir "$D"
expect_err "names the file" "nope.trace"
printf 'not a trace' >"$T/bad.trace"
expect_rc 2 "not a trace" replay "$T/bad.trace" --dir "$D"
expect_rc 2 "no directory" replay "$T/t.trace"

# ---- hostile traces (issue 15): each fails with one line naming the file, the record and
# the bad value, before anything is sized from it ----
# pid = tid = 0xFFFFFFFF: its thread is found again (an out-of-bounds write before: exit 139)
printf '%s\n' \
	'4294967295 1700000000.000001 openat(AT_FDCWD, "/data/f", O_RDONLY) = 3</data/f> <0.000001>' \
	'4294967295 1700000000.000002 read(3</data/f>, "x", 1) = 1 <0.000001>' >"$T/maxpid.log"
expect_rc 0 "import a log of pid 4294967295" trace import-strace "$T/maxpid.log" -o "$T/maxpid.trace"
expect_rc 0 "replay pid 4294967295's read" replay "$T/maxpid.trace" --dir "$D" --engine psync \
	--quiet --json "$T/maxpid.json"
json_check "$T/maxpid.json" "pid 4294967295: its 1 byte is replayed" \
	"sum(j['read']['io_bytes'] for p in d['runs'][0]['phases'] for j in p['jobs']) == 1"

# patch FIELD VALUE IN OUT: record 1 (the read) of a trace with FIELD set (a u64 at its offset)
patch() {
	python3 - "$@" <<'PY'
import struct, sys
field, value, src, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
b = bytearray(open(src, "rb").read())
rec_off = struct.unpack_from("<Q", b, 24)[0]
struct.pack_into("<Q", b, rec_off + 64 + {"offset": 16, "result": 32}[field], value)
open(dst, "wb").write(b)
PY
}
printf '%s\n' \
	'1 1700000000.000001 openat(AT_FDCWD, "/data/f", O_RDONLY) = 3</data/f> <0.000001>' \
	'1 1700000000.000002 read(3</data/f>, "x", 1) = 1 <0.000001>' >"$T/one.log"
expect_rc 0 "import a one-read log" trace import-strace "$T/one.log" -o "$T/one.trace"
# a read of 2^48 bytes: the plan allocated 8.6 GB (double free when that failed: exit 134)
patch result 281474976710656 "$T/one.trace" "$T/huge.trace"
H=$T/hostile
mkdir -p "$H"
expect_rc 2 "replay of a 2^48-byte read is refused" replay "$T/huge.trace" --dir "$H" --quiet
expect_err "names the trace, the record and the value" "huge.trace: trace record 1: read result 281474976710656 is over 2147479552"
expect_rc 2 "report of it is refused too" trace report "$T/huge.trace"
# an offset near 2^64: the planning loop wrapped and never ended
patch offset 18446744073709551000 "$T/one.trace" "$T/wrap.trace"
expect_rc 2 "replay of a read at offset 2^64 - 616 is refused" replay "$T/wrap.trace" --dir "$H" --quiet
expect_err "names the offset" "wrap.trace: trace record 1: read at offset 18446744073709551000"
check "nothing was created for the refused traces" [ -z "$(ls -A "$H")" ]
finish
