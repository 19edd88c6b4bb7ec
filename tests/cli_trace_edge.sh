#!/usr/bin/env bash
# The tracer hands the program what the kernel and libc give it: tests/trace_edge.c's edge cases
# (end of file, short reads, failing reads, reads of a half-cached file that the tracer must
# finish after its page-cache question, pipes and sockets, a file's number closed by
# close_range and given to a pipe, calls interrupted by a signal, errno after calls that
# succeed) print the same lines untraced, traced, and traced with --all (pipes and sockets
# traced too).  The untraced run is the witness.  Each defect this found once: a pipe read at a
# file's stale number waited for the rest of a file's read (a hang), an open of a FIFO
# interrupted by a signal was made again instead of failing with EINTR (a hang), read with a
# count over SSIZE_MAX failed with EINVAL instead of EFAULT, and errno changed by calls that
# succeeded (an open through a symbolic link, a stream without a descriptor, a pipe's first
# use).
. "$(dirname "$0")/lib.sh"

PROG=$(dirname "$LLMIO")/trace_edge
[ -x "$PROG" ] || { echo "FAIL: $PROG is missing"; exit 1; }
mkdir -p "$T/u" "$T/d" "$T/a"

run "$PROG" "$T/u"
[ "$RC" -eq 77 ] && skip_all "$(cat "$T/stderr")"
check "trace_edge untraced: exit 0 (stderr: $(head -c 300 "$T/stderr"))" [ "$RC" -eq 0 ]
cp "$T/stdout" "$T/untraced"
note "untraced: $(wc -l <"$T/untraced") cases"

for mode in default all; do
	dir=$T/d opt=()
	[ $mode = all ] && dir=$T/a opt=(--all)
	llmio trace -q "${opt[@]}" -o "$T/$mode.trace" -- "$PROG" "$dir"
	check "traced ($mode scope): exit 0, not 124 (a hang) (stderr: $(head -c 300 "$T/stderr"))" \
		[ "$RC" -eq 0 ]
	if diff "$T/untraced" "$T/stdout" >"$T/diff"; then
		pass "traced ($mode scope): every case as untraced"
	else
		fail "traced ($mode scope) differs from untraced (< untraced, > traced): $(cat "$T/diff")"
	fi
done

# the half-cached reads went the way the cases mean: partly from the device, finished by the
# tracer (a kernel that keeps the dropped pages would leave this unexercised: said, not failed)
"$LLMIO" trace dump "$T/default.trace" >"$T/dump"
if awk '$5 == "readv" && $9 == 25003 && /served=device/ {found = 1} END {exit !found}' "$T/dump"; then
	pass "the half-cached readv was served partly from the device"
else
	note "the half-cached readv was not served from the device here: its case ran as a plain read"
fi
# a child forked after a dup2 to a high number: its write through it carries the file's path
# (the number's entry was kept from the parent, with the parent's path id, meaningless in the
# child's own file)
if awk '$5 == "write" && $8 == 10 && $9 == 10 && $11 ~ /\/g$/ {found = 1} END {exit !found}' \
	"$T/dump"; then
	pass "the forked child's write through a dup2'd high number names the file"
else
	fail "the forked child's write is not recorded with its file: $(awk '$5 == "write" && $8 == 10' "$T/dump")"
fi
finish
