#!/bin/bash
# make intree: the driver as a kernel series. Makes a `git format-patch`
# series that adds megpu to Debian's linux-source-6.12 as
# drivers/gpu/drm/megpu (the uAPI header in include/uapi/drm, the hardware
# contract beside the driver, Kconfig and Makefile entries), applies it
# with `git am` to a clean copy of that tree, and builds the driver there
# with W=1 and sparse (C=1). Any warning fails. The series is left in
# build/intree/.
#
# The tree is unpacked once into $MEGPU_CACHE/intree/linux; its git
# repository tracks only the files the series touches, so that setting it
# up and resetting it cost seconds, not a commit of the whole kernel
# (Debian's .gitignore ignores the whole top level: files are added -f).
#
# Environment: MEGPU_CACHE (set by the Makefile), JOBS (default 2).
set -euo pipefail

: "${MEGPU_CACHE:?}" "${JOBS:=2}"
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/intree"
work="$MEGPU_CACHE/intree"
tree="$work/linux"
obj="$work/build"
log() { printf 'intree: %s\n' "$*"; }
die() { printf 'intree: error: %s\n' "$*" >&2; exit 1; }
git() { command git -c user.name=megpu -c user.email=megpu@localhost \
	-c advice.detachedHead=false "$@"; }

tarball=$(ls "$MEGPU_CACHE"/linux-source/usr/src/linux-source-6.12*.tar.xz |
	head -n 1) || die "no linux-source-6.12 (make deps)"
# what the series touches, and LICENSES (checkpatch's spdxcheck reads it
# from git)
touched="drivers/gpu/drm/Kconfig drivers/gpu/drm/Makefile MAINTAINERS LICENSES
	Documentation/gpu/drivers.rst"
if [ ! -f "$tree/.megpu-base" ] ||
	[ "$(cat "$tree/.megpu-tracked" 2>/dev/null)" != "$touched" ]; then
	log "unpacking $(basename "$tarball")"
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -xJf "$tarball" -C "$tree" --strip-components=1
	(cd "$tree" && git init -q && git add -f $touched &&
		git commit -q -m "linux-source-6.12 (Debian): the files megpu's series touches")
	git -C "$tree" rev-parse HEAD >"$tree/.megpu-base"
	echo "$touched" >"$tree/.megpu-tracked"
fi
base=$(cat "$tree/.megpu-base")

# Back to the base: the last run's series undone.
cd "$tree"
git am --abort >/dev/null 2>&1 || true
git checkout -q -f "$base"
git clean -q -fd drivers/gpu/drm/megpu include/uapi/drm/megpu_drm.h \
	2>/dev/null || true
rm -rf drivers/gpu/drm/megpu include/uapi/drm/megpu_drm.h \
	Documentation/gpu/megpu.rst

# The series, made as a developer would on a branch.
git checkout -q -B megpu "$base"
cp "$top/uapi/drm/megpu_drm.h" include/uapi/drm/
# MAINTAINERS, in order before the first DRM DRIVER entry after "MEGPU"
awk 'BEGIN { entry = "DRM DRIVER FOR MEGPU VIRTUAL GPUS\n" \
	"M:\tmegpu maintainers <megpu@localhost>\n" \
	"L:\tdri-devel@lists.freedesktop.org\n" \
	"S:\tMaintained\n" \
	"F:\tinclude/uapi/drm/megpu_drm.h\n" }
	!done && /^DRM DRIVER FOR / && $0 > "DRM DRIVER FOR MEGPU" {
		print entry; done = 1 }
	{ print }' MAINTAINERS >MAINTAINERS.new
mv MAINTAINERS.new MAINTAINERS
git add -f include/uapi/drm/megpu_drm.h MAINTAINERS
git commit -q -F - <<'MSG'
drm/megpu: add the uAPI header

The ioctls of megpu, a virtual multi-engine GPU emulated by QEMU: buffer
objects, job submission with syncobjs and an extension chain, flushes,
GPU-to-CPU calls, multi-GPU semaphore queries and task queues, with its
MAINTAINERS entry.
MSG
mkdir -p drivers/gpu/drm/megpu
for f in "$top"/drivers/gpu/drm/megpu/*.[ch] "$top"/drivers/gpu/drm/megpu/Kconfig \
	"$top"/drivers/gpu/drm/megpu/Makefile "$top"/include/megpu_hw*.h; do
	case "$f" in *.mod.c) continue ;; esac
	cp "$f" drivers/gpu/drm/megpu/
done
printf 'source "drivers/gpu/drm/megpu/Kconfig"\n' >>drivers/gpu/drm/Kconfig
printf 'obj-$(CONFIG_DRM_MEGPU) += megpu/\n' >>drivers/gpu/drm/Makefile
mkdir -p Documentation/gpu
cp "$top/Documentation/gpu/megpu.rst" Documentation/gpu/megpu.rst
sed -i 's/^   meson$/   megpu\n   meson/' Documentation/gpu/drivers.rst
# the entry covers the new files too
awk '/^F:\tinclude\/uapi\/drm\/megpu_drm.h$/ {
		print "F:\tDocumentation/gpu/megpu.rst"
		print "F:\tdrivers/gpu/drm/megpu/" }
	{ print }' MAINTAINERS >MAINTAINERS.new
mv MAINTAINERS.new MAINTAINERS
git add -f drivers/gpu/drm/megpu drivers/gpu/drm/Kconfig \
	drivers/gpu/drm/Makefile Documentation/gpu/megpu.rst \
	Documentation/gpu/drivers.rst MAINTAINERS
git commit -q -F - <<'MSG'
drm/megpu: add the megpu DRM driver

A render-only driver for megpu on drm_sched, GEM shmem and syncobjs:
rings with semaphore wait/signal packets between engines, resource
tracking, flushes for dependent work, a mailbox per file for GPU-to-CPU
calls, multi-GPU agents and a kernel dequeuer for task queues. The
hardware contract (megpu_hw*.h) is shared with the QEMU device.
MSG
rm -rf "$out"
mkdir -p "$out"
git format-patch -q -o "$out" "$base"..megpu
log "series: $(ls "$out" | tr '\n' ' ')"

# Applied with git am to the clean base.
git checkout -q -f "$base"
git branch -q -D megpu
rm -rf drivers/gpu/drm/megpu include/uapi/drm/megpu_drm.h \
	Documentation/gpu/megpu.rst
git checkout -q -B megpu-applied "$base"
git am -q "$out"/*.patch || die "the series does not apply with git am"
log "applied with git am: $(git log --oneline "$base"..HEAD | wc -l) commits"
# checkpatch on the series as a maintainer would run it
# (its spdxcheck.py runs "python3": Debian's, which has ply and git)
PATH=/usr/bin:$PATH perl scripts/checkpatch.pl -q --no-signoff "$out"/*.patch \
	>"$out/checkpatch.log" 2>&1 ||
	{ cat "$out/checkpatch.log"; die "checkpatch.pl complains about the series"; }
log "checkpatch.pl on the series: clean"

# A configuration with the driver and its test interfaces (once).
k=(make -s -C "$tree" O="$obj" -j"$JOBS")
if [ ! -f "$obj/.megpu-prepared" ]; then
	log "configuring and preparing the tree (once)"
	mkdir -p "$obj"
	"${k[@]}" x86_64_defconfig
	"$tree/scripts/config" --file "$obj/.config" -m DRM -m DRM_MEGPU \
		-e DRM_MEGPU_TESTING -e DEBUG_FS -d DEBUG_INFO_BTF
	"${k[@]}" olddefconfig
	"${k[@]}" modules_prepare
	touch "$obj/.megpu-prepared"
else
	"${k[@]}" olddefconfig
fi
grep -qx 'CONFIG_DRM_MEGPU=m' "$obj/.config" ||
	die "CONFIG_DRM_MEGPU did not survive olddefconfig"

# W=1 and sparse over every file of the driver.
rm -rf "$obj/drivers/gpu/drm/megpu"
"${k[@]}" W=1 C=2 drivers/gpu/drm/megpu/ >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; die "the build failed"; }
if grep -E 'warning|error' "$out/build.log"; then
	die "W=1 or sparse warned: $out/build.log"
fi
n=$(ls "$obj"/drivers/gpu/drm/megpu/*.o | wc -l)
log "built in the tree with W=1 C=2 (sparse on every file): $n objects, no warning"
