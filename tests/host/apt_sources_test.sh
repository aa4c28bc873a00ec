#!/bin/bash
# tools/vm/apt-sources.sh: the sources deps.sh adds use the machine's own
# Debian mirror, only what is missing is added, other origins are not
# taken for Debian's mirror, and deb.debian.org is the fallback (TAP).
. "$(dirname "$0")/../../tools/vm/apt-sources.sh"
n=0 fail=0
t() {	# name, then the check's exit status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi
}
T=$'\t'
local_mirror="http://mirror.lan/debian/${T}bookworm${T}deb${T}Debian
http://mirror.lan/debian-security/${T}bookworm-security${T}deb${T}Debian
https://download.docker.com/linux/debian/${T}bookworm${T}deb${T}Docker"
out=$(megpu_apt_missing <<<"$local_mirror")
grep -q 'URIs: http://mirror.lan/debian$' <<<"$out"
t "backports and trixie sources on the machine's mirror" $?
! grep -q 'deb.debian.org\|docker' <<<"$out"
t "no default mirror and no other origin's" $?
! grep -q 'Suites: bookworm-security' <<<"$out"
t "a configured suite is not added again" $?
[ "$(grep -c '^Types:' <<<"$out")" = 2 ]
t "two sources missing: deb bookworm-backports, deb-src trixie" $?
[ "$(megpu_apt_mirror bookworm-security x <<<"$local_mirror")" = \
	http://mirror.lan/debian-security ]
t "the security mirror for -security suites" $?
# a fresh debootstrap root before its first update: no origin yet
out=$(megpu_apt_missing <<<"http://m.example/debian${T}bookworm${T}deb${T}")
grep -q 'URIs: http://deb.debian.org/debian-security' <<<"$out"
t "bookworm-security (no security mirror known: the default)" $?
grep -q 'URIs: http://m.example/debian$' <<<"$out"
t "a root's mirror with no origin yet is used" $?
out=$(megpu_apt_missing </dev/null)
[ "$(grep -c 'deb.debian.org' <<<"$out")" = 3 ]
t "nothing configured: deb.debian.org" $?
all="$local_mirror
http://mirror.lan/debian/${T}bookworm-backports${T}deb${T}Debian Backports
http://mirror.lan/debian/${T}trixie${T}deb-src${T}Debian"
[ -z "$(megpu_apt_missing <<<"$all")" ]
t "everything configured: nothing added" $?
exit $fail
