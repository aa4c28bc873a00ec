# Sourced by the lanes that run on a QEMU build of their own (check-asan,
# check-tsan, fuzz-device, coverage): build_variant NAME builds it with
# build-qemu.sh (QEMU_SAN=NAME) beside the normal build, its log in
# build/NAME-build.log, the log's tail on failure.
build_variant() {
	local v=$1 top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	mkdir -p "$top/build"
	QEMU_SAN=$v "$top/tools/vm/build-qemu.sh" >"$top/build/$v-build.log" 2>&1 &&
		return 0
	tail -n 30 "$top/build/$v-build.log"
	echo "$(basename "$0"): the $v build of QEMU failed" >&2
	return 1
}
