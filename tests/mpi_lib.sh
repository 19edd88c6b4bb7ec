# shellcheck shell=bash
# What the MPI tests share (sourced after lib.sh): skip without mpirun or an MPI build, and
# mpi N ARGS... to run llmio ARGS under mpirun -np N with lib.sh's watchdog (as root, two
# ranks on 2 cores: --allow-run-as-root --oversubscribe; shared memory without CMA, which
# containers often forbid).
command -v mpirun >/dev/null || skip_all "mpirun is not installed (scripts/bootstrap.sh installs openmpi-bin)"
# Open MPI's own allocations are not llmio's leaks (ASan builds)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --mca btl "self,vader"
	--mca btl_vader_single_copy_mechanism none)
mpi() { # mpi N ARGS...: llmio ARGS under mpirun -np N, with lib.sh's watchdog
	local n=$1
	shift
	_show mpirun -np "$n" llmio "$@"
	_run "${MPIRUN[@]}" -np "$n" "$LLMIO" "$@"
}

mpi 1 run --filename="$T/probe" --size=64k --bs=64k --rw=write --quiet
grep -q "built without MPI" "$T/stderr" && skip_all "this llmio was built without MPI (LLMIO_MPI=OFF or no libopenmpi-dev)"
[ "$RC" -eq 0 ] || skip_all "mpirun cannot start here: $(head -c 300 "$T/stderr")"
