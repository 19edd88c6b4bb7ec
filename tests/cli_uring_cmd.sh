#!/bin/bash
# cli_uring_cmd.sh: what the uring_cmd engine (NVMe passthrough) says on a machine where it
# cannot run, what it refuses, and its fio mapping.  Its I/O is tested for real in a QEMU
# guest with an emulated NVMe controller: tests/qemu/run_guest.sh (ctest qemu_nvme).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/data
head -c 1048576 /dev/zero >"$F"

echo "== the probe says exactly why it cannot run"
expect_rc 0 "llmio engines" engines --brief
if ls /dev/ng[0-9]* >/dev/null 2>&1; then
	note "this machine has NVMe generic devices: the refusal checks are skipped"
else
	said "no NVMe generic device is named as the reason" \
		"uring_cmd unavailable" "no NVMe generic character device (/dev/ngXnY)"
	expect_rc 1 "a run says the engine cannot run here" run --ioengine uring_cmd \
		--filename "$F" --rw read --bs 4k
	expect_err "with the probe's reason" "engine uring_cmd cannot run here" "/dev/ngXnY"
fi

echo "== a generic device given as the target names the block device to give"
if [ "$(id -u)" = 0 ] && mknod "$T/ng9n1" c 1 3 2>/dev/null; then
	expect_rc 2 "an NVMe generic device is not a --filename" run --ioengine psync \
		--filename "$T/ng9n1" --rw read --bs 4k
	expect_err "it says to give the namespace's block device with uring_cmd" \
		"is an NVMe generic (character) device" "/dev/nvme9n1" "--ioengine uring_cmd"
else
	note "not root (mknod): the generic-device refusal is not checked here"
fi

echo "== fio's name and options"
expect_rc 0 "--emit-fio" run --ioengine uring_cmd --iopoll=1 --filename /dev/nvme0n1 \
	--rw randread --bs 4k --iodepth 16 --emit-fio
said "fio's io_uring_cmd engine, polled, nvme commands, and the filename fio wants" \
	"ioengine=io_uring_cmd" "hipri=1" "cmd_type=nvme" "fixedbufs=0" \
	"fio's io_uring_cmd takes the generic device"
expect_rc 0 "io_uring_cmd is an alias" run --ioengine io_uring_cmd --filename /dev/nvme0n1 \
	--rw read --bs 4k --emit-fio
expect_out "the alias is uring_cmd" "ioengine=io_uring_cmd"
finish
