#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_interrupt.sh: Ctrl-C (SIGINT) and SIGTERM stop a run early and keep its results.
#
# A long run that the user stops must end promptly (within 5 s, including draining I/O in
# flight on an async engine), exit 1 (it did not run as asked: a script must not mistake it
# for a complete run), and still write a complete, valid --json document
# whose job says interrupted: true and whose measured time covers only what ran (~1 s, far
# below the requested 30 s).  Checked for SIGINT and SIGTERM with psync, and for SIGINT with
# an async engine at queue depth 16 with O_DIRECT (I/O is in flight when the signal lands).
# The recipes that wait on the tensor store (offload, migrate) end as promptly, with the
# phases that ended before the signal, and remove their files.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

ASYNC=
for e in io_uring libaio; do
	if "$LLMIO" engines --brief 2>/dev/null | grep -Eq "^$e +available"; then ASYNC=$e; break; fi
done

PID=
on_exit() { [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; }

# signal_after SIG DESC CMD...: starts CMD (its output in $T/stdout and $T/stderr), sends SIG
# after 1 s and waits up to 5 s for it to end (one still going then has ignored the signal):
# REAPED is its exit status, WAITED the ms from the signal.  1 when CMD ended before it.
signal_after() {
	local sig=$1 desc=$2 start; shift 2
	"$@" >"$T/stdout" 2>"$T/stderr" &
	PID=$!
	sleep 1
	if ! kill -0 "$PID" 2>/dev/null; then
		wait "$PID"
		fail "$desc: llmio ended before the signal (exit $?): $(head -c 300 "$T/stderr")"
		PID=
		return 1
	fi
	start=$(date +%s%N)
	kill -"$sig" "$PID"
	reap "$PID" 5 "$desc: after SIG$sig"
	PID=
	WAITED=$((($(date +%s%N) - start) / 1000000))
}

# interrupt SIG DESC ARGS...: starts llmio run ARGS --runtime 30, sends SIG after 1 s and
# checks how and how fast it ended, and what it wrote.
interrupt() {
	local sig=$1 desc=$2 out=$T/$1.json waited rc; shift 2
	echo "+ llmio run $* --runtime 30 --time_based --json $out   (then SIG$sig after 1 s)" | sed "s|$T|\$T|g"
	signal_after "$sig" "$desc" "$LLMIO" run "$@" --runtime 30 --time_based --json "$out" || return
	rc=$REAPED
	waited=$WAITED
	if [ "$rc" -eq 1 ]; then
		pass "$desc: exit 1, ${waited} ms after SIG$sig"
	else
		fail "$desc: exit $rc after SIG$sig; stderr: $(head -c 300 "$T/stderr")"
	fi
	check "$desc: table marked interrupted" grep -q 'interrupted' "$T/stdout"
	if [ -f "$out" ]; then
		json_check "$out" "$desc: JSON valid, jobs[0].interrupted is true" \
			'j["interrupted"] is True and j["error"] == 0'
		json_check "$out" "$desc: job_runtime covers ~1 s, well under 30 s" \
			'200 <= j["job_runtime"] < 10000'
		json_check "$out" "$desc: it did I/O" 'j["read"]["total_ios"] > 0'
	else
		fail "$desc: $out not written"
	fi
	no_outputs "$desc: no temporary JSON left" "$out.tmp"
}

# Lay the target out first, so that the signals land in the measured phase, not in the fill
# (a fill that is interrupted exits 1 by design: there is nothing measured to report).
expect_rc 0 "lay out the 16 MiB target" run --filename "$T/f" --size 16m --runtime 0.1 --quiet

interrupt INT "SIGINT psync" --filename "$T/f" --size 16m --rw randread --ioengine psync
interrupt TERM "SIGTERM psync" --filename "$T/f" --size 16m --rw randread --ioengine psync
if [ -n "$ASYNC" ]; then
	interrupt INT "SIGINT $ASYNC QD16 direct" --filename "$T/f" --size 16m --rw randread \
		--ioengine "$ASYNC" --iodepth 16 --direct=1
else
	note "no async engine available: the in-flight interrupt check is skipped"
fi

# interrupt_recipe SIG DESC PHASE ARGS...: starts llmio run --workload ARGS, sends SIG after
# 1 s, while a step waits on the tensor store, and checks that the run ends promptly, exits 1,
# says it was interrupted, writes the phases that ended (not PHASE, the one cut short) and
# removes the files it made.
interrupt_recipe() {
	local sig=$1 desc=$2 phase=$3 out=$T/$1-recipe.json; shift 3
	rm -rf "$T/rd" && mkdir -p "$T/rd"
	echo "+ llmio run $* --directory \$T/rd --json $out   (then SIG$sig after 1 s)" |
		sed "s|$T|\$T|g"
	signal_after "$sig" "$desc" "$LLMIO" run "$@" --directory "$T/rd" --json "$out" || return
	check "$desc: exit 1" test "$REAPED" -eq 1
	expect_err "$desc: says it was interrupted" "llmio: interrupted"
	json_check "$out" "$desc: the JSON holds the phases that ended, not '$phase'" \
		"'$phase' not in [p['name'] for p in d['runs'][0]['phases']]"
	check "$desc: the files it made are removed" test ! -e "$T/rd/llmio-work"
}

# offload: 12 layers of 0.5 s compute each, so a step is under way when the signal lands
interrupt_recipe TERM "SIGTERM offload" "step 1" --workload offload --model gpt2 --steps 2 \
	--layers 12 --fwd_ms 500 --scale 0.05 --engine psync --direct 0
# migrate: ten kernels of 1 s executed on the store (the plan's phase is simulated first)
sed 's/@/\n/g' >"$T/mig.lt" <<<"llmio-lifetimes 1@kernel k0 100000@kernel k1 100000@\
kernel k2 100000@kernel k3 100000@kernel k4 100000@kernel k5 100000@kernel k6 100000@\
kernel k7 100000@kernel k8 100000@kernel k9 100000@tensor BIG 1000000 activation 0 9@\
tensor X 1000000 workspace 4 5"
interrupt_recipe INT "SIGINT migrate" "run-g10" --workload migrate --lifetimes "$T/mig.lt" \
	--budget 1500000 --time_scale 10 --policy g10 --host_bytes 0 --ssd_gbps 1 \
	--ssd_read_lat 100us --ssd_write_lat 100us --engine psync

finish
