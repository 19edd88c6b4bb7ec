#!/bin/bash
# cli_records.sh: the records llmio writes keep their shape (src/stats/record.c).
#
# `run --json` and `--csv`, a recipe run's JSON and a sweep journal, made on the null engine,
# are reduced to their keys in order with the type of each value (tests/record_shape.py) and
# compared with tests/data/records/*.shape, so a field that moves, changes type or disappears
# is caught whichever writer it came from.  After an intended change of a record, regenerate
# the shapes with LLMIO_RECORDS_UPDATE=1 and say so in docs/output.md.
#
# Each record's keys are also checked against the record tables (record_doc --keys KIND, the
# program that prints docs/output.md's field reference): a key written but not described, or
# described but never written, fails.

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

DOC=$(dirname "$LLMIO")/tests/record_doc
[ -x "$DOC" ] || { echo "FAIL: $DOC (built with llmio) is missing"; exit 1; }

# described KIND WHICH FILE [OPTIONAL...]: the keys of the records WHICH selects in FILE (a
# Python expression over the document d, giving a list of objects) are the table's keys for
# KIND; the OPTIONAL keys may be missing (written only when they apply)
described() {
	local kind=$1 which=$2 file=$3; shift 3
	"$DOC" --keys "$kind" >"$T/keys.$kind" || { fail "record_doc --keys $kind"; return; }
	if python3 - "$T/keys.$kind" "$which" "$file" "$@" <<'PYEOF'; then
import json, sys
table = [k for k in open(sys.argv[1]).read().splitlines()]
optional = set(sys.argv[4:])
text = open(sys.argv[3]).read()
docs = [json.loads(x) for x in text.splitlines() if x.strip()] if sys.argv[3].endswith("l") \
    else [json.loads(text)]
bad = 0
for d in docs:
    for rec in eval(sys.argv[2]):
        seen = []
        for k, v in rec.items():
            sub = [t for t in table if t.startswith(k + ".")]
            seen += [f"{k}.{s}" for s in v] if sub and isinstance(v, dict) else [k]
        extra = [k for k in seen if k not in table]
        missing = [k for k in table if k not in seen and k not in optional]
        if extra or missing:
            print(f"written, not in the table: {extra}; in the table, not written: {missing}")
            bad = 1
sys.exit(bad)
PYEOF
		pass "$kind records: the keys written are the keys described"
	else
		fail "$kind records: the keys written differ from the record table (above)"
	fi
}

echo "== llmio run --json / --csv"
expect_rc 0 "run on the null engine" run --ioengine null --filename "$T/target" --size 1m \
	--bs 4k --rw randrw --runtime 0.1 --time_based --quiet --json "$T/run.json" --csv "$T/run.csv"
same run.json.shape json "$T/run.json"
same run.csv.shape csv "$T/run.csv"
described job 'd["jobs"]' "$T/run.json" error_msg
check "the CSV header is the table's columns" \
	test "$(head -n 1 "$T/run.csv")" = "$("$DOC" --keys csv | paste -sd,)"

echo "== a recipe run"
expect_rc 0 "ckpt on the null engine" run --workload ckpt --model "$HERE/data/gpt2.json" \
	--directory "$D" --engine null --scale 0.001 --dp 1 --quiet --json "$T/ckpt.json"
same ckpt.json.shape json "$T/ckpt.json"
described recipe 'd["runs"]' "$T/ckpt.json"
described phase '[p for r in d["runs"] for p in r["phases"]]' "$T/ckpt.json"
described job '[{k: v for k, v in j.items() if k != "stream"} for r in d["runs"] for p in r["phases"] for j in p["jobs"]]' "$T/ckpt.json" error_msg

echo "== a sweep journal"
printf '[global]\nioengine=null\nrw=randread\nsize=1m\nruntime=100ms\n[tiny]\nbs=4k,16k\n' \
	>"$T/tiny.ini"
expect_rc 0 "sweep on the null engine" sweep "$T/tiny.ini" -o "$T/journal.jsonl" --keep-cache
same journal.jsonl.shape jsonl "$T/journal.jsonl"
described journal '[d]' "$T/journal.jsonl" error
described phase 'd["phases"]' "$T/journal.jsonl" promised_bytes note metrics
described job '[j for p in d["phases"] for j in p["jobs"]]' "$T/journal.jsonl" error_msg

finish
