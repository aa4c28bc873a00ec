#!/bin/bash
# make docs: the driver's documentation as the kernel builds its own.
# scripts/kernel-doc -none -Wall over the driver and the uAPI must be
# silent, then Sphinx (Debian's python3-sphinx) with the kernel's
# kernel-doc extension from linux-source-6.12 builds Documentation/
# (gpu/megpu.rst pulls every DOC block and the uAPI) into build/docs
# with warnings as errors.
#
# Environment: MEGPU_CACHE (set by the Makefile).
set -euo pipefail

: "${MEGPU_CACHE:?}"
top=$(cd "$(dirname "$0")/../.." && pwd)
src="$MEGPU_CACHE/linux-source"
tree=$(ls -d "$src"/tree/linux-source-6.12* | head -n 1)
if [ ! -f "$tree/Documentation/sphinx/kerneldoc.py" ] ||
	[ ! -f "$tree/scripts/kernel-doc" ]; then
	tarball=$(ls "$src"/usr/src/linux-source-6.12*.tar.xz | head -n 1)
	tar -xJf "$tarball" -C "$src/tree" --wildcards \
		'*/Documentation/sphinx/*' '*/scripts/kernel-doc'
fi

cd "$top"
mapfile -t files < <(ls drivers/gpu/drm/megpu/*.[ch] | grep -v '\.mod\.c$')
out=$(perl "$tree/scripts/kernel-doc" -none -Wall "${files[@]}" \
	uapi/drm/megpu_drm.h 2>&1 | grep -v '^Warning: Sphinx version' || true)
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	echo "docs: kernel-doc has warnings" >&2
	exit 1
fi
echo "docs: kernel-doc -none -Wall: no warnings (${#files[@]} driver files, the uAPI)"
KERNEL_SPHINX="$tree/Documentation/sphinx" KERNELDOC="$tree/scripts/kernel-doc" \
MEGPU_TOP="$top" /usr/bin/sphinx-build -q -W --keep-going -b html \
	Documentation build/docs
echo "docs: build/docs/index.html"
