#!/bin/bash
# cli_install.sh: `cmake --install` gives a tree a client builds against with pkg-config alone.
#
# The build is installed under a scratch prefix; the installed llmio.pc, found through
# PKG_CONFIG_PATH, must name that prefix and be enough to compile and link
# examples/run_job.c against the installed headers and libraries: as C against the shared
# library, as C++ against the shared library (the headers' extern "C"), and as C against the
# static archive (pkg-config --static), each run on a scratch file.  A staged install
# (DESTDIR) writes the pc file for the final prefix, not for the staging directory.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/abi_lib.sh
. "$(dirname "$0")/abi_lib.sh"

command -v pkg-config >/dev/null || skip_all "pkg-config is needed"
SRC=$(cd "$(dirname "$0")/.." && pwd)
CMAKE=$(cache_get CMAKE_COMMAND)
[ -x "$CMAKE" ] || CMAKE=cmake
LIBDIR_REL=$(cache_get CMAKE_INSTALL_LIBDIR)
[ -n "$LIBDIR_REL" ] || LIBDIR_REL=lib

P=$T/prefix
LIB=$P/$LIBDIR_REL
echo "== cmake --install into a scratch prefix"
run "$CMAKE" --install "$B" --prefix "$P"
if [ "$RC" -ne 0 ]; then
	fail "cmake --install --prefix: exit $RC: $(head -c 600 "$T/stderr")"
	finish
fi
pass "cmake --install --prefix \$T/prefix"
for f in "$LIB/libllmio.so" "$LIB/libllmio.so.1" "$LIB/libllmio.a" "$LIB/pkgconfig/llmio.pc"; do
	check "installed ${f#"$P"/}" test -e "$f"
done
for h in "$SRC"/include/llmio/*.h; do
	check "installed include/llmio/$(basename "$h")" cmp -s "$h" "$P/include/llmio/$(basename "$h")"
done

export PKG_CONFIG_PATH=$LIB/pkgconfig
version=$(sed -n 's/^#define LLMIO_VERSION_STRING "\(.*\)"/\1/p' "$SRC/include/llmio/common.h")
check "pkg-config finds llmio $version" test "$(pkg-config --modversion llmio)" = "$version"
check "llmio.pc names the prefix installed to" \
	test "$(pkg-config --variable=prefix llmio)" = "$P"
read -r -a CFLAGS <<<"$(pkg-config --cflags llmio)"
read -r -a LIBS <<<"$(pkg-config --libs llmio)"
read -r -a SLIBS <<<"$(pkg-config --static --libs llmio)"
check "pkg-config --cflags points at the installed headers" \
	grep -qx -- "-I$P/include" <(printf '%s\n' "${CFLAGS[@]}")
# the static link names the archive itself: -lllmio would take the shared library
for i in "${!SLIBS[@]}"; do
	[ "${SLIBS[$i]}" = -lllmio ] && SLIBS[i]=-l:libllmio.a
done

# client DESC OUT COMPILER ARGS...: compile+link, then run OUT on a scratch file with the
# installed libraries only (the client has no run path into the build tree).
client() {
	local desc=$1 out=$2
	shift 2
	run "$@" -o "$out"
	if [ "$RC" -ne 0 ]; then
		fail "$desc: does not build: $(head -c 800 "$T/stderr")"
		return
	fi
	pass "$desc: builds with pkg-config's flags"
	LD_LIBRARY_PATH=$LIB run "$out" "$T/target"
	if [ "$RC" -eq 0 ] && grep -q '^psync: 1024 reads' "$T/stdout"; then
		pass "$desc: runs its job ($(head -c 80 "$T/stdout"))"
	else
		fail "$desc: exit $RC, stdout $(head -c 200 "$T/stdout"), stderr $(head -c 400 "$T/stderr")"
	fi
}

echo "== clients of the installed tree"
EX=$SRC/examples/run_job.c
client "C client, shared library" "$T/c_shared" \
	"$CC_BUILD" -std=c11 -Wall -Wextra -Werror "${SAN[@]}" "${CFLAGS[@]}" "$EX" "${LIBS[@]}"
check "the shared client needs libllmio.so.1" \
	grep -qF '[libllmio.so.1]' <(readelf -d "$T/c_shared" 2>/dev/null)
if [ -n "$CXX" ]; then
	client "C++ client, shared library" "$T/cxx_shared" \
		"$CXX" -std=c++11 -Wall -Wextra -Werror "${SAN[@]}" "${CFLAGS[@]}" -x c++ "$EX" \
		-x none "${LIBS[@]}"
else
	note "no C++ compiler: the C++ client is not built"
fi
client "C client, static archive" "$T/c_static" \
	"$CC_BUILD" -std=c11 -Wall -Wextra -Werror "${SAN[@]}" "${CFLAGS[@]}" "$EX" "${SLIBS[@]}"
if readelf -d "$T/c_static" 2>/dev/null | grep -qF 'libllmio'; then
	fail "the static client still needs libllmio.so"
else
	pass "the static client needs no libllmio.so"
fi

echo "== the installed CLI and its tracer"
check "installed bin/llmio" test -x "$P/bin/llmio"
check "installed $LIBDIR_REL/llmio/libllmio_trace.so" test -e "$LIB/llmio/libllmio_trace.so"
check "installed llmio --version runs" "$P/bin/llmio" --version
# the installed llmio finds its tracer with no build tree next to it and no LLMIO_TRACE_LIB
echo data >"$T/traced.txt"
(cd "$T" && env -u LLMIO_TRACE_LIB "$P/bin/llmio" trace -q -o "$T/inst.trace" -- cat traced.txt) \
	>/dev/null 2>"$T/trace.err"
rc=$?
if [ "$rc" -eq 0 ] && "$P/bin/llmio" trace dump "$T/inst.trace" | grep -q 'traced.txt'; then
	pass "installed llmio trace preloads the installed tracer and records the read"
else
	fail "installed llmio trace: exit $rc: $(head -c 400 "$T/trace.err")"
fi

echo "== a staged install (DESTDIR) for the prefix /opt/llmio"
DESTDIR=$T/stage run "$CMAKE" --install "$B" --prefix /opt/llmio
if [ "$RC" -eq 0 ] && grep -qx 'prefix=/opt/llmio' "$T/stage/opt/llmio/$LIBDIR_REL/pkgconfig/llmio.pc"; then
	pass "DESTDIR install: llmio.pc names /opt/llmio, not the staging directory"
else
	fail "DESTDIR install: exit $RC; pc file: $(head -c 300 "$T/stage/opt/llmio/$LIBDIR_REL/pkgconfig/llmio.pc" 2>&1)"
fi

finish
