#!/bin/bash
# cli_workdir.sh: llmio's work directory (DIR/llmio-work) is trusted only when it is really
# llmio's, and nothing in it is opened through a symbolic link.
#
#  - a read job over llmio-work/llmio.0 that was a symlink to a file outside grew that file
#    (9 bytes became 1 MiB); a write job overwrote it;
#  - llmio-work counted as llmio's whenever it held a file named .llmio-owned: another user's
#    llmio-work with that marker and a symlink to a root-only file was written through by
#    root.  Now the directory and its marker must be the caller's and not writable by others,
#    else the run is refused naming the owner.
# The symlink cases run as anyone; the other user's directory needs root (and setpriv), else
# the script ends with a skip (77) after the checks it could run.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# fingerprint of a file: content, size, mtime
fp() { echo "$(md5sum <"$1") $(stat -c '%s %Y' "$1")"; }
same() { # same DESC FILE FINGERPRINT
	local now
	now=$(fp "$2")
	if [ "$now" = "$3" ]; then pass "$1"; else fail "$1: was '$3', now '$now'"; fi
}
JOB=(--bs 4k --size 1m --ioengine psync --direct 0 --runtime 0 --quiet)

D=$T/d
mkdir -p "$D"
printf 'user data' >"$T/outside"
touch -d @1000000000 "$T/outside"
FP=$(fp "$T/outside")
expect_rc 0 "a first run makes llmio-work" run --directory "$D" --rw write "${JOB[@]}"

echo "== a symbolic link inside llmio-work is never followed"
for rw in read write randwrite; do
	rm -f "$D/llmio-work/llmio.0"
	ln -s "$T/outside" "$D/llmio-work/llmio.0"
	expect_rc 1 "$rw job over llmio-work/llmio.0 -> a file outside is refused" \
		run --directory "$D" --rw "$rw" "${JOB[@]}"
	expect_err "$rw: says it is a link llmio never follows" "llmio-work/llmio.0" \
		"symbolic link"
	same "$rw: the file outside is unchanged" "$T/outside" "$FP"
done
rm -f "$D/llmio-work/llmio.0"
# a recipe's files too: one it reads (the model) and one it writes fresh (a checkpoint shard)
ln -s "$T/outside" "$D/llmio-work/model.safetensors"
expect_rc 1 "load: a model file that is a link is refused" run --workload load --model gpt2 \
	--scale 0.02 --directory "$D" --engine psync --direct 0 --quiet
expect_err "load: names the link" "model.safetensors" "symbolic link"
same "load: the file outside is unchanged" "$T/outside" "$FP"
rm -f "$D/llmio-work/model.safetensors"
ln -s "$T/outside" "$D/llmio-work/ckpt-rank00000.pt"
run "$LLMIO" run --workload ckpt --model gpt2 --scale 0.001 --directory "$D" --engine psync \
	--direct 0 --quiet
check "ckpt: a shard that is a link is refused (exit $RC)" test "$RC" -ne 0
same "ckpt: the file outside is unchanged" "$T/outside" "$FP"
rm -f "$D/llmio-work/ckpt-rank00000.pt"

echo "== llmio-work itself a symbolic link to a directory of llmio's is refused"
D2=$T/d2
mkdir -p "$D2"
ln -s "$D/llmio-work" "$D2/llmio-work"
expect_rc 1 "llmio-work -> another llmio-work is refused" run --directory "$D2" --rw write \
	"${JOB[@]}"
expect_err "says it is a link" "$D2/llmio-work" "symbolic link"
check "nothing was made through the link" test ! -e "$D/llmio-work/llmio.0"

echo "== a work directory others may write in is refused"
chmod 0777 "$D/llmio-work"
expect_rc 1 "a world-writable llmio-work is refused" run --directory "$D" --rw write \
	"${JOB[@]}"
expect_err "says who may write and the fix" "writable by other users" "chmod go-w"
check "nothing was made there" test ! -e "$D/llmio-work/llmio.0"
chmod 0755 "$D/llmio-work"
expect_rc 0 "after chmod go-w it is llmio's again" run --directory "$D" --rw write "${JOB[@]}"

if [ "$(id -u)" -ne 0 ]; then
	[ "$FAILS" -eq 0 ] || finish
	skip_all "another user's llmio-work needs root (to run a step as nobody); the rest passed"
fi
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is not installed"
NOBODY=$(id -u nobody 2>/dev/null) || skip_all "there is no user nobody"
NOGROUP=$(id -g nobody)
AS_NOBODY=(setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups)
# nobody must reach $T to make its directory there
chmod 0755 "$T"
"${AS_NOBODY[@]}" test -x "$LLMIO" -a -x "$T" ||
	skip_all "user nobody cannot run $LLMIO or reach $T from here"

echo "== another user's llmio-work is refused, naming its owner"
S=$T/shared
mkdir -p "$S"
chmod 1777 "$S"
printf 'root only' >"$T/secret"
chmod 0600 "$T/secret"
touch -d @1000000000 "$T/secret"
FPS=$(fp "$T/secret")
run "${AS_NOBODY[@]}" "$LLMIO" run --directory "$S" --rw write "${JOB[@]}"
check "nobody's llmio run made $S/llmio-work (exit $RC: $(head -c 200 "$T/stderr"))" \
	test "$RC" -eq 0 -a "$(stat -c %U "$S/llmio-work/.llmio-owned")" = nobody
run "${AS_NOBODY[@]}" bash -c "rm -f '$S/llmio-work/llmio.0' && ln -s '$T/secret' '$S/llmio-work/llmio.0'"
check "nobody put a link to a root-only file in its llmio-work" test -L "$S/llmio-work/llmio.0"
for rw in write read; do
	expect_rc 1 "root's $rw job in nobody's llmio-work is refused" run --directory "$S" \
		--rw "$rw" "${JOB[@]}"
	expect_err "$rw: names the owner" "$S/llmio-work belongs to user nobody" \
		"choose another --directory"
	same "$rw: the root-only file is unchanged" "$T/secret" "$FPS"
done
expect_rc 1 "a recipe there is refused too" run --workload ckpt --model gpt2 --scale 0.001 \
	--directory "$S" --engine psync --direct 0 --quiet
expect_err "recipe: names the owner" "belongs to user nobody"
same "recipe: the root-only file is unchanged" "$T/secret" "$FPS"

printf '# llmio-offload-trace 1\n0 65536 0 0\n' >"$T/offload.trace"
expect_rc 1 "the tensor store there is refused too" run --workload offload \
	--trace "$T/offload.trace" --steps 1 --directory "$S" --engine psync --direct 0 --quiet
expect_err "store: names the owner" "belongs to user nobody"
same "store: the root-only file is unchanged" "$T/secret" "$FPS"

echo "== a marker of another user's in root's own directory is not llmio's either"
rm -rf "$S/llmio-work"
mkdir -m 0755 "$S/llmio-work"
touch "$S/llmio-work/.llmio-owned"
chown nobody "$S/llmio-work/.llmio-owned"
expect_rc 1 "a foreign marker is refused" run --directory "$S" --rw write "${JOB[@]}"
expect_err "names the marker's owner" ".llmio-owned belongs to user nobody"

finish
