#!/bin/bash
# make prebuild: the builds the lanes after `make check` need (the debug
# kernel, QEMU with ASan/UBSan, with TSan and with libFuzzer), one after
# the other, for .ci/run to start in the background when it starts. On a
# cold cache they take about half an hour of the machine's two cores; run
# under SCHED_IDLE they use only what the guests of `make check` and
# `make check-debug` leave idle (the guests wait for timeouts, interrupts
# and each other much of the time), so the lanes find them built. Each
# build takes its directory's lock: a lane that needs one still being
# built waits for it (then with the cores to itself). A failed build here
# is built again, and reported, by its lane.
#
# Environment: MEGPU_CACHE, QEMU_DEBVER (set by the Makefile).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
idle=(chrt --idle 0 nice -n 19)
rc=0
start=$SECONDS
mkdir -p "$top/build"
# step NAME CMD...: run CMD at idle priority, its output in
# build/prebuild-NAME.log
step() {
	local name=$1 t=$SECONDS
	shift

	if "${idle[@]}" "$@" >"$top/build/prebuild-$name.log" 2>&1; then
		echo "prebuild: $name built in $((SECONDS - t)) s"
	else
		echo "prebuild: $name FAILED after $((SECONDS - t)) s" \
			"(build/prebuild-$name.log)"
		rc=1
	fi
}
step debug-kernel "$top/tools/vm/build-debug-kernel.sh"
for v in asan tsan fuzz; do
	step "qemu-$v" env QEMU_SAN=$v "$top/tools/vm/build-qemu.sh"
done
echo "prebuild: all in $((SECONDS - start)) s"
exit $rc
