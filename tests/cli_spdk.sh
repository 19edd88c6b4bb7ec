#!/bin/bash
# cli_spdk.sh: the spdk engine end to end on the fake SPDK (tests/fake_spdk, namespace 1 backed
# by a file here): bytes written land at the LBAs they were written to (the image is byte for
# byte what psync writes to a file for the same job), reads give them back verified, and each
# refusal says why: SPDK absent, a library that does not load, no controller at the address,
# spdk_env_init failing, writes without --allow_destructive.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

FAKE=$(dirname "$LLMIO")/tests/fake_spdk/libspdk_nvme.so
[ -f "$FAKE" ] || skip_all "the fake SPDK is not built ($FAKE)"
IMG=$T/ns.img
truncate -s 4m "$IMG"
J=$T/r.json
TRID="trtype=PCIe traddr=0000:04:00.0 ns=1"
S=(env LLMIO_SPDK="$FAKE" LLMIO_FAKE_SPDK_NS="$IMG" "$LLMIO")

echo "== probe: SPDK absent, or a library that does not load"
run env -u LLMIO_SPDK LD_LIBRARY_PATH= "$LLMIO" engines --brief
said "without SPDK the probe says it is not installed and how to get it" \
	"SPDK is not installed: libspdk_nvme.so not found" "--with-shared"
run env LLMIO_SPDK="$T/nope.so" "$LLMIO" engines --brief
said "a wrong LLMIO_SPDK is named" "LLMIO_SPDK=$T/nope.so does not load"
run "${S[@]}" engines --brief
said "with the library: available, and which PCI functions SPDK could take" \
	"uses: $FAKE" "vfio-pci"

echo "== writes land at their LBAs; reads verify"
# iodepth 1, as psync: which buffer carries which block is then the same in both
run "${S[@]}" run --ioengine spdk --filename "$TRID" --rw write --bs 64k --size 1m \
	--iodepth 1 --allow_destructive=1 --json "$J" --quiet
check "spdk write ran (exit $RC): $(head -c 300 "$T/stderr")" test "$RC" -eq 0
json_check "$J" "served by the device (NVMe commands, no page cache)" \
	'j["service"] == "device" and "NVMe commands to the device (spdk)" in j["service_reason"]'
json_check "$J" "1 MiB written; notes name the namespace and polling" \
	'j["write"]["io_bytes"] == 1 << 20 and "512-byte LBAs" in j["engine_notes"] and "polled" in j["engine_notes"]'
expect_rc 0 "psync writes the same job to a file" run --ioengine psync \
	--filename "$T/psync.dat" --rw write --bs 64k --size 1m --quiet
check "the namespace's first 1 MiB is byte for byte psync's file" \
	cmp -n 1048576 "$IMG" "$T/psync.dat"
check "nothing was written past --size" \
	cmp -i 1048576:0 -n 1048576 "$IMG" /dev/zero
run "${S[@]}" run --ioengine spdk --filename "$TRID" --rw write --bs 16k --size 1m \
	--iodepth 32 --verify crc32c --allow_destructive=1 --quiet
check "a write with verify: its read-back goes through the engine, and passes (exit $RC)" \
	test "$RC" -eq 0
run "${S[@]}" run --ioengine spdk --filename "$TRID" --rw write --bs 16k --size 1m \
	--iodepth 32 --verify crc32c --do_verify=0 --allow_destructive=1 --quiet
check "write with verify=crc32c at iodepth 32 (exit $RC): $(head -c 300 "$T/stderr")" \
	test "$RC" -eq 0
# every block, though the fake's qpair holds 16 commands: the rest wait in the engine's backlog
run "${S[@]}" run --ioengine spdk --filename "trtype=PCIe traddr=0000.04.00.0" --rw read \
	--bs 16k --size 1m --iodepth 32 --verify crc32c --json "$J" --quiet
check "every block reads back verified, fio's form of the address (exit $RC): $(head -c 300 "$T/stderr")" \
	test "$RC" -eq 0
json_check "$J" "all of it read" 'j["read"]["io_bytes"] == 1 << 20'
printf '\377' | dd of="$IMG" bs=1 seek=40000 conv=notrunc status=none
run "${S[@]}" run --ioengine spdk --filename "$TRID" --rw read --bs 16k --size 1m \
	--verify crc32c --quiet
check "a byte flipped in the namespace: the read's verify fails (exit $RC)" test "$RC" -eq 1
expect_err "...naming the block" "32768"

echo "== refusals"
run "${S[@]}" run --ioengine spdk --filename "$TRID" --rw write --bs 4k --size 64k --quiet
check "a write without --allow_destructive fails" test "$RC" -ne 0
expect_err "it says what it would destroy" "destroys what the namespace holds" \
	"--allow_destructive=1"
run "${S[@]}" run --ioengine spdk --filename "trtype=PCIe traddr=ffff:00:00.0" --rw read \
	--bs 4k --quiet
check "no controller at the address fails" test "$RC" -ne 0
expect_err "it says to bind the device" "found no controller" "scripts/setup.sh"
run env LLMIO_FAKE_SPDK_ENV_FAIL=1 "${S[@]}" run --ioengine spdk --filename "$TRID" \
	--rw read --bs 4k --quiet
check "spdk_env_init failing fails the job" test "$RC" -ne 0
expect_err "it names hugepages" "spdk_env_init failed" "hugepages"
run "${S[@]}" run --ioengine spdk --filename "/dev/nvme0n1" --rw read --bs 4k --quiet
check "a path is not a transport ID" test "$RC" -ne 0
expect_err "it shows the form" "is not an SPDK transport ID" "trtype=PCIe"

echo "== fio's name"
expect_rc 0 "--emit-fio" run --ioengine spdk --filename "$TRID" --rw read --bs 4k --emit-fio
expect_out "ioengine=spdk" "ioengine=spdk"
finish
