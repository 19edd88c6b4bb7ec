#!/bin/bash
# cli_fio_readonly.sh: fio's --readonly, a safety net: every write refused up front (exit 2 for
# the job's write I/Os, exit 1 for a layout the target would need), nothing on disk changes; a read of
# files that are there runs as usual; in a job file too; the names fio has and llmio refuses
# (eta-newline, iodepth_low, thinktime_spin) are refused by name with the nearest llmio option.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/data
dd if=/dev/urandom of="$F" bs=1M count=4 status=none
sum=$(md5sum <"$F")

for rw in write randwrite rw randrw; do
	expect_rc 2 "--readonly --rw=$rw: refused" run --readonly --filename="$F" --rw=$rw \
		--bs=4k --size=4m --ioengine=psync
	expect_err "...naming --readonly and the write" "--readonly: this job writes (rw=$rw)"
done
check "the file is untouched" test "$(md5sum <"$F")" = "$sum"
expect_rc 0 "--readonly --rw=randread of the file as it is" run --readonly --filename="$F" \
	--rw=randread --bs=4k --size=4m --ioengine=psync --io_size=1m
expect_rc 1 "--readonly: a file to create is refused" run --readonly --filename="$T/new" \
	--rw=read --bs=4k --size=1m --ioengine=psync
expect_err "...saying it would be created" "--readonly: $T/new would have to be created"
check "...and it was not" test ! -e "$T/new"
expect_rc 1 "--readonly --extend: a file to extend is refused" run --readonly --extend \
	--filename="$F" --rw=read --bs=4k --size=8m --ioengine=psync
check "...the file is still 4 MiB" test "$(stat -c %s "$F")" -eq $((4 << 20))
expect_rc 0 "--readonly=0: the safety net off" run --readonly=0 --filename="$T/new" --rw=read \
	--bs=4k --size=1m --ioengine=psync

cat >"$T/w.fio" <<EOF2
[global]
readonly=1
bs=4k
size=1m
[w]
rw=write
filename=$T/w.dat
EOF2
expect_rc 2 "a job file with readonly=1 and a write job" run "$T/w.fio"
check "...wrote nothing" test ! -e "$T/w.dat"

for o in eta-newline=2 iodepth_low=4 thinktime_spin=10; do
	expect_rc 2 "--$o: refused by name" run --$o --filename="$F" --rw=read --bs=4k --size=1m
	expect_err "...naming it" "${o%%=*}"
done

finish
