#!/usr/bin/env bash
# Recipes on object targets under mpirun (issue 19's known limit): the ranks take turns to
# prepare a phase's objects, rank 0 first, so the shards every rank reads are uploaded once (by
# rank 0, the others find them there); and no rank removes what it uploaded before every rank
# has finished reading (a barrier before the removal).  Without mpirun this test skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

. "$(dirname "$0")/mpi_lib.sh"
on_exit() { s3_stop; }
s3_start llmio

P='d["runs"][0]["phases"]'

# every rank loads the whole model: the shard is uploaded once, read by both, removed once
mpi 2 run --workload load --model gpt2 --directory s3://llmio/m --engine s3 --scale 0.02 \
	--cache cold --quiet --json "$T/load.json"
check "load from a bucket on 2 ranks (exit $RC; $(head -c 300 "$T/stderr"))" [ "$RC" -eq 0 ]
S='d["runs"][0]["mpi"]["streams"]'
json_check "$T/load.json" "both ranks read the whole shard, sequential and parallel alike" \
	"$S[0]['per_rank'][0]['job']['read']['io_bytes'] == $S[0]['per_rank'][1]['job']['read']['io_bytes'] > 0 and $P[0]['jobs'][0]['read']['io_bytes'] == $P[3]['jobs'][0]['read']['io_bytes'] == 2 * $S[0]['per_rank'][0]['job']['read']['io_bytes']"
json_check "$T/load.json" "rank 0 uploaded the shard and removed it at the end" \
	"'objects: 1 created under s3://llmio/m/llmio-work/' in $P[-1]['note'] and '1 removed at the end' in $P[-1]['note'] and 'there before' not in $P[-1]['note']"
json_check "$T/load.json" "the merged phases are the sum of 2 ranks" "d['runs'][0]['mpi']['ranks'] == 2"
check "...and nothing is left in the bucket" test "$(obj_list m/)" = "0 0"

# ckpt: each rank writes its own shards, restores them, and removes them after the barrier
mpi 2 run --workload ckpt --model gpt2 --directory s3://llmio/ck --engine s3 --scale 0.005 \
	--dp 2 --quiet --json "$T/ck.json"
check "ckpt to a bucket on 2 ranks (exit $RC; $(head -c 300 "$T/stderr"))" [ "$RC" -eq 0 ]
json_check "$T/ck.json" "the restore read back what the save wrote" \
	"$P[0]['jobs'][0]['write']['io_bytes'] == $P[1]['jobs'][0]['read']['io_bytes'] > 0"
check "...and nothing is left in the bucket" test "$(obj_list ck/)" = "0 0"

s3_stop
finish
