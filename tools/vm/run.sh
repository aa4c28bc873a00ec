#!/bin/bash
# Boot the guest with the megpu device and run one mode in it.
#
# usage: run.sh check|demo|bench|trace|shell INITRAMFS
#
# check, demo and bench read the serial console and fail on a failed test, a kernel
# BUG/oops/WARNING/KASAN/lockdep report, a missing end marker or a timeout.
#
# Environment: QEMU_BUILD, KROOT, KVER (set by the Makefile), ENGINES
# (engines per device, default 4), GPUS (megpu devices, default 1),
# DEVICE_PROPS (one word of extra properties per device, e.g.
# "x-drop-irqs=on x-version=0x20000"; overrides GPUS), TESTS (comma
# separated selftests to run, default all), TEST_ARGS (more
# megpu_test.key=value words), NAME (log name, default the mode),
# GUEST_TIMEOUT (seconds, default 900), QEMU_EXTRA (more QEMU options),
# BENCH_JSON (bench: where the figures go, default build/bench.json),
# TRACE_JSON (trace: where the timeline goes, default build/trace.json),
# KERNEL (the kernel image, default Debian's $KVER; the debug lane's),
# ACCEL (tcg, the default, or kvm), KEEP_CORE (keep the core QEMU left in
# build/cores-NAME when it died on a signal; its stacks go to the log).
set -uo pipefail

mode=$1 initrd=$(realpath "$2")
: "${QEMU_BUILD:?}" "${KROOT:?}" "${KVER:?}"
: "${ENGINES:=4}" "${GPUS:=1}" "${GUEST_TIMEOUT:=900}" "${QEMU_EXTRA:=}"
: "${DEVICE_PROPS:=}" "${TESTS:=}" "${TEST_ARGS:=}" "${NAME:=$mode}"
: "${ACCEL:=tcg}"
: "${KERNEL:=$KROOT/boot/vmlinuz-$KVER-amd64}"
top=$(cd "$(dirname "$0")/../.." && pwd)
log="$top/build/guest-$NAME.log"

# Each GPU is a PCI Express endpoint behind a root port of its own, as a
# card in a slot is.
devices=()
gpu() {	# one megpu with extra properties $1
	local n=${#devices[@]}
	n=$((n / 4))
	devices+=(-device "pcie-root-port,id=rp$n,chassis=$((n + 1)),slot=$((n + 1))"
		-device "megpu,bus=rp$n,engines=$ENGINES${1:+,$1}")
}
if [ -n "$DEVICE_PROPS" ]; then
	GPUS=0
	for props in $DEVICE_PROPS; do
		gpu "$props"
		GPUS=$((GPUS + 1))
	done
else
	for ((i = 0; i < GPUS; i++)); do
		gpu ""
	done
fi
cmdline="console=ttyS0 panic=-1 megpu.mode=$mode"
cmdline+=" megpu_test.engines=$ENGINES megpu_test.gpus=$GPUS $TEST_ARGS"
[ -n "$TESTS" ] && cmdline+=" megpu.tests=$TESTS"

# Multi-threaded TCG with more than one vCPU makes guest atomics host
# atomics, which the device's engine threads rely on (under KVM they are
# the host's own). ACCEL=kvm where /dev/kvm works; TCG is the default.
case "$ACCEL" in
tcg) accel=(-accel tcg,thread=multi) ;;
kvm) accel=(-accel kvm -cpu host) ;;
*) echo "run.sh: ACCEL must be tcg or kvm, not '$ACCEL'" >&2; exit 2 ;;
esac
qemu=("$QEMU_BUILD/qemu-system-x86_64"
	-machine q35,dump-guest-core=off -bios qboot.rom "${accel[@]}" -smp 2 -m 1G
	-nodefaults -no-reboot -display none -nic none
	-kernel "$KERNEL" -initrd "$initrd"
	-append "$cmdline" "${devices[@]}" $QEMU_EXTRA)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio
fi

mkdir -p "$(dirname "$log")"
# QEMU runs in a directory of its own, so that if it dies on a signal
# (an assertion's abort) its core is found and its threads' stacks go
# to the log: a rare abort is then diagnosable from one occurrence.
# dump-guest-core=off keeps the guest's RAM out of the core.
cores="$top/build/cores-$NAME"
rm -rf "$cores"
mkdir -p "$cores"
start=$EPOCHREALTIME
boot=
intrace=
while IFS= read -r line; do
	line=${line%$'\r'}
	printf '%s\n' "$line" >>"$log"
	case "$line" in
	*"megpu-init: start"*)
		boot=$(echo "$EPOCHREALTIME - $start" | bc)
		printf 'guest: booted to /init in %.1f s\n' "$boot"
		;;
	esac
	# The demo's own output, and the tests' summary lines, for the user.
	case "$line" in
	MEGPU-TRACE-BEGIN) intrace=1 ;;
	MEGPU-TRACE-END) intrace= ;;
	esac
	if [ "$mode" != check ] && [ -n "$boot" ] && [ -z "$intrace" ] &&
		[[ "$line" != MEGPU-TRACE-* ]] &&
		[[ "$line" != MEGPU-BENCH-JSON* ]] && [[ "$line" != \[* ]] && [[ "$line" != megpu-init:* ]] && [[ "$line" != qemu-exit=* ]]; then
		printf '%s\n' "$line"
	fi
	if [ "$mode" = check ]; then
		case "$line" in
		"ok "* | "not ok "* | "# ok "* | "# not ok "* | "# Totals"* | "# # Totals"*)
			printf '%s\n' "$line"
			;;
		esac
	fi
done < <(: >"$log"; cd "$cores" && ulimit -c unlimited 2>/dev/null
	timeout --foreground -k 10 "$GUEST_TIMEOUT" \
	"${qemu[@]}" -serial stdio </dev/null 2>&1; echo "qemu-exit=$?")

elapsed=$(echo "$EPOCHREALTIME - $start" | bc)
fail=0
report() { echo "guest: FAIL: $*"; fail=1; }

qexit=$(sed -n 's/^qemu-exit=//p' "$log" | tail -n 1)
[ "$qexit" = 124 ] && report "timeout after ${GUEST_TIMEOUT}s"
# the guest powers off: anything else is QEMU dying (an abort, a
# sanitizer's report in `make check-asan`)
[ "$qexit" != 124 ] && [ "$qexit" != 0 ] && report "QEMU exited with $qexit"
core=$(ls "$cores"/core* 2>/dev/null | head -n 1)
if [ -n "$core" ] && command -v gdb >/dev/null; then
	echo "== QEMU's threads at its death ($core)" >>"$log"
	gdb -batch -nx -ex "thread apply all bt 40" "${qemu[0]}" "$core" \
		</dev/null >>"$log" 2>&1
	echo "guest: QEMU's stacks at its death are in $log"
elif [ -n "$core" ]; then
	echo "guest: QEMU left a core in $core (install gdb for its stacks)"
fi
if [ -z "$core" ] || [ -z "${KEEP_CORE:-}" ]; then
	rm -rf "$cores"
fi
if grep -aE '^(==[0-9]+==ERROR: [A-Za-z]+Sanitizer|SUMMARY: [A-Za-z]+Sanitizer)|: runtime error: ' "$log" |
	head -n 5 >"$log.san"; [ -s "$log.san" ]; then
	report "QEMU's sanitizers reported:"
	sed 's/^/  /' "$log.san"
fi
rm -f "$log.san"
grep -q '^MEGPU-END status=' "$log" || report "no end marker"
status=$(sed -n 's/^MEGPU-END status=//p' "$log" | tail -n 1)
[ -n "$status" ] && [ "$status" != 0 ] && report "$mode exited with $status"
if grep -q '^not ok ' "$log"; then
	report "failed tests:"
	grep '^not ok ' "$log" | sed 's/^/  /'
fi
# MEGPU-KMEMLEAK: a leak of the DRM stack's or the driver's that init's
# final kmemleak scan found (debug kernels); ODEBUG: debug objects. The
# stack dump of an allocation failure's report (warn_alloc: "page
# allocation failure", "vmalloc error") is the kernel's normal answer to
# an injected failure (failinject_test), not a bug: it is not counted.
# Nor is ASan's note (check-asan) that QEMU's coroutines switch stacks.
if awk '/^MEGPU-GCOV / { gcov = 1 } /^MEGPU-GCOV-END/ { gcov = 0; next }
	gcov { next }	# base64 counters: "Oops" may occur by chance
	/page allocation failure: |vmalloc error: / { skip = 1 }
	/^==[0-9]+==WARNING: ASan doesn.t fully support makecontext/ { next }
	!skip { printf "%d:%s\n", NR, $0 }
	skip && /<\/TASK>/ { skip = 0 }' "$log" |
	grep -E 'BUG:|Oops|WARNING:|Call Trace:|KASAN|UBSAN|MEGPU-KMEMLEAK|ODEBUG|possible circular locking|possible recursive locking|inconsistent lock state|Kernel panic|general protection fault|insmod .* failed' |
	head -n 20 >"$log.kernel"; [ -s "$log.kernel" ]; then
	report "kernel reported problems:"
	sed 's/^/  /' "$log.kernel"
fi
rm -f "$log.kernel"

# The bench's figures (medians of repeated runs with their spread), for
# comparing commits: build/bench.json, or BENCH_JSON.
if [ "$mode" = bench ]; then
	json=${BENCH_JSON:-$top/build/bench.json}
	if line=$(grep -a '^MEGPU-BENCH-JSON ' "$log" | tail -n 1) &&
		[ -n "$line" ]; then
		printf '%s\n' "${line#MEGPU-BENCH-JSON }" >"$json"
		echo "guest: bench figures in $json"
	else
		report "no bench figures (MEGPU-BENCH-JSON) in the log"
	fi
fi

# trace: the timeline the guest printed, to build/trace.json or TRACE_JSON.
if [ "$mode" = trace ]; then
	json=${TRACE_JSON:-$top/build/trace.json}
	if grep -aq '^MEGPU-TRACE-END' "$log"; then
		sed -n '/^MEGPU-TRACE-BEGIN$/,/^MEGPU-TRACE-END$/p' "$log" |
			sed '1d;$d' >"$json"
		echo "guest: timeline in $json (open it in ui.perfetto.dev)"
	else
		report "no timeline (MEGPU-TRACE-BEGIN/END) in the log"
	fi
fi

if [ "$mode" = check ]; then
	# Count the test cases inside the programs; a program that died
	# without reporting a failed case still counts as one failure.
	# a skipped case ("ok N name # SKIP why") is not a pass
	pass=$(grep -E '^# ok [0-9]+ ' "$log" | grep -vc ' # SKIP')
	skip=$(grep -E '^# ok [0-9]+ ' "$log" | grep -c ' # SKIP')
	nfail=$(grep -cE '^# not ok [0-9]+ ' "$log")
	progfail=$(grep -c '^not ok ' "$log")
	[ "$progfail" -gt "$nfail" ] && nfail=$progfail
	[ "$fail" = 1 ] && [ "$nfail" = 0 ] && nfail=1
	echo "guest: $pass passed, $nfail failed, $skip skipped"
	mkdir -p "$top/build/results"
	echo "$pass $nfail" >"$top/build/results/guest-$NAME"
fi
printf 'guest: %s took %.1f s, log in %s\n' "$mode" "$elapsed" "$log"
exit $fail
