#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_outputs.sh: output paths are never replaced behind the user's back (docs/output.md,
# "Output paths").
#
# The rule, for every output option of every subcommand: a regular file (or a new path) is
# replaced atomically, keeping its mode; a symlink is followed and stays a link; a character
# device or a FIFO is written through and stays what it was; a block device, a directory or
# a path that cannot be written (missing parent, read-only filesystem, no permission) is
# refused BEFORE any work, with one line and exit 2.  A full disk while writing is reported
# as "No space left on device", once, exit 1, and leaves the earlier file as it was.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/target
JOB=(--filename "$F" --size 1m --bs 4k --rw read --runtime 0.2 --quiet)
MOUNTS=()
CATPID=

on_exit() {
	[ -n "$CATPID" ] && kill "$CATPID" 2>/dev/null
	local m
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
}

is_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# refused DESC TEXT ARGS...: llmio ARGS exits 2 with one line holding TEXT, before any work:
# the run's target file is never created.
refused() {
	local desc=$1 text=$2; shift 2
	rm -f "$F"
	expect_rc 2 "$desc" "$@" && expect_err "$desc: message" "$text"
	check "$desc: refused before the run (no target file made)" test ! -e "$F"
}

echo "== a character device is written into, never replaced"
if [ "$(id -u)" -eq 0 ]; then
	# a node of our own for /dev/null: a broken llmio must not replace the machine's
	NULLDEV=$T/null
	mknod "$NULLDEV" c 1 3
else
	NULLDEV=/dev/null
fi
expect_rc 0 "run --json to a character device" run "${JOB[@]}" --json "$NULLDEV"
check "the device is still a character device" test -c "$NULLDEV"
expect_rc 0 "run --csv to a character device" run "${JOB[@]}" --csv "$NULLDEV"
check "still a character device after --csv" test -c "$NULLDEV"
if [ "$(id -u)" -ne 0 ]; then
	expect_rc 0 "run --json /dev/null" run "${JOB[@]}" --json /dev/null
	check "/dev/null is still a character device" test -c /dev/null
fi

echo "== a symlink is followed: the link stays, its target is written"
mkdir "$T/real"
echo old >"$T/real/res.json"
ln -s real/res.json "$T/link.json"
expect_rc 0 "run --json to a symlink" run "${JOB[@]}" --json "$T/link.json"
check "the link is still a link" test -L "$T/link.json"
check "the link's target holds the JSON" is_json "$T/real/res.json"
ln -s real/new.json "$T/dangling.json"
refused "a dangling symlink" "symbolic link to a missing file" run "${JOB[@]}" --json "$T/dangling.json"

echo "== a FIFO is written through"
mkfifo "$T/fifo"
# the reader gives up after 60 s: a FIFO replaced by a file never sees a writer
timeout 60 cat "$T/fifo" >"$T/fifo.out" &
CATPID=$!
expect_rc 0 "run --json to a FIFO" run "${JOB[@]}" --json "$T/fifo"
[ -p "$T/fifo" ] || kill "$CATPID" 2>/dev/null
wait "$CATPID"
CATPID=
check "the FIFO is still a FIFO" test -p "$T/fifo"
check "the reader got the whole JSON" is_json "$T/fifo.out"

echo "== a regular file is replaced whole and keeps its mode"
echo old >"$T/mode.json"
chmod 640 "$T/mode.json"
expect_rc 0 "run --json over an existing file" run "${JOB[@]}" --json "$T/mode.json"
check "replaced by the JSON" is_json "$T/mode.json"
check "mode 640 kept ($(stat -c %a "$T/mode.json"))" test "$(stat -c %a "$T/mode.json")" = 640
no_outputs "no temporary file left" "$T/mode.json.tmp"

echo "== refused before the run: directory, block device, missing parent, read-only"
mkdir "$T/dir"
refused "run --json DIR" "is a directory" run "${JOB[@]}" --runtime 30 --json "$T/dir"
refused "run --csv DIR" "is a directory" run "${JOB[@]}" --runtime 30 --csv "$T/dir"
refused "run --workload --json DIR" "is a directory" \
	run --workload load --model Llama-3.2-1B --scale 0.0001 --directory "$T/wl" --json "$T/dir"
check "run --workload: no recipe files made" test ! -e "$T/wl"
refused "run --json in a missing directory" "No such file or directory" \
	run "${JOB[@]}" --json "$T/missing/out.json"
refused "quick --json DIR" "is a directory" quick --dir "$T/q" --size 16m --json "$T/dir"
check "quick: no scratch directory made" test ! -e "$T/q"
if [ "$(id -u)" -eq 0 ]; then
	mknod "$T/blk" b 7 250
	refused "run --json to a block device" "block device" run "${JOB[@]}" --json "$T/blk"
	check "the block device node is still one" test -b "$T/blk"
	mkdir "$T/ro"
	if mount -t tmpfs -o size=64k,ro tmpfs "$T/ro" 2>/dev/null; then
		MOUNTS+=("$T/ro")
		refused "run --json on a read-only filesystem" "Read-only file system" \
			run "${JOB[@]}" --json "$T/ro/out.json"
	else
		note "cannot mount a tmpfs: the read-only check is skipped"
	fi
else
	mkdir "$T/noperm" && chmod 555 "$T/noperm"
	refused "run --json in a directory without write permission" "Permission denied" \
		run "${JOB[@]}" --json "$T/noperm/out.json"
fi

echo "== the other subcommands apply the same rule"
J=$T/journal.jsonl
printf '[a]\nfilename=%s\nsize=1m\nrw=read\nruntime=0.2\nbs=4k,8k\n' "$F" >"$T/job.ini"
refused "sweep -o DIR" "is a directory" sweep "$T/job.ini" -o "$T/dir"
refused "sweep -o FIFO" "journal must be a regular file" sweep "$T/job.ini" -o "$T/fifo" --resume
refused "sweep -o in a missing directory" "No such file or directory" \
	sweep "$T/job.ini" -o "$T/missing/j.jsonl"
expect_rc 0 "a sweep for the journal" sweep "$T/job.ini" -o "$J" --quiet
refused "results export -o DIR" "is a directory" results export "$J" --csv -o "$T/dir"
expect_rc 0 "results export -o a character device" results export "$J" --csv -o "$NULLDEV"
check "still a character device after results export" test -c "$NULLDEV"
echo keep >"$T/file"
refused "report -o FILE" "not a directory" report "$J" --no-charts -o "$T/file"
check "report -o FILE: the file is untouched" grep -qx keep "$T/file"
refused "report -o in a missing directory" "No such file or directory" \
	report "$J" --no-charts -o "$T/missing/rep"
expect_rc 0 "report into a new directory" report "$J" --no-charts -o "$T/rep"
ln -s rep "$T/rep-link"
expect_rc 0 "report -o a symlink to an earlier report" report "$J" --no-charts -o "$T/rep-link"
check "the report link is still a link" test -L "$T/rep-link"
check "the report is in the link's target" test -f "$T/rep/index.html"
refused "trace -o DIR" "a directory" trace -o "$T/dir" -- true

echo "== a full disk: 'No space left on device', once, exit 1, the old file kept"
if [ "$(id -u)" -ne 0 ]; then
	note "not root: the full-disk checks (a 64 KiB tmpfs mount) are skipped"
elif ! mkdir "$T/full" || ! mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	note "cannot mount a tmpfs here: the full-disk checks are skipped"
else
	MOUNTS+=("$T/full")
	echo '{"earlier": true}' >"$T/full/out.json"
	head -c 1m /dev/zero >"$T/full/fill" 2>/dev/null # fills it: ENOSPC
	full() { # full DESC ARGS...
		local desc=$1; shift
		expect_rc 1 "$desc" "$@" && expect_err "$desc: says so" "No space left on device"
		check "$desc: said once" test "$(grep -o 'No space left on device' "$T/stderr" | wc -l)" -eq 1
		check "$desc: not an I/O error" sh -c "! grep -q 'Input/output error' '$T/stderr'"
	}
	full "run --json on a full disk" run "${JOB[@]}" --json "$T/full/out.json"
	check "the earlier file is kept" grep -q earlier "$T/full/out.json"
	no_outputs "no temporary file left on the full disk" "$T/full/out.json.tmp"
	full "run --csv on a full disk" run "${JOB[@]}" --csv "$T/full/out.csv"
	full "results export on a full disk" results export "$J" --csv -o "$T/full/out.csv"
	full "report on a full disk" report "$J" --no-charts -o "$T/full/rep"
	full "sweep journal on a full disk" sweep "$T/job.ini" -o "$T/full/j.jsonl" --quiet
	check "the journal holds no torn line (the cut record was taken back)" \
		test ! -s "$T/full/j.jsonl"
fi
# A recipe that runs out of inodes mid-way (the free-bytes check passes): the reason once.
if [ "$(id -u)" -eq 0 ] && mkdir "$T/inodes" &&
	mount -t tmpfs -o size=64m,nr_inodes=5 tmpfs "$T/inodes" 2>/dev/null; then
	MOUNTS+=("$T/inodes")
	full "a recipe out of inodes" \
		run --workload ckpt --model Llama-3.2-1B --scale 0.0001 --directory "$T/inodes" --quiet
fi

echo "== a torn journal line names both causes"
printf '%s\n{"config_hash": "00' "$(head -n 1 "$J")" >"$T/torn.jsonl"
expect_rc 0 "results export of a torn journal" results export "$T/torn.jsonl" --csv -o "$T/torn.csv"
expect_err "the torn line: killed, or a full disk" "killed, or the disk was full"

finish
