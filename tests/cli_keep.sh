#!/bin/bash
# cli_keep.sh: no surprises left on disk.
#
#  - a recipe (and replay, which runs the replay recipe) removes the files it made after the
#    run and says so in one line: "removed N files, X from DIR";
#  - --keep leaves them and names them: "left N files, X in DIR (--keep)";
#  - a file that was there before the run (an earlier run's kept file, a user's file put in
#    llmio's directory, the user's own files beside it, the files a trace replays) is never
#    removed, and the line says that it stays;
#  - quick says the same of its scratch file.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

W=$T/w
mkdir -p "$W"
CKPT=(run --workload ckpt --model gpt2 --scale 0.005 --dp 2 --ranks 2 --directory "$W"
	--engine psync --direct 0)
LOAD=(run --workload load --model gpt2 --scale 0.02 --strategy sequential --cache cold
	--directory "$W" --engine psync --direct 0)
echo "user data" >"$W/notes.txt"
USER_FP=$(fp "$W/notes.txt")

echo "== by default the files the run made go"
expect_rc 0 "ckpt" "${CKPT[@]}"
said "says what it removed and where" "removed 2 files, " "from $W/llmio-work"
check "no shard left" test -z "$(find "$W" -name 'ckpt-rank*')"
check "llmio's directory, which this run made, is gone too" test ! -e "$W/llmio-work"
check "the user's file beside it stays" test "$(fp "$W/notes.txt")" = "$USER_FP"

echo "== --keep leaves them and names them"
expect_rc 0 "ckpt --keep" "${CKPT[@]}" --keep
said "says what it left and where" "left 2 files, " "in $W/llmio-work (--keep)"
check "both shards are there" test -s "$W/llmio-work/ckpt-rank00000.pt" \
	-a -s "$W/llmio-work/ckpt-rank00001.pt"
SHARDS=$(du -b "$W"/llmio-work/ckpt-rank0000[01].pt | awk '{s += $1} END {print s}')
check "the line's bytes are the shards' ($SHARDS B)" python3 - "$T/stdout" "$SHARDS" <<'PY'
import re, sys
m = re.search(r"left 2 files, ([0-9.]+) (B|KiB|MiB|GiB)", open(sys.argv[1]).read())
units = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
sys.exit(0 if m and abs(float(m.group(1)) * units[m.group(2)] / int(sys.argv[2]) - 1) < 0.01 else 1)
PY

echo "== files that were there before the run are never removed"
echo "mine" >"$W/llmio-work/user-notes.txt"
NOTE_FP=$(fp "$W/llmio-work/user-notes.txt")
expect_rc 0 "load, without --keep, beside the kept shards" "${LOAD[@]}"
said "says what it removed, and what stays" "removed 1 file, " \
	"3 files, " "that were there before the run are left as they were"
check "the model file it made is gone" test -z "$(find "$W" -name '*.safetensors')"
check "the kept shards stay" test -s "$W/llmio-work/ckpt-rank00000.pt" \
	-a -s "$W/llmio-work/ckpt-rank00001.pt"
check "a user's file in llmio's directory stays, unchanged" \
	test "$(fp "$W/llmio-work/user-notes.txt")" = "$NOTE_FP"
expect_rc 0 "ckpt again over the kept shards" "${CKPT[@]}"
check "shards that were there before are not removed, even rewritten" \
	test -s "$W/llmio-work/ckpt-rank00000.pt" -a -s "$W/llmio-work/ckpt-rank00001.pt"
check "llmio's directory stays: it holds files" test -d "$W/llmio-work"
check "the user's file beside it stays" test "$(fp "$W/notes.txt")" = "$USER_FP"

echo "== replay: its copies go, the traced files stay"
mkdir -p "$T/data"
expect_rc 0 "trace" trace -o "$T/t.trace" --quiet -- sh -c \
	"dd if=/dev/zero of=$T/data/f bs=64k count=4 status=none; cat $T/data/f >/dev/null"
DATA_FP=$(fp "$T/data/f")
mkdir -p "$T/r"
expect_rc 0 "replay" replay "$T/t.trace" --dir "$T/r" --engine psync
said "replay says what it removed" "removed 1 file, " "from $T/r/llmio-work"
check "replay: its copy is gone" test ! -e "$T/r/llmio-work"
check "replay: the traced file stays, unchanged" test "$(fp "$T/data/f")" = "$DATA_FP"
expect_rc 0 "replay --keep" replay "$T/t.trace" --dir "$T/r" --engine psync --keep
said "replay --keep says what it left" "left 1 file, " "in $T/r/llmio-work (--keep)"
check "replay --keep: the copy is there" test -n "$(find "$T/r/llmio-work" -name 'replay-*')"

echo "== quick: its scratch file"
expect_rc 0 "quick --keep" quick --dir "$T/q" --size 16m --runtime 100ms --keep
said "quick --keep says what it left" "left 1 file, 16.0 MiB in $T/q/llmio-quick."
check "quick --keep: the scratch file is there" test -s "$(echo "$T"/q/llmio-quick.*/scratch)"
expect_rc 0 "quick" quick --dir "$T/q2" --size 16m --runtime 100ms
said "quick says what it removed" "removed the scratch file, 16.0 MiB, and $T/q2/llmio-quick."
check "quick: nothing left" test ! -e "$T/q2"

finish
