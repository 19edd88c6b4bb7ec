#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_run.sh: `llmio run` measures and reports correctly.
#
# The outputs are what users and scripts consume, so they are checked for content, not just
# for existing: the JSON parses and carries fio's fields (read.iops, clat percentiles) plus
# llmio's own (cpu, device, gb_per_s_per_core, histogram) with self-consistent numbers; the
# CSV is one header and one data line of equal width; I/O counts are exact when the amount
# is fixed (--io_size on the null engine: 8 MiB / 4 KiB = 2048 I/Os, twice that with
# --numjobs 2); an O_DIRECT write with end_fsync really reaches the device (block-layer
# counters, when the device is known); `--name value` and `--name=value` mean the same;
# --json - / --csv - write to stdout; and the example API program runs.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
J=$T/out.json
C=$T/out.csv

# The fastest async engine that can run here (io_uring may be disabled by the kernel or a
# seccomp policy; then the same checks run on libaio or psync).
ENG=
for e in io_uring libaio psync; do
	if "$LLMIO" engines --brief 2>/dev/null | grep -Eq "^$e +available"; then ENG=$e; break; fi
done
[ -n "$ENG" ] || { fail "no engine of io_uring, libaio, psync is available"; finish; }
[ "$ENG" = io_uring ] || note "io_uring is not available here; using $ENG"

echo "== a measured run with --json and --csv ($ENG randread, O_DIRECT, QD 8)"
expect_rc 0 "run" run --filename "$T/f" --size 16m --rw randread --bs 4k --ioengine "$ENG" \
	--iodepth 8 --direct=1 --runtime 0.5 --time_based --json "$J" --csv "$C"
expect_out "table on stdout" "IOPS" "p99" "cpu" "device"
check "target laid out at --size" test "$(stat -c %s "$T/f" 2>/dev/null)" = $((16 * MiB))
json_check "$J" "JSON: one job, no error, not interrupted" \
	'len(d["jobs"]) == 1 and j["error"] == 0 and j["interrupted"] is False'
json_check "$J" "JSON: job options echo the command line" \
	'j["job options"]["ioengine"] == "'$ENG'" and j["job options"]["iodepth"] == 8 and j["job options"]["bs"] == 4096 and j["job options"]["rw"] == "randread" and j["job options"]["direct"] is True'
json_check "$J" "JSON: read.iops > 0, no writes" \
	'j["read"]["iops"] > 0 and j["read"]["total_ios"] > 0 and j["write"]["total_ios"] == 0'
json_check "$J" "JSON: read.io_bytes = total_ios * bs" \
	'j["read"]["io_bytes"] == j["read"]["total_ios"] * 4096'
json_check "$J" "JSON: clat p99 present, percentiles ordered" \
	'(lambda p: "99.000000" in p and p["50.000000"] <= p["99.000000"] <= p["99.900000"] <= j["read"]["clat_ns"]["max"])(j["read"]["clat_ns"]["percentile"])'
json_check "$J" "JSON: clat samples = completed reads" \
	'j["read"]["clat_ns"]["N"] == j["read"]["total_ios"]'
json_check "$J" "JSON: llmio fields cpu, device, gb_per_s_per_core, histogram" \
	'all(k in j for k in ("cpu", "device", "gb_per_s_per_core", "histogram"))'
json_check "$J" "JSON: CPU figures sane" \
	'j["cpu"]["online_cpus"] >= 1 and j["cpu"]["proc_s"] >= 0 and j["gb_per_s_per_core"] > 0'
json_check "$J" "JSON: histogram holds every read completion" \
	'sum(c for _, c in j["histogram"]["read"]["clat_ns"]) == j["read"]["total_ios"]'
json_check "$J" "JSON: measured time close to --runtime 0.5" \
	'400 <= j["job_runtime"] <= 5000'
json_check "$J" "JSON: O_DIRECT in effect" 'j["direct_in_effect"] is True'

if [ -f "$C" ]; then
	pass "CSV written"
	check "CSV: a header and exactly one data line" test "$(wc -l <"$C")" -eq 2
	check "CSV: header names the columns" grep -q '^engine,rw,bs,iodepth,.*read_iops' "$C"
	check "CSV: header and data line have the same number of fields" \
		test "$(head -n 1 "$C" | tr -cd , | wc -c)" -eq "$(sed -n 2p "$C" | tr -cd , | wc -c)"
	check "CSV: data line matches the job" grep -q "^$ENG,randread,4096,8,1,1," "$C"
else
	fail "CSV $C not written"
fi

echo "== exact I/O counts (null engine, fixed --io_size), --name=value form"
expect_rc 0 "null engine, io_size 8m" run --ioengine=null --filename="$T/null" --bs=4k \
	--size=64m --io_size=8m --json="$J"
json_check "$J" "null: 8 MiB / 4 KiB = 2048 reads exactly" \
	'j["read"]["total_ios"] == 2048 and j["read"]["io_bytes"] == 8 << 20 and j["write"]["total_ios"] == 0'
expect_rc 0 "null engine, io_size 8m, numjobs 2" run --ioengine null --filename "$T/null" \
	--bs 4k --size 64m --io_size 8m --numjobs 2 --json "$J"
json_check "$J" "null numjobs 2: each thread moves io_size: 4096 reads" \
	'j["read"]["total_ios"] == 4096 and j["job options"]["numjobs"] == 2'
expect_rc 0 "null engine, randrw" run --ioengine null --filename "$T/null" --bs 4k \
	--size 64m --io_size 8m --rw randrw --json "$J"
json_check "$J" "null randrw: reads + writes = 2048, both present" \
	'j["read"]["total_ios"] + j["write"]["total_ios"] == 2048 and j["read"]["total_ios"] > 0 and j["write"]["total_ios"] > 0'

# The two spellings must give the same job.
expect_rc 0 "options as --name value" run --ioengine null --filename "$T/null" --size 64m \
	--bs 8k --rw randread --iodepth 4 --io_size 1m --json "$T/a.json"
expect_rc 0 "options as --name=value" run --ioengine=null --filename="$T/null" --size=64m \
	--bs=8k --rw=randread --iodepth=4 --io_size=1m --json="$T/b.json"
if [ -f "$T/a.json" ] && [ -f "$T/b.json" ]; then
	check "--name value and --name=value give the same job options" test \
		"$(json_get "$T/a.json" 'j["job options"]')" = "$(json_get "$T/b.json" 'j["job options"]')"
	json_check "$T/a.json" "--name value was applied" \
		'j["job options"]["bs"] == 8192 and j["job options"]["iodepth"] == 4 and j["read"]["total_ios"] == 128'
fi
expect_rc 0 "engine option before --ioengine" run --iodepth=2 --ioengine null \
	--filename "$T/null" --size 64m --io_size 1m --quiet

echo "== --json - and --csv - write to stdout"
expect_rc 0 "--json - --quiet" run --ioengine null --filename "$T/null" --size 64m \
	--io_size 1m --json - --quiet
check "stdout is exactly the JSON document" python3 -c \
	'import json,sys; d=json.load(open(sys.argv[1])); assert d["jobs"][0]["read"]["total_ios"] == 256' \
	"$T/stdout"
expect_rc 0 "--csv - --quiet" run --ioengine null --filename "$T/null" --size 64m \
	--io_size 1m --csv - --quiet
check "stdout is exactly the CSV (2 lines)" test "$(wc -l <"$T/stdout")" -eq 2

echo "== an O_DIRECT write with end_fsync reaches the device"
expect_rc 0 "write 32m direct end_fsync" run --filename "$T/w" --rw write --bs 1m --size 32m \
	--direct=1 --end_fsync=1 --json "$J"
json_check "$J" "write: 32 I/Os of 1 MiB, one fsync" \
	'j["write"]["total_ios"] == 32 and j["write"]["io_bytes"] == 32 << 20 and j["read"]["total_ios"] == 0 and j["sync"]["total_ios"] >= 1'
if [ "$(json_get "$J" 'j["device"]["known"]' 2>/dev/null)" = True ]; then
	json_check "$J" "device counters: >= 32 MiB written to $(json_get "$J" 'j["device"]["name"]')" \
		'j["device"]["write_bytes"] >= 32 << 20'
else
	note "device.known is false for $T (no block device under it): device byte check skipped"
fi

echo "== the example program (public API)"
if [ -n "$EXAMPLE" ] && [ -x "$EXAMPLE" ]; then
	for e in psync "$ENG"; do
		run "$EXAMPLE" "$T/ex" "$e"
		if [ "$RC" -eq 0 ] && grep -q "reads" "$T/stdout"; then
			pass "example_job FILE $e: $(head -n 1 "$T/stdout")"
		else
			fail "example_job FILE $e: exit $RC, stdout: $(head -c 200 "$T/stdout"), stderr: $(head -c 300 "$T/stderr")"
		fi
	done
	run "$EXAMPLE"
	check "example_job without arguments is a usage error (2)" test "$RC" -eq 2
else
	fail "example binary '$EXAMPLE' not given or not executable"
fi

echo "== numjobs: a table per thread without group_reporting (fio's clones), one with it"
expect_rc 0 "numjobs=3" run --ioengine null --rw read --bs 4k --size 1m --numjobs 3 --name cl
for k in 1 2 3; do
	check "a table for thread $k of 3" grep -qx "cl: (groupid=0, thread $k of 3)" "$T/stdout"
done
check "then the three together" grep -qx "cl: (groupid=0) all 3 threads together" "$T/stdout"
check "four tables" test "$(grep -c '^  read ' "$T/stdout")" -eq 4
expect_rc 0 "numjobs=3 --group_reporting" run --ioengine null --rw read --bs 4k --size 1m \
	--numjobs 3 --name cl --group_reporting
check "group_reporting: one table, no thread's" test "$(grep -c '^  read ' "$T/stdout")" -eq 1 \
	-a -z "$(grep 'thread 1 of 3' "$T/stdout")"

echo "== noatime: reads leave the access time alone unless --noatime=0 (and others' files open)"
# relatime (the usual mount) updates an access time older than the modification time, so an
# access time set back two days moves on the first read unless the file was opened O_NOATIME.
A=$T/atime.dat
atime() { stat -c %X "$A"; }
expect_rc 0 "lay out a file" run --filename "$A" --size 1m --rw read --bs 64k --ioengine psync
touch -a -d '2 days ago' "$A"
before=$(atime)
expect_rc 0 "read with the default" run --filename "$A" --rw read --bs 64k --ioengine psync \
	--invalidate 0
check "default: the access time is unchanged" test "$(atime)" = "$before"
expect_rc 0 "read with --noatime=0" run --filename "$A" --rw read --bs 64k --ioengine psync \
	--invalidate 0 --noatime=0
if [ "$(atime)" = "$before" ]; then
	note "the filesystem of $T does not update access times (noatime mount): --noatime=0 unchecked"
else
	check "--noatime=0: the read updated the access time" test "$(atime)" -gt "$before"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# O_NOATIME is the owner's privilege: anyone else's read falls back to a plain open.
	chmod 755 "$T" && chmod 644 "$A"
	check "someone else's file: read as nobody with the default" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$LLMIO" run --filename "$A" \
		--rw read --bs 64k --ioengine psync --invalidate 0 --quiet
fi

finish
