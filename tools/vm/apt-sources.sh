# shellcheck shell=bash
# The Debian sources megpu needs, on the mirrors the machine's APT already
# uses (a local mirror or a proxy's URI), for deps.sh and check-fresh.sh.
# deb.debian.org is only the fallback when no Debian source is configured.
# APT's own settings (Acquire::http::Proxy and the like) apply as they are.

# What APT knows: "repo-uri<TAB>codename<TAB>deb|deb-src<TAB>origin" lines.
megpu_apt_targets() {
	apt-get indextargets \
		--format $'$(REPO_URI)\t$(CODENAME)\t$(TARGET_OF)\t$(ORIGIN)' \
		2>/dev/null | sort -u
}

# Read megpu_apt_targets' lines on stdin; print the machine's Debian
# mirror for SUITE (a -security suite: the security mirror), or FALLBACK.
megpu_apt_mirror() {
	local suite=$1 fallback=$2
	awk -F '\t' -v want="$suite" -v fb="$fallback" '
	function sec(c) { return c ~ /-security$/ }
	# Debian, Debian Backports; no origin yet before the first update
	$4 ~ /^Debian/ || $4 == "" {
		if ($2 !~ /^(bookworm|trixie)/ || sec($2) != sec(want))
			next
		uri = $1; sub(/\/$/, "", uri)
		if (!found) found = uri
	}
	END { print found ? found : fb }'
}

# Read megpu_apt_targets' lines on stdin; print the deb822 stanzas of the
# sources megpu needs that are not configured yet (nothing if all are).
megpu_apt_missing() {
	local targets main sec
	targets=$(cat)
	main=$(megpu_apt_mirror bookworm http://deb.debian.org/debian <<<"$targets")
	sec=$(megpu_apt_mirror bookworm-security \
		http://deb.debian.org/debian-security <<<"$targets")
	awk -F '\t' -v main="$main" -v sec="$sec" '
	function need(type, suite, uri) {
		if ((type SUBSEP suite) in have)
			return
		printf "Types: %s\nURIs: %s\nSuites: %s\nComponents: main\n", \
			type, uri, suite
		printf "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
	}
	{ have[$3, $2] = 1 }
	END {
		# the 6.12 kernel builds (bookworm-security), meson and
		# pycotap (bookworm-backports), QEMU 10.0 source (trixie)
		need("deb", "bookworm-security", sec)
		need("deb", "bookworm-backports", main)
		need("deb-src", "trixie", main)
	}' <<<"$targets"
}
