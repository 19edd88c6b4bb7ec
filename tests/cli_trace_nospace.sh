#!/bin/bash
# cli_trace_nospace.sh: the tracer never harms the program it traces.  On a filesystem too full
# for the trace, `llmio trace -o` killed the traced program with SIGBUS (exit 135: a store into
# a mapped page of a sparse record file that the filesystem could not back), wrote no trace and
# left .llmio-trace.XXXXXX behind.  Now the record file grows by fallocate, which says ENOSPC
# instead: recording stops, the program runs to its normal end, and llmio says so and writes
# the trace of what came before.  Needs root to mount a small tmpfs (else skipped, 77).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "mounting a small tmpfs needs root"
M=$T/mnt
mkdir -p "$M" "$T/work"
mount -t tmpfs -o size=4m llmio-test "$M" 2>/dev/null || skip_all "mount -t tmpfs is not allowed here"
on_exit() { umount "$M" 2>/dev/null; }

# 1.5 MiB free: room for the first MiB of records, not for the 40,000 that dd makes
head -c 2560k /dev/zero >"$M/filler"
run "$LLMIO" trace -o "$M/t.trace" -- dd if=/dev/zero of="$T/work/out" bs=1 count=40000 \
	status=none
check "the traced program ran to its end (exit $RC, not SIGBUS's 135)" test "$RC" -eq 0
check "and did all its work" test "$(stat -c %s "$T/work/out")" -eq 40000
if grep -qF "recording stopped early in 1 process: No space left on device" "$T/stderr"; then
	pass "llmio says recording stopped, and why"
else
	fail "no word that recording stopped: $(head -c 400 "$T/stderr")"
fi
check "the trace of what came before was written" test -s "$M/t.trace"
check "no .llmio-trace.* directory is left behind" \
	bash -c "! ls -A '$M' | grep -q '^\.llmio-trace'"
run "$LLMIO" trace dump "$M/t.trace"
n=$(grep -c ' write ' "$T/stdout")
check "the trace holds some of dd's writes, not all ($n)" test "$n" -gt 0 -a "$n" -lt 40000
if head -n 1 "$T/stdout" | grep -Eq '^# exit_status 0 dropped [1-9]'; then
	pass "the trace counts the records lost"
else
	fail "the trace does not count the records lost: $(head -n 1 "$T/stdout")"
fi

# no room even for a process's first record: still no harm, and said so
rm -f "$M/t.trace"
head -c 1536k /dev/zero >"$M/filler2"
head -c "$(($(stat -f -c '%a * %S' "$M")))" /dev/zero >"$M/filler3" 2>/dev/null
run "$LLMIO" trace -o "$M/t.trace" -- dd if=/dev/zero of="$T/work/out2" bs=1 count=1000 \
	status=none
check "a full filesystem: the program still runs to its end (exit $RC)" \
	test "$RC" -ne 135 -a "$(stat -c %s "$T/work/out2")" -eq 1000
check "and says recording stopped" grep -qF "recording stopped early" "$T/stderr"
check "no .llmio-trace.* directory is left behind then either" \
	bash -c "! ls -A '$M' | grep -q '^\.llmio-trace'"
finish
