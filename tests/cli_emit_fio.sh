#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_emit_fio.sh: `llmio run --emit-fio` prints a fio job file that fio accepts and that runs
# the same job.
#
# The emitted lines are checked one by one against the mapping (fio's option names, units,
# engine options, numjobs with group_reporting, runtime with time_based, sizes split per
# clone).  When fio is installed, fio --parse-only must accept every emitted file, and jobs
# with a fixed amount of I/O are run by both tools: the I/O counts must be identical (null
# engine 8 MiB / 4 KiB x 2 threads = 4096; psync sequential 8 MiB split over 2 threads = 2048).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/emitted.fio
HAVE_FIO=0
command -v fio >/dev/null 2>&1 && HAVE_FIO=1
[ "$HAVE_FIO" = 1 ] || note "fio is not installed: the fio-side checks are skipped"

# emit NAME ARGS...: llmio run ARGS --emit-fio into $T/NAME.fio; fio --parse-only checks it.
emit() {
	local name=$1; shift
	F=$T/$name.fio
	expect_rc 0 "emit $name" run "$@" --emit-fio || return
	cp "$T/stdout" "$F"
	if [ "$HAVE_FIO" = 1 ]; then
		if fio --parse-only "$F" >"$T/parse.log" 2>&1; then
			pass "fio --parse-only accepts $name"
		else
			fail "fio --parse-only rejects $name: $(head -c 400 "$T/parse.log")"
		fi
	fi
}

# has LINE...: the last emitted file holds each LINE exactly (a whole line).
has() {
	local l
	for l in "$@"; do
		grep -qxF -- "$l" "$F" || { fail "$(basename "$F") lacks line '$l'"; return 1; }
	done
	pass "$(basename "$F"): ${*}"
}
lacks() {
	local l
	for l in "$@"; do
		! grep -qF -- "$l" "$F" || { fail "$(basename "$F") should not hold '$l'"; return 1; }
	done
	pass "$(basename "$F") has none of: ${*}"
}

echo "== io_uring defaults: registered buffers and files, batching, time_based"
emit uring --ioengine io_uring --filename "$T/a\\:b" --rw randread --bs 4k --iodepth 32 \
	--runtime 1500ms --time_based --ramp_time 1 --invalidate 0 --size 8m
has "ioengine=io_uring" "filename=$T/a\\:b" "rw=randread" "bs=4096" "iodepth=32" \
	"fixedbufs=1" "registerfiles=1" "sqthread_poll=0" "hipri=0" "iodepth_batch_submit=32" \
	"iodepth_batch_complete_min=1" "iodepth_batch_complete_max=32" "runtime=1500ms" \
	"time_based=1" "ramp_time=1s" "invalidate=0" "direct=0" "size=8388608" "numjobs=1" \
	"thread=1" "norandommap=0" "fadvise_hint=1" "randseed=1" "lat_percentiles=1"
lacks "group_reporting" "sqthread_poll_cpu" "offset_increment"
check "one [llmio] section" test "$(grep -c '^\[llmio\]$' "$F")" -eq 1
check "each option once" test -z "$(grep -v '^[;[]' "$F" | cut -d= -f1 | sort | uniq -d)"
check "the comment quotes the command line" grep -q '^;   llmio run --ioengine io_uring' "$F"

# fio's latency_target in fio's plain microseconds; none of its lines without a target
emit latency --filename "$T/f" --rw randread --size 1m --iodepth 8 --latency_target=2ms \
	--latency_window=1s --latency_percentile=99.9
has "latency_target=2000" "latency_window=1000000" "latency_percentile=99.9" "latency_run=0"
emit no_latency --filename "$T/f" --rw randread --size 1m
lacks "latency_"

# fio's ':' list, as given: llmio run reads it as fio does
emit list --filename "$T/x:$T/y" --rw read --size 1m
has "filename=$T/x:$T/y"
emit format --directory "$T" '--filename_format=x.$filenum' --rw write --size 1m
has 'filename_format=x.$filenum'
check "each option once" test -z "$(grep -v '^[;[]' "$F" | cut -d= -f1 | sort | uniq -d)"

echo "== io_uring tuned: sqpoll pinned, iopoll, no registration, explicit batches"
emit sqpoll --ioengine io_uring --filename "$T/f" --rw read --bs 1m --iodepth 8 --direct=1 \
	--sqpoll --sqpoll_cpu 0 --sq_thread_idle 50 --iopoll=1 --fixedbufs=0 --regfiles=0 \
	--submit_batch 4 --reap_batch 2 --size 8m
has "sqthread_poll=1" "sqthread_poll_cpu=0" "hipri=1" "fixedbufs=0" "registerfiles=0" \
	"iodepth_batch_submit=4" "iodepth_batch_complete_max=2" "direct=1" "rw=read" "bs=1048576"
has "; differs: sq_thread_idle=50: fio has no sq_thread_idle: its SQPOLL thread sleeps after the kernel's default 1 s"
lacks "time_based" "runtime="

echo "== io_uring reap_batch auto: the engine's own choice, not iodepth"
# O_DIRECT hands each completion back at once (1); SQPOLL under O_DIRECT reaps iodepth/4
emit direct --ioengine io_uring --filename "$T/f" --rw randread --bs 4k --iodepth 32 \
	--direct 1 --size 8m
has "iodepth_batch_complete_max=1"
emit direct_sqpoll --ioengine io_uring --filename "$T/f" --rw randread --bs 4k --iodepth 32 \
	--direct 1 --sqpoll 1 --size 8m
has "iodepth_batch_complete_max=8"
emit shallow_sqpoll --ioengine io_uring --filename "$T/f" --rw randread --bs 4k --iodepth 4 \
	--direct 1 --sqpoll 1 --size 8m
has "iodepth_batch_complete_max=1"
emit cached_sqpoll --ioengine io_uring --filename "$T/f" --rw randread --bs 4k --iodepth 32 \
	--sqpoll 1 --size 8m
has "iodepth_batch_complete_max=32"

echo "== CPU pinning"
emit pinned --ioengine psync --filename "$T/f" --rw randread --size 8m --numjobs 2 \
	--cpus_allowed 0 --cpus_allowed_policy split
has "cpus_allowed=0" "cpus_allowed_policy=split"
emit unpinned --ioengine psync --filename "$T/f" --rw randread --size 8m
lacks "cpus_allowed"

echo "== noatime: fio has none, so the default is named as a difference"
has "; differs: noatime=1: llmio opens the files with O_NOATIME where permitted; fio's reads update the access time"
emit atime --ioengine psync --filename "$T/f" --rw randread --size 8m --noatime=0
lacks "; differs: noatime"

echo "== numjobs: group_reporting, per-clone sizes"
emit seq2 --ioengine psync --filename "$T/f" --rw read --bs 64k --numjobs 2 --size 8m
has "numjobs=2" "group_reporting=1" "size=4194304" "offset_increment=4194304" "iodepth=1"
emit rand2 --ioengine libaio --filename "$T/f" --rw randwrite --bs 4k --iodepth 4 \
	--numjobs 2 --size 8m --direct 1 --fsync 16 --end_fsync 1 --rate 2m
has "size=8388608" "io_size=4194304" "iodepth_batch_submit=4" "fsync=16" "end_fsync=1" \
	"rate=2097152" "rw=randwrite"
check "libaio O_DIRECT: the refill difference is named" grep -q '^; differs: under O_DIRECT llmio.s libaio takes every completion' "$F"
lacks "offset_increment" "fixedbufs"

echo "== synchronous engines, mmap, mixed and zipf options"
emit psync --ioengine psync --filename "$T/f" --rw randrw --rwmixread 70 --iodepth 16 \
	--thinktime 250 --thinktime_blocks 8 --random_distribution zipf:1.2 --size 8m
has "iodepth=1" "rwmixread=70" "thinktime=250us" "thinktime_blocks=8" \
	"random_distribution=zipf:1.2"
check "psync: QD 1 comment" grep -q '^; llmio runs the synchronous engine psync one I/O at a time (iodepth=16 asked)' "$F"
check "zipf: placement comment" grep -q '^; differs: same Zipf law' "$F"
lacks "iodepth_batch"
emit mmap --ioengine mmap --filename "$T/f" --rw randread --populate 1 --madvise random \
	--size 8m
has "ioengine=mmap" "fadvise_hint=1" "; differs: populate=1: fio's mmap engine has no MAP_POPULATE: pages are faulted in during its run"
lacks "fadvise_hint=0"
lacks "; differs: llmio's mmap madvise"
emit mmap_thp --ioengine mmap --filename "$T/f" --rw read --madvise hugepage --size 8m
has "thp=1" "fadvise_hint=1"
emit mmap_seq --ioengine mmap --filename "$T/f" --rw read --size 8m
has "fadvise_hint=1"
lacks "; differs: llmio's mmap madvise"
emit mmap_normal --ioengine mmap --filename "$T/f" --rw read --size 8m --madvise normal
has "fadvise_hint=1" "; differs: llmio's mmap madvise=normal; fio's mmap engine advises its mappings as fadvise_hint says (sequential)"
emit mmap_none --ioengine mmap --filename "$T/f" --rw read --size 8m --fadvise_hint 0
has "fadvise_hint=0"
lacks "; differs: llmio's mmap madvise"

echo "== fadvise_hint: fio's values, llmio's normal as fio's 0"
for h in 0 1 random sequential; do
	emit "fadvise_$h" --ioengine libaio --filename "$T/f" --rw randread --size 8m \
		--fadvise_hint "$h"
	has "fadvise_hint=$h"
done
emit fadvise_normal --ioengine libaio --filename "$T/f" --rw randread --size 8m \
	--fadvise_hint normal
has "fadvise_hint=0" "; differs: llmio advises POSIX_FADV_NORMAL; fio gives no advice, which leaves the same (the kernel's default) readahead"
expect_rc 2 "a value fio does not know" run --filename "$T/f" --size 8m --fadvise_hint willneed
expect_err "names the values" "fadvise_hint" "0, 1, random, sequential or normal"
emit dir --ioengine psync --directory "$T" --nrfiles 3 --rw randread --size 3m
has "directory=$T/llmio-work" "nrfiles=3" 'filename_format=llmio.$filenum' "file_service_type=random"
emit null --ioengine null --rw randread --bs 4k --iodepth 16 --io_size 8m --numjobs 2
has "ioengine=null" "size=1073741824" "io_size=8388608" "iodepth_batch_submit=16"

echo "== errors"
expect_rc 2 "unknown engine" run --ioengine nope --emit-fio
expect_rc 2 "bad engine option value" run --ioengine io_uring --sqpoll_cpu x --emit-fio
expect_rc 2 "mmap cannot do O_DIRECT" run --ioengine mmap --direct 1 --emit-fio
expect_err "the error names the fix" "--direct=0"

echo "== a control character in a string option is refused, never emitted"
# a newline in --filename used to add its own fio options to the job file: exec_prerun ran
# a shell command under fio
for opt in filename directory cpus_allowed; do
	expect_rc 2 "a newline in --$opt" run --"$opt" $'x\nexec_prerun=touch '"$T/pwned" \
		--size 1m --emit-fio
	expect_err "--$opt: names the option and the byte" "$opt holds a control character" \
		"0x0a"
	check "--$opt: no job file was printed" test ! -s "$T/stdout"
done
expect_rc 2 "a tab in an engine option" run --ioengine io_uring --sqpoll_cpu $'1\t' --emit-fio
expect_err "names the engine option" "sqpoll_cpu holds a control character" "0x09"
expect_rc 2 "an escape in a recipe parameter" run --workload ckpt --model gpt2 \
	--directory "$T" --ranks $'1\e[2J' --quiet
expect_err "names the parameter" "--ranks holds a control character" "0x1b"
expect_rc 2 "a newline in --model" run --workload ckpt --model $'gpt2\n' --directory "$T"
expect_err "names --model" "--model holds a control character"
check "no injected command ran" test ! -e "$T/pwned"
printf '[a]\nfilename=%s/a\tb\nsize=1m\nrw=read\n' "$T" >"$T/tab.ini"
expect_rc 2 "a tab in a job file's value" sweep "$T/tab.ini" --dry-run
expect_err "names the file, the line and the key" "tab.ini:2: filename:" \
	"filename holds a control character (byte 0x09"

# both FIO_FILE LLMIO_ARGS...: run the emitted job with fio and the job with llmio; prints
# "fio_ios llmio_ios".
both() {
	local job=$1; shift
	fio --output-format=json --output="$T/fio.json" "$job" >"$T/fio.log" 2>&1 ||
		{ echo "fio-failed $(head -c 300 "$T/fio.log")"; return; }
	"$LLMIO" run "$@" --json "$T/llmio.json" --quiet >/dev/null 2>&1 ||
		{ echo "llmio-failed"; return; }
	echo "$(json_get "$T/fio.json" 'j["read"]["total_ios"] + j["write"]["total_ios"]')" \
		"$(json_get "$T/llmio.json" 'j["read"]["total_ios"] + j["write"]["total_ios"]')"
}

if [ "$HAVE_FIO" = 1 ]; then
	echo "== fio runs the emitted jobs: the same amount of I/O"
	got=$(both "$T/null.fio" --ioengine null --rw randread --bs 4k --iodepth 16 --io_size 8m --numjobs 2)
	check "null, io_size 8m x 2 threads: fio and llmio both do 4096 I/Os ($got)" \
		test "$got" = "4096 4096"
	head -c $((8 << 20)) /dev/zero >"$T/f"
	emit seq2run --ioengine psync --filename "$T/f" --rw read --bs 4k --numjobs 2 --size 8m
	got=$(both "$T/seq2run.fio" --ioengine psync --filename "$T/f" --rw read --bs 4k \
		--numjobs 2 --size 8m)
	check "psync read 8 MiB over 2 threads: both do 2048 I/Os ($got)" test "$got" = "2048 2048"
fi
finish
