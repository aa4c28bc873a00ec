#!/bin/bash
# make fuzz-device: QEMU's generic-fuzz libFuzzer target on the megpu
# device (issue 23). QEMU is built with --enable-fuzzing and ASan (clang)
# beside the normal build; the target "generic-fuzz-megpu" (glue.patch:
# tests/qtest/fuzz/generic_fuzz_configs.h) drives the device's BAR and
# fills its DMA reads of guest RAM, with its engine threads running.
# Seeds: tools/fuzz/corpus (made by tools/fuzz/mkcorpus.c, one input per
# packet type, a wave program, a task queue, a mailbox) and
# tools/fuzz/found (what long runs found, minimised); what the run adds
# stays in build/fuzz/corpus. tools/fuzz/regress: inputs that crashed
# through a race, replayed several times before the run.
#
# QEMU's generic-fuzz assumes DMA comes from the main thread; megpu's
# engines do it from their own threads while the main thread runs the
# next op. glue.patch gives the harness's DMA state a lock and fills
# DMA reads without its main-thread qtest channel (without it, an engine's
# read divided by a pattern count the main thread had just cleared:
# tools/fuzz/regress/dma-patterns-cleared-under-engine-dma, 17 crashes in
# 30 replays). FUZZ_MERGE=1 after a run minimises
# tools/fuzz/found and build/fuzz/corpus into tools/fuzz/found (libFuzzer
# -merge=1: the smallest set with the same coverage), to commit. A crash leaves its input in
# build/fuzz/ and fails the run: make it a qtest reproducer, then fix it.
#
# Environment: QEMU_BUILD (set by the Makefile), FUZZ_S (seconds,
# default 180), FUZZ_JOBS (fuzzing processes, default 1; more runs
# libFuzzer's -fork mode, whose status lines count every process's
# executions: one run, one corpus).
set -uo pipefail

: "${QEMU_BUILD:?}" "${FUZZ_S:=180}" "${FUZZ_JOBS:=1}"
top=$(cd "$(dirname "$0")/../.." && pwd)
fuzz_build="$QEMU_BUILD-fuzz"
out="$top/build/fuzz"

. "$top/tools/vm/qemu-variant.sh"
build_variant fuzz || exit 1
mkdir -p "$out/corpus" "$top/tools/fuzz/found"
rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=0"
# the fuzzer's qtest machine looks for its firmware here
cd "$fuzz_build" || exit 1
# Inputs that crashed through a race (tools/fuzz/regress) are replayed
# FUZZ_REPLAYS times each first: a race shows in some runs only.
for f in "$top"/tools/fuzz/regress/*; do
	[ -f "$f" ] || continue		# none: the glob stays as it is
	for i in $(seq "${FUZZ_REPLAYS:-10}"); do
		if ! ./qemu-fuzz-x86_64 --fuzz-target=generic-fuzz-megpu "$f" \
			>"$out/replay.log" 2>&1; then
			grep -E -m 20 'ERROR: |SUMMARY: |#[0-9]+ 0x.* in ' "$out/replay.log"
			echo "fuzz-device: FAIL: $f crashed in replay $i, log in $out/replay.log"
			exit 1
		fi
	done
done
[ -d "$top/tools/fuzz/regress" ] &&
	echo "fuzz-device: $(ls "$top/tools/fuzz/regress" | wc -l) regression input(s) replayed ${FUZZ_REPLAYS:-10} times, no crash"
fork=()
[ "$FUZZ_JOBS" -gt 1 ] && fork=(-fork="$FUZZ_JOBS")
start=$SECONDS
./qemu-fuzz-x86_64 --fuzz-target=generic-fuzz-megpu \
	-max_total_time="$FUZZ_S" "${fork[@]}" \
	-timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
	-artifact_prefix="$out/" "$out/corpus" "$top/tools/fuzz/corpus" \
	"$top/tools/fuzz/found" \
	>"$out/fuzz.log" 2>&1
rc=$?
echo "fuzz-device: $FUZZ_JOBS process(es), $((SECONDS - start)) s"
# libFuzzer's last status line: executions, coverage (edges), features
last=$(grep -E '^#[0-9]+' "$out/fuzz.log" | tail -n 1)
echo "$last"
execs=$(echo "$last" | sed -E 's/^#([0-9]+).*/\1/')
[ -n "$execs" ] && echo "fuzz-device: $execs executions in $((SECONDS - start)) s" \
	"($((execs / (SECONDS - start + 1)))/s)," \
	"cov $(echo "$last" | sed -E 's/.*cov: ([0-9]+).*/\1/')" \
	"ft $(echo "$last" | sed -E 's/.*ft: ([0-9]+).*/\1/')"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
	"$out/fuzz.log"
shopt -s nullglob
crashes=("$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*)
if [ "$rc" != 0 ] || [ "${#crashes[@]}" != 0 ]; then
	grep -E -m 20 'ERROR: |SUMMARY: |==[0-9]+==|#[0-9]+ 0x.* in megpu' "$out/fuzz.log"
	echo "fuzz-device: FAIL (exit $rc): ${crashes[*]:-no input saved}, log in $out/fuzz.log"
	exit 1
fi
echo "fuzz-device: no crash in ${FUZZ_S} s, corpus $(ls "$out/corpus" | wc -l) inputs"
if [ "${FUZZ_MERGE:-0}" = 1 ]; then
	rm -rf "$out/found.new"
	mkdir -p "$out/found.new" "$top/tools/fuzz/found"
	./qemu-fuzz-x86_64 --fuzz-target=generic-fuzz-megpu -merge=1 \
		"$out/found.new" "$top/tools/fuzz/found" "$out/corpus" \
		>"$out/merge.log" 2>&1 || { echo "fuzz-device: merge failed, see $out/merge.log"; exit 1; }
	rm -rf "$top/tools/fuzz/found"
	mv "$out/found.new" "$top/tools/fuzz/found"
	echo "fuzz-device: tools/fuzz/found has $(ls "$top/tools/fuzz/found" | wc -l) inputs ($(du -sb "$top/tools/fuzz/found" | cut -f1) bytes)"
fi
