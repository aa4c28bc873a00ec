#!/bin/bash
# Build the guest initramfs: busybox, the DRM modules megpu.ko needs
# (decompressed: busybox insmod cannot), megpu.ko, the tool, the selftests
# and the init script.
#
# usage: mkinitramfs.sh OUT.cpio.gz MEGPU.ko TOOL SELFTEST...
# Environment: KROOT, KVER (Debian's kernel), or KMODDIR (the modules of
# another kernel, e.g. the debug lane's, compressed or not).
set -euo pipefail

: "${KMODDIR:=}"
[ -n "$KMODDIR" ] || : "${KROOT:?}" "${KVER:?}"
out=$1 ko=$2 tool=$3
shift 3
top=$(cd "$(dirname "$0")/../.." && pwd)
kmods=${KMODDIR:-$KROOT/lib/modules/$KVER-amd64}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

[ -f "$kmods/modules.dep" ] || depmod -b "${kmods%/lib/modules/*}" \
	"$(basename "$kmods")"

mkdir -p "$stage"/{bin,dev,proc,sys,tmp,etc,lib/modules,usr/share/megpu/selftests}
# mktemp's 0700 would become the guest's /: other users could reach no path
chmod 755 "$stage"
chmod 1777 "$stage/tmp"
cp /bin/busybox "$stage/bin/busybox"
cp "$top/tools/vm/init" "$stage/init"
cp "$ko" "$stage/lib/modules/megpu.ko"
cp "$tool" "$stage/bin/megpu"
for t in "$@"; do
	cp "$t" "$stage/usr/share/megpu/selftests/"
done

# Dependencies in load order: modules.dep lists a module's dependencies
# (already transitive) with the ones to load first at the end.
# vgem provides foreign fences for the tests.
want="$(modinfo -F depends "$ko" | tr ',' ' ') vgem"
order=()
for m in $want; do
	line=$(grep -E "/${m//[-_]/[-_]}\.ko(\.xz)?:" "$kmods/modules.dep") ||
		{ echo "mkinitramfs: module $m not in $kmods" >&2; exit 1; }
	deps=(${line#*:})
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		order+=("${deps[i]}")
	done
	order+=("${line%%:*}")
done
: >"$stage/etc/modules"
for p in "${order[@]}"; do
	name=$(basename "$p" .xz)
	[ -f "$stage/lib/modules/$name" ] && continue
	case "$p" in
	*.xz) xz -dc "$kmods/$p" >"$stage/lib/modules/$name" ;;
	*) cp "$kmods/$p" "$stage/lib/modules/$name" ;;
	esac
	echo "${name%.ko}" >>"$stage/etc/modules"
done

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1)), modules: $(tr '\n' ' ' <"$stage/etc/modules")"
