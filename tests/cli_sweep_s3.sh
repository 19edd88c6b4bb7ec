#!/usr/bin/env bash
# A sweep's recipe points on an object target (an S3 server on loopback): each point removes the
# objects it created, as `llmio run --workload` does, and `llmio sweep --keep` leaves them for
# the next point and after the sweep (docs/sweeps.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

on_exit() { s3_stop; }
s3_start llmio

obj_count() { obj_list "$1" | cut -d' ' -f1; }

cat >"$T/load.ini" <<EOF2
[global]
engine=s3

[load]
workload=load
model=gpt2
scale=0.02
strategy=sequential,tensor
cache=cold
directory=s3://llmio/sw
EOF2

expect_rc 0 "a sweep of two load points on a bucket" sweep "$T/load.ini" -o "$T/j1.jsonl"
check "2 points in the journal" test "$(wc -l <"$T/j1.jsonl")" -eq 2
check "each point removed the objects it uploaded: none left" test "$(obj_count sw/)" = 0

expect_rc 0 "the same sweep with --keep" sweep "$T/load.ini" -o "$T/j2.jsonl" --keep
check "2 points in the journal" test "$(wc -l <"$T/j2.jsonl")" -eq 2
check "the shard object is left in the bucket" test "$(obj_count sw/)" = 1
notes_ok() {
	python3 - "$1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
notes = [r["phases"][-1]["note"] for r in recs]
print(notes)
sys.exit(0 if "left in the bucket (--keep)" in notes[0] and "objects: none created" in notes[1] else 1)
PY
}
check "the first point left its object, the second read it as it was" notes_ok "$T/j2.jsonl"
s3_stop
finish
