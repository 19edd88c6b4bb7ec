#!/usr/bin/env bash
# python/llmio_offload.py's Store and hooks when things go wrong (docs/offload.md, "Errors and
# cleanup"; helpers in tests/store_python.py): failed store calls raise StoreError, also from
# inside torch's hooks (which torch would hand on as RuntimeError); a put that does not fit
# mid-step leaves the store usable for the next steps' tensors; SIGTERM and Ctrl-C leave no
# store file; a file left by an owner killed with SIGKILL is removed by the next store, which
# says so.  Skips (77) where /usr/bin/python3 has no torch.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/torch_lib.sh
. "$(dirname "$0")/torch_lib.sh"
HELP=$SRC/tests/store_python.py

py() { # py NAME SUBCOMMAND: one helper process; its checks counted here
	mkdir -p "$T/$1"
	run "$PY" "$HELP" "$2" "$T/$1"
	cat "$T/stdout"
	CHECKS=$((CHECKS + $(grep -c '^ok:' "$T/stdout")))
	FAILS=$((FAILS + $(grep -c '^FAIL:' "$T/stdout")))
	if [ "$RC" -ne 0 ] && ! grep -q '^FAIL:' "$T/stdout"; then
		fail "$2: exit $RC: $(tail -c 600 "$T/stderr")"
	fi
}
py errors errors
py full full

files() { find "$T/$1" -name 'store.*' | wc -l; }
# hold NAME: a helper holding a store in $T/NAME in the background, once its file exists
hold() {
	mkdir -p "$T/$1"
	"$PY" "$HELP" hold "$T/$1" >"$T/$1.out" 2>"$T/$1.err" &
	HOLDER=$!
	for _ in $(seq 600); do
		grep -q '^ready' "$T/$1.out" && return 0
		kill -0 "$HOLDER" 2>/dev/null || break
		sleep 0.1
	done
	fail "$1: the store never came up: $(tail -c 300 "$T/$1.err")"
	return 1
}

for sig in TERM INT; do
	if hold "sig$sig"; then
		check "SIG$sig: the store's file is there while it runs" [ "$(files "sig$sig")" -eq 1 ]
		kill -"$sig" "$HOLDER"
		reap "$HOLDER" 60 "the holder after SIG$sig"
		check "SIG$sig ends it (exit $REAPED)" [ "$REAPED" -ne 0 ]
		check "SIG$sig leaves no store file" [ "$(files "sig$sig")" -eq 0 ]
	fi
done

# SIGKILL: no cleanup can run; the next store in the directory removes the file and says so
if hold killed; then
	kill -KILL "$HOLDER"
	reap "$HOLDER" 60 "the holder after SIGKILL"
	stale=$(find "$T/killed" -name 'store.*')
	check "SIGKILL leaves the store's file behind" [ -n "$stale" ]
	run "$PY" "$HELP" reclaim "$T/killed"
	check "a new store there (exit $RC)" [ "$RC" -eq 0 ]
	check "it reclaimed that one file of 4 MiB" grep -q '^reclaimed 1 4194304$' "$T/stdout"
	check "and says so (StoreWarning)" grep -q 'StoreWarning: llmio store: removed 1 stale' "$T/stderr"
	check "the stale file is gone, and the new store's own too" [ "$(files killed)" -eq 0 ]
fi

finish
