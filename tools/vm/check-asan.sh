#!/bin/bash
# make check-asan: the device under AddressSanitizer and UBSan (issue 23).
# QEMU built with --enable-asan --enable-ubsan (gcc) in its own build
# directory beside the normal one, then every megpu qtest and the main
# and 4-GPU guest boots of `make check` on it. A sanitizer report aborts
# QEMU (halt_on_error) and fails the run: qtest.sh and run.sh look for
# the report in the logs too, and run.sh for QEMU's exit status.
# Suppressions for code that is not ours: tools/vm/sanitizers/*.supp.
#
# Environment: QEMU_BUILD (set by the Makefile); ASAN_GUEST=0 skips the
# guest boots (qtests only).
set -uo pipefail

: "${QEMU_BUILD:?}" "${ASAN_GUEST:=1}"
top=$(cd "$(dirname "$0")/../.." && pwd)
supp="$top/tools/vm/sanitizers"
asan_build="$QEMU_BUILD-asan"

. "$top/tools/vm/qemu-variant.sh"
build_variant asan || exit 1
# a QEMU without the runtimes linked in would pass anything
for lib in libasan libubsan; do
	[ "$(ldd "$asan_build/qemu-system-x86_64" | grep -c "$lib")" -gt 0 ] || {
		echo "check-asan: qemu-system-x86_64 has no $lib" >&2
		exit 1
	}
done

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:print_summary=1:suppressions=$supp/asan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"

rm -f "$top"/build/results/asan-* "$top"/build/results/guest-asan-*
fail=0
echo "== device qtests under ASan and UBSan"
QEMU_BUILD=$asan_build QTEST_NAME=asan-qtest "$top/tools/vm/qtest.sh" || fail=1
if [ "$ASAN_GUEST" = 1 ]; then
	echo "== guest kselftests on the ASan/UBSan QEMU"
	QEMU_BUILD=$asan_build NAME=asan-check \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" || fail=1
	echo "== guest kselftests on the ASan/UBSan QEMU: 4 GPUs (seed 000)"
	QEMU_BUILD=$asan_build NAME=asan-check-mgpu GPUS=4 TESTS=mgpu_test \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" || fail=1
fi
cat "$top"/build/results/asan-* "$top"/build/results/guest-asan-* 2>/dev/null | awk -v f=$fail \
	'{ p += $1; n += $2 } END { printf "check-asan: %d passed, %d failed\n", p, n;
	   exit (n > 0 || f) }'
