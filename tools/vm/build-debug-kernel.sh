#!/bin/bash
# Build the debug-kernel lane's kernel from Debian's linux-source-6.12 (the
# same 6.12 the normal guest runs): x86_64_defconfig with
# tools/vm/debug-kernel.config merged over it (KASAN, lockdep, debug objects,
# kmemleak, fault injection, SW_SYNC, DRM as modules). Cached under
# $MEGPU_CACHE/debug-kernel-<version>-<config hash>, so a rerun only checks.
#
# The cache directory holds:
#   src/        the unpacked source, with DRM_MEGPU's Kconfig entry added
#   build/      the build tree (make -C build M=... builds megpu.ko)
#   root/       boot/vmlinuz-<release> and lib/modules/<release>
#   release     the kernel release string (uname -r)
#
# usage: build-debug-kernel.sh        prints the cache directory on stdout
# Environment: MEGPU_CACHE, JOBS (default 2).
set -euo pipefail

: "${MEGPU_CACHE:?MEGPU_CACHE not set (the Makefile sets it)}"
: "${JOBS:=2}"
top=$(cd "$(dirname "$0")/../.." && pwd)
frag="$top/tools/vm/debug-kernel.config"
kconfig="$top/drivers/gpu/drm/megpu/Kconfig"
log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

# The source package, fetched as deps.sh fetches it.
src_pkg="$MEGPU_CACHE/linux-source"
if ! ls "$src_pkg"/usr/src/linux-source-6.12*.tar.xz >/dev/null 2>&1; then
	mkdir -p "$MEGPU_CACHE/debs" "$src_pkg"
	(cd "$MEGPU_CACHE/debs" && apt-get download -qq linux-source-6.12) ||
		die "cannot download linux-source-6.12"
	dpkg-deb -x "$(ls -t "$MEGPU_CACHE"/debs/linux-source-6.12_*.deb |
		head -n 1)" "$src_pkg"
fi
tarball=$(ls "$src_pkg"/usr/src/linux-source-6.12*.tar.xz | head -n 1)
deb=$(ls -t "$MEGPU_CACHE"/debs/linux-source-6.12_*.deb 2>/dev/null | head -n 1)
if [ -n "$deb" ]; then
	version=$(dpkg-deb -f "$deb" Version)
else
	version=$(stat -c %Y "$tarball")
fi
version=${version//[^A-Za-z0-9.+-]/_}
# What the kernel is made of: the fragment, DRM_MEGPU's own Kconfig entry
# (its selects; the driver's other options, such as DRM_MEGPU_TESTING,
# change only the module) and the recipe below (bump recipe when it
# changes what gets built).
recipe=1
entry=$(sed '/^config DRM_MEGPU_/,$d' "$kconfig")
hash=$( (cat "$frag"; printf '%s\n' "$entry"; echo "recipe=$recipe") |
	sha256sum | cut -c1-12)
dir="$MEGPU_CACHE/debug-kernel-$version-$hash"
# one build at a time (`make prebuild` may be running this in the
# background): wait for it, then find the kernel built
exec 9>"$dir.lock"
flock 9

if [ -f "$dir/.built" ]; then
	log "cached: $dir ($(cat "$dir/release"))"
	echo "$dir"
	exit 0
fi

start=$SECONDS
# An interrupted build goes on where it stopped (make is incremental).
if [ ! -f "$dir/src/.unpacked" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/src" "$dir/build"
	log "unpacking $(basename "$tarball") into $dir/src"
	tar -xJf "$tarball" -C "$dir/src" --strip-components=1
	# DRM_MEGPU's own Kconfig entry (not the driver): its selects
	# configure DRM_SCHED and DRM_GEM_SHMEM_HELPER, which have no
	# prompt of their own.
	mkdir -p "$dir/src/drivers/gpu/drm/megpu"
	cp "$kconfig" "$dir/src/drivers/gpu/drm/megpu/Kconfig"
	printf '\nsource "drivers/gpu/drm/megpu/Kconfig"\n' \
		>>"$dir/src/drivers/gpu/drm/Kconfig"
	touch "$dir/src/.unpacked"
else
	log "resuming the build in $dir"
fi
mkdir -p "$dir/root/boot"

k=(make -C "$dir/src" O="$dir/build" -j"$JOBS")
"${k[@]}" -s x86_64_defconfig
grep -E '^CONFIG_|^# CONFIG_' "$frag" >>"$dir/build/.config"
"${k[@]}" -s olddefconfig 2>"$dir/config.log"
# Every line of the fragment must have survived.
missing=0
while IFS= read -r l; do
	case "$l" in
	CONFIG_*=*) grep -qxF "$l" "$dir/build/.config" ;;
	"# CONFIG_"*" is not set")
		o=${l#\# }; o=${o%% *}
		! grep -q "^$o=" "$dir/build/.config" ;;
	*) continue ;;
	esac || { log "option lost in olddefconfig: $l"; missing=1; }
done <"$frag"
[ "$missing" = 0 ] || die "the fragment does not apply; see above"

log "building (make -j$JOBS bzImage modules; about 20 minutes on 2 cores)"
nice -n 10 "${k[@]}" bzImage modules >"$dir/build.log" 2>&1 ||
	{ tail -n 30 "$dir/build.log" >&2; die "build failed: $dir/build.log"; }
release=$(cat "$dir/build/include/config/kernel.release")
"${k[@]}" -s INSTALL_MOD_PATH="$dir/root" modules_install >>"$dir/build.log"
cp "$dir/build/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$release"
echo "$release" >"$dir/release"
touch "$dir/.built"
log "built $release in $(((SECONDS - start) / 60)) min: $dir"
echo "$dir"
