#!/bin/bash
# shellcheck disable=SC2317 # on_exit runs from the trap
# cli_userfiles.sh: llmio writes only files it created or was told to write.
#
#  - a read job reads an existing file as it is: a sparse file keeps its holes (checksum, size,
#    blocks and mtime unchanged), a file shorter than --size is refused (exit 2, one line,
#    naming --extend) and extended only with --extend, which leaves the file's own bytes alone;
#  - a file llmio creates for a read job is still filled (reads never hit holes there);
#  - --directory jobs, every recipe (load, ckpt, pretrain, finetune, infer) and quick keep
#    their files in a directory llmio made, so a user's files of the same names (llmio.0,
#    model.safetensors, ckpt-rank00000.pt, data-000000.bin, kv-cache.bin ...) stay as they
#    were; a directory of llmio's name that llmio did not make is refused;
#  - the mmap engine survives its file being truncated mid-run: "end of file", exit 1, results
#    written, like psync.
# Every user file is fingerprinted (md5, size, blocks, mtime) before and after.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
fp() { echo "$(md5sum <"$1") $(stat -c '%s %b %Y' "$1")"; } # content, size, blocks, mtime
same() { # same DESC FILE FINGERPRINT
	local now
	now=$(fp "$2")
	if [ "$now" = "$3" ]; then pass "$1"; else fail "$1: was '$3', now '$now'"; fi
}
# A sparse file: 8 KiB long, data in its second 4 KiB only (the first is a hole).
sparse() {
	rm -f "$1"
	truncate -s 8k "$1"
	printf 'user data' | dd of="$1" bs=1 seek=4096 conv=notrunc status=none
}

echo "== a read job over a sparse file reads it as it is"
U=$T/user
mkdir -p "$U"
sparse "$U/sparse"
FP=$(fp "$U/sparse")
for e in psync mmap; do
	expect_rc 0 "read job ($e) over a sparse file" run --filename "$U/sparse" --rw read \
		--bs 4k --ioengine "$e" --quiet --json "$T/sp.json"
	same "$e: sparse file unchanged (holes kept, nothing written)" "$U/sparse" "$FP"
	json_check "$T/sp.json" "$e: read the whole 8 KiB, holes as zeros" \
		"j['read']['io_bytes'] == 8192"
done
expect_rc 0 "randread with --size below the file's" run --filename "$U/sparse" --rw randread \
	--bs 4k --size 4k --quiet
same "randread: sparse file unchanged" "$U/sparse" "$FP"

echo "== --size larger than the file: refused, unless --extend"
expect_rc 2 "read job with --size past the end" run --filename "$U/sparse" --rw read --bs 4k \
	--size 1m --quiet
expect_err "names the file, the sizes and the fix" "$U/sparse" "8192" "--size 8192 or less" \
	"--extend"
same "refused: file unchanged" "$U/sparse" "$FP"
expect_rc 0 "--extend appends" run --filename "$U/sparse" --rw read --bs 4k --size 1m \
	--extend --quiet
check "--extend: the file is 1 MiB now" test "$(stat -c %s "$U/sparse")" -eq "$MiB"
check "--extend: its own 8 KiB are untouched" \
	test "$(head -c 8192 "$U/sparse" | md5sum | cut -c1-32)" = "${FP:0:32}"
check "--extend: its hole is still a hole (data starts at 4 KiB)" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
sys.exit(0 if os.lseek(fd, 0, os.SEEK_DATA) == 4096 else 1)' "$U/sparse"
check "--extend: the appended part is written (not a hole)" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
sys.exit(0 if os.lseek(fd, 8192, os.SEEK_HOLE) == 1 << 20 else 1)' "$U/sparse"

echo "== a file llmio creates for a read job is filled"
expect_rc 0 "read job on a new file" run --filename "$U/new" --rw read --bs 64k --size 4m --quiet
check "new file is 4 MiB and fully allocated" \
	test "$(stat -c %s "$U/new")" -eq $((4 * MiB)) -a "$(($(stat -c '%b * %B' "$U/new")))" -ge $((4 * MiB))
check "new file holds data, not zeros" test "$(head -c 4096 "$U/new" | tr -d '\0' | wc -c)" -gt 0

echo "== a write job writes the file it was told to write"
cp "$U/new" "$U/w"
expect_rc 0 "write job on an existing file" run --filename "$U/w" --rw write --bs 64k \
	--size 4m --quiet
check "write job changed the file" test "$(md5sum <"$U/w")" != "$(md5sum <"$U/new")"

echo "== --directory: files in llmio's own directory, a user's llmio.0 untouched"
D=$T/dir
mkdir -p "$D"
sparse "$D/llmio.0"
FP=$(fp "$D/llmio.0")
for rw in read write; do
	expect_rc 0 "--directory $rw job" run --directory "$D" --rw "$rw" --bs 64k --size 1m \
		--quiet
	same "$rw: user's $D/llmio.0 unchanged" "$D/llmio.0" "$FP"
done
check "job's file is llmio-work/llmio.0" test "$(stat -c %s "$D/llmio-work/llmio.0")" -eq "$MiB"
check "llmio-work is marked as llmio's" test -f "$D/llmio-work/.llmio-owned"
D2=$T/dir2
mkdir -p "$D2/llmio-work"
sparse "$D2/llmio-work/llmio.0"
FP2=$(fp "$D2/llmio-work/llmio.0")
expect_rc 1 "a llmio-work that llmio did not make is refused" run --directory "$D2" \
	--rw write --bs 64k --size 1m --quiet
expect_err "says why and what to do" "llmio did not make it" "choose another --directory"
same "the user's llmio-work/llmio.0 unchanged" "$D2/llmio-work/llmio.0" "$FP2"

echo "== recipes never touch a user's files of their names"
W=$T/wl
mkdir -p "$W"
BAIT="model.safetensors ckpt-rank00000.pt ckpt-rank00001.pt data-000000.bin data-000001.bin
pretrain-ckpt-rank00000.pt adapter-rank00000.pt kv-cache.bin"
declare -A FPS
for f in $BAIT; do
	sparse "$W/$f"
	FPS[$f]=$(fp "$W/$f")
done
expect_rc 0 "load" run --workload load --model gpt2 --directory "$W" --scale 0.02 \
	--strategy sequential --cache cold --engine psync --direct 0 --quiet --keep
expect_rc 0 "load (mmap)" run --workload load --model gpt2 --directory "$W" --scale 0.02 \
	--strategy mmap --cache cold --quiet --keep
expect_rc 0 "ckpt" run --workload ckpt --model gpt2 --directory "$W" --scale 0.005 --dp 2 \
	--ranks 2 --engine psync --direct 0 --quiet --keep
expect_rc 0 "pretrain" run --workload pretrain --model gpt2 --directory "$W" --scale 0.05 \
	--record 64k --batch 2 --steps 2 --compute 1ms --ckpt_every 2 --dp 1 --engine psync \
	--direct 0 --quiet
expect_rc 0 "finetune" run --workload finetune --model gpt2 --directory "$W" --scale 0.02 \
	--record 16k --batch 2 --steps 1 --compute 1ms --ckpt_every 1 --direct 0 --engine psync \
	--quiet
expect_rc 0 "infer" run --workload infer --model Llama-3.1-8B --directory "$W" \
	--scale 0.001 --load 0 --duration 200ms --in_flight 2 --engine psync --direct 0 --quiet \
	--keep
for f in $BAIT; do
	same "recipes: user's $f unchanged" "$W/$f" "${FPS[$f]}"
done
check "the recipes' files are in llmio-work" \
	test -s "$W/llmio-work/model.safetensors" -a -s "$W/llmio-work/ckpt-rank00000.pt" \
	-a -s "$W/llmio-work/kv-cache.bin"
check "no other file appeared beside the user's" \
	test "$(find "$W" -maxdepth 1 -type f | wc -l)" -eq "$(echo $BAIT | wc -w)"

echo "== quick: a user's DIR/llmio.0 is neither used nor removed"
Q=$T/quick
mkdir -p "$Q"
sparse "$Q/llmio.0"
FP=$(fp "$Q/llmio.0")
expect_rc 0 "quick" quick --dir "$Q" --size 16m --runtime 50ms
same "quick: user's llmio.0 unchanged and still there" "$Q/llmio.0" "$FP"
check "quick removed its own scratch directory" \
	test "$(find "$Q" -mindepth 1 | wc -l)" -eq 1
expect_rc 0 "quick --keep" quick --dir "$Q" --size 16m --runtime 50ms --keep
check "--keep: the scratch file is in llmio-quick.*" \
	test "$(stat -c %s "$Q"/llmio-quick.*/scratch 2>/dev/null)" = $((16 * MiB))
same "quick --keep: user's llmio.0 unchanged" "$Q/llmio.0" "$FP"

echo "== the file is truncated under a running job: end of file, results kept"
for e in psync mmap; do
	F=$T/trunc-$e
	echo "+ llmio run --filename \$T/trunc-$e --ioengine $e ... (truncated after 1 s)"
	"$LLMIO" run --filename "$F" --size 16m --rw randread --bs 4k --ioengine "$e" \
		--runtime 60 --time_based --json "$T/tr.json" >"$T/stdout" 2>"$T/stderr" &
	PID=$!
	on_exit() { [ -n "${PID:-}" ] && kill -KILL "$PID" 2>/dev/null; }
	# Truncate once the file is filled (all 16 MiB allocated) and measuring has begun.
	for _ in $(seq 300); do
		[ "$(($(stat -c '%b * %B' "$F" 2>/dev/null || echo 0)))" -ge $((16 * MiB)) ] && break
		sleep 0.1
	done
	sleep 1
	truncate -s 0 "$F"
	reap "$PID" 30 "$e: after the truncation"
	RC=$REAPED
	PID=
	check "$e: exit 1 after the truncation (exit $RC)" test "$RC" -eq 1
	expect_err "$e: one line saying end of file" "end of file"
	check "$e: exactly one stderr line" test "$(wc -l <"$T/stderr")" -eq 1
	if [ -s "$T/tr.json" ]; then
		json_check "$T/tr.json" "$e: results written with the error and the I/Os done" \
			"j['error'] != 0 and j['read']['total_ios'] > 0"
	else
		fail "$e: no results written"
	fi
	rm -f "$T/tr.json"
done

finish
