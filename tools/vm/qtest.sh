#!/bin/bash
# Run the megpu qtest against the built QEMU and record its counts.
set -uo pipefail
: "${QEMU_BUILD:?}"
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$top/build/results"
out="$top/build/qtest.log"
(cd "$QEMU_BUILD" && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
	./tests/qtest/megpu-test --tap) >"$out" 2>&1
rc=$?
grep -E '^(ok|not ok) ' "$out"
pass=$(grep -c '^ok ' "$out")
fail=$(grep -c '^not ok ' "$out")
# a crash mid-run leaves fewer results than planned
plan=$(sed -n 's/^1\.\.\([0-9]*\)/\1/p' "$out" | head -n 1)
if [ "$rc" != 0 ] || [ "$((pass + fail))" != "${plan:-0}" ]; then
	[ "$fail" = 0 ] && fail=1
	tail -n 20 "$out"
fi
echo "qtest: $pass passed, $fail failed"
echo "$pass $fail" >"$top/build/results/qtest"
[ "$fail" = 0 ]
