#!/bin/bash
# shellcheck disable=SC2317 # on_exit runs from lib.sh's trap
# tests/qemu/run_guest.sh LLMIO [EXAMPLE]: NVMe passthrough (uring_cmd) and polled I/O for real,
# in a QEMU guest with an emulated NVMe controller (make test-qemu; docs/engines.md, uring_cmd).
#
# It boots qemu-system-x86_64 with TCG (-accel tcg: no KVM here), Debian's kernel
# (/boot/vmlinuz-*, package linux-image-amd64) booted with nvme.poll_queues=2, and an
# initramfs built here from busybox-static, the kernel's nvme modules (with their
# dependencies, loaded with insmod) and this llmio with the shared libraries ldd names.  The
# namespace is a raw image on the host:
#   -device nvme,serial=llmio,drive=d -drive file=IMG,if=none,id=d,format=raw
# The host first writes llmio's verify blocks (crc32c) into its first 8 MiB with psync; inside,
# llmio reads them back and checks every block through uring_cmd on /dev/ng0n1 (interrupt,
# polled, registered buffers) and through io_uring on the block device /dev/nvme0n1
# (interrupt, and IOPOLL on the poll queues): bytes read equal the image.  Then uring_cmd writes
# 4 MiB, and the host checks that the image holds exactly what psync writes to a file for the
# same job there, and that nothing else changed: bytes written land at the right LBAs.  Last, a
# short 4 KiB random-read comparison of the two paths (emulated: not a performance figure).
# And persistent memory: 128 MiB of the guest's RAM declared persistent (memmap=128M!768M, an
# e820 pmem region: /dev/pmem0), ext4 on it mounted -o dax, and the pmem2 engine writing a file
# there: libpmem2 must find cache-line granularity (CPU cache flushes, not msync), and psync
# reads every block back verified.
# Skips (77) when qemu, busybox-static, the kernel or its nvme modules are missing.
# LLMIO_QEMU_TIMEOUT: seconds the guest may take (1200); LLMIO_QEMU_KEEP_CONSOLE=FILE keeps its
# console output.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

KERNEL=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -V | tail -n 1)
KVER=${KERNEL#/boot/vmlinuz-}
BUSYBOX=$(command -v busybox || true)
command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
if [ -z "$KERNEL" ] || [ ! -r "$KERNEL" ]; then
	skip_all "no readable kernel in /boot (apt-get install linux-image-amd64)"
fi
if [ -z "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	skip_all "no static busybox (apt-get install busybox-static)"
fi
# nvme, and for the persistent-memory part the e820 pmem (nd_e820, nd_pmem) and ext4 modules
MODS=$(modprobe -S "$KVER" --show-depends nvme 2>/dev/null | awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++')
PMODS=$(for m in nd_e820 nd_pmem ext4; do modprobe -S "$KVER" --show-depends $m 2>/dev/null; done |
	awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++')
[ -n "$MODS" ] || skip_all "the nvme module of kernel $KVER is not in /lib/modules/$KVER"

R=$T/root
IMG=$T/ns.img
mkdir -p "$R"/{bin,dev,proc,sys,tmp,lib/modules}
cp "$BUSYBOX" "$R/bin/busybox"
MKE2FS=$(command -v mke2fs || true)
PMEM=0
if [ -n "$PMODS" ] && [ -n "$MKE2FS" ]; then
	PMEM=1
	MODS="$MODS $PMODS"
else
	note "no pmem/ext4 modules or no mke2fs: the persistent-memory part is left out"
fi
for m in $(echo "$MODS" | tr ' ' '\n' | awk 'NF && !seen[$0]++'); do
	cp "$m" "$R/lib/modules/"
	basename "$m" >>"$R/modules.list"
done
cp "$LLMIO" "$R/bin/llmio"
# not /bin/mke2fs: busybox installs its own (ext2 only) there
[ "$PMEM" = 0 ] || cp "$MKE2FS" "$R/bin/e2fsprogs-mke2fs"
# the shared libraries, where the dynamic linker looks for them
for b in "$LLMIO" ${MKE2FS:+"$MKE2FS"}; do ldd "$b"; done |
	awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}' | sort -u |
	while read -r lib; do
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done

cat >"$R/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# a module insmod loads does not read the kernel command line (modprobe would pass it): its
# parameters from there (nvme.poll_queues=2) are handed over here
for m in $(cat /modules.list); do
	mod=$(echo "${m%.ko}" | tr - _)
	insmod /lib/modules/$m $(tr ' ' '\n' </proc/cmdline | sed -n "s/^$mod\.//p")
done
i=0
while [ ! -e /dev/ng0n1 ] && [ $i -lt 120 ]; do sleep 0.5; i=$((i + 1)); done
sh /guest.sh >/dev/console 2>&1
echo "LLMIO-GUEST-DONE"
poweroff -f
INIT
chmod +x "$R/init"

cat >"$R/guest.sh" <<'GUEST'
export HOME=/tmp TMPDIR=/tmp
B=/dev/nvme0n1
step() { # step NAME ARGS...: llmio run ARGS --json /tmp/NAME.json, its result between markers
	name=$1; shift
	/bin/llmio run "$@" --json /tmp/$name.json --quiet >/tmp/$name.out 2>&1
	rc=$?
	echo "LLMIO-STEP $name rc=$rc"
	[ $rc -eq 0 ] || head -c 600 /tmp/$name.out
	echo "LLMIO-JSON-BEGIN $name"; cat /tmp/$name.json 2>/dev/null; echo; echo "LLMIO-JSON-END $name"
}
echo "LLMIO-FACT io_poll=$(cat /sys/block/nvme0n1/queue/io_poll) lba=$(cat /sys/block/nvme0n1/queue/logical_block_size) ng=$(ls /dev/ng0n1)"
/bin/llmio engines --brief | grep -A4 '^uring_cmd'
V="--rw read --bs 64k --size 8m --iodepth 8 --verify crc32c"
step r_ucmd --ioengine uring_cmd --filename $B $V
step r_ucmd_poll --ioengine uring_cmd --iopoll=1 --filename $B $V
step r_ucmd_fixed --ioengine uring_cmd --fixedbufs=1 --filename $B $V
step r_uring --ioengine io_uring --direct=1 --filename $B $V
step r_uring_poll --ioengine io_uring --iopoll=1 --direct=1 --filename $B $V
step w_ucmd --ioengine uring_cmd --filename $B --rw write --bs 64k --size 4m --iodepth 1 \
	--randseed 7 --verify crc32c --do_verify=0 --allow_destructive=1
step rb_ucmd --ioengine uring_cmd --iopoll=1 --filename $B --rw read --bs 64k --size 4m \
	--iodepth 4 --verify crc32c
P="--rw randread --bs 4k --size 64m --iodepth 32 --runtime 3"
step p_uring --ioengine io_uring --direct=1 --filename $B $P
step p_ucmd --ioengine uring_cmd --filename $B $P
step p_uring_poll --ioengine io_uring --iopoll=1 --direct=1 --filename $B $P
step p_ucmd_poll --ioengine uring_cmd --iopoll=1 --filename $B $P
# persistent memory: RAM declared persistent (/dev/pmem0), ext4 mounted with -o dax, pmem2 on a
# file there (4 KiB blocks: DAX needs the page size)
if [ -b /dev/pmem0 ] && /bin/e2fsprogs-mke2fs -q -t ext4 -b 4096 -F /dev/pmem0 && mkdir -p /mnt &&
	mount -t ext4 -o dax /dev/pmem0 /mnt; then
	echo "LLMIO-FACT pmem=mounted dax=$(grep -c ' /mnt .*dax' /proc/mounts)"
	step pm_write --ioengine pmem2 --filename /mnt/pm.dat --rw write --bs 64k --size 8m \
		--verify crc32c
	step pm_read --ioengine psync --filename /mnt/pm.dat --rw read --bs 64k --size 8m \
		--verify crc32c
	umount /mnt
else
	echo "LLMIO-FACT pmem=none"
	dmesg | grep -iE 'pmem|nd_|ext4|dax' | tail -n 10
fi
GUEST

echo "== the namespace's image: random bytes, llmio's verify blocks in its first 8 MiB"
head -c $((64 << 20)) /dev/urandom >"$IMG"
expect_rc 0 "psync writes verify blocks into the image" run --ioengine psync --filename "$IMG" \
	--rw write --bs 64k --size 8m --verify crc32c --quiet
cp "$IMG" "$T/before.img"
expect_rc 0 "psync writes the guest's write job to a file (the bytes expected at LBA 0)" \
	run --ioengine psync --filename "$T/expect.dat" --rw write --bs 64k --size 4m \
	--randseed 7 --verify crc32c --do_verify=0 --quiet
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$T/initrd.gz"

echo "== boot (TCG) and run llmio inside"
t0=$(date +%s)
# persistent memory for its part: 128 MiB of the guest's RAM at 768 MiB declared persistent
# (memmap=N!S, an e820 pmem region: nd_e820 makes it /dev/pmem0, which supports DAX).  loglevel=1:
# the kernel's own messages (an NVMe timeout of a slow TCG guest on a busy host) stay in dmesg
# instead of landing in the middle of a step's JSON on the console (a garbled result failed a
# step whose run had passed)
PMARG=""
[ "$PMEM" = 0 ] || PMARG=" memmap=128M!768M"
timeout "${LLMIO_QEMU_TIMEOUT:-1200}" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 \
	-nographic -no-reboot -kernel "$KERNEL" -initrd "$T/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=1 nvme.poll_queues=2$PMARG" \
	-device nvme,serial=llmio,drive=d -drive "file=$IMG,if=none,id=d,format=raw" \
	</dev/null >"$T/console.log" 2>&1
qrc=$?
echo "guest: exit $qrc after $(($(date +%s) - t0)) s"
C=$T/console.log
[ -z "${LLMIO_QEMU_KEEP_CONSOLE:-}" ] || cp "$C" "$LLMIO_QEMU_KEEP_CONSOLE"
check "the guest ran to the end" grep -q LLMIO-GUEST-DONE "$C" || tail -n 40 "$C"
grep -E '^(LLMIO-FACT|uring_cmd|  )' "$C" | tr -d '\r' | head -n 8

# js NAME: the JSON record of step NAME from the console
js() { awk -v n="$1" '$0 ~ "^LLMIO-JSON-BEGIN "n"\r?$" {on=1; next} $0 ~ "^LLMIO-JSON-END "n"\r?$" {on=0} on' "$C" | tr -d '\r' >"$T/$1.json"; }
for s in r_ucmd r_ucmd_poll r_ucmd_fixed r_uring r_uring_poll w_ucmd rb_ucmd p_uring p_ucmd p_uring_poll p_ucmd_poll; do
	if grep -q "^LLMIO-STEP $s rc=0" "$C"; then pass "guest: $s"; else
		fail "guest: $s: $(grep -A3 "^LLMIO-STEP $s " "$C" | tr -d '\r' | head -c 600)"; fi
	js "$s"
done
check "the guest has poll queues (nvme.poll_queues=2)" grep -q "LLMIO-FACT io_poll=1" "$C"
json_check "$T/r_ucmd.json" "uring_cmd read every block, verified, through passthrough" \
	'j["read"]["io_bytes"] == 8 << 20 and "NVMe passthrough" in j["engine_notes"] and "interrupt completions" in j["engine_notes"]'
json_check "$T/p_ucmd.json" "passthrough is device-bound, though the disk's counters do not see it" \
	'j["service"] == "device" and "NVMe commands to the device" in j["service_reason"] and j["direct_in_effect"]'
json_check "$T/r_ucmd_poll.json" "uring_cmd polled its completions" \
	'j["read"]["io_bytes"] == 8 << 20 and "iopoll on" in j["engine_notes"]'
json_check "$T/r_ucmd_fixed.json" "uring_cmd with registered buffers" \
	'j["read"]["io_bytes"] == 8 << 20 and "fixedbufs on" in j["engine_notes"]'
json_check "$T/r_uring.json" "the block path read the same blocks" 'j["read"]["io_bytes"] == 8 << 20'
json_check "$T/r_uring_poll.json" "io_uring IOPOLL on the poll queues" \
	'j["read"]["io_bytes"] == 8 << 20 and "iopoll on" in j["engine_notes"]'
check "uring_cmd's write landed at LBA 0: the image's first 4 MiB are psync's file" \
	cmp -n $((4 << 20)) "$IMG" "$T/expect.dat"
check "and nothing past it changed" cmp -i $((4 << 20)):$((4 << 20)) "$IMG" "$T/before.img"

if [ "$PMEM" = 1 ]; then
	js pm_write
	check "the guest mounted its persistent memory with DAX" grep -q "LLMIO-FACT pmem=mounted dax=1" "$C" ||
		sed -n '/LLMIO-FACT pmem=/,/LLMIO-GUEST-DONE/p' "$C" | head -n 20
	for s in pm_write pm_read; do
		if grep -q "^LLMIO-STEP $s rc=0" "$C"; then pass "guest: $s"; else
			fail "guest: $s: $(grep -A3 "^LLMIO-STEP $s " "$C" | tr -d '\r' | head -c 600)"; fi
	done
	json_check "$T/pm_write.json" "pmem2 on DAX: cache-line (or byte) granularity, CPU cache flushes" \
		'j["write"]["io_bytes"] == 8 << 20 and ("store granularity cache line" in j["engine_notes"] or "store granularity byte" in j["engine_notes"])'
	note "pmem2 on DAX: $(json_get "$T/pm_write.json" 'j["engine_notes"]')"
fi

echo "== 4 KiB random reads, iodepth 32, 3 s each (emulated NVMe under TCG: not a device figure)"
for s in p_uring p_ucmd p_uring_poll p_ucmd_poll; do
	[ -s "$T/$s.json" ] && echo "  $s: $(json_get "$T/$s.json" 'round(j["read"]["iops"])') IOPS"
done
finish
