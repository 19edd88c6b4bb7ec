#!/bin/bash
# llmio replay: a traced program's reads and writes re-run through each engine reproduce its
# per-file byte totals; its fsyncs are re-issued; --timeline keeps the original schedule;
# imported strace logs replay; errors.
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
	expect_rc 0 "replay on $e" replay "$T/t.trace" --dir "$D" --engine "$e" --quiet \
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
json_check "$T/fast.json" "fast replay is shorter than the pause" \
	"d['runs'][0]['phases'][0]['wall_s'] < 0.35"
expect_rc 0 "replay on the timeline" replay "$T/t.trace" --dir "$D" --engine psync \
	--timeline 1 --quiet --json "$T/tl.json"
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
finish
