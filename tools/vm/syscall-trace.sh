#!/bin/bash
# Where an in-batch GPU-to-CPU call's round trip goes (seed 003).
#
# usage: syscall-trace.sh INITRAMFS [ROUNDS]
#        syscall-trace.sh --analyze TRACE [DISPATCH...]
#
# Boots the guest with "megpu bench syscall --rounds ROUNDS" (default 100)
# and QEMU's trace events for the call path (log backend, host
# timestamps), then splits every round of the timed 1-caller rows into
# stages, all measured on the host:
#   A publish -> MSI-X   megpu_wave_syscall -> megpu_irq (the bottom half)
#   B MSI-X -> hard IRQ  -> the guest handler's first register access
#   C hard IRQ           -> its MISC_IRQ_STATUS acknowledge
#   D -> WAVE_RESTART    the CPU's side: scan, answer (kernel or service)
#   E restart -> resume  -> megpu_wave_syscall_return (the engine thread)
#   F resume -> publish  the wave's loop up to its next SYSCALL
# and prints n, median, mean and max per stage (microseconds). Tracing
# adds a few microseconds per event; compare medians, not single rounds.
# Extra device properties: DEVICE_PROPS, as for run.sh. The trace stays in
# build/syscall-trace.log; --analyze reads one again (DISPATCH: the
# program dispatches to split, counted from 0; default the two timed
# 1-caller rows after the bench's warm-up, 5 and 6).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)

analyze() {
	awk -v want="$2" '
	function stat(name, k,    i, j, v, n, sum, max) {
		n = cnt[k]
		if (!n)
			return
		for (i = 2; i <= n; i++) {      # insertion sort, n is small
			v = val[k, i]
			for (j = i - 1; j >= 1 && val[k, j] > v; j--)
				val[k, j + 1] = val[k, j]
			val[k, j + 1] = v
		}
		for (i = 1; i <= n; i++) {
			sum += val[k, i]
			if (val[k, i] > max)
				max = val[k, i]
		}
		printf "  %-22s n %4d  median %7.1f  mean %8.1f  max %8.1f\n",
		       name, n, val[k, int((n + 1) / 2)], sum / n, max
	}
	function add(k, v) { val[k, ++cnt[k]] = v }
	function report() {
		printf "dispatch %d: %s\n", d, what
		stat("A publish -> MSI-X", "A"); stat("B MSI-X -> hard IRQ", "B")
		stat("C hard IRQ", "C"); stat("D -> WAVE_RESTART", "D")
		stat("E restart -> resume", "E"); stat("F resume -> publish", "F")
		stat("round", "R")
		split("A B C D E F R", ks, " ")
		for (i in ks)
			cnt[ks[i]] = 0
	}
	BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) sel[w[i]] = 1; d = -1 }
	{
		if (!match($0, /^[0-9]+@[0-9]+\.[0-9]+:/))
			next
		at = substr($0, 1, RLENGTH - 1); sub(/^[0-9]+@/, "", at)
		split(at, tt, "."); t = (tt[1] % 100000) * 1e6 + tt[2]
		rest = substr($0, RLENGTH + 1); ev = rest; sub(/ .*/, "", ev)
		args = rest; sub(/^[^ ]* ?/, "", args)
	}
	ev == "megpu_wave_dispatch_start" {
		d++; on = (d in sel); what = args; st = ""; last = -1; next
	}
	!on { next }
	ev == "megpu_wave_dispatch_end" { report(); on = 0; next }
	ev == "megpu_wave_syscall" {
		if (last >= 0) add("R", t - last)
		if (st == "ret") add("F", t - tret)
		last = t; tpub = t; st = "pub"; next
	}
	ev == "megpu_irq" && st == "pub" { add("A", t - tpub); tbh = t; st = "bh"; next }
	ev == "megpu_mmio_read" && st == "bh" && args ~ /^addr 0x(1c|3c) / {
		add("B", t - tbh); thi = t; st = "hi"; next
	}
	ev == "megpu_mmio_write" && st == "hi" && args ~ /^addr 0x3c / {
		add("C", t - thi); the = t; st = "he"; next
	}
	ev == "megpu_mmio_write" && st == "he" && args ~ /^addr 0x80 / {
		add("D", t - the); trs = t; st = "rs"; next
	}
	ev == "megpu_wave_syscall_return" && st == "rs" {
		add("E", t - trs); tret = t; st = "ret"; next
	}
	' "$1"
}

if [ "${1:-}" = --analyze ]; then
	trace=$2
	shift 2
	analyze "$trace" "${*:-5 6}"
	exit
fi

initrd=${1:?usage: syscall-trace.sh INITRAMFS [ROUNDS]}
rounds=${2:-100}
trace="$top/build/syscall-trace.log"
events=$(mktemp)
trap 'rm -f "$events"' EXIT
printf '%s\n' megpu_irq 'megpu_mmio_*' 'megpu_wave_*' >"$events"
rm -f "$trace"
TEST_ARGS="megpu.args=syscall,--rounds,$rounds" NAME=syscall-trace \
	QEMU_EXTRA="-trace events=$events -D $trace -msg timestamp=on" \
	"$top/tools/vm/run.sh" bench "$initrd" | grep -E '^  (callers|1 |8 |64 )'
echo "rows 1 caller: in-batch ECHO (dispatch 5), in-batch user op (6)"
analyze "$trace" "5 6"
