#!/bin/bash
# cli_layering.sh: data flows one way, CLI -> library -> report (docs/DESIGN.md, "Rules that
# hold everywhere"), and each source file is compiled into one target.
#
#  - nothing below src/cli includes a header of src/cli (the report layer and the trace tools
#    own their formatting: src/base/fmt.h);
#  - every folder is a floor of docs/design.md and includes only floors below it;
#  - no CMakeLists.txt names a file of another directory's target (src/report/table.c was once
#    compiled into both llmio and the trace tools);
#  - nothing above src/engine decides by an engine's name: capability flags and the engine's
#    own tables (its fio mapping, its test variants) carry what others need to know;
#  - engines stay behind src/engine/engine.h: nothing outside src/engine includes another of its
#    headers (an engine's private one: s3.h, cuda_loader.h); what others need of an engine is a
#    callback or a capability in struct engine_ops (its objects, its buffer copies, its process);
#  - errors travel in one carrier, struct llmio_error (docs/library.md, "Errors"): no function
#    under src/ or include/ takes a (char *err, size_t errlen) pair.
#
# The checks read the source tree next to this script, so they need no build of their own.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../src" && pwd)
ROOT=$(dirname "$SRC")

bad=$(grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"cli/' \
	"$SRC" | grep -v "^$SRC/cli/" | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "no file outside src/cli includes cli/"
else
	fail "files outside src/cli include cli/ (move what they need into their own layer):"
	echo "$bad"
fi

# Every folder is a floor (docs/design.md, "The floors"): a file includes its own folder's
# headers, the public ones (llmio/) and those of floors below its own, never one above.  The
# order is read from the docs, so the written order and the checked one cannot differ.
floors=$(awk '/<!-- floors/ { on = 1; next } on && /^```$/ { if (++fence == 2) exit; next }
	on && fence == 1 && /^[a-z]/ { print $1 }' "$ROOT/docs/design.md")
nfloors=$(echo "$floors" | grep -c .)
if [ "$nfloors" -ge 8 ]; then
	pass "docs/design.md lists $nfloors floors"
else
	fail "docs/design.md lists $nfloors floors (expected its floors block)"
fi
rank_of() { echo "$floors" | grep -nx "$1" | cut -d: -f1; }
bad=""
for dir in "$SRC"/*/; do
	d=$(basename "$dir")
	r=$(rank_of "$d")
	if [ -z "$r" ]; then
		bad+="src/$d is not a floor of docs/design.md (add it to the list, in its place)"$'\n'
		continue
	fi
	while IFS=: read -r file line inc; do
		to=${inc%%/*}
		[ "$to" = "$d" ] || [ "$to" = llmio ] && continue
		tr=$(rank_of "$to")
		if [ -z "$tr" ] || [ "$tr" -ge "$r" ]; then
			bad+="${file#"$ROOT"/}:$line includes $inc: $to is not below $d"$'\n'
		fi
	done < <(grep -n -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/[^"]*"' \
		"$dir"*.[ch] 2>/dev/null | sed 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*"/:/; s/"$//')
done
# the preload library is loaded into programs that know nothing of llmio: libc and its own
# trace headers only
bad+=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$SRC"/trace/preload*.[ch] |
	grep -v '"trace/\(preload_internal\|trace_format\|trace_scope\)\.h"\|"llmio/trace\.h"' |
	sed "s|^$ROOT/||; s|\$| (the preload library includes only its own headers)|")
# public headers include only public headers
bad+=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$ROOT"/include/llmio/*.h |
	grep -v '"llmio/' | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "every folder under src/ includes only floors below it (docs/design.md)"
else
	fail "includes that climb a floor (move the code down, or pass what it needs up as data):"
	echo "$bad"
fi

# The CLI parses, calls the library and prints (docs/design.md): what grows past 600 lines in a
# file of src/cli is library work, and moves down a floor.
bad=$(wc -l "$SRC"/cli/*.[ch] | awk '$2 != "total" && $1 > 600 { print $2 ": " $1 " lines" }' |
	sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "no file of src/cli is over 600 lines"
else
	fail "files of src/cli over 600 lines (move the library work in them down a floor):"
	echo "$bad"
fi

# a CMakeLists.txt that lists src/<dir>/<file>.c of another directory compiles it a second time
bad=$(find "$ROOT" -name CMakeLists.txt -not -path '*/build*' -print0 |
	xargs -0 grep -n 'src/report/[a-z_]*\.c\|src/cli/[a-z_]*\.c' | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "no CMakeLists.txt compiles a single file of src/report or src/cli into another target"
else
	fail "a CMakeLists.txt compiles a report/cli file by name (link llmio_report instead):"
	echo "$bad"
fi

# Engines stay behind engine.h: every other header of src/engine belongs to one engine (or to
# the engines among themselves), and a file outside that includes one reaches past the interface.
bad=$(grep -rn --include='*.c' --include='*.h' \
	'^[[:space:]]*#[[:space:]]*include[[:space:]]*"engine/' "$SRC" "$ROOT/include" |
	grep -v "^$SRC/engine/" | grep -v '"engine/engine\.h"' | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "nothing outside src/engine includes a header of src/engine but engine.h"
else
	fail "files outside src/engine include an engine's private header (add what they need to" \
		"struct engine_ops in engine.h: a callback or a capability):"
	echo "$bad"
fi

# Engines keep their knowledge in their own file (src/engine): the layers above decide nothing
# by an engine's name (no comparison with one, no table keyed by one, no engine looked up or
# run by a name written in the code, no default named) but ask for capability flags, the
# engine's own tables and the registry (engine_default).  Names in prose (help, advice text,
# comments) stay, and so does one recipe strategy that is an engine by definition: load's
# strategy=mmap runs the mmap engine.  The trace tools are left out: their "mmap" is the system
# call.
engines=$(awk '/^const struct engine_ops engine_[a-z0-9_]* = \{/ { ops = 1 }
	ops && match($0, /\.name = "[^"]*"/) { print substr($0, RSTART + 9, RLENGTH - 10); ops = 0 }' \
	"$SRC"/engine/*.c | sort -u)
n=$(echo "$engines" | grep -c .)
if [ "$n" -ge 5 ]; then
	pass "found the $n engine names in src/engine"
else
	fail "found only $n engine names in src/engine/*.c (.name = \"...\")"
fi
above=$(find "$SRC" -mindepth 1 -maxdepth 1 -type d -not -name engine -not -name trace | sort)
bad=$(for d in $above; do grep -n 'engine_find("' "$d"/*.[ch]; done | sed "s|^$ROOT/||")
[ -z "$bad" ] || bad+=$'\n'
for e in $engines; do
	hits=$(for d in $above; do
		grep -n -e "cmp([^;]*\"$e\"" -e "^[[:space:]]*{\"$e\"," -e "? [^;]*: \"$e\"" \
			-e "engine[^;]*\"$e\")" "$d"/*.[ch]
	done | grep -v ':[0-9]*:[[:space:]]*/\{0,1\}\*' |
		grep -v "^$SRC/workload/load\.c:.*o\.engine.*\"mmap\")" | sed "s|^$ROOT/||")
	[ -z "$hits" ] || bad+="$hits"$'\n'
done
bad=$(echo "$bad" | sed '/^$/d' | awk '!seen[$0]++')
if [ -z "$bad" ]; then
	pass "no layer above src/engine compares with or keys a table by an engine name"
else
	fail "engine names decide things outside src/engine (use capability flags or the engine's tables):"
	echo "$bad"
fi

# One error carrier: a `size_t errlen` parameter, or `char *err, size_t` under any name, is the
# old (char *err, size_t errlen) pair coming back.
bad=$(cd "$ROOT" && grep -rn --include='*.c' --include='*.h' \
	-e 'size_t errlen' -e 'char \*err,[[:space:]]*size_t' src include |
	cat)
if [ -z "$bad" ]; then
	pass "no (char *err, size_t errlen) pair: struct llmio_error carries errors"
else
	fail "an error buffer pair is back (take a struct llmio_error *e, last, NULL allowed):"
	echo "$bad"
fi

finish
