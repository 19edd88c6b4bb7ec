#!/bin/bash
# cli_fio_cmdline.sh: fio's command lines as fio reads them (docs/fio.md, "Command lines"):
# one job per --name, each with the options after it over the options before the first
# (fio's global options), run as a job file's jobs; and --runtime without --time_based ends
# with the job's bytes (fio's time_based=0), --time_based runs the whole runtime.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

J=$T/out.json
cd "$T" || exit 1

echo "== several --name: one job each"
expect_rc 0 "two jobs on one command line" \
	run --ioengine=null --size=64k --bs=4k --name=a --rw=read --name=b --rw=write --bs=8k \
	--output-format=json --output "$J"
json_check "$J" "two jobs, in order, named" '[x["jobname"] for x in d["jobs"]] == ["a", "b"]'
json_check "$J" "a: the global options and its own" \
	'd["jobs"][0]["read"]["io_bytes"] == 65536 and d["jobs"][0]["read"]["total_ios"] == 16 and d["jobs"][0]["write"]["io_bytes"] == 0'
json_check "$J" "b: its own bs over the global one" \
	'd["jobs"][1]["write"]["io_bytes"] == 65536 and d["jobs"][1]["write"]["total_ios"] == 8 and d["jobs"][1]["read"]["io_bytes"] == 0'
json_check "$J" "run together, one group (fio's groupid 0)" \
	'[x["groupid"] for x in d["jobs"]] == [0, 0]'
expect_rc 0 "--stonewall: the second job after the first, its own group" \
	run --ioengine=null --size=64k --name=a --rw=read --name=b --stonewall --rw=write \
	--output-format=json --output "$J"
json_check "$J" "groups 0 and 1" '[x["groupid"] for x in d["jobs"]] == [0, 1]'
expect_rc 0 "files of their own without --filename (fio's JOBNAME.0.0)" \
	run --size=64k --rw=write --name=f1 --name=f2 --quiet
check "f1.0.0 and f2.0.0" test -s f1.0.0 -a -s f2.0.0
expect_rc 0 "an engine per job: its options after its --ioengine" \
	run --size=64k --rw=read --name=u --ioengine=io_uring --iodepth=4 --sqthread_poll=0 \
	--name=n --ioengine=null --output-format=json --output "$J"
json_check "$J" "both ran their bytes" \
	'[x["read"]["io_bytes"] for x in d["jobs"]] == [65536, 65536]'
expect_rc 2 "an engine option of another job's engine" \
	run --size=64k --name=u --ioengine=io_uring --name=p --sqthread_poll=0
expect_err "named with the engine" "--sqthread_poll is an option of the io_uring engine"
expect_rc 2 "--emit-fio with several jobs" run --ioengine=null --size=1m --name=a --name=b \
	--emit-fio
expect_err "says why" "--emit-fio writes one job"

echo "== --runtime without --time_based: fio's meaning, the bytes first"
expect_rc 0 "a 64 KiB job with --runtime=60 ends with its bytes" \
	run --name=r --ioengine=null --rw=read --size=64k --runtime=60 --output-format=json \
	--output "$J"
json_check "$J" "it moved its size, once" 'j["read"]["io_bytes"] == 65536 and j["read"]["total_ios"] == 16'
printf '[r]\nioengine=null\nrw=read\nsize=64k\nruntime=60\n' > r.fio
expect_rc 0 "a job file the same" run r.fio --output-format=json --output "$J"
json_check "$J" "its size, once" 'j["read"]["io_bytes"] == 65536'
expect_rc 0 "with --time_based it runs the whole runtime" \
	run --name=t --ioengine=null --rw=read --size=64k --runtime=0.3 --time_based \
	--output-format=json --output "$J"
json_check "$J" "more than its size: it went round again" 'j["read"]["io_bytes"] > 65536'
expect_rc 0 "--loops: the bytes that many times" \
	run --name=l --ioengine=null --rw=read --size=64k --loops=3 --runtime=60 \
	--output-format=json --output "$J"
json_check "$J" "three times its size" 'j["read"]["io_bytes"] == 3 * 65536'

finish
