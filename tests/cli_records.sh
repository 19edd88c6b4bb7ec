#!/bin/bash
# cli_records.sh: the records llmio writes keep their shape (src/stats/record.c).
#
# `run --json` and `--csv`, a recipe run's JSON and a sweep journal, made on the null engine,
# are reduced to their keys in order with the type of each value (tests/record_shape.py) and
# compared with tests/data/records/*.shape, so a field that moves, changes type or disappears
# is caught whichever writer it came from.  After an intended change of a record, regenerate
# the shapes with LLMIO_RECORDS_UPDATE=1 and say so in docs/output.md.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SHAPES=$HERE/data/records
D=$T/d
mkdir -p "$D"

# same SHAPE KIND FILE: FILE's shape is the stored one
same() {
	local name=$1 kind=$2 file=$3
	if ! python3 "$HERE/record_shape.py" "$kind" "$file" >"$T/$name"; then
		fail "$name: not a $kind file"
		return
	fi
	if [ "${LLMIO_RECORDS_UPDATE:-0}" = 1 ]; then
		cp "$T/$name" "$SHAPES/$name"
		note "updated $SHAPES/$name"
	fi
	if diff -u "$SHAPES/$name" "$T/$name"; then
		pass "$name: same keys, order and types"
	else
		fail "$name: the record's shape changed (diff above)"
	fi
}

echo "== llmio run --json / --csv"
expect_rc 0 "run on the null engine" run --ioengine null --filename "$T/target" --size 1m \
	--bs 4k --rw randrw --runtime 0.1 --quiet --json "$T/run.json" --csv "$T/run.csv"
same run.json.shape json "$T/run.json"
same run.csv.shape csv "$T/run.csv"

echo "== a recipe run"
expect_rc 0 "ckpt on the null engine" run --workload ckpt --model "$HERE/data/gpt2.json" \
	--directory "$D" --engine null --scale 0.001 --dp 1 --quiet --json "$T/ckpt.json"
same ckpt.json.shape json "$T/ckpt.json"

echo "== a sweep journal"
printf '[global]\nioengine=null\nrw=randread\nsize=1m\nruntime=100ms\n[tiny]\nbs=4k,16k\n' \
	>"$T/tiny.ini"
expect_rc 0 "sweep on the null engine" sweep "$T/tiny.ini" -o "$T/journal.jsonl" --keep-cache
same journal.jsonl.shape jsonl "$T/journal.jsonl"

finish
