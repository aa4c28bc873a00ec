#!/bin/bash
# make check-debug: every selftest on a debug kernel (KASAN, lockdep,
# debug objects, kmemleak, fault injection), megpu.ko built against it.
# Any KASAN, lockdep, DEBUG_OBJECTS or WARNING report, or a leak of the
# driver's in the final kmemleak scan, fails the run (tools/vm/run.sh).
# Then mgpu_test again with four GPUs, probe_test with faulty devices
# and features_test (and reset_test) on a device without its optional
# features. The kernel has CONFIG_GCOV_KERNEL
# and the module is built with GCOV_PROFILE=y: each guest prints the
# module's counters at the end and tools/vm/coverage.py adds them up,
# prints the driver's coverage per file (and the functions no test
# reaches) and writes it to build/coverage.json.
#
# Environment: MEGPU_CACHE, QEMU_BUILD (set by the Makefile); TESTS,
# GUEST_TIMEOUT (default 5400 s), TIMEOUT_SCALE (selftest harness
# timeouts, default 8: KASAN and lockdep under TCG are that much slower).
set -euo pipefail

: "${MEGPU_CACHE:?}" "${QEMU_BUILD:?}"
: "${GUEST_TIMEOUT:=5400}" "${TIMEOUT_SCALE:=8}"
top=$(cd "$(dirname "$0")/../.." && pwd)
b="$top/build"

start=$SECONDS
dir=$("$top/tools/vm/build-debug-kernel.sh")
release=$(cat "$dir/release")
echo "check-debug: kernel $release ($((SECONDS - start)) s)"

# megpu.ko against the debug tree, in a copy of the sources: the main
# build's objects (Debian's kernel) stay as they are.
mod="$b/debug-module"
rm -rf "$mod"
mkdir -p "$mod"
cp -a "$top/drivers" "$top/uapi" "$top/include" "$top/Kbuild" "$mod/"
find "$mod" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	-o -name '.*.cmd' -o -name modules.order -o -name Module.symvers \) \
	-delete
make -C "$dir/build" M="$mod" CONFIG_DRM_MEGPU=m CONFIG_DRM_MEGPU_TESTING=y \
	GCOV_PROFILE=y W=1 modules 2>&1 |
	tee "$b/debug-module.log" | grep -vE '^\s*(CC|LD|MODPOST|CHK)' || true
[ -f "$mod/drivers/gpu/drm/megpu/megpu.ko" ] ||
	{ echo "check-debug: megpu.ko did not build" >&2; exit 1; }
! grep -iE 'warning:|error' "$b/debug-module.log" ||
	{ echo "check-debug: the module build has warnings" >&2; exit 1; }

KMODDIR="$dir/root/lib/modules/$release" \
	"$top/tools/vm/mkinitramfs.sh" "$b/initramfs-debug.cpio.gz" \
	"$mod/drivers/gpu/drm/megpu/megpu.ko" "$b/megpu" "$b"/selftests/*

rc=0
# x-test-regs: flush_test's idle test holds posted writes (TEST_HOLD)
DEVICE_PROPS="${DEVICE_PROPS-x-test-regs=on}" \
KERNEL="$dir/root/boot/vmlinuz-$release" NAME="${NAME:-debug}" \
GUEST_TIMEOUT=$GUEST_TIMEOUT \
TEST_ARGS="megpu_test.timeout_scale=$TIMEOUT_SCALE ${TEST_ARGS:-}" \
	"$top/tools/vm/run.sh" check "$b/initramfs-debug.cpio.gz" || rc=$?
logs=(--guest-log "$b/guest-${NAME:-debug}.log")
# the multi-GPU tests need several GPUs: four, on the same debug kernel
if [ -z "${TESTS:-}" ]; then
	DEVICE_PROPS= KERNEL="$dir/root/boot/vmlinuz-$release" NAME=debug-mgpu GPUS=4 \
	TESTS=mgpu_test GUEST_TIMEOUT=$GUEST_TIMEOUT \
	TEST_ARGS="megpu_test.timeout_scale=$TIMEOUT_SCALE" \
		"$top/tools/vm/run.sh" check "$b/initramfs-debug.cpio.gz" || rc=$?
	logs+=(--guest-log "$b/guest-debug-mgpu.log")
	# the probe's refusals and a device without its optional features
	KERNEL="$dir/root/boot/vmlinuz-$release" NAME=debug-probe \
	TESTS=probe_test GUEST_TIMEOUT=$GUEST_TIMEOUT \
	DEVICE_PROPS="x-version=0x20000 x-drop-irqs=on x-caps=0x3" \
	TEST_ARGS="megpu_test.faulty=3 megpu_test.timeout_scale=$TIMEOUT_SCALE" \
		"$top/tools/vm/run.sh" check "$b/initramfs-debug.cpio.gz" || rc=$?
	KERNEL="$dir/root/boot/vmlinuz-$release" NAME=debug-features \
	TESTS=features_test,reset_test GUEST_TIMEOUT=$GUEST_TIMEOUT \
	DEVICE_PROPS="x-caps=0xf" \
	TEST_ARGS="megpu_test.timeout_scale=$TIMEOUT_SCALE" \
		"$top/tools/vm/run.sh" check "$b/initramfs-debug.cpio.gz" || rc=$?
	logs+=(--guest-log "$b/guest-debug-probe.log"
		--guest-log "$b/guest-debug-features.log")
fi
"$top/tools/vm/coverage.py" --side driver --match drivers/gpu/drm/megpu/ \
	--json "$b/coverage.json" --list "$b/coverage-driver.txt" "${logs[@]}" \
	--root "$mod" || { echo "check-debug: no driver coverage" >&2; rc=1; }
exit $rc
