# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it
# tests/abi_lib.sh: what cli_abi.sh, cli_headers.sh and cli_install.sh share (sourced after
# lib.sh; not a test itself).  Sets
#   B         the build directory (where the llmio binary and the libraries are)
#   CC_BUILD  the C compiler of the build (clients are compiled as the library was)
#   CXX       a C++ compiler, "" when there is none
#   SAN       the sanitizer flags a client of an instrumented library must be linked with
# and cache_get().

B=$(dirname "$LLMIO")
[ -f "$B/CMakeCache.txt" ] || { echo "FAIL: $B is not a CMake build directory"; exit 1; }

# cache_get NAME: the value of NAME in the build's CMakeCache.txt ("" when absent).
cache_get() {
	sed -n "s/^$1:[A-Z]*=//p" "$B/CMakeCache.txt" | head -n 1
}

CC_BUILD=$(cache_get CMAKE_C_COMPILER)
[ -n "$CC_BUILD" ] || CC_BUILD=cc
SAN=()
case $(cache_get LLMIO_SANITIZE) in ON | TRUE | 1) SAN=("-fsanitize=address,undefined") ;; esac
case $(cache_get LLMIO_TSAN) in ON | TRUE | 1) SAN=("-fsanitize=thread") ;; esac
CXX=
for c in c++ g++ clang++; do
	if command -v "$c" >/dev/null; then CXX=$c; break; fi
done
