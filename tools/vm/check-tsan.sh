#!/bin/bash
# make check-tsan: the device under ThreadSanitizer (issue 23). QEMU built
# with --enable-tsan (clang) beside the normal build; every megpu qtest
# runs on it (several engines, waves, task queues, mailboxes and four
# GPUs at once). Reports go to build/tsan/; tools/vm/tsan-reports.py
# sorts them: any on device or QEMU state fails the run unless
# tools/vm/sanitizers/tsan.supp explains it (QEMU's code only); those on
# guest RAM are the seeds' guest-visible races and are counted.
#
# Environment: QEMU_BUILD (set by the Makefile).
set -uo pipefail

: "${QEMU_BUILD:?}"
top=$(cd "$(dirname "$0")/../.." && pwd)
tsan_build="$QEMU_BUILD-tsan"
out="$top/build/tsan"

. "$top/tools/vm/qemu-variant.sh"
build_variant tsan || exit 1
[ "$(nm -D "$tsan_build/qemu-system-x86_64" | grep -c ' __tsan_init$')" -gt 0 ] || {
	echo "check-tsan: qemu-system-x86_64 is not built with TSan" >&2
	exit 1
}
rm -rf "$out"
mkdir -p "$out"
# exitcode=0: QEMU goes on after a report, so every test runs and every
# report is logged; die_after_fork=0: libqtest forks QEMU from the
# (instrumented) test binary.
export TSAN_OPTIONS="exitcode=0:halt_on_error=0:die_after_fork=0:history_size=7:detect_deadlocks=0:suppressions=$top/tools/vm/sanitizers/tsan.supp:log_path=$out/report"
QEMU_BUILD=$tsan_build QTEST_NAME=tsan-qtest "$top/tools/vm/qtest.sh"
rc=$?
shopt -s nullglob
"$top/tools/vm/tsan-reports.py" "$out"/report.* || rc=1
exit $rc
