#!/bin/bash
# cli_abi.sh: the libraries export the public API and nothing else (docs/library.md).
#
# Every global symbol that libllmio.a and libllmio.so define starts with llmio_ (the LLMIO_API
# functions and data of include/llmio/); the library's internals (engine_find, target_open,
# wl_run, ...) are local in both, so they cannot clash with a client's own names.  The shared
# library's exports carry the version node LLMIO_1 of src/libllmio.map, and both libraries
# export the same set.  A client that defines names the library uses inside (engine_find,
# target_open) links against the static archive and runs its job with llmio's own.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/abi_lib.sh
. "$(dirname "$0")/abi_lib.sh"

if ! command -v nm >/dev/null || ! command -v objdump >/dev/null; then
	skip_all "nm and objdump (binutils) are needed"
fi
A=$B/libllmio.a
SO=$B/libllmio.so
[ -f "$A" ] || { fail "no $A"; finish; }
[ -f "$SO" ] || { fail "no $SO"; finish; }

# Not names of llmio's: the version node itself (an absolute symbol in the .so) and, in a
# build with AddressSanitizer, its ODR indicator of an exported variable
# (__odr_asan.llmio_percentiles).
ALLOWED='^(LLMIO_1|__odr_asan\.llmio_.*)$'

# The global defined symbol names (nm prints "value type name"; nm -D adds "@@VERSION").
nm -g --defined-only "$A" | awk 'NF == 3 { print $3 }' | sort -u >"$T/a.syms"
nm -D --defined-only "$SO" | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/so.syms"

echo "== libllmio.a: $(wc -l <"$T/a.syms") global symbols"
grep -v '^llmio_' "$T/a.syms" | grep -Ev "$ALLOWED" >"$T/a.bad"
if [ -s "$T/a.bad" ]; then
	fail "libllmio.a exports $(wc -l <"$T/a.bad") names without the llmio_ prefix: $(head -n 20 "$T/a.bad" | tr '\n' ' ')"
else
	pass "libllmio.a: every global symbol starts with llmio_"
fi
# The internals are still there (local), so the check above looked at the real archive.
check "libllmio.a holds the internals as local symbols" \
	grep -qx 't engine_find' <(nm "$A" | awk 'NF == 3 { print $2, $3 }')

echo "== libllmio.so: $(wc -l <"$T/so.syms") exported symbols"
grep -v '^llmio_' "$T/so.syms" | grep -Ev "$ALLOWED" >"$T/so.bad"
if [ -s "$T/so.bad" ]; then
	fail "libllmio.so exports names without the llmio_ prefix: $(head -n 20 "$T/so.bad" | tr '\n' ' ')"
else
	pass "libllmio.so: every exported symbol starts with llmio_"
fi
grep -Ev "$ALLOWED" "$T/a.syms" >"$T/a.names"
grep -Ev "$ALLOWED" "$T/so.syms" >"$T/so.names"
if diff "$T/a.names" "$T/so.names" >"$T/diff"; then
	pass "libllmio.a and libllmio.so export the same $(wc -l <"$T/a.names") names"
else
	fail "libllmio.a and libllmio.so export different names: $(head -c 400 "$T/diff")"
fi
for f in llmio_job_run llmio_result_size; do
	check "the public API is exported: $f" grep -qx "$f" "$T/so.syms"
done

# objdump -T: "... DF .text SIZE VERSION NAME" for defined dynamic symbols.
objdump -T "$SO" | awk '$0 !~ /\*UND\*/ && $NF ~ /^llmio_/ { print $(NF - 1), $NF }' >"$T/ver"
if [ -s "$T/ver" ] && ! grep -qv '^LLMIO_1 ' "$T/ver"; then
	pass "every export carries the version node LLMIO_1 (src/libllmio.map)"
else
	fail "exports without the version node LLMIO_1: $(grep -v '^LLMIO_1 ' "$T/ver" | head -n 5 | tr '\n' ' ')"
fi

echo "== a static client with names of its own that llmio uses inside"
cat >"$T/clash.c" <<'EOF'
#include <stdio.h>
#include <llmio/llmio.h>

/* Names libllmio uses inside; a client may have its own. */
const void *engine_find(const char *name);
const void *engine_find(const char *name)
{
	(void)name;
	return NULL;
}
int target_open(void);
int target_open(void)
{
	return -1;
}

int main(void)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error e = {0};
	int ret;

	llmio_job_opts_init(&o);
	if (llmio_job_opts_set(&o, "ioengine", "null", &e) ||
	    llmio_job_opts_set(&o, "io_size", "1m", &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	ret = llmio_job_run(&o, &r, &e);
	if (ret) {
		fprintf(stderr, "llmio_job_run: %s\n", e.msg);
		return 1;
	}
	printf("%s %llu\n", r->opts.engine, (unsigned long long)r->read.ios);
	llmio_result_destroy(r);
	return engine_find("x") == NULL && target_open() == -1 ? 0 : 1;
}
EOF
read -r -a DEPS <<<"$(pkg-config --libs liburing libcjson blkid inih libcurl libcrypto libpmem2 libisal libxxhash mount)"
run "$CC_BUILD" -std=c11 "${SAN[@]}" -I"$(dirname "$0")/../include" "$T/clash.c" "$A" \
	"${DEPS[@]}" -laio -lpthread -lm -o "$T/clash"
if [ "$RC" -eq 0 ]; then
	pass "links against libllmio.a with its own engine_find() and target_open()"
	run "$T/clash"
	if [ "$RC" -eq 0 ] && grep -qx 'null 256' "$T/stdout"; then
		pass "its job runs with llmio's engine_find (256 reads on the null engine)"
	else
		fail "the client's job: exit $RC, stdout $(head -c 200 "$T/stdout"), stderr $(head -c 300 "$T/stderr")"
	fi
else
	fail "link with a client's own engine_find() failed: $(head -c 600 "$T/stderr")"
fi

finish
