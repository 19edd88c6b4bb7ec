#!/bin/bash
# cli_headers.sh: every public header stands alone, in C and in C++.
#
# Each include/llmio/*.h is the only include of a translation unit, compiled (syntax only) as
# C11 with the build's C compiler and as C++11 with a C++ compiler, warnings as errors: a
# header that leans on an include it does not make, or that C++ cannot read, fails here.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/abi_lib.sh
. "$(dirname "$0")/abi_lib.sh"

INC=$(cd "$(dirname "$0")/../include" && pwd)
[ -n "$CXX" ] || skip_all "no C++ compiler (c++, g++ or clang++): the C++ half cannot run"

n=0
for h in "$INC"/llmio/*.h; do
	name=llmio/$(basename "$h")
	n=$((n + 1))
	printf '#include <%s>\n' "$name" >"$T/one.c"
	cp "$T/one.c" "$T/one.cpp"
	run "$CC_BUILD" -std=c11 -Wall -Wextra -Werror -pedantic -Wstrict-prototypes -I"$INC" \
		-fsyntax-only "$T/one.c"
	if [ "$RC" -eq 0 ]; then pass "$name alone as C11"; else fail "$name alone as C11: $(head -c 600 "$T/stderr")"; fi
	run "$CXX" -std=c++11 -Wall -Wextra -Werror -pedantic -I"$INC" -fsyntax-only "$T/one.cpp"
	if [ "$RC" -eq 0 ]; then pass "$name alone as C++11"; else fail "$name alone as C++11: $(head -c 600 "$T/stderr")"; fi
done
[ "$n" -ge 8 ] || fail "found $n public headers under $INC/llmio, expected at least 8"

finish
