#!/bin/bash
# cli_abi_layout.sh: the public types keep the layout of the last release (docs/library.md,
# "ABI"): tests/data/abi/0.2.0.layout, read from the compiler's DWARF by scripts/abi_layout.py.
#
#  - today's headers are compatible with it: every struct member at its old offset, no struct
#    smaller, every enum constant at its old value;
#  - the check is not blind: a member inserted mid-struct, a constant inserted mid-enum and a
#    member removed are each caught, and a member appended at the end is not;
#  - struct llmio_job_opts, which a result holds first, keeps its size: a member that takes
#    reserved_'s bytes is compatible, one that grows the struct is caught;
#  - src/base/abi_assert.c (compiled into the library: the same facts as static assertions)
#    is what the generator writes from the baseline.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/abi_lib.sh
. "$(dirname "$0")/abi_lib.sh"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=$ROOT/tests/data/abi/0.2.0.layout
command -v readelf >/dev/null || skip_all "readelf (binutils) is needed"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
layout() { "$PY" "$ROOT/scripts/abi_layout.py" --cc "$CC_BUILD" "$@"; }

out=$(layout --check "$BASE" 2>&1)
check "today's headers keep the layout of 0.2.0 ($out)" [ $? -eq 0 ]

# scratch copies of the headers, each with one change
variant() {
	rm -rf "$T/inc" && cp -r "$ROOT/include" "$T/inc" && sed -i "$1" "$T/inc/llmio/$2"
	layout --check "$BASE" --include "$T/inc" 2>&1
}
out=$(variant 's/^\tdouble runtime_s;/\tint inserted;\n&/' result.h)
rc=$?
check "a member inserted mid-struct is caught" [ $rc -ne 0 ]
check "it names the moved member ($out)" grep -q "runtime_s offset was" <<<"$out"
out=$(variant 's/^\tLLMIO_RW_WRITE,/\tLLMIO_RW_INSERTED,\n&/' job.h)
check "an enum constant inserted mid-enum is caught" [ $? -ne 0 ]
check "it names the constant whose value changed ($out)" grep -q "LLMIO_RW_WRITE value was" <<<"$out"
out=$(variant '/^\tdouble runtime_s;/d' result.h)
check "a member removed is caught" [ $? -ne 0 ]
last=$(awk '/^struct llmio_store_stats /{on=1; next} on && /^  /{m=$1} on && /^[a-z]/{exit} END{print m}' "$BASE")
out=$(variant "/^struct llmio_store_stats {/,/^};/ s/^};/\\tuint64_t appended;\\n};/" store.h)
check "a member appended at the end of struct llmio_store_stats (after $last) is compatible ($out)" \
	[ $? -eq 0 ]
grep -q appended "$T/inc/llmio/store.h" || fail "the variant did not append a member"

# struct llmio_job_opts keeps its size (a result holds a copy first): a member takes reserved_'s
# bytes, and one that grows the struct is caught, with every result member it would move
# (whatever of reserved_ the options since 0.2.0 left)
left=$(sed -n 's/^\tuint8_t reserved_\[\([0-9]*\)\];/\1/p' "$ROOT/include/llmio/job.h")
out=$(variant "s/^\tuint8_t reserved_\[$left\];/\tuint64_t later;\n\tuint8_t reserved_[$((left - 8))];/" job.h)
check "a job option that takes reserved_'s bytes is compatible ($out)" [ $? -eq 0 ]
grep -q 'uint64_t later;' "$T/inc/llmio/job.h" || fail "the variant did not add the member"
out=$(variant "s/^\tuint8_t reserved_\[$left\];/&\n\tuint64_t after;/" job.h)
rc=$?
check "a job option after reserved_ (the struct grows) is caught" [ $rc -ne 0 ]
check "it says the size must stay ($(head -n 1 <<<"$out"))" grep -q "llmio_job_opts: .* bytes, was" <<<"$out"

if diff <(cd "$ROOT" && "$PY" scripts/abi_layout.py --asserts tests/data/abi/0.2.0.layout) \
	"$ROOT/src/base/abi_assert.c" >"$T/assert.diff"; then
	pass "src/base/abi_assert.c is generated from the baseline"
else
	fail "src/base/abi_assert.c differs from the baseline's (run: scripts/abi_layout.py" \
		"--asserts tests/data/abi/0.2.0.layout > src/base/abi_assert.c)"
fi
finish
