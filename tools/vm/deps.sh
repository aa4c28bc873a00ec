#!/bin/bash
# Fetch everything megpu builds against, from Debian's archive, into a cache
# outside the repository. Idempotent: a second run only checks.
#
# Environment:
#   MEGPU_CACHE    cache directory (default ~/.cache/megpu)
#   KVER           Debian 6.12 kernel build to use, e.g. 6.12.117+deb12
#   QEMU_DEBVER    Debian qemu source version (a 10.0 build)
set -euo pipefail

: "${MEGPU_CACHE:=$HOME/.cache/megpu}"
: "${KVER:?KVER not set (the Makefile pins it)}"
: "${QEMU_DEBVER:?QEMU_DEBVER not set (the Makefile pins it)}"
export DEBIAN_FRONTEND=noninteractive

log() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

command -v apt-get >/dev/null ||
	die "apt-get not found: megpu builds from Debian's archive (Debian 12)"
SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null ||
		die "not root and no sudo: run as root or install sudo"
	SUDO=sudo
fi

# shellcheck source=tools/vm/apt-sources.sh
. "$(dirname "$0")/apt-sources.sh"

# The sources megpu needs that the machine lacks, added on the Debian
# mirror it already uses (deb.debian.org only when it has none).
setup_apt() {
	local f=/etc/apt/sources.list.d/megpu.sources missing
	missing=$(megpu_apt_targets | megpu_apt_missing)
	if [ -n "$missing" ]; then
		log "adding APT sources ($f):"
		printf '%s\n' "$missing" | grep -E '^(Types|URIs|Suites):' |
			paste -d' ' - - - | sed 's/^/deps:   /'
		printf '%s\n' "$missing" | $SUDO tee -a "$f" >/dev/null
		$SUDO apt-get update -qq
	elif [ -z "$(apt-cache madison linux-source-6.12 2>/dev/null)" ]; then
		$SUDO apt-get update -qq
	fi
}

# clang and its sanitizer/libFuzzer runtimes: make check-tsan, fuzz-device;
# gdb: the stacks of a QEMU that died on a signal (run.sh);
# Sphinx: make docs; sparse, git and checkpatch's spdxcheck (ply, git): make intree
HOST_PKGS="build-essential bc bison flex ninja-build pkgconf libglib2.0-dev
	libpixman-1-dev libfdt-dev zlib1g-dev python3-venv dwarves xz-utils
	busybox-static libdrm-dev cpio kmod dpkg-dev libelf-dev libssl-dev
	clang libclang-rt-14-dev python3-sphinx sparse git python3-ply python3-git
	gdb"

install_pkgs() {
	local missing=
	for p in $HOST_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep 'ok installed' >/dev/null || missing="$missing $p"
	done
	# meson >= 1.5 and pycotap come from bookworm-backports.
	local mv
	mv=$(dpkg-query -W -f='${Version}' meson 2>/dev/null || true)
	if ! dpkg --compare-versions "${mv:-0}" ge 1.5; then
		missing="$missing meson/bookworm-backports"
	fi
	dpkg-query -W -f='${Status}' python3-pycotap 2>/dev/null |
		grep 'ok installed' >/dev/null ||
		missing="$missing python3-pycotap/bookworm-backports"
	if [ -n "$missing" ]; then
		log "installing:$missing"
		$SUDO apt-get install -y -qq $missing >/dev/null
	fi
}

# Unpack a binary package into $2 unless already there.
fetch_deb() {
	local pkg=$1 dest=$2 stamp
	stamp="$dest/.$pkg.unpacked"
	[ -f "$stamp" ] && return 0
	mkdir -p "$dest" "$MEGPU_CACHE/debs"
	(cd "$MEGPU_CACHE/debs" && apt-get download -qq "$pkg") ||
		die "cannot download $pkg"
	local deb
	deb=$(ls -t "$MEGPU_CACHE/debs/${pkg%%=*}"_*.deb | head -n 1)
	dpkg-deb -x "$deb" "$dest"
	touch "$stamp"
}

kernel() {
	local kdir="$MEGPU_CACHE/kernel/$KVER" p
	for p in "linux-image-$KVER-amd64-unsigned" "linux-headers-$KVER-amd64" \
		"linux-headers-$KVER-common" "linux-kbuild-$KVER"; do
		if ! apt-cache show "$p" >/dev/null 2>&1; then
			printf 'deps: error: %s is not in the archive.\n' "$p" >&2
			printf 'deps: 6.12 builds available now (use make KVER=...):\n' >&2
			apt-cache search --names-only \
				'^linux-image-6\.12\..*-amd64-unsigned$' |
				sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb[0-9]*\)-amd64-unsigned .*/  \1/p' |
				sort -V >&2
			exit 1
		fi
		fetch_deb "$p" "$kdir"
	done
	# The arch headers include the -common tree by absolute path.
	local hdr="$kdir/usr/src/linux-headers-$KVER-amd64"
	sed -i "s|^include /usr/src/|include $kdir/usr/src/|" "$hdr/Makefile"
	# The kbuild scripts are referenced through /usr/lib/linux-kbuild-*:
	# symlinks in the headers point there; repoint them into the cache.
	local l t
	for l in $(find "$hdr" "$kdir/usr/src/linux-headers-$KVER-common" \
		-maxdepth 2 -type l); do
		t=$(readlink "$l")
		case "$t" in
		/usr/lib/linux-kbuild-*) ln -sfn "$kdir$t" "$l" ;;
		esac
	done
}

kselftest_headers() {
	local dir="$MEGPU_CACHE/ksft"
	[ -f "$dir/kselftest_harness.h" ] && return 0
	local src="$MEGPU_CACHE/linux-source"
	fetch_deb linux-source-6.12 "$src"
	local tarball
	tarball=$(ls "$src"/usr/src/linux-source-6.12*.tar.xz | head -n 1)
	mkdir -p "$dir" "$src/tree"
	tar -xJf "$tarball" -C "$src/tree" --wildcards \
		'*/tools/testing/selftests/kselftest*.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
	cp "$src"/tree/*/tools/testing/selftests/kselftest*.h "$dir/"
}

qemu_source() {
	local dir="$MEGPU_CACHE/qemu-src"
	local upver=${QEMU_DEBVER#*:}
	upver=${upver%%+*}
	if [ -f "$dir/qemu-$upver/.unpacked" ]; then
		return 0
	fi
	mkdir -p "$dir"
	(cd "$dir" && apt-get source --download-only -qq "qemu=$QEMU_DEBVER" \
		>/dev/null 2>&1) || true
	local orig
	orig=$(ls "$dir"/qemu_"$upver"*.orig.tar.xz 2>/dev/null | head -n 1)
	if [ -z "$orig" ]; then
		printf 'deps: error: qemu source %s not in the archive.\n' \
			"$QEMU_DEBVER" >&2
		printf 'deps: qemu sources available (use make QEMU_DEBVER=...):\n' >&2
		apt-cache madison qemu | awk -F'|' '/Sources/ {print "  " $2}' >&2
		exit 1
	fi
	rm -rf "$dir/qemu-$upver"
	mkdir -p "$dir/qemu-$upver"
	tar -xJf "$orig" -C "$dir/qemu-$upver" --strip-components=1
	touch "$dir/qemu-$upver/.unpacked"
}

firmware() {
	# SeaBIOS/qboot and option ROMs: the +ds source tarball has none.
	fetch_deb "qemu-system-data/bookworm-backports" "$MEGPU_CACHE/fw" 2>/dev/null ||
		fetch_deb qemu-system-data "$MEGPU_CACHE/fw"
	fetch_deb seabios "$MEGPU_CACHE/fw"
}

setup_apt
install_pkgs
kernel
kselftest_headers
qemu_source
firmware
log "kernel $KVER, qemu $QEMU_DEBVER, cache $MEGPU_CACHE"
