#!/bin/bash
# shellcheck disable=SC2317 # on_exit runs from the trap
# cli_witness.sh: the per-process witness (/proc/self/io) and what is judged from it, live:
#   - an O_DIRECT read of 32 MiB: the witness read ~32 MiB, verdict device;
#   - a second buffered read of a cached file: the witness read ~0, verdict page-cache;
#   - a slow job while another llmio job reads another file of the same disk: shared_disk,
#     with both numbers in the warning (JSON and the human summary);
#   - a job while two `yes > /dev/null` keep the CPUs busy: busy_system, with its warning.
# No timing thresholds: byte counts with slack for readahead and metadata, and flags whose
# margins the competing load exceeds many times over.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
[ -r /proc/self/io ] || skip_all "no /proc/self/io here (kernel without per-task I/O accounting)"
F=$T/data
dd if=/dev/zero of="$F" bs=1M count=32 conv=fsync status=none || { fail "dd"; finish; }

echo "== O_DIRECT read of 32 MiB: the witness read 32 MiB, served by the device"
if expect_rc 0 "direct read" run --filename="$F" --rw=read --bs=1m --direct=1 --json "$T/d.json"; then
	json_check "$T/d.json" "witness known, read 32 MiB (+ at most 1 MiB), wrote < 1 MiB" \
		"j['process_io']['known'] and 32 * $MiB <= j['process_io']['read_bytes'] <= 33 * $MiB and j['process_io']['write_bytes'] < $MiB"
	json_check "$T/d.json" "verdict device (O_DIRECT)" \
		"j['service'] == 'device' and 'O_DIRECT' in j['service_reason']"
	expect_out "summary shows the witness and the verdict" "process this process read 32.00 MiB" \
		"served device"
fi

echo "== a cached file read again buffered: the witness read ~0, served by the page cache"
expect_rc 0 "warm the cache" run --filename="$F" --rw=read --bs=1m --direct=0 --invalidate=0
if expect_rc 0 "cached read" run --filename="$F" --rw=read --bs=1m --direct=0 --invalidate=0 \
	--json "$T/c.json" --csv "$T/c.csv"; then
	json_check "$T/c.json" "witness read < 1 MiB of 32 MiB" \
		"j['process_io']['known'] and j['process_io']['read_bytes'] < $MiB and j['read']['io_bytes'] == 32 * $MiB"
	json_check "$T/c.json" "verdict page-cache, the reason names the share" \
		"j['service'] == 'page-cache' and 'device read' in j['service_reason'] and '% of 32.00 MiB requested' in j['service_reason']"
	expect_out "summary says page-cache" "served page-cache: device read"
	check "CSV ends with the witness, verdict and flags" \
		grep -Eq ',[0-9]+,[0-9]+,page-cache,[01],[01]$' "$T/c.csv"
	check "CSV header names them" \
		grep -q 'proc_read_bytes,proc_write_bytes,service,shared_disk,busy_system$' "$T/c.csv"
fi

echo "== sweep journal records carry the witness and the verdict"
cat >"$T/s.ini" <<EOF2
[global]
ioengine=psync
filename=$F
rw=read
bs=1m
invalidate=1

[s]
direct=0,1
EOF2
if expect_rc 0 "sweep direct=0,1" sweep "$T/s.ini" -o "$T/j.jsonl"; then
	python3 - "$T/j.jsonl" >"$T/j.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)["phases"][0]["jobs"][0]
    print(j["job options"]["direct"], j["service"], j["process_io"]["known"], bool(j["service_reason"]))
PY
	check "the O_DIRECT point is served by the device, both have a witness and a reason" \
		grep -qx 'True device True True' "$T/j.txt"
	check "the buffered point has a verdict too" \
		grep -Eqx 'False (device|page-cache|mixed) True True' "$T/j.txt"
fi

echo "== recipes judge their phases with the same rule"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
	S=$(mktemp -d /dev/shm/llmio-witness.XXXXXX)
	if expect_rc 0 "load recipe on tmpfs" run --workload load --model gpt2 --directory "$S" \
		--scale 0.02 --strategy sequential --quiet --json "$T/w.json"; then
		json_check "$T/w.json" "every phase's note: page cache, files on tmpfs (even under O_DIRECT)" \
			"all('WARNING: served from the page cache (files on tmpfs live in memory' in p['note'] for p in d['runs'][0]['phases'])"
		json_check "$T/w.json" "every stream's record: page-cache" \
			"all(j['service'] == 'page-cache' for p in d['runs'][0]['phases'] for j in p['jobs'])"
	fi
	rm -rf "$S"
else
	note "/dev/shm is not a writable tmpfs: recipe check on tmpfs skipped"
fi

echo "== another reader on the same disk: shared_disk"
O=$T/other
dd if=/dev/zero of="$O" bs=1M count=64 conv=fsync status=none || fail "dd other"
# the other reader: O_DIRECT, so every one of its reads reaches the disk, for 20 s at most
"$LLMIO" run --filename="$O" --rw=randread --bs=64k --direct=1 --runtime=20s --time_based >/dev/null 2>&1 &
OTHER=$!
on_exit() {
	[ -n "${OTHER:-}" ] && kill "$OTHER" 2>/dev/null
	[ -n "${YES1:-}" ] && kill "$YES1" 2>/dev/null
	[ -n "${YES2:-}" ] && kill "$YES2" 2>/dev/null
}
sleep 1
# ours: 4 MB/s for 2 s, O_DIRECT: it reads ~8 MB while the other reads hundreds
if expect_rc 0 "slow job beside the other reader" run --filename="$F" --rw=read --bs=64k --direct=1 \
	--rate=4m --runtime=2s --time_based --json "$T/s.json"; then
	json_check "$T/s.json" "shared_disk, the warning names the disk's and the process's reads" \
		"j['shared_disk'] and any(w.startswith('other I/O shared the disk') and 'this process read' in w for w in j['warnings'])"
	json_check "$T/s.json" "the disk read more than 1.5 x the witness + 8 MiB" \
		"j['device']['read_bytes'] > 1.5 * j['process_io']['read_bytes'] + 8 * $MiB"
	json_check "$T/s.json" "the verdict follows the witness: still the device" "j['service'] == 'device'"
	expect_out "summary warns" "WARNING other I/O shared the disk"
fi
kill "$OTHER" 2>/dev/null
wait "$OTHER" 2>/dev/null
OTHER=

echo "== two CPU-bound processes: busy_system"
yes >/dev/null &
YES1=$!
yes >/dev/null &
YES2=$!
sleep 0.5
if expect_rc 0 "job on a busy machine" run --filename="$F" --rw=read --bs=64k --direct=1 \
	--rate=4m --runtime=1s --time_based --json "$T/b.json"; then
	json_check "$T/b.json" "busy_system, the warning names the CPUs" \
		"j['busy_system'] and any(w.startswith('busy machine: other work kept') for w in j['warnings'])"
	expect_out "summary warns" "WARNING busy machine"
fi
mkdir "$T/wl"
if expect_rc 0 "load recipe on a busy machine" run --workload load --model gpt2 --directory "$T/wl" \
	--scale 0.2 --strategy sequential --quiet --json "$T/wb.json"; then
	json_check "$T/wb.json" "a phase's note says the machine was busy, as its streams do" \
		"any('busy machine' in p['note'] and any(j['busy_system'] for j in p['jobs']) for p in d['runs'][0]['phases'])"
fi
kill "$YES1" "$YES2"
wait "$YES1" "$YES2" 2>/dev/null
YES1= YES2=
finish
