# shellcheck shell=bash
# What the tests of python/ under torch share (sourced after lib.sh): PY, /usr/bin/python3 (the
# python Debian's python3-torch is built for); SRC, the source tree; LLMIO_LIB, the library
# next to the binary under test, which the binding loads; a sanitizer build's runtime loaded
# first; one BLAS thread.  Skips (77) naming the reason where PY has no torch.
PY=/usr/bin/python3
SRC=$(cd "$(dirname "$0")/.." && pwd) # the sourcing test's helpers live under it
export SRC
[ -x "$PY" ] || skip_all "no $PY (Debian's python3-torch is built for it)"
"$PY" -c 'import torch' 2>/dev/null ||
	skip_all "torch absent: $PY cannot import torch (scripts/bootstrap.sh installs python3-torch and libopenblas0-pthread)"
export LLMIO_LIB
LLMIO_LIB=$(dirname "$LLMIO")/libllmio.so
[ -e "$LLMIO_LIB" ] || { fail "no $LLMIO_LIB next to $LLMIO"; finish; }
# an ASan build's library needs its runtime loaded first (and python's own leaks are not ours),
# and libstdc++ beside it, or ASan cannot pass on the C++ exceptions torch throws when a hook
# raises; without a quarantine the peak RSS follows the live tensors, not the last 256 MiB
# freed (the store's use-after-free checks with a quarantine are test_store's)
if ldd "$LLMIO_LIB" | grep -q libasan; then
	export LD_PRELOAD
	LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:quarantine_size_mb=0
fi
if ldd "$LLMIO_LIB" | grep -q libubsan && [ -z "${LD_PRELOAD:-}" ]; then
	export LD_PRELOAD
	LD_PRELOAD=$(gcc -print-file-name=libubsan.so)
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
