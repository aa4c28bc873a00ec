#!/bin/bash
# Overlay qemu-device/ on Debian's QEMU 10.0 tree in the cache and build
# qemu-system-x86_64 and the megpu qtests incrementally.
set -euo pipefail

: "${MEGPU_CACHE:=$HOME/.cache/megpu}"
: "${QEMU_DEBVER:?QEMU_DEBVER not set (the Makefile pins it)}"
top=$(cd "$(dirname "$0")/../.." && pwd)
upver=${QEMU_DEBVER#*:}
upver=${upver%%+*}
src="$MEGPU_CACHE/qemu-src/qemu-$upver"
# QEMU_SAN: another build beside the normal one. asan: AddressSanitizer
# and UBSan (gcc), `make check-asan`; tsan: ThreadSanitizer (clang),
# `make check-tsan`; fuzz: libFuzzer and ASan (clang), qemu-fuzz-x86_64
# for `make fuzz-device`; gcov: line and branch counts for `make coverage`.
: "${QEMU_SAN:=}"
build="$MEGPU_CACHE/qemu-build-$upver${QEMU_SAN:+-$QEMU_SAN}"
targets=(qemu-system-x86_64)
case "$QEMU_SAN" in
# KVM where the host has it (make ... ACCEL=kvm); TCG stays the default
'') san_opts=(--enable-kvm) ;;
asan) san_opts=(--enable-asan --enable-ubsan) ;;
tsan) san_opts=(--cc=clang --cxx=clang++ --enable-tsan) ;;
gcov) san_opts=(--enable-gcov) ;;
fuzz)
	san_opts=(--cc=clang --cxx=clang++ --enable-fuzzing --enable-asan)
	targets=(qemu-fuzz-x86_64)
	;;
*) echo "qemu: unknown QEMU_SAN=$QEMU_SAN" >&2; exit 1 ;;
esac
[ -f "$src/.unpacked" ] || { echo "qemu: run 'make deps' first" >&2; exit 1; }
# One build of a directory at a time: `make prebuild` may be building
# this one in the background (the caller then waits for it, and finds it
# done).
mkdir -p "$MEGPU_CACHE"
exec 9>"$build.lock"
flock 9

# The source tree is shared by every build directory: one overlay at a
# time (a build in the background may be overlaying too). Once one has
# brought the files up to date, the others find nothing to copy, so no
# file changes under a compiler of another build.
exec 8>"$src.lock"
flock 8

# The glue patch: re-apply it when it changed since the last build.
glue="$top/qemu-device/glue.patch"
if ! cmp -s "$glue" "$src/.megpu-glue.patch"; then
	if [ -f "$src/.megpu-glue.patch" ]; then
		patch -d "$src" -p1 -R -s <"$src/.megpu-glue.patch"
	fi
	patch -d "$src" -p1 --forward -s <"$glue"
	cp "$glue" "$src/.megpu-glue.patch"
fi

# QEMU's style checker under a name of its own: "checkpatch.pl" in the
# cache is the kernel's (make checkpatch), for tools that look it up.
if [ -f "$src/scripts/checkpatch.pl" ]; then
	mv "$src/scripts/checkpatch.pl" "$src/scripts/qemu-checkpatch.pl"
fi

# Copy our files only when they differ so ninja rebuilds only what changed.
overlay() {
	local from=$1 to=$2
	mkdir -p "$(dirname "$to")"
	cmp -s "$from" "$to" 2>/dev/null || cp "$from" "$to"
}
(cd "$top/qemu-device" && find . -type f ! -name glue.patch) |
while read -r f; do
	overlay "$top/qemu-device/$f" "$src/$f"
done
# the hardware contract and the pure headers shared with the driver
for h in "$top"/include/*.h; do
	overlay "$h" "$src/include/hw/misc/$(basename "$h")"
done
flock -u 8
exec 8>&-

conf=(--python=/usr/bin/python3
	--target-list=x86_64-softmmu --disable-docs --disable-rust
	--enable-fdt=system --disable-install-blobs
	--without-default-features --without-default-devices
	--with-devices-x86_64=megpu --enable-tcg
	--disable-werror "${san_opts[@]}")
# A build configured with other options starts over. Builds from before
# the options were recorded had these minus --enable-kvm.
if [ -f "$build/build.ninja" ] && [ ! -f "$build/.megpu-configure" ]; then
	old=" ${conf[*]} "
	echo "${old/ --enable-kvm / }" | sed 's/^ //; s/ $//' >"$build/.megpu-configure"
fi
if [ -f "$build/build.ninja" ] &&
	[ "$(cat "$build/.megpu-configure")" != "${conf[*]}" ]; then
	echo "qemu: configure options changed: rebuilding $build" >&2
	rm -rf "$build"
fi
if [ ! -f "$build/build.ninja" ]; then
	mkdir -p "$build"
	(cd "$build" && "$src/configure" "${conf[@]}" \
		>"$build/configure.log" 2>&1) || {
		tail -n 30 "$build/configure.log" >&2
		exit 1
	}
	echo "${conf[*]}" >"$build/.megpu-configure"
fi
# every megpu qtest there is (glue.patch registers each one)
qtests=$(cd "$top/qemu-device/tests/qtest" && ls megpu-*test.c |
	sed 's|^\(.*\)\.c$|tests/qtest/\1|')
[ "$QEMU_SAN" = fuzz ] && qtests=
# shellcheck disable=SC2086
ninja -C "$build" "${targets[@]}" $qtests | tee "$build/ninja.log"
if grep -A3 -E '(megpu[^ ]*\.[ch]):[0-9]+:[0-9]+: (warning|error)' "$build/ninja.log"; then
	echo "qemu: warnings in megpu files" >&2
	exit 1
fi

# Debian's firmware (the +ds source has none) where the build looks first.
fw="$MEGPU_CACHE/fw/usr/share"
for f in "$fw"/seabios/bios-256k.bin "$fw"/qemu/qboot.rom \
	"$fw"/qemu/linuxboot_dma.bin "$fw"/qemu/kvmvapic.bin; do
	ln -sfn "$f" "$build/qemu-bundle/usr/local/share/qemu/$(basename "$f")"
done
