#!/bin/bash
# Run every megpu qtest against the built QEMU and record the summed counts
# in build/results/$QTEST_NAME (default qtest; check-asan: asan-qtest).
set -uo pipefail
: "${QEMU_BUILD:?}" "${QTEST_NAME:=qtest}"
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$top/build/results"
pass=0
fail=0
for bin in "$QEMU_BUILD"/tests/qtest/megpu-*test; do
	name=$(basename "$bin")
	out="$top/build/$QTEST_NAME-$name.log"
	(cd "$QEMU_BUILD" && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
		"./tests/qtest/$name" --tap) >"$out" 2>&1
	rc=$?
	grep -E '^(ok|not ok) ' "$out"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	# a crash mid-run leaves fewer results than planned
	plan=$(sed -n 's/^1\.\.\([0-9]*\)/\1/p' "$out" | head -n 1)
	# a sanitizer's report fails the binary even if QEMU lived on
	if grep -qaE '^(==[0-9]+==ERROR: [A-Za-z]+Sanitizer|SUMMARY: [A-Za-z]+Sanitizer)|: runtime error: ' "$out"; then
		grep -aE -m 5 'Sanitizer|runtime error' "$out"
		[ "$f" = 0 ] && f=1
	fi
	if [ "$rc" != 0 ] || [ "$((p + f))" != "${plan:-0}" ]; then
		[ "$f" = 0 ] && f=1
		tail -n 20 "$out"
	fi
	echo "$name: $p passed, $f failed"
	pass=$((pass + p))
	fail=$((fail + f))
done
[ "$pass" = 0 ] && [ "$fail" = 0 ] && { echo "qtest: no megpu qtest built"; fail=1; }
echo "$QTEST_NAME: $pass passed, $fail failed"
echo "$pass $fail" >"$top/build/results/$QTEST_NAME"
[ "$fail" = 0 ]
