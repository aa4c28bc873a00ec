#!/bin/bash
# Run every megpu qtest against the built QEMU and record the summed counts.
set -uo pipefail
: "${QEMU_BUILD:?}"
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$top/build/results"
pass=0
fail=0
for bin in "$QEMU_BUILD"/tests/qtest/megpu-*test; do
	name=$(basename "$bin")
	out="$top/build/qtest-$name.log"
	(cd "$QEMU_BUILD" && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
		"./tests/qtest/$name" --tap) >"$out" 2>&1
	rc=$?
	grep -E '^(ok|not ok) ' "$out"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	# a crash mid-run leaves fewer results than planned
	plan=$(sed -n 's/^1\.\.\([0-9]*\)/\1/p' "$out" | head -n 1)
	if [ "$rc" != 0 ] || [ "$((p + f))" != "${plan:-0}" ]; then
		[ "$f" = 0 ] && f=1
		tail -n 20 "$out"
	fi
	echo "$name: $p passed, $f failed"
	pass=$((pass + p))
	fail=$((fail + f))
done
[ "$pass" = 0 ] && [ "$fail" = 0 ] && { echo "qtest: no megpu qtest built"; fail=1; }
echo "qtest: $pass passed, $fail failed"
echo "$pass $fail" >"$top/build/results/qtest"
[ "$fail" = 0 ]
