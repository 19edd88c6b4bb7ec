#!/bin/bash
# cli_pmem2.sh: the pmem2 engine (libpmem2) end to end on a regular file, where libpmem2 maps
# with page granularity and persists with msync: the bytes written land in the file, reads give
# them back, and the record says the granularity ("page") and the persist mechanism.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/pmem.dat
J=$T/r.json

echo "== writes land in the file, with the granularity and mechanism in the record"
expect_rc 0 "pmem2 sequential write" run --ioengine pmem2 --filename "$F" --rw write --bs 64k \
	--size 1m --verify crc32c --json "$J" --quiet
json_check "$J" "every byte written" 'j["write"]["io_bytes"] == 1024*1024'
json_check "$J" "the record says page granularity and msync" \
	'"store granularity page" in j["engine_notes"] and "msync()" in j["engine_notes"]'
check "the file holds 1 MiB" test "$(stat -c %s "$F")" -eq 1048576
# the same job through pwrite writes the same bytes: the file must be identical
expect_rc 0 "psync writes the same job to another file" run --ioengine psync \
	--filename "$T/psync.dat" --rw write --bs 64k --size 1m --verify crc32c --quiet
check "pmem2's file is byte for byte psync's" cmp "$F" "$T/psync.dat"
expect_rc 0 "psync reads pmem2's blocks back and verifies their checksums" run --ioengine psync \
	--filename "$F" --rw read --bs 64k --size 1m --verify crc32c --quiet

echo "== reads through the mapping, and persist=sync"
expect_rc 0 "pmem2 random reads verify" run --ioengine pmem2 --filename "$F" --rw randread \
	--bs 64k --size 1m --io_size 256k --verify crc32c --json "$J" --quiet
json_check "$J" "reads done read-only" \
	'j["read"]["io_bytes"] == 256*1024 and "mapped read-only" in j["engine_notes"]'
expect_rc 0 "pmem2 persist=sync" run --ioengine pmem2 --persist=sync --filename "$F" \
	--rw write --bs 64k --size 1m --end_fsync=1 --json "$J" --quiet
json_check "$J" "the notes say when it persists" '"at fsync" in j["engine_notes"]'

echo "== what it refuses"
expect_rc 2 "pmem2 with O_DIRECT is a usage error" run --ioengine pmem2 --filename "$F" \
	--rw read --bs 4k --size 1m --direct=1
expect_err "it says to drop O_DIRECT" "--direct=0"

echo "== a sweep dimension, beside mmap"
cat >"$T/sw.ini" <<EOF2
[global]
filename=$F
rw=randread
size=1m
io_size=256k
bs=4k
[eng]
ioengine=mmap,pmem2
EOF2
expect_rc 0 "sweep ioengine=mmap,pmem2" sweep "$T/sw.ini" -o "$T/j.jsonl" --keep --quiet
check "one point each" test "$(grep -c '"ioengine":"pmem2"' "$T/j.jsonl")" -ge 1

echo "== a character device that is not device DAX"
if [ "$(id -u)" = 0 ] && mknod "$T/dax9.0" c 1 3 2>/dev/null; then
	run "$LLMIO" run --ioengine pmem2 --filename "$T/dax9.0" --rw read --bs 4k --quiet
	check "refused (exit $RC)" test "$RC" -ne 0
	expect_err "it says it is not device DAX" "is a character device but not device DAX"
else
	note "not root (mknod): the device-DAX refusal is not checked here"
fi

echo "== fio's name for it"
expect_rc 0 "--emit-fio" run --ioengine pmem2 --filename "$F" --rw write --bs 4k --size 1m \
	--emit-fio
expect_out "fio's engine is libpmem" "ioengine=libpmem"
expect_rc 0 "libpmem is an alias" run --ioengine libpmem --filename "$F" --rw read --bs 4k \
	--size 1m --io_size 64k --quiet --json "$J"
json_check "$J" "the alias ran pmem2" '"libpmem2" in j["engine_notes"]'
finish
