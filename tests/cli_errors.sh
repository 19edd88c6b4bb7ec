#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_errors.sh: bad input is reported well.
#
# A user who mistypes an option, names an engine that does not exist or points llmio at a
# place it cannot use must get ONE clear stderr line starting "llmio" and the documented
# exit status (2 = usage error, 1 = runtime failure), and a failed run must not leave a
# partial --json/--csv file (nor OUT.tmp.*) or a half-made target behind.  Checked here:
# unknown engine/option/command, bad sizes and values, O_DIRECT with a block size the
# device cannot take, conflicting or missing targets, a missing directory, mmap with
# O_DIRECT, engine options that are malformed or given to the wrong engine, a full
# filesystem (4 MiB tmpfs, root only) and permission denied (non-root only), plus the
# --help texts exiting 0.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

J=$T/out.json
C=$T/out.csv
F=$T/target
OUT=(--json "$J" --csv "$C") # given first, so they are parsed before the bad option
MOUNTED=

on_exit() {
	if [ -n "${MOUNTED:-}" ]; then umount "$MOUNTED" || umount -l "$MOUNTED"; fi
}


# usage_error DESC TEXT ARGS...: llmio run ARGS exits 2 with one line containing TEXT, and
# leaves neither the outputs nor the target file.
usage_error() {
	local desc=$1 text=$2; shift 2
	expect_rc 2 "$desc" run "${OUT[@]}" "$@" && expect_err "$desc: message" "$text"
	no_outputs "$desc: no --json/--csv file" "$J" "$C"
	[ -e "$F" ] && { fail "$desc: target $F was created"; rm -f "$F"; }
	return 0
}

echo "== usage errors (exit 2)"
usage_error "unknown engine" "io_uring" --filename "$F" --size 16m --ioengine nosuch
expect_err "unknown engine: names the bad engine and all engines" nosuch psync libaio mmap null
usage_error "unknown option" "--bogus" --filename "$F" --size 16m --bogus 1
usage_error "bad size" "bs=4q" --filename "$F" --size 16m --bs 4q
usage_error "bad rw" "rw=sideways" --filename "$F" --size 16m --rw sideways
usage_error "iodepth out of range" "iodepth=0" --filename "$F" --size 16m --iodepth 0
usage_error "bad time" "runtime" --filename "$F" --size 16m --runtime -1
usage_error "missing value" "--bs" --filename "$F" --size 16m --bs
usage_error "bs not a multiple of the logical block size with O_DIRECT" "logical block size" \
	--filename "$F" --size 16m --bs 1000 --direct=1
usage_error "no target" "--filename" --size 16m
usage_error "mmap with O_DIRECT" "mmap" --filename "$F" --size 16m --ioengine mmap --direct=1
usage_error "malformed engine option" "sqpoll=maybe" \
	--filename "$F" --size 16m --ioengine io_uring --sqpoll=maybe
usage_error "engine option of another engine" "sqpoll" \
	--filename "$F" --size 16m --ioengine psync --sqpoll=1
usage_error "engine option without --ioengine (psync default)" "sqpoll" \
	--filename "$F" --size 16m --sqpoll=1
usage_error "cpus_allowed: a CPU that does not exist" "the CPUs here are" \
	--filename "$F" --size 16m --cpus_allowed 1023
usage_error "cpus_allowed: not a list" "expected numbers and ranges" \
	--filename "$F" --size 16m --cpus_allowed 0-x
usage_error "cpus_allowed_policy" "shared or split" \
	--filename "$F" --size 16m --cpus_allowed 0 --cpus_allowed_policy both

# An unknown command: the first line is the error; llmio prints the usage after it.
llmio nosuchcmd
if [ "$RC" -eq 2 ] && head -n 1 "$T/stderr" | grep -q '^llmio.*nosuchcmd'; then
	pass "unknown command (exit 2, first stderr line names it)"
else
	fail "unknown command: exit $RC, stderr: $(head -n 2 "$T/stderr")"
fi
expect_rc 2 "quick: unknown option" quick --bogus 1
expect_rc 2 "quick: size too small" quick --dir "$T/q" --size 4q
check "quick: failed usage made no scratch directory" test ! -e "$T/q"

echo "== help (exit 0)"
expect_rc 0 "run --help" run --help && expect_out "run --help mentions --iodepth" "--iodepth"
expect_rc 0 "engines --help" engines --help
check "engines --help prints usage" test -s "$T/stdout"
expect_rc 0 "--help" --help && expect_out "--help lists commands" run engines quick

echo "== runtime failures (exit 1)"
expect_rc 1 "missing --directory" run "${OUT[@]}" --directory /nonexistent/x --size 16m &&
	expect_err "missing --directory: message names it" "/nonexistent/x"
no_outputs "missing --directory: no --json/--csv file" "$J" "$C"
expect_rc 1 "--filename in a missing directory" run "${OUT[@]}" \
	--filename /nonexistent/d/f --size 16m && expect_err "missing parent: message" "/nonexistent/d"
no_outputs "missing parent: no --json/--csv file" "$J" "$C"

# No space: a 4 MiB tmpfs cannot hold a 64 MiB target.
NOSPACE=$T/tiny
mkdir "$NOSPACE"
if [ "$(id -u)" -ne 0 ]; then
	note "not root: the no-space check (needs a small tmpfs mount) is skipped"
elif ! mount -t tmpfs -o size=4m tmpfs "$NOSPACE" 2>/dev/null; then
	note "cannot mount a tmpfs here: the no-space check is skipped"
else
	MOUNTED=$NOSPACE
	for target in "--directory $NOSPACE" "--filename $NOSPACE/f"; do
		# shellcheck disable=SC2086 # $target is two words on purpose
		expect_rc 1 "no space ($target)" run "${OUT[@]}" $target --size 64m --rw write \
			--bs 1m --runtime 0.3 && expect_err "no space: message" "no space"
		no_outputs "no space: no --json/--csv file" "$J" "$C"
		leftover=$(ls -A "$NOSPACE")
		check "no space: no partial target left in the full filesystem (${leftover:-empty})" \
			test -z "$leftover"
	done
fi

# Permission denied: root bypasses file permissions, so only an ordinary user can check it.
if [ "$(id -u)" -eq 0 ]; then
	note "running as root: the permission-denied check is skipped (root bypasses permissions)"
else
	touch "$T/noperm" && chmod 000 "$T/noperm"
	expect_rc 1 "permission denied" run "${OUT[@]}" --filename "$T/noperm" --size 16m \
		--runtime 0.2 && expect_err "permission denied: message names the file" "$T/noperm"
	no_outputs "permission denied: no --json/--csv file" "$J" "$C"
fi

finish
