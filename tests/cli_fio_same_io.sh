#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_same_io.sh: llmio and fio run the same I/O on the same buffered job (docs/fio.md).
#
# A differential run that times nothing: the same buffered libaio job (4 KiB, QD 16, 1000 I/Os:
# sequential, random, and sequential in two threads) through fio and through llmio, on the same
# file, its page cache dropped before each run.  For each tool: the I/Os it did (its JSON), the
# bytes it made the device read (the process's read_bytes, taken by the same witness for both: the
# kernel's rusage of the process, ru_inblock x 512, immune to other programs' I/O on a shared
# disk), and the file's pages in the page cache after the run (fincore).  fio advises the kernel of
# the access pattern by default (fadvise_hint=1: POSIX_FADV_SEQUENTIAL doubles the readahead,
# POSIX_FADV_RANDOM turns it off), so a tool that does not reads other bytes than fio: about half
# of fio's on the sequential job, many times fio's on a random job where the kernel reads ahead on
# random misses.  The bound: the two tools' bytes per I/O (and cached bytes) within a factor 1.25
# of each other, plus 64 KiB for stray metadata reads.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio missing (Debian package fio)"
command -v python3 >/dev/null || skip_all "python3 missing"
FINCORE=$(command -v fincore) || note "fincore (util-linux) missing: the page-cache state is not compared"

F=$T/f
# read_bytes FILE CMD...: runs CMD; FILE gets the bytes its process (threads and waited-for
# children included) made the device read
read_bytes() {
	local out=$1
	shift
	_show "$@"
	python3 - "$out" "$@" >"$T/stdout" 2>"$T/stderr" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % (ru.ru_inblock * 512))
sys.exit(os.waitstatus_to_exitcode(status))
PY
	RC=$?
}
# drop: the file's pages out of the page cache (both tools drop them too: invalidate=1)
drop() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$F"
}
cached() { if [ -n "$FINCORE" ]; then "$FINCORE" -n -b -o RES "$F"; else echo 0; fi; }
# within A B: A and B within a factor 1.25 of each other, plus 64 KiB
within() { python3 -c 'import sys; a, b = sorted(map(float, sys.argv[1:3]))
sys.exit(0 if b <= 1.25 * a + 65536 else 1)' "$1" "$2"; }

expect_rc 0 "a 64 MiB file" run --filename "$F" --size=64m --bs=1m --rw=write --quiet
sync
DEV=$(df --output=source "$T" | tail -1)
RA=$(cat "/sys/block/$(basename "$(readlink -f "$DEV")")/queue/read_ahead_kb" 2>/dev/null)
note "the file is on $DEV, read_ahead_kb ${RA:-unknown}"
drop
[ "$(cached)" -le 65536 ] || skip_all "the file's pages stay cached when dropped (tmpfs?): nothing to compare"
# fio's own code pages, read once now so that they do not count in its first job
run fio --name=warm --ioengine=null --size=1m --output=/dev/null

JOB=(--filename="$F" --bs=4k --ioengine=libaio --iodepth=16 --direct=0 --norandommap
	--group_reporting)
# the job of N threads, 1000 I/Os in all: llmio's threads each take a slice of the file, fio's
# clones one each with offset_increment (as --emit-fio writes it)
jobs_of() {
	local n=$1
	LLMIO_JOB=(--size=64m --numjobs="$n" --number_ios=$((1000 / n)))
	FIO_JOB=(--size=$((64 / n))m --offset_increment=$((64 / n))m --numjobs="$n"
		--number_ios=$((1000 / n)))
}
# min A B, max A B (empty A: B)
min() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }
max() { if [ -z "$1" ] || [ "$2" -gt "$1" ]; then echo "$2"; else echo "$1"; fi; }
# one TOOL RW: run TOOL's job once from a cold file; sets ios, bytes, cached (of this run)
one() {
	local tool=$1 rw=$2
	drop
	check "$c: the file is out of the page cache before $tool" test "$(cached)" -le 65536
	if [ "$tool" = fio ]; then
		read_bytes "$T/b" fio --name=x --thread "${JOB[@]}" "${FIO_JOB[@]}" --rw="$rw" \
			--output-format=json --output "$T/fio.json"
		ios=$(json_get "$T/fio.json" 'j["read"]["total_ios"]')
	else
		read_bytes "$T/b" "$LLMIO" run --name=x "${JOB[@]}" "${LLMIO_JOB[@]}" --rw="$rw" \
			--json "$T/l.json"
		ios=$(json_get "$T/l.json" 'j["read"]["total_ios"]')
	fi
	check "$c: $tool ran" test "$RC" = 0
	bytes=$(cat "$T/b")
	cached=$(cached)
}

for c in read:1 randread:1 read:2; do
	rw=${c%:*}
	jobs_of "${c#*:}"
	echo "== $rw, ${c#*:} thread(s): buffered libaio, 4 KiB, QD 16, 1000 I/Os"
	# Another program on this machine can only add reads (a page it evicted is read again) and
	# take pages out of the cache, never the reverse: so each tool's fewest bytes and most
	# cached pages over up to five runs are its own.
	fio_b='' llmio_b='' fio_c='' llmio_c='' llmio_own=''
	for try in 1 2 3 4 5; do
		one fio "$rw"
		fio_ios=$ios fio_b=$(min "$fio_b" "$bytes") fio_c=$(max "$fio_c" "$cached")
		one llmio "$rw"
		llmio_ios=$ios llmio_b=$(min "$llmio_b" "$bytes") llmio_c=$(max "$llmio_c" "$cached")
		llmio_own=$(min "$llmio_own" "$(json_get "$T/l.json" 'j["process_io"]["read_bytes"]')")
		note "$c, run $try: fio $fio_ios I/Os, $fio_b device bytes, $fio_c B cached after;" \
			"llmio $llmio_ios I/Os, $llmio_b device bytes ($llmio_own in its JSON), $llmio_c B cached after"
		within "$fio_b" "$llmio_b" && within "$fio_c" "$llmio_c" && break
	done
	[ "$fio_b" -gt 0 ] || skip_all "fio's reads reached no device (a file system without one, or no task I/O accounting): nothing to compare"
	check "$c: the same number of I/Os ($fio_ios, $llmio_ios)" test "$fio_ios" = "$llmio_ios"
	check "$c: device bytes per I/O within 1.25x of fio's ($((fio_b / fio_ios)), $((llmio_b / llmio_ios)))" \
		within "$fio_b" "$llmio_b"
	check "$c: llmio's JSON (process_io.read_bytes) says what the kernel counted" \
		within "$llmio_own" "$llmio_b"
	[ -n "$FINCORE" ] && check "$c: the same pages cached after the run ($fio_c, $llmio_c B)" \
		within "$fio_c" "$llmio_c"
	json_check "$T/l.json" "$c: llmio says how it advised the file" \
		'"files advised POSIX_FADV_'"$([ "$rw" = read ] && echo SEQUENTIAL || echo RANDOM)"'" in j["engine_notes"]'
done

finish
