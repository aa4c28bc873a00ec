#!/bin/bash
# make check-install: the installed libmegpu as a user sees it. Builds
# tools/examples/*.c with nothing but `pkg-config --cflags --libs megpu`
# against the copy installed in ROOT (DESTDIR), linked to the shared
# library and statically; checks what was installed and what the binaries
# link to, and runs each (77, no megpu device, is fine on the host; the
# guest boots run the tool itself). TAP-like lines, non-zero on a failure.
#
# usage: check-install.sh ROOT PREFIX LIBDIR BUILT
# (ROOT: a DESTDIR install with PREFIX and LIBDIR; BUILT: an install with
# PREFIX=BUILT, whose megpu.pc names it, for building the examples)
set -uo pipefail

root=$(cd "$1" && pwd) prefix=$2 libdir=$3 built=$(cd "$4" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/examples"
mkdir -p "$out"
n=0 fail=0 fails=
t() {	# name, then the check's exit status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n $1"; else
		echo "not ok $n $1"; fail=1; fails+="$n"$'\n'; fi
}

for f in lib/libmegpu.a lib/libmegpu.so lib/libmegpu.so.0 \
	lib/pkgconfig/megpu.pc include/megpu/libmegpu.h \
	include/megpu/megpu_drm.h include/megpu/megpu_hw.h bin/megpu \
	share/man/man1/megpu.1; do
	p="$root$prefix/${f/#lib\//${libdir#"$prefix"/}/}"
	[ -e "$p" ]
	t "installed: ${p#"$root"}" $?
done
man -l "$root$prefix/share/man/man1/megpu.1" 2>/dev/null | grep '^NAME' >/dev/null
t "the man page renders" $?

# pkg-config finds the installed copy; libdrm's is the system's
export PKG_CONFIG_PATH=$built/lib/pkgconfig
pc() { pkg-config "$@" megpu; }
pc --exists
t "pkg-config finds megpu $(pc --modversion 2>/dev/null)" $?
cflags=$(pc --cflags) libs=$(pc --libs) slibs=$(pc --static --libs)
for src in "$top"/tools/examples/*.c; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2086
	cc -Wall -Wextra -Werror -o "$out/$name" "$src" $cflags $libs
	t "$name: builds with pkg-config --cflags --libs megpu" $?
	LD_LIBRARY_PATH=$built/lib ldd "$out/$name" 2>/dev/null |
		grep "libmegpu.so.0 => $built/lib/" >/dev/null
	t "$name: linked to the installed libmegpu.so.0" $?
	LD_LIBRARY_PATH=$built/lib "$out/$name" >/dev/null 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 77 ]
	t "$name: runs (exit $rc: 0 done, 77 no megpu device)" $?
	# shellcheck disable=SC2086
	cc -Wall -Wextra -Werror -static -o "$out/$name-static" "$src" \
		$cflags $slibs
	t "$name: builds statically with pkg-config --static" $?
done
nfail=$(grep -c . <<<"$(printf '%s' "$fails")")
echo "check-install: $((n - nfail)) passed, $nfail failed"
mkdir -p "$top/build/results"
echo "$((n - nfail)) $nfail" >"$top/build/results/install"
exit $fail
