#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_blockdev.sh: raw block devices are safe to point llmio at.
#
# Writing to a raw device destroys what is on it, so llmio must refuse unless told twice:
#   - reads are always allowed (and measure the whole device when --size is not given);
#   - a write needs --allow-destructive (exit 2 otherwise, naming the option);
#   - a device holding a filesystem also needs --force (the refusal names the filesystem
#     and --force), and a refused write must leave the filesystem intact;
#   - a mounted device is refused with --allow-destructive alone;
#   - on a filesystem that does no O_DIRECT (ext4 data=journal on the loop device), quick and
#     workloads fall back to the page cache after asking the filesystem, and --direct=1 is a
#     usage error.
# Only a loop device over an image file in the test's temp dir is ever written; the script
# skips (77) unless it is root and `losetup -f` works.  The trap always unmounts and
# detaches the loop device.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root for loop devices"
command -v losetup >/dev/null || skip_all "losetup not installed"
losetup -f >/dev/null 2>&1 || skip_all "no free loop device (losetup -f failed)"

LOOP=
MNT=
on_exit() {
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT"; fi
	[ -n "$LOOP" ] || return 0
	# A device still open (an io_uring ring is released a little after its process exits)
	# is detached by the kernel on its last close: wait for that, so the next test finds it free.
	losetup -d "$LOOP" || echo "warning: losetup -d $LOOP failed"
	for _ in $(seq 50); do [ -e "/sys/block/${LOOP#/dev/}/loop" ] || return 0; sleep 0.1; done
	echo "warning: $LOOP still attached 5 s after losetup -d"
}

IMG=$T/disk.img
truncate -s 64m "$IMG"
# Something recognisable at the start of the "disk", to see that refused writes change nothing.
printf 'LLMIO-TEST-MARK' | dd of="$IMG" conv=notrunc status=none
LOOP=$(losetup -f --show "$IMG" 2>"$T/stderr") || { LOOP=; skip_all "losetup -f --show failed: $(cat "$T/stderr")"; }
case $LOOP in
/dev/loop[0-9]*) echo "using $LOOP over $IMG" | sed "s|$T|\$T|g" ;;
*) fail "losetup gave '$LOOP', not a loop device"; LOOP=; finish ;;
esac

# The device must not be claimed when a step starts: after an io_uring write job exits, the
# kernel drops the ring's reference to the device a few tens of ms later (io_uring's exit
# work), and until then an exclusive open (llmio's, mkfs's) gets EBUSY.
wait_free() {
	for _ in $(seq 100); do
		python3 -c 'import os,sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))' \
			"$LOOP" 2>/dev/null && return 0
		sleep 0.05
	done
	note "$LOOP still claimed after 5 s"
}
mark_intact() { [ "$(head -c 15 "$IMG")" = LLMIO-TEST-MARK ]; }
is_ext4() { [ "$(od -An -tx1 -j1080 -N2 "$LOOP" | tr -d ' ')" = 53ef ]; } # s_magic 0xEF53

ENG=io_uring
"$LLMIO" engines --brief 2>/dev/null | grep -Eq "^io_uring +available" || ENG=psync
RD=(--filename "$LOOP" --rw randread --runtime 0.3 --time_based --direct=1 --ioengine "$ENG")
WR=(--filename "$LOOP" --rw randwrite --runtime 0.3 --time_based --direct=1 --ioengine "$ENG")

echo "== reads are allowed"
expect_rc 0 "read job on $LOOP" run "${RD[@]}" --json "$T/r.json"
[ -f "$T/r.json" ] && json_check "$T/r.json" "read: whole 64 MiB device, I/O done, device counters for ${LOOP#/dev/}" \
	'j["target_bytes"] == 64 << 20 and j["read"]["total_ios"] > 0 and j["device"]["known"] and j["device"]["name"] == "'"${LOOP#/dev/}"'"'
expect_rc 2 "--size beyond the device is a usage error" run "${RD[@]}" --size 128m

echo "== reads leave the device node's access time alone unless --noatime=0"
atime() { stat -c %X "$LOOP"; }
touch -a -d '2 days ago' "$LOOP"
before=$(atime)
expect_rc 0 "read with the default" run "${RD[@]}" --direct=0
check "default: the access time of $LOOP is unchanged" test "$(atime)" = "$before"
expect_rc 0 "read with --noatime=0" run "${RD[@]}" --direct=0 --noatime=0
if [ "$(atime)" = "$before" ]; then
	note "/dev does not update access times here: --noatime=0 unchecked"
else
	check "--noatime=0: the read updated the access time" test "$(atime)" -gt "$before"
fi

echo "== writes need --allow-destructive"
expect_rc 2 "write without --allow-destructive" run "${WR[@]}" &&
	expect_err "refusal names --allow-destructive" "--allow-destructive"
check "refused write left the data alone" mark_intact
wait_free
expect_rc 0 "write with --allow-destructive on a blank device" run "${WR[@]}" --allow-destructive \
	--json "$T/w.json"
[ -f "$T/w.json" ] && json_check "$T/w.json" "write: I/O done" 'j["write"]["total_ios"] > 0'

echo "== a device holding a filesystem also needs --force"
if ! command -v mkfs.ext4 >/dev/null; then
	note "mkfs.ext4 not installed: the filesystem checks are skipped"
	finish
fi
wait_free
run mkfs.ext4 -q -F "$LOOP"
if [ "$RC" -ne 0 ]; then
	fail "mkfs.ext4 $LOOP failed: $(cat "$T/stderr")"
	finish
fi
check "mkfs made ext4" is_ext4
llmio run "${WR[@]}" --allow-destructive
if [ "$RC" -eq 2 ] || [ "$RC" -eq 1 ]; then
	pass "write over ext4 with --allow-destructive alone refused (exit $RC)"
	expect_err "refusal names the filesystem and --force" ext4 --force
else
	fail "write over ext4 with --allow-destructive alone: exit $RC, expected a refusal"
fi
check "refused write left the filesystem intact" is_ext4
wait_free
expect_rc 0 "write over ext4 with --allow-destructive --force" run "${WR[@]}" \
	--allow-destructive --force

echo "== a mounted device is refused"
wait_free
run mkfs.ext4 -q -F "$LOOP"
MNT=$T/mnt
mkdir "$MNT"
if [ "$RC" -ne 0 ]; then
	fail "mkfs.ext4 $LOOP (second) failed: $(cat "$T/stderr")"
elif ! mount "$LOOP" "$MNT" 2>"$T/stderr"; then
	note "cannot mount $LOOP ($(cat "$T/stderr")): the mounted-device check is skipped"
	MNT=
else
	echo data >"$MNT/file" && sync
	llmio run "${WR[@]}" --allow-destructive
	if [ "$RC" -ne 0 ]; then
		pass "write to a mounted device with --allow-destructive refused (exit $RC)"
		expect_err "refusal says it is mounted" mounted
	else
		fail "write to a mounted device with --allow-destructive was not refused"
	fi
	check "mounted filesystem still readable" test "$(cat "$MNT/file")" = data
	expect_rc 0 "read job on the mounted device is allowed" run "${RD[@]}"
fi

# ext4 with data=journal accepts O_DIRECT at open and does buffered I/O (STATX_DIOALIGN says
# so): an explicit --direct=1 is refused with the fix, and what picks O_DIRECT by default
# (quick, workloads) asks the filesystem first and runs through the page cache instead.
echo "== a filesystem that does no O_DIRECT"
if [ -z "$MNT" ]; then
	note "no mounted filesystem: the O_DIRECT fallback checks are skipped"
	finish
fi
umount "$MNT"
if ! mount -o data=journal "$LOOP" "$MNT" 2>"$T/stderr"; then
	note "cannot mount with data=journal ($(cat "$T/stderr")): the O_DIRECT checks are skipped"
	MNT=
	finish
fi
expect_rc 2 "--direct=1 on a data=journal file is a usage error" run --filename "$MNT/f" \
	--size 4m --rw read --direct=1 --ioengine psync &&
	expect_err "the refusal names the cause and the fix" "does not support O_DIRECT" "--direct=0"
expect_rc 0 "quick on it" quick --dir "$MNT/q" --size 16m --runtime 50ms --json "$T/qj.json"
expect_out "quick says why it runs through the page cache" "does buffered I/O" \
	"every point runs through the page cache"
[ -f "$T/qj.json" ] && json_check "$T/qj.json" "quick: no point ran O_DIRECT, none failed" \
	'd["jobs"] and not any(x["job options"]["direct"] == "1" for x in d["jobs"]) and all(x["error"] == 0 for x in d["jobs"])'
expect_rc 0 "a workload on it" run --workload ckpt --model gpt2 --directory "$MNT" \
	--scale 0.002 --engine psync --quiet --json "$T/wj.json"
[ -f "$T/wj.json" ] && json_check "$T/wj.json" "workload: the phase says O_DIRECT was refused and it ran buffered" \
	'"O_DIRECT refused here" in d["runs"][0]["phases"][0]["note"] and "ran buffered" in d["runs"][0]["phases"][0]["note"]'
check "no probe file left behind" test -z "$(find "$MNT" -name '.llmio-direct-probe*')"

finish
