#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_hostile.sh: odd or hostile input fails cleanly (one line, exit 2), never crashes.
#
#  - exclude= expressions are bounded (SWEEP_EXPR_MAX_DEPTH 64 nested '(' or '!',
#    SWEEP_EXPR_MAX_TERMS 1024 comparisons, SWEEP_EXPR_MAX_LEN 65536 characters): 60,000
#    nested parentheses or a 150,000-term || chain used to overflow the stack;
#  - continuation lines are joined in linear time: 300,000 of them used to take hours;
#  - `llmio run x` read past the end of its argument: caught by the ASan build when the
#    arguments live on the heap (a small LD_PRELOAD library moves them there);
#  - qsort(NULL, 0) (UBSan: results export and sweep --resume of an empty journal) and an
#    uninitialised error buffer (valgrind, sweep --dry-run, when valgrind is installed).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

F=$T/target
HEAD="[a]
filename=$F
size=1m
rw=read
runtime=1
bs=4k,8k"

# sweep_bad DESC TEXT FILE: sweep FILE --dry-run exits 2 with one line holding TEXT.
sweep_bad() {
	expect_rc 2 "$1" sweep "$3" --dry-run && expect_err "$1: message" "$2"
}

# expr_file FILE PYEXPR...: a job file with one exclude= per PYEXPR (a list of tokens), the
# tokens joined into continuation lines of at most 100 characters (job file lines are short).
expr_file() {
	python3 - "$@" "$HEAD" <<'EOF'
import sys
path, exprs, head = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
with open(path, "w") as f:
    f.write(head + "\n")
    for e in exprs:
        line = "exclude="
        for tok in eval(e):
            if len(line) + len(tok) > 100:
                f.write(line + "\n")
                line = "  "
            line += tok
        f.write(line + "\n")
EOF
}

echo "== exclude= expressions are bounded"
# the issue's 61 KB file: 60,000 nested parentheses, 100 to a continuation line
python3 - "$T/deep.ini" "$HEAD" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write(sys.argv[2] + "\nexclude=\n")
    for _ in range(600):
        f.write("  " + "(" * 100 + "\n")
    f.write("  bs==4k\n")
    for _ in range(600):
        f.write("  " + ")" * 100 + "\n")
EOF
sweep_bad "60,000 nested parentheses" "deep.ini:7: exclude:" "$T/deep.ini"
# within the length bound: the depth bound speaks
expr_file "$T/deep2.ini" '["("] * 1000 + ["bs==4k"] + [")"] * 1000'
sweep_bad "1,000 nested parentheses" "nested more than 64 deep" "$T/deep2.ini"
expr_file "$T/nots.ini" '["!"] * 3000 + ["bs==4k"]'
sweep_bad "3,000 nested '!'" "nested more than 64 deep" "$T/nots.ini"
# the issue's 150,000-term || chain, one term per continuation line
python3 - "$T/chain.ini" "$HEAD" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write(sys.argv[2] + "\nexclude=bs==1k\n")
    for i in range(150000):
        f.write("  || bs==%dk\n" % (i % 64 + 1))
EOF
sweep_bad "a 150,000-term || chain" "longer than 65536 characters" "$T/chain.ini"
expr_file "$T/terms.ini" '["bs==1k"] + ["||bs==1k"] * 1999'
sweep_bad "a 2,000-term || chain" "more than 1024 comparisons" "$T/terms.ini"
# at the limits: accepted, and evaluated
expr_file "$T/ok.ini" '["("] * 62 + ["!!bs==4k"] + [")"] * 62' \
	'["bs==1k"] + ["||bs==1k"] * 1022 + ["||bs==2k"]'
expect_rc 0 "64 nested and 1,024 terms are accepted" sweep "$T/ok.ini" --dry-run &&
	expect_out "and the exclusion applies" "1 excluded"

echo "== continuation lines are joined in linear time"
# 300,000 lines: joining them used to copy the whole value again per line (hours); the CPU
# limit is far above what the linear join needs, and far below what the quadratic one did
python3 - "$T/cont.ini" "$HEAD" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write(sys.argv[2] + "\nexclude=bs==1k\n")
    for _ in range(300000):
        f.write("  || bs==1k\n")
EOF
run bash -c 'ulimit -t 60; exec "$0" sweep "$1" --dry-run' "$LLMIO" "$T/cont.ini"
check "300,000 continuation lines: exit 2 (too long), not killed (exit $RC)" test "$RC" -eq 2
expect_err "300,000 continuation lines: message" "longer than 65536 characters"

echo "== llmio run with a one-character argument"
expect_rc 2 "llmio run x" run x && expect_err "llmio run x: message" "unknown option 'x'"
# The same with the arguments on the heap, where an ASan build sees a read past their end
# (the kernel's copy on the stack is not instrumented).
if command -v cc >/dev/null; then
	cat >"$T/heap_argv.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
__attribute__((constructor)) static void heap_argv(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		char *c = malloc(n);

		if (c) {
			memcpy(c, argv[i], n);
			argv[i] = c;
		}
	}
}
EOF
	if cc -shared -fPIC -o "$T/heap_argv.so" "$T/heap_argv.c" 2>"$T/cc.err"; then
		for a in x y -; do
			run env LD_PRELOAD="$T/heap_argv.so" \
				ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
				"$LLMIO" run "$a"
			check "llmio run $a, arguments on the heap: exit 2 (exit $RC)" test "$RC" -eq 2
			check "llmio run $a: no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer' '$T/stderr'"
		done
	else
		note "cannot build the LD_PRELOAD helper ($(head -c 200 "$T/cc.err")): heap check skipped"
	fi
else
	note "no C compiler: the heap-argument check is skipped"
fi

echo "== empty journals (qsort of nothing: UBSan)"
: >"$T/empty.jsonl"
expect_rc 0 "results export of an empty journal" results export "$T/empty.jsonl" --csv -o "$T/e.csv"
check "the CSV has its header" grep -q '^config_hash,' "$T/e.csv"
printf '%s\n' "$HEAD" >"$T/job.ini"
expect_rc 0 "sweep --dry-run --resume over an empty journal" \
	sweep "$T/job.ini" --dry-run --resume -o "$T/empty.jsonl"
expect_out "none already done" "0 of them already in"

echo "== sweep --dry-run reads no uninitialised memory (valgrind)"
if command -v valgrind >/dev/null; then
	cat >"$T/engines.ini" <<EOF
$HEAD
ioengine=psync,libaio,io_uring
iodepth=1,8
sqthread_poll=0,1
exclude=ioengine==psync && iodepth>1
EOF
	run valgrind -q --error-exitcode=99 "$LLMIO" sweep "$T/engines.ini" --dry-run
	if grep -q 'AddressSanitizer\|only works\|Valgrind cannot' "$T/stderr" ||
		ldd "$LLMIO" 2>/dev/null | grep -q 'libasan\|libubsan'; then
		note "a sanitizer build: valgrind cannot run it; skipped"
	else
		check "valgrind: no error (exit $RC; $(grep -m1 -o 'Conditional jump.*\|Invalid read.*' "$T/stderr"))" \
			test "$RC" -eq 0
	fi
else
	note "valgrind is not installed: the uninitialised-memory check is skipped"
fi

finish
