#!/bin/bash
# cli_python_layout.sh: python/llmio_store.py's ctypes structs and constants match the C headers.
#
# tests/python_layout.py writes a C program from include/llmio/store.h and common.h (every member
# of every struct the binding mirrors, read from the header text), the build's compiler builds
# it, and its sizeof / offsetof / member sizes and constants are compared line by line with
# ctypes.sizeof and the Structure fields' offsets.  Then the comparison is shown to fail when a
# member is added to the header only (into padding, where sizeof does not change), when two
# members are swapped in the header, and when the binding grows a member the header lacks.
# Needs no torch and no library: ctypes and a C compiler.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/abi_lib.sh
. "$(dirname "$0")/abi_lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v "$PY" >/dev/null || skip_all "no python3"
HEADERS=(llmio/common.h llmio/store.h)

# layout NAME PYDIR INCDIR: C program from INCDIR's headers, built and run, compared with the
# llmio_store.py in PYDIR; RC is the comparison's exit status, its output in $T/NAME.out
layout() {
	local name=$1 pydir=$2 inc=$3
	if ! "$PY" "$SRC/tests/python_layout.py" cprog "$pydir" "$inc" "${HEADERS[@]}" >"$T/$name.c"; then
		RC=2
		return
	fi
	run "$CC_BUILD" -std=c11 -Wall -Wextra -Werror -I"$inc" "$T/$name.c" -o "$T/$name"
	if [ "$RC" -ne 0 ]; then
		fail "$name: the generated C program does not build: $(head -c 600 "$T/stderr")"
		RC=2
		return
	fi
	"$T/$name" >"$T/$name.facts"
	"$PY" "$SRC/tests/python_layout.py" compare "$pydir" "$T/$name.facts" >"$T/$name.out" 2>&1
	RC=$?
}

layout real "$SRC/python" "$SRC/include"
if [ "$RC" -eq 0 ]; then
	pass "ctypes mirrors equal to the headers: $(tail -n 1 "$T/real.out")"
else
	fail "ctypes mirrors differ from the headers: $(cat "$T/real.out")"
fi
# the comparison covered what the binding declares
check "the C side lists struct llmio_store_stats and its reclaimed_bytes" \
	grep -q '^member llmio_store_stats reclaimed_bytes ' "$T/real.facts"
check "the C side lists the constant LLMIO_STORE_BORROW" grep -q '^const LLMIO_STORE_BORROW 1$' "$T/real.facts"

# expect_differs NAME WHAT: the comparison must fail and name the difference
expect_differs() {
	local name=$1 what=$2
	if [ "$RC" -eq 1 ] && grep -q '^differs at line' "$T/$name.out"; then
		pass "$what is caught: $(grep -m1 '^differs' "$T/$name.out")"
	else
		fail "$what is not caught (rc $RC): $(cat "$T/$name.out" 2>/dev/null)"
	fi
}

# a member added to the header only, after `bool direct` (into the padding before iodepth)
mkdir -p "$T/inc-add/llmio" "$T/inc-swap/llmio"
cp "$SRC"/include/llmio/*.h "$T/inc-add/llmio/"
sed -i 's/^\tbool direct; /\tbool direct;\n\tbool added_here;/' "$T/inc-add/llmio/store.h"
check "the added member is in the copy" grep -q 'added_here' "$T/inc-add/llmio/store.h"
layout add "$SRC/python" "$T/inc-add"
expect_differs add "a member added to the header only (in padding: sizeof unchanged)"
check "that member did not change sizeof (so only the member list can catch it)" \
	grep -qx "$(grep '^struct llmio_store_opts ' "$T/real.facts")" "$T/add.facts"

# two members swapped in the header only (same sizes: moved)
cp "$SRC"/include/llmio/*.h "$T/inc-swap/llmio/"
sed -i 's/^\tuint64_t stalls; /\tuint64_t stall_ns_moved;\n\tuint64_t stalls; /; s/^\tuint64_t stall_ns; .*$//; s/stall_ns_moved/stall_ns/' \
	"$T/inc-swap/llmio/store.h"
layout swap "$SRC/python" "$T/inc-swap"
expect_differs swap "two members swapped in the header only"

# a member added to the binding only (at the end of llmio_store_stats)
mkdir -p "$T/py"
sed 's/^        ("reclaimed_bytes", ctypes.c_uint64),$/&\n        ("added_here", ctypes.c_uint64),/' \
	"$SRC/python/llmio_store.py" >"$T/py/llmio_store.py"
check "the added field is in the copy" grep -q 'added_here' "$T/py/llmio_store.py"
layout pyadd "$T/py" "$SRC/include"
expect_differs pyadd "a member added to the binding only"

finish
