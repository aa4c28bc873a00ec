#!/bin/bash
# make coverage: line, branch and function coverage of the device from
# the suites that exist (issue 23). QEMU is built with --enable-gcov
# beside the normal build; its counters are zeroed, then every megpu
# qtest and the main, 4-GPU, held-writes (x-test-regs) and features
# (x-caps) guest boots of `make
# check` run on it. tools/vm/coverage.py prints a table per file and the
# functions no test reaches, writes build/coverage.json ("device", beside
# the driver's from make check-debug) and lists every unrun line and
# untaken branch in build/coverage-device.txt.
#
# Environment: QEMU_BUILD (set by the Makefile); COV_GUEST=0 skips the
# guest boots.
set -uo pipefail

: "${QEMU_BUILD:?}" "${COV_GUEST:=1}"
top=$(cd "$(dirname "$0")/../.." && pwd)
cov_build="$QEMU_BUILD-gcov"

. "$top/tools/vm/qemu-variant.sh"
build_variant gcov || exit 1
find "$cov_build" -name '*.gcda' -delete
rc=0
QEMU_BUILD=$cov_build QTEST_NAME=cov-qtest "$top/tools/vm/qtest.sh" >/dev/null || rc=1
if [ "$COV_GUEST" = 1 ]; then
	QEMU_BUILD=$cov_build NAME=cov-check \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" | tail -n 2 || rc=1
	QEMU_BUILD=$cov_build NAME=cov-check-mgpu GPUS=4 TESTS=mgpu_test \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" | tail -n 2 || rc=1
	QEMU_BUILD=$cov_build NAME=cov-check-hold DEVICE_PROPS="x-test-regs=on" \
	TESTS=hold_test,flush_test \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" | tail -n 2 || rc=1
	QEMU_BUILD=$cov_build NAME=cov-check-features DEVICE_PROPS="x-caps=0xf" \
	TESTS=features_test,reset_test \
		"$top/tools/vm/run.sh" check "$top/build/initramfs.cpio.gz" | tail -n 2 || rc=1
fi
mapfile -t gcda < <(find "$cov_build" -name '*megpu*.gcda' ! -path '*tests*')
"$top/tools/vm/coverage.py" --side device --match hw/misc/megpu/ \
	--json "$top/build/coverage.json" \
	--list "$top/build/coverage-device.txt" "${gcda[@]}" || rc=1
[ "$rc" = 0 ] || echo "coverage: a suite failed on the gcov build" >&2
exit $rc
