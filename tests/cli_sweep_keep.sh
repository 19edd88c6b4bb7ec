#!/bin/bash
# shellcheck disable=SC2317 # on_exit runs from the trap
# cli_sweep_keep.sh: a sweep leaves no surprises on disk, as the recipes do (cli_keep.sh).
#
#  - the files its points made (a plain point's data file in llmio's work directory, a
#    recipe's files, a file a point names with filename=) are removed after the last point,
#    and one line per place says so: "removed N files, X from DIR (--keep leaves them)";
#  - --keep leaves them and names them: "left N files, X in DIR (--keep)";
#  - a file that was there before the sweep (a user's file named by filename=, an earlier
#    run's kept file) is never removed;
#  - Ctrl-C ends the sweep and still removes what it made;
#  - after kill -9, a sweep resumed with --resume takes the killed run's files for its own
#    (the manifest beside the journal says which they are), says so, and removes them.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

PID=
on_exit() { [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; }

W=$T/w
mkdir -p "$W"
echo "user data" >"$W/notes.txt"
USER_FP=$(fp "$W/notes.txt")

# two plain points in llmio's work directory, one naming a new file, one a recipe's
cat >"$T/mixed.ini" <<EOF
[global]
ioengine=psync
direct=0
size=1m
runtime=100ms

[plain]
directory=$W
rw=randread
bs=4k,16k

[named]
filename=$W/named.dat
rw=randwrite

[recipe]
workload=ckpt
model=gpt2
scale=0.002
directory=$W
EOF

echo "== by default the files the points made go"
expect_rc 0 "sweep" sweep "$T/mixed.ini" -o "$T/j1.jsonl"
check "4 points in the journal" test "$(wc -l <"$T/j1.jsonl")" -eq 4
said "says what it removed from llmio's directory" "removed " "from $W/llmio-work"
said "says what it removed of the named file" "removed 1 file, " "named by filename=" \
	"$W/named.dat"
check "llmio's directory, which the sweep made, is gone" test ! -e "$W/llmio-work"
check "the named file it made is gone" test ! -e "$W/named.dat"
check "the user's file beside them stays" test "$(fp "$W/notes.txt")" = "$USER_FP"

echo "== --keep leaves them and names them"
expect_rc 0 "sweep --keep" sweep "$T/mixed.ini" -o "$T/j2.jsonl" --keep
said "says what it left and where" "left " "in $W/llmio-work (--keep)" \
	"left 1 file, " "named by filename=" "(--keep)"
check "the plain points' data file stays" test -s "$W/llmio-work/llmio.0"
check "the recipe's shard stays" test -n "$(find "$W/llmio-work" -name 'ckpt-rank*')"
check "the named file stays" test -s "$W/named.dat"

echo "== files that were there before the sweep are never removed"
expect_rc 0 "sweep over the kept files" sweep "$T/mixed.ini" -o "$T/j3.jsonl"
said "says they stay" "that were there before the run are left as they were"
check "the kept data file stays" test -s "$W/llmio-work/llmio.0"
check "the named file that was there stays (rewritten by its point, not removed)" \
	test -s "$W/named.dat"
check "the user's file stays, unchanged" test "$(fp "$W/notes.txt")" = "$USER_FP"
rm -rf "$W/llmio-work" "$W/named.dat"

echo "== Ctrl-C: the sweep ends and still removes what it made"
cat >"$T/long.ini" <<EOF
[global]
ioengine=psync
direct=0
size=4m
directory=$W
rw=randread
runtime=30s

[long]
bs=4k,8k
EOF
echo "+ llmio sweep long.ini -o j4.jsonl   (then SIGINT once the data file is there)"
"$LLMIO" sweep "$T/long.ini" -o "$T/j4.jsonl" >"$T/stdout" 2>"$T/stderr" &
PID=$!
for _ in $(seq 300); do # the point has started once its data file is laid out
	[ -s "$W/llmio-work/llmio.0" ] && break
	sleep 0.1
done
sleep 0.5
kill -INT "$PID"
reap "$PID" 20 "sweep after SIGINT"
PID=
check "exit 1 (interrupted)" test "$REAPED" -eq 1
said "says what it removed" "removed 1 file, " "from $W/llmio-work"
check "llmio's directory is gone" test ! -e "$W/llmio-work"
check "the user's file stays, unchanged" test "$(fp "$W/notes.txt")" = "$USER_FP"

echo "== kill -9, then --resume: the killed sweep's data file is the resumed sweep's own"
# the data file the killed sweep made used to be taken for a file that was there before the
# resumed one: left behind for good, and never named as the killed run's
echo "+ llmio sweep long.ini -o j6.jsonl   (then SIGKILL once the data file is there)"
"$LLMIO" sweep "$T/long.ini" -o "$T/j6.jsonl" >"$T/stdout" 2>"$T/stderr" &
PID=$!
for _ in $(seq 300); do
	[ -s "$W/llmio-work/llmio.0" ] && break
	sleep 0.1
done
kill -KILL "$PID"
reap "$PID" 20 "sweep after SIGKILL"
PID=
check "the killed sweep left its data file" test -s "$W/llmio-work/llmio.0"
check "and its manifest beside the journal" test -s "$T/j6.jsonl.llmio-made"
# the same points, shorter (the journal holds none of them: all run again)
sed 's/runtime=30s/runtime=100ms/' "$T/long.ini" >"$T/short.ini"
expect_rc 0 "sweep --resume" sweep "$T/short.ini" -o "$T/j6.jsonl" --resume
said "says the killed run's file is its own" \
	"the sweep this one resumes was killed before it removed what its points made: 1 file," \
	"are this sweep's own; its points reuse them"
said "and removes it at the end" "removed 1 file, " "from $W/llmio-work"
check "llmio's directory, which the killed sweep made, is gone" test ! -e "$W/llmio-work"
check "the manifest is gone once the sweep cleaned up" test ! -e "$T/j6.jsonl.llmio-made"
check "the user's file stays, unchanged" test "$(fp "$W/notes.txt")" = "$USER_FP"

echo "== the null engine touches no file: nothing to say"
cat >"$T/null.ini" <<'EOF'
[null]
ioengine=null
rw=randread
size=1m
runtime=50ms
EOF
expect_rc 0 "null sweep" sweep "$T/null.ini" -o "$T/j5.jsonl"
check "no line about files" sh -c "! grep -q 'files\\? left\\|removed' '$T/stdout'"

finish
