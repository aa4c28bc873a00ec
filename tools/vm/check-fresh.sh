#!/bin/bash
# Prove the README on a fresh machine: in a minimal Debian 12 root made by
# debootstrap from Debian's archive, clone this repository and run the
# README's two commands, `make demo` and `make check`, each in a root of
# its own with an empty cache (nothing installed but what a user has to
# clone and run make: git and make). Prints the time of each; fails if
# either fails.
#
# usage: check-fresh.sh [demo|check|base]...   (default: demo check;
#        base only makes the debootstrap root)
#
# Environment: FRESH_DIR (work directory, default $MEGPU_CACHE/fresh; the
# debootstrap base is kept there as a tarball, FRESH_REBASE=1 makes it
# again), FRESH_MIRROR (default: the Debian mirror this machine's APT
# uses, deb.debian.org if it has none; tools/vm/apt-sources.sh).
# Needs root (debootstrap, chroot, mounts).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
: "${MEGPU_CACHE:=${HOME:-/root}/.cache/megpu}"
: "${FRESH_DIR:=$MEGPU_CACHE/fresh}"
. "$top/tools/vm/apt-sources.sh"
: "${FRESH_MIRROR:=$(megpu_apt_targets |
	megpu_apt_mirror bookworm http://deb.debian.org/debian)}"
: "${FRESH_REBASE:=0}"
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(demo check)

log() { printf 'check-fresh: %s\n' "$*"; }
die() { printf 'check-fresh: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null || {
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap \
		>/dev/null
}

mkdir -p "$FRESH_DIR"
base="$FRESH_DIR/base.tar"
if [ ! -f "$base" ] || [ "$FRESH_REBASE" = 1 ]; then
	log "debootstrap bookworm (minbase) from $FRESH_MIRROR"
	rm -rf "$FRESH_DIR/base"
	debootstrap --variant=minbase --include=git,make,ca-certificates \
		bookworm "$FRESH_DIR/base" "$FRESH_MIRROR" \
		>"$FRESH_DIR/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$FRESH_DIR/debootstrap.log" >&2; exit 1; }
	tar -C "$FRESH_DIR/base" -cf "$base.tmp" .
	mv "$base.tmp" "$base"
	rm -rf "$FRESH_DIR/base"
fi

# What is committed, as a clone would get it.
bundle="$FRESH_DIR/megpu.bundle"
git -C "$top" bundle create "$bundle" HEAD >/dev/null 2>&1

root=
cleanup() {
	local m
	[ -n "$root" ] && [ -d "$root" ] || return 0
	for m in dev/pts dev sys proc; do
		if mountpoint -q "$root/$m"; then
			umount "$root/$m" || umount -l "$root/$m"
		fi
	done
	# never rm -rf through a bind mount of the host's /dev or /sys
	for m in dev/pts dev sys proc; do
		if mountpoint -q "$root/$m"; then
			printf 'check-fresh: %s still mounted, %s kept\n' \
				"$root/$m" "$root" >&2
			return 1
		fi
	done
	rm -rf "$root"
}
trap cleanup EXIT

# Run `make $1` in a new root; prints its time, returns its status.
run_one() {
	local cmd=$1 start rc secs
	root="$FRESH_DIR/root-$cmd"
	cleanup
	mkdir -p "$root"
	tar -C "$root" -xf "$base"
	for m in proc sys dev dev/pts; do
		mount --bind "/$m" "$root/$m"
	done
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	cp "$bundle" "$root/root/megpu.bundle"
	chroot "$root" git clone -q /root/megpu.bundle /root/megpu
	log "make $cmd in $root (log: $FRESH_DIR/$cmd.log)"
	start=$(date +%s)
	set +e
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "cd /root/megpu && make $cmd" >"$FRESH_DIR/$cmd.log" 2>&1
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	tail -n 5 "$FRESH_DIR/$cmd.log" | sed 's/^/  | /'
	printf 'check-fresh: make %s: %s in %dm%02ds (cold)\n' "$cmd" \
		"$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")" \
		$((secs / 60)) $((secs % 60)) | tee -a "$FRESH_DIR/times"
	cleanup
	root=
	return $rc
}

fail=0
for c in "${cmds[@]}"; do
	[ "$c" = base ] && continue
	run_one "$c" || fail=1
done
exit $fail
