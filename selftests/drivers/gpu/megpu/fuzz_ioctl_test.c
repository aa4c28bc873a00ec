// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl fuzzer: structured random arguments for every megpu ioctl and the
 * generic DRM ioctls the driver supports, from several processes at once.
 *
 * Arguments are built around what a process knows (its BOs, syncobjs,
 * exported fds, the engines) and then broken: handles valid, closed, of
 * another file, or random; sizes at and past the limits; addresses and
 * offsets that overflow; random flags and pads; argument arrays at bad
 * pointers or running into an unmapped page. One file is shared by all
 * processes (fork), so one process closes what another uses.
 *
 * Every call must return 0 or an errno its uAPI documents (fz_errnos:
 * megpu_drm.h's "Errors:" for megpu's ioctls, DRM core's for the generic
 * ones), and return: the harness kills a run that hangs. Afterwards every engine still runs a known-good
 * job and the driver's object counters are back at their start.
 *
 * Seeded and replayable, see megpu_fuzz.h.
 */

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_fuzz.h"

#define FZ_PROCS	4
#define FZ_CALLS	25000		/* per process; 10x in a long run */
#define FZ_BOS		48
#define FZ_SYNCS	48
#define FZ_FDS		24
#define FZ_CLIENTS	3

/*
 * The generic syncobj ioctls allocate count_handles entries with
 * kmalloc_array() before looking at them (drm_syncobj_array_find() in
 * 6.12): a count past KMALLOC_MAX_SIZE makes the page allocator print a
 * WARNING, which run.sh rightly fails on, and large counts can fail
 * order-n allocations with a warning too. That is the DRM core's, not
 * megpu's, so counts stay below this bound.
 */
#define FZ_MAX_SYNC_ARRAY	512

#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

struct fz_client {
	int fd;
	uint32_t home;		/* the IB BO: NOPs and one write */
	uint64_t home_va;
	uint32_t ib_bytes;
};

struct fz_bo {
	int c;			/* client index */
	uint32_t handle;
	uint64_t va, size;
	bool live;
};

struct fz_sync {
	int c;
	uint32_t handle;
	bool live, fenced;
};

enum fz_op {
	OP_GET_PARAM, OP_GEM_CREATE, OP_MMAP_OFFSET, OP_GEM_INFO, OP_GEM_WAIT,
	OP_SUBMIT, OP_FLUSH, OP_SYSCALL_WAIT, OP_SYSCALL_RETURN,
	OP_MSEM_QUERY, OP_GEM_CLOSE, OP_PRIME_EXPORT, OP_PRIME_IMPORT,
	OP_SYNC_CREATE, OP_SYNC_DESTROY, OP_SYNC_WAIT, OP_SYNC_TL_WAIT,
	OP_SYNC_RESET, OP_SYNC_SIGNAL, OP_SYNC_TL_SIGNAL, OP_SYNC_QUERY,
	OP_SYNC_TRANSFER, OP_SYNC_EXPORT, OP_SYNC_IMPORT, OP_SYNC_EVENTFD,
	OP_GET_CAP, OP_SET_CLIENT_CAP, OP_VERSION, OP_FLINK_OPEN, OP_MMAP,
	OP_RAW_DRIVER, OP_RAW_GENERIC, OP_BAD_ARG, OP_REOPEN, OP_TASKQ,
	OP_COUNT,
};

static const char *const fz_op_names[OP_COUNT] = {
	"GET_PARAM", "GEM_CREATE", "GEM_MMAP_OFFSET", "GEM_INFO", "GEM_WAIT",
	"SUBMIT", "FLUSH", "SYSCALL_WAIT", "SYSCALL_RETURN", "MSEM_QUERY",
	"GEM_CLOSE", "PRIME_HANDLE_TO_FD", "PRIME_FD_TO_HANDLE",
	"SYNCOBJ_CREATE", "SYNCOBJ_DESTROY", "SYNCOBJ_WAIT",
	"SYNCOBJ_TIMELINE_WAIT", "SYNCOBJ_RESET", "SYNCOBJ_SIGNAL",
	"SYNCOBJ_TIMELINE_SIGNAL", "SYNCOBJ_QUERY", "SYNCOBJ_TRANSFER",
	"SYNCOBJ_HANDLE_TO_FD", "SYNCOBJ_FD_TO_HANDLE", "SYNCOBJ_EVENTFD",
	"GET_CAP", "SET_CLIENT_CAP", "VERSION", "GEM_FLINK/OPEN", "mmap",
	"raw driver ioctl", "raw DRM ioctl", "bad argument pointer",
	"close and reopen", "TASKQ_CHECK/NOTIFY/ATTACH/WAIT",
};

/* Weights: the common ioctls most, the expensive ones less. */
static const unsigned int fz_weight[OP_COUNT] = {
	[OP_GET_PARAM] = 4, [OP_GEM_CREATE] = 6, [OP_MMAP_OFFSET] = 3,
	[OP_GEM_INFO] = 4, [OP_GEM_WAIT] = 3, [OP_SUBMIT] = 14,
	[OP_FLUSH] = 1, [OP_SYSCALL_WAIT] = 2, [OP_SYSCALL_RETURN] = 2,
	[OP_MSEM_QUERY] = 2, [OP_GEM_CLOSE] = 4, [OP_PRIME_EXPORT] = 3,
	[OP_PRIME_IMPORT] = 3, [OP_SYNC_CREATE] = 4, [OP_SYNC_DESTROY] = 3,
	[OP_SYNC_WAIT] = 3, [OP_SYNC_TL_WAIT] = 3, [OP_SYNC_RESET] = 2,
	[OP_SYNC_SIGNAL] = 2, [OP_SYNC_TL_SIGNAL] = 2, [OP_SYNC_QUERY] = 2,
	[OP_SYNC_TRANSFER] = 3, [OP_SYNC_EXPORT] = 2, [OP_SYNC_IMPORT] = 2,
	[OP_SYNC_EVENTFD] = 1, [OP_GET_CAP] = 2, [OP_SET_CLIENT_CAP] = 1,
	[OP_VERSION] = 2, [OP_FLINK_OPEN] = 1, [OP_MMAP] = 1,
	[OP_RAW_DRIVER] = 3, [OP_RAW_GENERIC] = 2, [OP_BAD_ARG] = 2,
	[OP_REOPEN] = 0,	/* chosen on its own, rarely */
	[OP_TASKQ] = 3,
};

struct fz {
	uint64_t rng;
	unsigned int proc;
	unsigned long call;
	unsigned int engines;
	char node[64], card[64];
	struct fz_client cl[FZ_CLIENTS];
	struct fz_bo bo[FZ_BOS];
	struct fz_sync sync[FZ_SYNCS];
	int fds[FZ_FDS];
	uint8_t *arena;		/* 2 pages, then a PROT_NONE page */
	unsigned long calls[OP_COUNT], oks[OP_COUNT];
	int64_t ns[OP_COUNT];	/* time in the calls */
	int failed;
};

#define ARENA_BYTES	(2 * 4096)

/*
 * The errnos each call may end with besides 0: what its uAPI documents
 * (megpu_drm.h "Errors:"; DRM core's for the generic ioctls), and for
 * every call EACCES (not allowed on this node or file), EINTR (a signal)
 * and ENOMEM (memory ran out). Anything else is a bug, or an errno the
 * uAPI must document. The raw ops reach any ioctl with any argument.
 */
#define FZ_E(...) { __VA_ARGS__, 0 }
#define FZ_MEGPU_ANY FZ_E(EINVAL, ENOENT, EFAULT, ENOSPC, EIO, ETIME, \
			  ETIMEDOUT, EOPNOTSUPP, EBUSY, ERANGE, ENODEV, ENOTTY)
static const int fz_errnos[OP_COUNT][16] = {
	[OP_GET_PARAM] = FZ_E(EINVAL),
	[OP_GEM_CREATE] = FZ_E(EINVAL, ENOSPC),
	[OP_MMAP_OFFSET] = FZ_E(EINVAL, ENOENT),
	[OP_GEM_INFO] = FZ_E(EINVAL, ENOENT),
	[OP_GEM_WAIT] = FZ_E(EINVAL, ENOENT, ETIME),
	[OP_SUBMIT] = FZ_E(EINVAL, ENOENT, EFAULT, EIO),
	[OP_FLUSH] = FZ_E(EINVAL, ETIMEDOUT, EOPNOTSUPP),
	[OP_SYSCALL_WAIT] = FZ_E(EINVAL, EOPNOTSUPP, ETIME, EFAULT),
	[OP_SYSCALL_RETURN] = FZ_E(EINVAL, EOPNOTSUPP, ENOENT),
	[OP_MSEM_QUERY] = FZ_E(EINVAL, ENOENT, EOPNOTSUPP),
	[OP_TASKQ] = FZ_E(EINVAL, EOPNOTSUPP, ENOENT, ERANGE, EFAULT, EBUSY,
			  ENOSPC, ETIME),
	/* drm_gem_close_ioctl: an unknown handle is EINVAL */
	[OP_GEM_CLOSE] = FZ_E(EINVAL),
	[OP_PRIME_EXPORT] = FZ_E(EINVAL, ENOENT, EMFILE),
	[OP_PRIME_IMPORT] = FZ_E(EINVAL, EBADF, ENOSPC),
	[OP_SYNC_CREATE] = FZ_E(EINVAL),
	[OP_SYNC_DESTROY] = FZ_E(EINVAL),
	[OP_SYNC_WAIT] = FZ_E(EINVAL, ENOENT, EFAULT, ETIME),
	[OP_SYNC_TL_WAIT] = FZ_E(EINVAL, ENOENT, EFAULT, ETIME),
	[OP_SYNC_RESET] = FZ_E(EINVAL, ENOENT, EFAULT),
	[OP_SYNC_SIGNAL] = FZ_E(EINVAL, ENOENT, EFAULT),
	[OP_SYNC_TL_SIGNAL] = FZ_E(EINVAL, ENOENT, EFAULT),
	[OP_SYNC_QUERY] = FZ_E(EINVAL, ENOENT, EFAULT),
	[OP_SYNC_TRANSFER] = FZ_E(EINVAL, ENOENT),
	[OP_SYNC_EXPORT] = FZ_E(EINVAL, ENOENT, EMFILE),
	[OP_SYNC_IMPORT] = FZ_E(EINVAL, ENOENT, EBADF),
	[OP_SYNC_EVENTFD] = FZ_E(EINVAL, ENOENT, EBADF),
	/* drm_getcap: the KMS caps of a driver without KMS */
	[OP_GET_CAP] = FZ_E(EINVAL, EOPNOTSUPP),
	[OP_SET_CLIENT_CAP] = FZ_E(EINVAL, EOPNOTSUPP),
	[OP_VERSION] = FZ_E(EFAULT),
	/* GEM_FLINK and GEM_OPEN: not on a render node */
	[OP_FLINK_OPEN] = FZ_E(EINVAL, ENOENT, ENODEV, EPERM),
	[OP_MMAP] = FZ_E(EINVAL),
	[OP_RAW_DRIVER] = FZ_MEGPU_ANY,
	[OP_RAW_GENERIC] = FZ_E(EINVAL, ENOENT, EFAULT, EOPNOTSUPP, EPERM,
				ENOTTY, EBADF, EOVERFLOW, EBUSY, ENOSPC, E2BIG,
				ERANGE, EEXIST, ENOSYS, ENODEV),
	[OP_BAD_ARG] = FZ_E(EFAULT, EINVAL, ENOENT),
	[OP_REOPEN] = FZ_E(EMFILE),
};

static bool fz_errno_ok(enum fz_op op, int e)
{
	unsigned int i;

	if (!e || e == EACCES || e == EINTR || e == ENOMEM)
		return true;
	for (i = 0; fz_errnos[op][i]; i++)
		if (fz_errnos[op][i] == e)
			return true;
	return false;
}

static int fz_ioctl(struct fz *f, enum fz_op op, int fd, unsigned long nr,
		    void *arg)
{
	int64_t t0 = megpu_now_ns();
	int ret = ioctl(fd, nr, arg), e = ret == -1 ? errno : 0;

	f->ns[op] += megpu_now_ns() - t0;
	f->calls[op]++;
	if (!e)
		f->oks[op]++;
	if (!fz_errno_ok(op, e)) {
		printf("# fuzz: seed 0x%llx process %u call %lu: %s "
		       "(nr 0x%lx) failed with errno %d (%s)\n",
		       (unsigned long long)fz_seed, f->proc, f->call,
		       fz_op_names[op], nr, e, strerror(e));
		f->failed = 1;
	}
	return e;
}

static void fz_fail(struct fz *f, const char *what, long a, long b)
{
	printf("# fuzz: seed 0x%llx process %u call %lu: %s (%ld vs %ld)\n",
	       (unsigned long long)fz_seed, f->proc, f->call, what, a, b);
	f->failed = 1;
}

/* Uniform in [0, n), 0 for an empty range. */
static uint64_t R(struct fz *f, uint64_t n)
{
	return n ? fz_below(&f->rng, n) : 0;
}

static bool ONE_IN(struct fz *f, uint64_t n)
{
	return fz_one_in(&f->rng, n);
}

/* Handle @handle of client @c is gone: every entry naming it is stale. */
static void fz_bo_closed(struct fz *f, int c, uint32_t handle)
{
	int i;

	for (i = 0; i < FZ_BOS; i++)
		if (f->bo[i].c == c && f->bo[i].handle == handle)
			f->bo[i].live = false;
}

/* --- picking things --- */

static struct fz_client *fz_client(struct fz *f, int *ci)
{
	int c;

	/*
	 * The shared file (0) now and then only: each ioctl on it from
	 * another process than the last makes the DRM core record the new
	 * owner (drm_file_update_pid()), with a synchronize_rcu() that
	 * costs milliseconds under TCG.
	 */
	do
		c = ONE_IN(f, 10) ? 0 : 1 + R(f, FZ_CLIENTS - 1);
	while (f->cl[c].fd < 0);
	if (ci)
		*ci = c;
	return &f->cl[c];
}

/* A pointer that is not (all) readable or writable. */
static uint64_t fz_bad_ptr(struct fz *f, size_t len)
{
	static const uint64_t bad[] = {
		0, 8, 4095, 0xffff888000000000ull, 0x8000000000000000ull,
		~0ull, ~0ull - 7, 0x00007ffffffff000ull,
	};

	switch (R(f, 3)) {
	case 0:		/* runs into the guard page */
		return (uintptr_t)f->arena + ARENA_BYTES - (len ? R(f, len) : 0);
	case 1:		/* the guard page */
		return (uintptr_t)f->arena + ARENA_BYTES + R(f, 4096);
	default:
		return bad[R(f, sizeof(bad) / sizeof(bad[0]))];
	}
}

/* Room for @len bytes in the arena, its end at the guard page now and then. */
static void *fz_arena(struct fz *f, size_t len)
{
	if (len > ARENA_BYTES)
		len = ARENA_BYTES;
	if (ONE_IN(f, 4))
		return f->arena + ARENA_BYTES - len;
	return f->arena + (R(f, (ARENA_BYTES - len) / 8 + 1) * 8);
}

static uint32_t fz_random_handle(struct fz *f)
{
	switch (R(f, 4)) {
	case 0:
		return 0;
	case 1:
		return R(f, 64);
	case 2:
		return ~0u - R(f, 2);
	default:
		return fz_next(&f->rng);
	}
}

/* A BO handle of client @c: mostly known ones (live or closed). */
static uint32_t fz_bo_handle(struct fz *f, int c, struct fz_bo **bo)
{
	struct fz_bo *b = &f->bo[R(f, FZ_BOS)];

	if (bo)
		*bo = NULL;
	if (ONE_IN(f, 8) || !b->handle)
		return fz_random_handle(f);
	if (bo && b->c == c && b->live)
		*bo = b;
	return b->handle;
}

static uint32_t fz_sync_handle(struct fz *f, struct fz_sync **s)
{
	struct fz_sync *y = &f->sync[R(f, FZ_SYNCS)];

	if (s)
		*s = y;
	if (ONE_IN(f, 8) || !y->handle) {
		if (s)
			*s = NULL;
		return fz_random_handle(f);
	}
	return y->handle;
}

static uint64_t fz_point(struct fz *f)
{
	switch (R(f, 4)) {
	case 0:
		return 0;
	case 1:
	case 2:
		return 1 + R(f, 8);
	default:
		return fz_value(&f->rng);
	}
}

/* An absolute CLOCK_MONOTONIC timeout that is never far away. */
static int64_t fz_timeout(struct fz *f)
{
	switch (R(f, 5)) {
	case 0:
		return 0;
	case 1:
		return -(int64_t)R(f, 1000000);
	case 2:
		return 1 + R(f, 1000);	/* long past */
	default:
		return megpu_now_ns() + R(f, 2000000);
	}
}

static void fz_add_fd(struct fz *f, int fd)
{
	int i = R(f, FZ_FDS);

	if (fd < 0)
		return;
	if (f->fds[i] >= 0)
		close(f->fds[i]);
	f->fds[i] = fd;
}

static int fz_pick_fd(struct fz *f)
{
	switch (R(f, 8)) {
	case 0:
		return -1;
	case 1:
		return f->cl[0].fd;	/* a DRM file, not a dma-buf */
	case 2:
		return 1000 + R(f, 100);	/* not open */
	default:
		return f->fds[R(f, FZ_FDS)];
	}
}

/* --- clients --- */

static int fz_gem_create(struct fz *f, int c, uint64_t size, uint32_t flags,
			 struct drm_megpu_gem_create *out)
{
	*out = (struct drm_megpu_gem_create){ .size = size, .flags = flags };
	return fz_ioctl(f, OP_GEM_CREATE, f->cl[c].fd,
			DRM_IOCTL_MEGPU_GEM_CREATE, out);
}

/* Open client @c with its home BO: an IB of NOPs that writes its BO. */
static int fz_client_open(struct fz *f, int c, const char *node)
{
	struct fz_client *cl = &f->cl[c];
	struct drm_megpu_gem_create gc;
	struct drm_megpu_gem_mmap_offset mo = { 0 };
	struct megpu_cs cs;
	void *map;
	int e;

	cl->fd = open(node, O_RDWR | O_CLOEXEC);
	if (cl->fd < 0)
		return -errno;
	e = fz_gem_create(f, c, 65536, 0, &gc);
	if (e)
		return -e;
	cl->home = gc.handle;
	cl->home_va = gc.va;
	mo.handle = gc.handle;
	e = fz_ioctl(f, OP_MMAP_OFFSET, cl->fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET,
		     &mo);
	if (e)
		return -e;
	map = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, cl->fd,
		   mo.offset);
	if (map == MAP_FAILED)
		return -errno;
	/* data written is 0, a NOP: an IB starting anywhere stays harmless */
	megpu_cs_init(&cs);
	megpu_cs_nop(&cs, 3);
	megpu_cs_write32(&cs, gc.va + 0x8000, 0);
	megpu_cs_nop(&cs, 1);
	cl->ib_bytes = megpu_cs_bytes(&cs);
	memcpy(map, cs.dw, cl->ib_bytes);
	megpu_cs_fini(&cs);
	munmap(map, 65536);
	return 0;
}

/* --- the calls --- */

static void fz_get_param(struct fz *f)
{
	struct drm_megpu_get_param p = { 0 };
	struct fz_client *cl = fz_client(f, NULL);
	int e;

	p.param = ONE_IN(f, 4) ? fz_next(&f->rng) : R(f, 20);
	p.pad = ONE_IN(f, 8) ? fz_next(&f->rng) | 1 : 0;
	e = fz_ioctl(f, OP_GET_PARAM, cl->fd, DRM_IOCTL_MEGPU_GET_PARAM, &p);
	if (p.pad && !e)
		fz_fail(f, "GET_PARAM took a non-zero pad", e, 0);
	if (!p.pad && p.param == DRM_MEGPU_PARAM_ENGINE_COUNT &&
	    (e || p.value != f->engines))
		fz_fail(f, "GET_PARAM ENGINE_COUNT", p.value, f->engines);
}

static uint64_t fz_bo_size(struct fz *f)
{
	static const uint64_t sz[] = {
		0, 1, 4095, 4096, 4097, 1ull << 30, (1ull << 30) + 1,
		(1ull << 30) + 4096, ~0ull, ~0ull - 4095, 1ull << 63,
		(1ull << 32), (1ull << 32) + 1,
	};

	switch (R(f, 16)) {
	case 0:
		return sz[R(f, sizeof(sz) / sizeof(sz[0]))];
	case 1:
		return fz_value(&f->rng);
	case 2:	/* big but allowed: pins and maps a few MiB */
		return ONE_IN(f, 4) ? (1 + R(f, 4)) << 20 : 1 + R(f, 65536);
	default:
		return 1 + R(f, 65536);
	}
}

static void fz_op_gem_create(struct fz *f)
{
	struct drm_megpu_gem_create c;
	int ci, e, i;
	uint64_t size = fz_bo_size(f);
	uint32_t flags = ONE_IN(f, 4) ? R(f, 2) : 0;

	fz_client(f, &ci);
	if (ONE_IN(f, 10))
		flags = fz_next(&f->rng);
	e = fz_gem_create(f, ci, size, flags, &c);
	if (ONE_IN(f, 10)) {	/* the pad, separately */
		c = (struct drm_megpu_gem_create){ .size = 4096,
						   .pad = fz_value(&f->rng) | 1 };
		if (!fz_ioctl(f, OP_GEM_CREATE, f->cl[ci].fd,
			      DRM_IOCTL_MEGPU_GEM_CREATE, &c))
			fz_fail(f, "GEM_CREATE took a non-zero pad", 0, 0);
		return;
	}
	if (e) {
		if (!size || size > (1ull << 30) ||
		    (flags & ~DRM_MEGPU_GEM_CREATE_FLAGS))
			return;
		if (e == EINVAL)
			fz_fail(f, "GEM_CREATE refused a valid size",
				size, e);
		return;
	}
	if (!size || size > (1ull << 30) ||
	    (flags & ~DRM_MEGPU_GEM_CREATE_FLAGS))
		fz_fail(f, "GEM_CREATE took a bad size or flags", size, flags);
	if (c.va & 4095 || c.va + size > MEGPU_VA_SIZE)
		fz_fail(f, "GEM_CREATE: va", c.va, size);
	/*
	 * Keep it, closing what it replaces now and then, but never the home
	 * BO: a PRIME import of its own dma-buf gives the home handle back,
	 * and once closed, the next GEM_CREATE takes the same handle number
	 * for another BO, so valid jobs would fail with EINVAL (no IB).
	 */
	i = R(f, FZ_BOS);
	if (f->bo[i].live && f->bo[i].c == ci &&
	    f->bo[i].handle != f->cl[ci].home && ONE_IN(f, 2)) {
		struct drm_gem_close gcl = { .handle = f->bo[i].handle };

		if (!fz_ioctl(f, OP_GEM_CLOSE, f->cl[ci].fd,
			      DRM_IOCTL_GEM_CLOSE, &gcl))
			fz_bo_closed(f, ci, gcl.handle);
	}
	f->bo[i] = (struct fz_bo){
		.c = ci, .handle = c.handle, .va = c.va,
		.size = (size + 4095) & ~4095ull, .live = true,
	};
}

static void fz_mmap_offset(struct fz *f)
{
	struct drm_megpu_gem_mmap_offset a = { 0 };
	struct fz_client *cl;
	int ci;

	cl = fz_client(f, &ci);
	a.handle = fz_bo_handle(f, ci, NULL);
	a.pad = ONE_IN(f, 8) ? fz_next(&f->rng) | 1 : 0;
	fz_ioctl(f, OP_MMAP_OFFSET, cl->fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET,
		 &a);
}

static void fz_gem_info(struct fz *f)
{
	struct drm_megpu_gem_info a = { 0 };
	struct fz_client *cl;
	struct fz_bo *bo;
	int ci, e;

	cl = fz_client(f, &ci);
	a.handle = fz_bo_handle(f, ci, &bo);
	a.pad = ONE_IN(f, 8) ? fz_next(&f->rng) | 1 : 0;
	e = fz_ioctl(f, OP_GEM_INFO, cl->fd, DRM_IOCTL_MEGPU_GEM_INFO, &a);
	/* the shared file's handles are other processes' to close */
	if (bo && ci && !a.pad && (e || a.va != bo->va || a.size != bo->size))
		fz_fail(f, "GEM_INFO of a live BO", e, (long)a.size);
}

static void fz_gem_wait(struct fz *f)
{
	struct drm_megpu_gem_wait a = { 0 };
	struct fz_client *cl;
	int ci;

	cl = fz_client(f, &ci);
	a.handle = ONE_IN(f, 3) ? cl->home : fz_bo_handle(f, ci, NULL);
	a.pad = ONE_IN(f, 8) ? fz_next(&f->rng) | 1 : 0;
	/* our jobs all end soon, so even "forever" returns */
	a.timeout_ns = ONE_IN(f, 20) ? INT64_MAX : fz_timeout(f);
	fz_ioctl(f, OP_GEM_WAIT, cl->fd, DRM_IOCTL_MEGPU_GEM_WAIT, &a);
}

/* Do two of the handles name one BO? (one mapping: the same address) */
static bool fz_bos_alias(struct fz *f, int fd,
			 const struct drm_megpu_bo_ref *bos, unsigned int n)
{
	uint64_t va[DRM_MEGPU_MAX_BOS + 1];

	for (unsigned int i = 0; i < n && i <= DRM_MEGPU_MAX_BOS; i++) {
		struct drm_megpu_gem_info gi = { .handle = bos[i].handle };

		if (fz_ioctl(f, OP_GEM_INFO, fd, DRM_IOCTL_MEGPU_GEM_INFO, &gi))
			return false;
		va[i] = gi.va;
		for (unsigned int j = 0; j < i; j++)
			if (va[j] == va[i])
				return true;
	}
	return false;
}

/*
 * Is one of @bos listed as written one the GPU may only read (SUBMIT:
 * EACCES)? GEM_INFO says, as its flags.
 */
static bool fz_bos_read_only(struct fz *f, int fd,
			     const struct drm_megpu_bo_ref *bos, unsigned int n)
{
	for (unsigned int i = 0; i < n && i <= DRM_MEGPU_MAX_BOS; i++) {
		struct drm_megpu_gem_info gi = { .handle = bos[i].handle };

		if ((bos[i].flags & DRM_MEGPU_BO_WRITE) &&
		    !fz_ioctl(f, OP_GEM_INFO, fd, DRM_IOCTL_MEGPU_GEM_INFO,
			      &gi) &&
		    (gi.flags & DRM_MEGPU_GEM_CREATE_READ_ONLY))
			return true;
	}
	return false;
}

static void fz_submit(struct fz *f)
{
	struct drm_megpu_submit s = { 0 };
	struct drm_megpu_ext_out_syncs ext;
	struct drm_megpu_sync ext_syncs[1];
	struct drm_megpu_bo_ref *bos;
	struct drm_megpu_sync *in;
	struct fz_client *cl;
	struct fz_sync *out;
	unsigned int nbo, nin, i, j, breaks;
	int ci, e;

	cl = fz_client(f, &ci);
	nbo = 1 + R(f, 4);
	nin = R(f, 3);
	bos = fz_arena(f, (DRM_MEGPU_MAX_BOS + 1) * sizeof(*bos));
	in = (void *)(f->arena + ARENA_BYTES -
		      (DRM_MEGPU_MAX_SYNCS + 1) * sizeof(*in));
	if ((uint8_t *)bos + (DRM_MEGPU_MAX_BOS + 1) * sizeof(*bos) >
	    (uint8_t *)in)
		bos = (void *)f->arena;
	bos[0] = (struct drm_megpu_bo_ref){
		.handle = cl->home, .flags = DRM_MEGPU_BO_READ |
		DRM_MEGPU_BO_WRITE,
	};
	for (i = 1; i < nbo; i++) {
		struct fz_bo *bo = &f->bo[R(f, FZ_BOS)];

		bos[i].handle = bo->c == ci && bo->live ? bo->handle : 0;
		bos[i].flags = 1 + R(f, 3);
		if (!bos[i].handle || bos[i].handle == cl->home) {
			bos[i--] = bos[--nbo];	/* drop it */
			continue;
		}
		for (j = 0; j < i; j++)
			if (bos[j].handle == bos[i].handle)
				break;
		if (j < i)	/* listed already */
			bos[i--] = bos[--nbo];
	}
	for (i = 0; i < nin; i++) {
		struct fz_sync *y = &f->sync[R(f, FZ_SYNCS)];

		in[i] = (struct drm_megpu_sync){ .handle = y->handle };
		if (!y->handle || y->c != ci || !y->live || !y->fenced)
			in[i--] = in[--nin];
	}
	out = &f->sync[R(f, FZ_SYNCS)];
	s = (struct drm_megpu_submit){
		.engine = R(f, f->engines),
		.flags = R(f, 3),
		.ib_va = cl->home_va,
		.ib_size = cl->ib_bytes,
		.bo_count = nbo,
		.bos = (uintptr_t)bos,
		.in_syncs = (uintptr_t)in,
		.in_sync_count = nin,
		.out_sync = { .handle = out->c == ci && out->live ?
			      out->handle : 0 },
	};
	/* now break some of it; a fifth stay valid (jobs cost time) */
	breaks = R(f, 5) ? 1 + R(f, 3) : 0;
	for (i = 0; i < breaks; i++) {
		switch (R(f, 23)) {
		case 0:
			s.engine = R(f, 3) ? f->engines + R(f, 16) :
				   fz_next(&f->rng);
			break;
		case 1:
			s.flags = R(f, 2) ? fz_next(&f->rng) : 1u << R(f, 32);
			break;
		case 2:
			s.pad = fz_value(&f->rng);
			break;
		case 3:		/* somewhere else in or near the BO */
			s.ib_va = cl->home_va + (int64_t)(R(f, 131072) - 65536);
			break;
		case 4:		/* unaligned, overflowing */
			s.ib_va = R(f, 2) ? s.ib_va + 1 + R(f, 3) :
				  fz_value(&f->rng);
			break;
		case 5:
			s.ib_size = R(f, 2) ? fz_value(&f->rng) :
				    MEGPU_IB_MAX_DWORDS * 4 + 4 * R(f, 2);
			break;
		case 6:
			s.ib_size = R(f, 65536 + 8) & ~(R(f, 2) ? 3u : 0u);
			break;
		case 7:
			s.bo_count = R(f, 2) ? DRM_MEGPU_MAX_BOS + R(f, 2) :
				     fz_value(&f->rng);
			for (j = nbo; j < DRM_MEGPU_MAX_BOS + 1; j++)
				bos[j] = bos[R(f, nbo)];
			break;
		case 8:
			s.bos = fz_bad_ptr(f, nbo * sizeof(*bos));
			break;
		case 9:
			s.in_sync_count = R(f, 2) ?
					  DRM_MEGPU_MAX_SYNCS + R(f, 2) :
					  fz_value(&f->rng);
			break;
		case 10:
			s.in_syncs = fz_bad_ptr(f, nin * sizeof(*in));
			s.in_sync_count = nin ?: 1;
			break;
		case 11:
			s.out_sync.handle = fz_sync_handle(f, NULL);
			s.out_sync.point = fz_point(f);
			break;
		case 12:
			s.out_sync.pad = fz_value(&f->rng);
			break;
		case 13:	/* a BO of someone, or nobody */
			bos[R(f, nbo)].handle = fz_bo_handle(f, ci, NULL);
			break;
		case 14:
			bos[R(f, nbo)].flags = R(f, 2) ? 0 : fz_next(&f->rng);
			break;
		case 15:	/* listed twice */
			if (nbo < DRM_MEGPU_MAX_BOS) {
				bos[nbo] = bos[R(f, nbo)];
				s.bo_count = ++nbo;
			}
			break;
		case 16:
			if (nin < DRM_MEGPU_MAX_SYNCS) {
				in[nin] = (struct drm_megpu_sync){
					.handle = fz_sync_handle(f, NULL),
					.point = fz_point(f),
					.pad = ONE_IN(f, 4),
				};
				s.in_sync_count = ++nin;
			}
			break;
		case 17:	/* the IB in a BO not listed */
			if (nbo) {
				bos[0] = bos[--nbo];
				s.bo_count = nbo;
			}
			break;
		case 18:
			s.bo_count = 0;
			break;
		case 19:	/* overflow of va + size */
			s.ib_va = ~0ull - R(f, 64) * 4;
			s.ib_size = 4 + R(f, 64) * 4;
			break;
		case 20:	/* the whole BO, or past its end */
			s.ib_size = 65536 + (R(f, 2) ? 4 : 0);
			break;
		case 21:	/* an extension chain: bad, looping, foreign */
			ext.base = (struct drm_megpu_extension){
				.next = R(f, 2) ? 0 : R(f, 2) ?
					(uintptr_t)&ext : fz_bad_ptr(f, 16),
				.id = R(f, 2) ? DRM_MEGPU_EXT_ID_OUT_SYNCS :
				      fz_value(&f->rng),
				.flags = ONE_IN(f, 4) ? fz_value(&f->rng) : 0,
			};
			ext_syncs[0] = (struct drm_megpu_sync){
				.handle = fz_sync_handle(f, NULL),
				.point = fz_point(f),
				.pad = ONE_IN(f, 4),
			};
			ext.syncs = R(f, 4) ? (uintptr_t)ext_syncs :
				    fz_bad_ptr(f, sizeof(ext_syncs));
			ext.count = R(f, 4) ? 1 : fz_value(&f->rng);
			ext.pad = ONE_IN(f, 4) ? fz_value(&f->rng) : 0;
			s.extensions = R(f, 4) ? (uintptr_t)&ext :
				       fz_bad_ptr(f, sizeof(ext));
			break;
		default:	/* a timeline point for the out-sync */
			s.out_sync.point = fz_point(f);
			break;
		}
	}
	e = fz_ioctl(f, OP_SUBMIT, cl->fd, DRM_IOCTL_MEGPU_SUBMIT, &s);
	/*
	 * Two handles of one BO (PRIME, flink) are a BO listed twice; a BO
	 * the GPU may only read cannot be written. Client 0's handles are
	 * every process's: another may have closed or replaced one between
	 * the SUBMIT and the look, so for it the look cannot judge.
	 */
	if (!breaks && e == EINVAL &&
	    (!ci || fz_bos_alias(f, cl->fd, bos, nbo)))
		e = 0;
	if (!breaks && e == EACCES &&
	    (!ci || fz_bos_read_only(f, cl->fd, bos, nbo)))
		e = 0;
	if (!breaks && e && e != ENOENT && e != EIO && e != ENOMEM)
		fz_fail(f, "a valid SUBMIT failed", e, s.engine);
	if (!e && s.out_sync.handle == out->handle && out->c == ci)
		out->fenced = true;
}

static void fz_flush(struct fz *f)
{
	struct drm_megpu_flush a = { 0 };

	if (ONE_IN(f, 2))
		a.flags = fz_value(&f->rng);
	if (ONE_IN(f, 2))
		a.pad = fz_value(&f->rng);
	fz_ioctl(f, OP_FLUSH, fz_client(f, NULL)->fd, DRM_IOCTL_MEGPU_FLUSH,
		 &a);
}

static void fz_syscall_wait(struct fz *f)
{
	struct drm_megpu_syscall_wait a = { 0 };
	uint32_t n = R(f, 8);

	a.calls = R(f, 4) ? (uintptr_t)fz_arena(f, n * 24) :
		  fz_bad_ptr(f, n * 24);
	a.count = ONE_IN(f, 4) ? fz_value(&f->rng) : n;
	a.flags = ONE_IN(f, 6) ? fz_value(&f->rng) : 0;
	/* no job of ours makes calls: a long timeout would just sleep */
	a.timeout_ns = fz_timeout(f);
	fz_ioctl(f, OP_SYSCALL_WAIT, fz_client(f, NULL)->fd,
		 DRM_IOCTL_MEGPU_SYSCALL_WAIT, &a);
}

static void fz_syscall_return(struct fz *f)
{
	struct drm_megpu_syscall_return a = {
		.ret = fz_next(&f->rng),
		.slot = R(f, 2) ? R(f, 64) : fz_next(&f->rng),
		.caller = R(f, 2) ? R(f, 256) : fz_next(&f->rng),
		.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0,
		.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0,
	};

	fz_ioctl(f, OP_SYSCALL_RETURN, fz_client(f, NULL)->fd,
		 DRM_IOCTL_MEGPU_SYSCALL_RETURN, &a);
}

static void fz_msem_query(struct fz *f)
{
	struct drm_megpu_msem_query a = { 0 };
	int ci;
	struct fz_client *cl = fz_client(f, &ci);

	a.handle = ONE_IN(f, 3) ? cl->home : fz_bo_handle(f, ci, NULL);
	a.mask = R(f, 2) ? 1 + R(f, 15) : fz_next(&f->rng);
	a.offset = R(f, 2) ? R(f, 16) * 4 : fz_value(&f->rng);
	a.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
	fz_ioctl(f, OP_MSEM_QUERY, cl->fd, DRM_IOCTL_MEGPU_MSEM_QUERY, &a);
}

/* Seed 002's queue ioctls: check, notify, sleep, attach and detach. */
static void fz_taskq(struct fz *f)
{
	struct drm_megpu_taskq_queue q[3];
	struct drm_megpu_taskq_attach a = { 0 };
	struct drm_megpu_taskq_detach d = { 0 };
	struct drm_megpu_taskq_check c = { 0 };
	struct drm_megpu_taskq_notify n = { 0 };
	struct drm_megpu_taskq_wait w = { 0 };
	struct drm_megpu_taskq_sleep s = { 0 };
	int ci;
	struct fz_client *cl = fz_client(f, &ci);

	switch (R(f, 6)) {
	case 0:
		c.handle = fz_bo_handle(f, ci, NULL);
		c.slots = R(f, 2) ? 1u << R(f, 18) : fz_next(&f->rng);
		c.offset = R(f, 2) ? R(f, 8) * MEGPU_TQ_ALIGN :
			   fz_value(&f->rng);
		c.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		c.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_CHECK, &c);
		break;
	case 1:
		n.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		n.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_NOTIFY, &n);
		break;
	case 2:
		d.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		d.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_DETACH, &d);
		break;
	case 3:
		/* polls, or waits a little: the attachments here never end */
		w.timeout_ns = R(f, 2) ? 0 : megpu_now_ns() + R(f, 2000000);
		w.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_WAIT, &w);
		break;
	case 4:
		/* reads the release count, or sleeps a little on it */
		s.seq = R(f, 2) ? 0 : fz_next(&f->rng);
		s.timeout_ns = R(f, 2) ? 0 : megpu_now_ns() + R(f, 2000000);
		s.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : R(f, 2);
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_SLEEP, &s);
		break;
	default:
		/* random BOs as queues: the driver reads what is in them */
		for (int i = 0; i < 3; i++)
			q[i] = (struct drm_megpu_taskq_queue) {
				.handle = fz_bo_handle(f, ci, NULL),
				.slots = R(f, 2) ? 1u << R(f, 8) :
					 fz_next(&f->rng),
				.offset = R(f, 2) ? R(f, 4) * MEGPU_TQ_ALIGN :
					  fz_value(&f->rng),
			};
		a.queues = R(f, 8) ? (uintptr_t)q : fz_bad_ptr(f, sizeof(q));
		a.count = R(f, 4) ? 1 + R(f, 3) : fz_next(&f->rng);
		a.engines = R(f, 2) ? 1 + R(f, (1u << f->engines) - 1) :
			    fz_next(&f->rng);
		a.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		a.flags = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
		fz_ioctl(f, OP_TASKQ, cl->fd, DRM_IOCTL_MEGPU_TASKQ_ATTACH, &a);
		break;
	}
}

static void fz_gem_close(struct fz *f)
{
	struct drm_gem_close a = { 0 };
	struct fz_bo *bo = &f->bo[R(f, FZ_BOS)];
	int c = bo->handle ? bo->c : (int)R(f, FZ_CLIENTS);

	if (f->cl[c].fd < 0)
		return;
	a.handle = bo->handle && !ONE_IN(f, 8) ? bo->handle :
		   fz_random_handle(f);
	a.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
	/* never the home BO, which the valid jobs need */
	if (a.handle == f->cl[c].home)
		return;
	if (!fz_ioctl(f, OP_GEM_CLOSE, f->cl[c].fd, DRM_IOCTL_GEM_CLOSE, &a))
		fz_bo_closed(f, c, a.handle);	/* kept, as a stale handle */
}

static void fz_prime_export(struct fz *f)
{
	struct drm_prime_handle a = { 0 };
	int ci;
	struct fz_client *cl = fz_client(f, &ci);

	a.handle = fz_bo_handle(f, ci, NULL);
	a.flags = R(f, 4) ? (DRM_CLOEXEC | (R(f, 2) ? DRM_RDWR : 0)) :
		  fz_next(&f->rng);
	a.fd = R(f, 4) ? -1 : (int)fz_next(&f->rng);
	if (!fz_ioctl(f, OP_PRIME_EXPORT, cl->fd,
		      DRM_IOCTL_PRIME_HANDLE_TO_FD, &a))
		fz_add_fd(f, a.fd);
}

static void fz_prime_import(struct fz *f)
{
	struct drm_prime_handle a = { 0 };
	struct drm_megpu_gem_info gi = { 0 };
	int ci, i;
	struct fz_client *cl = fz_client(f, &ci);

	a.fd = fz_pick_fd(f);
	a.flags = ONE_IN(f, 4) ? fz_next(&f->rng) : 0;
	if (fz_ioctl(f, OP_PRIME_IMPORT, cl->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE,
		     &a))
		return;
	gi.handle = a.handle;
	if (fz_ioctl(f, OP_GEM_INFO, cl->fd, DRM_IOCTL_MEGPU_GEM_INFO, &gi))
		return;
	i = R(f, FZ_BOS);
	f->bo[i] = (struct fz_bo){
		.c = ci, .handle = a.handle, .va = gi.va, .size = gi.size,
		.live = true,
	};
}

static void fz_sync_create(struct fz *f)
{
	struct drm_syncobj_create a = { 0 };
	int ci, i;
	struct fz_client *cl = fz_client(f, &ci);

	a.flags = R(f, 6) ? R(f, 2) * DRM_SYNCOBJ_CREATE_SIGNALED :
		  fz_next(&f->rng);
	if (fz_ioctl(f, OP_SYNC_CREATE, cl->fd, DRM_IOCTL_SYNCOBJ_CREATE, &a))
		return;
	i = R(f, FZ_SYNCS);
	if (f->sync[i].live && f->sync[i].c == ci && ONE_IN(f, 2)) {
		struct drm_syncobj_destroy d = { .handle = f->sync[i].handle };

		fz_ioctl(f, OP_SYNC_DESTROY, cl->fd,
			 DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	}
	f->sync[i] = (struct fz_sync){
		.c = ci, .handle = a.handle, .live = true,
		.fenced = a.flags & DRM_SYNCOBJ_CREATE_SIGNALED,
	};
}

static void fz_sync_destroy(struct fz *f)
{
	struct drm_syncobj_destroy a = { 0 };
	struct fz_sync *y;
	int ci;
	struct fz_client *cl = fz_client(f, &ci);

	a.handle = fz_sync_handle(f, &y);
	a.pad = ONE_IN(f, 8) ? fz_value(&f->rng) : 0;
	if (!fz_ioctl(f, OP_SYNC_DESTROY, cl->fd, DRM_IOCTL_SYNCOBJ_DESTROY,
		      &a) && y && y->c == ci)
		y->live = false;
}

/* An array of @n syncobj handles (and points) in the arena, or bad. */
static uint64_t fz_sync_array(struct fz *f, uint32_t n, __u64 *points)
{
	uint32_t *h;
	uint64_t *p;
	uint32_t i;

	if (ONE_IN(f, 10))
		return fz_bad_ptr(f, n * 4);
	h = fz_arena(f, n * 4);
	for (i = 0; i < n; i++)
		h[i] = fz_sync_handle(f, NULL);
	if (points) {
		p = fz_arena(f, n * 8);
		if ((uint8_t *)p < (uint8_t *)(h + n) &&
		    (uint8_t *)(p + n) > (uint8_t *)h)
			p = (void *)f->arena;	/* overlapping is fine too */
		for (i = 0; i < n; i++)
			p[i] = fz_point(f);
		*points = ONE_IN(f, 10) ? fz_bad_ptr(f, n * 8) : (uintptr_t)p;
	}
	return (uintptr_t)h;
}

static uint32_t fz_sync_count(struct fz *f)
{
	if (ONE_IN(f, 16))
		return FZ_MAX_SYNC_ARRAY;
	return R(f, 6);
}

static void fz_sync_wait(struct fz *f, bool timeline)
{
	struct drm_syncobj_timeline_wait tw = { 0 };
	struct drm_syncobj_wait w = { 0 };
	uint32_t n = fz_sync_count(f), flags;
	int fd = fz_client(f, NULL)->fd;

	flags = R(f, 4) ? R(f, 16) : fz_next(&f->rng);
	if (timeline) {
		tw.count_handles = n;
		tw.handles = fz_sync_array(f, n, &tw.points);
		tw.timeout_nsec = fz_timeout(f);
		tw.flags = flags;
		tw.pad = ONE_IN(f, 8);
		fz_ioctl(f, OP_SYNC_TL_WAIT, fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
			 &tw);
	} else {
		w.count_handles = n;
		w.handles = fz_sync_array(f, n, NULL);
		w.timeout_nsec = fz_timeout(f);
		w.flags = flags;
		w.pad = ONE_IN(f, 8);
		fz_ioctl(f, OP_SYNC_WAIT, fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	}
}

static void fz_sync_array_op(struct fz *f, enum fz_op op)
{
	struct drm_syncobj_timeline_array ta = { 0 };
	struct drm_syncobj_array a = { 0 };
	uint32_t n = fz_sync_count(f);
	int fd = fz_client(f, NULL)->fd;

	if (op == OP_SYNC_RESET || op == OP_SYNC_SIGNAL) {
		a.count_handles = n;
		a.handles = fz_sync_array(f, n, NULL);
		a.pad = ONE_IN(f, 8);
		fz_ioctl(f, op, fd, op == OP_SYNC_RESET ?
			 DRM_IOCTL_SYNCOBJ_RESET : DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		return;
	}
	ta.count_handles = n;
	ta.handles = fz_sync_array(f, n, &ta.points);
	ta.flags = R(f, 4) ? R(f, 2) : fz_next(&f->rng);
	fz_ioctl(f, op, fd, op == OP_SYNC_QUERY ? DRM_IOCTL_SYNCOBJ_QUERY :
		 DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &ta);
}

static void fz_sync_transfer(struct fz *f)
{
	struct drm_syncobj_transfer a = {
		.src_handle = fz_sync_handle(f, NULL),
		.dst_handle = fz_sync_handle(f, NULL),
		.src_point = fz_point(f),
		.dst_point = fz_point(f),
		.flags = R(f, 4) ? R(f, 2) : fz_next(&f->rng),
		.pad = ONE_IN(f, 8),
	};

	fz_ioctl(f, OP_SYNC_TRANSFER, fz_client(f, NULL)->fd,
		 DRM_IOCTL_SYNCOBJ_TRANSFER, &a);
}

static void fz_sync_export(struct fz *f)
{
	struct drm_syncobj_handle a = {
		.handle = fz_sync_handle(f, NULL),
		.flags = R(f, 4) ? R(f, 2) : fz_next(&f->rng),
		.fd = -1,
		.pad = ONE_IN(f, 8),
	};

	if (!fz_ioctl(f, OP_SYNC_EXPORT, fz_client(f, NULL)->fd,
		      DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a))
		fz_add_fd(f, a.fd);
}

static void fz_sync_import(struct fz *f)
{
	struct drm_syncobj_handle a = {
		.flags = R(f, 4) ? R(f, 2) : fz_next(&f->rng),
		.fd = fz_pick_fd(f),
		.pad = ONE_IN(f, 8),
	};
	int ci, i;
	struct fz_client *cl = fz_client(f, &ci);

	if (a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE)
		a.handle = fz_sync_handle(f, NULL);
	if (fz_ioctl(f, OP_SYNC_IMPORT, cl->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE,
		     &a) || (a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE))
		return;
	i = R(f, FZ_SYNCS);
	f->sync[i] = (struct fz_sync){ .c = ci, .handle = a.handle,
				       .live = true };
}

static void fz_sync_eventfd(struct fz *f)
{
	struct drm_syncobj_eventfd a = {
		.handle = fz_sync_handle(f, NULL),
		.flags = R(f, 4) ? R(f, 2) : fz_next(&f->rng),
		.point = fz_point(f),
		.fd = fz_pick_fd(f),
		.pad = ONE_IN(f, 8),
	};

	fz_ioctl(f, OP_SYNC_EVENTFD, fz_client(f, NULL)->fd,
		 DRM_IOCTL_SYNCOBJ_EVENTFD, &a);
}

static void fz_get_cap(struct fz *f)
{
	struct drm_get_cap a = {
		.capability = R(f, 2) ? R(f, 0x20) : fz_next(&f->rng),
	};

	fz_ioctl(f, OP_GET_CAP, fz_client(f, NULL)->fd, DRM_IOCTL_GET_CAP, &a);
}

static void fz_set_client_cap(struct fz *f)
{
	struct drm_set_client_cap a = {
		.capability = R(f, 2) ? R(f, 8) : fz_next(&f->rng),
		.value = R(f, 2) ? R(f, 3) : fz_next(&f->rng),
	};

	fz_ioctl(f, OP_SET_CLIENT_CAP, fz_client(f, NULL)->fd,
		 DRM_IOCTL_SET_CLIENT_CAP, &a);
}

static void fz_version(struct fz *f)
{
	struct drm_version v = { 0 };
	char *buf = fz_arena(f, 64);

	v.name_len = R(f, 2) ? R(f, 65) : fz_next(&f->rng);
	v.name = R(f, 4) ? buf : (char *)(uintptr_t)fz_bad_ptr(f, 64);
	v.date_len = R(f, 65);
	v.date = R(f, 4) ? buf : (char *)(uintptr_t)fz_bad_ptr(f, 64);
	v.desc_len = R(f, 2) ? R(f, 65) : fz_next(&f->rng);
	v.desc = R(f, 4) ? buf : (char *)(uintptr_t)fz_bad_ptr(f, 64);
	fz_ioctl(f, OP_VERSION, fz_client(f, NULL)->fd, DRM_IOCTL_VERSION, &v);
}

/* flink (primary node only) and GEM_OPEN: a second handle, same BO. */
static void fz_flink_open(struct fz *f)
{
	struct drm_gem_flink fl = { 0 };
	struct drm_gem_open op = { 0 };
	int ci, i;
	struct fz_client *cl = fz_client(f, &ci);

	fl.handle = fz_bo_handle(f, ci, NULL);
	if (fz_ioctl(f, OP_FLINK_OPEN, cl->fd, DRM_IOCTL_GEM_FLINK, &fl))
		fl.name = R(f, 2) ? R(f, 16) : fz_next(&f->rng);
	op.name = fl.name;
	cl = fz_client(f, &ci);
	if (fz_ioctl(f, OP_FLINK_OPEN, cl->fd, DRM_IOCTL_GEM_OPEN, &op))
		return;
	i = R(f, FZ_BOS);
	f->bo[i] = (struct fz_bo){ .c = ci, .handle = op.handle,
				   .size = op.size, .live = false };
}

static void fz_mmap(struct fz *f)
{
	struct drm_megpu_gem_mmap_offset a = { 0 };
	struct fz_bo *bo;
	size_t len;
	int ci;
	struct fz_client *cl = fz_client(f, &ci);
	void *p;

	a.handle = fz_bo_handle(f, ci, &bo);
	if (fz_ioctl(f, OP_MMAP_OFFSET, cl->fd,
		     DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &a))
		return;
	len = bo && R(f, 2) ? bo->size : 4096 * (1 + R(f, 4));
	f->calls[OP_MMAP]++;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cl->fd,
		 a.offset + (ONE_IN(f, 4) ? 4096 * R(f, 4) : 0));
	if (p == MAP_FAILED)
		return;
	f->oks[OP_MMAP]++;
	/* reading is always fine; the BO may be another's IB: no writes */
	(void)*(volatile uint8_t *)p;
	munmap(p, len);
}

/* Any driver ioctl number, any size and direction, random contents. */
static void fz_raw_driver(struct fz *f)
{
	uint32_t size = R(f, 2) ? R(f, 80) : R(f, 0x4000);
	uint32_t nr = DRM_COMMAND_BASE + R(f, 0x20);
	uint8_t *buf = fz_arena(f, size);
	unsigned long req;
	uint32_t i;

	size = size > ARENA_BYTES ? ARENA_BYTES : size;
	for (i = 0; i < size; i++)
		buf[i] = R(f, 4) ? 0 : fz_next(&f->rng);
	/* SYSCALL_WAIT sleeps until its timeout: make that "poll" */
	if (nr == DRM_COMMAND_BASE + DRM_MEGPU_SYSCALL_WAIT && size >= 16)
		memset(buf + 8, 0, 8);
	/* BOs of at most 16 MiB: pinning big ones is GEM_CREATE's part */
	if (nr == DRM_COMMAND_BASE + DRM_MEGPU_GEM_CREATE && size >= 8)
		memset(buf + 3, 0, 5);
	/* and GEM_WAIT's, bounded by our short jobs, stays short too */
	if (nr == DRM_COMMAND_BASE + DRM_MEGPU_GEM_WAIT && size >= 16)
		memset(buf + 8, 0, 8);
	req = _IOC(R(f, 4), DRM_IOCTL_BASE, nr, size);
	fz_ioctl(f, OP_RAW_DRIVER, fz_client(f, NULL)->fd, req, buf);
}

/*
 * Any generic DRM ioctl number with zeroed arguments: random contents
 * would reach the syncobj array ioctls with huge counts (see
 * FZ_MAX_SYNC_ARRAY), and the structured ops above cover those.
 */
static void fz_raw_generic(struct fz *f)
{
	uint32_t size = R(f, 128);
	uint8_t *buf = fz_arena(f, size);

	memset(buf, 0, size);
	fz_ioctl(f, OP_RAW_GENERIC, fz_client(f, NULL)->fd,
		 _IOC(R(f, 4), DRM_IOCTL_BASE, R(f, DRM_COMMAND_BASE),
		      size), buf);
}

/* The argument struct itself at a bad address, for every megpu ioctl. */
static void fz_bad_arg(struct fz *f)
{
	static const unsigned long nrs[] = {
		DRM_IOCTL_MEGPU_GET_PARAM, DRM_IOCTL_MEGPU_GEM_CREATE,
		DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, DRM_IOCTL_MEGPU_GEM_INFO,
		DRM_IOCTL_MEGPU_GEM_WAIT, DRM_IOCTL_MEGPU_SUBMIT,
		DRM_IOCTL_MEGPU_FLUSH, DRM_IOCTL_MEGPU_SYSCALL_WAIT,
		DRM_IOCTL_MEGPU_SYSCALL_RETURN, DRM_IOCTL_MEGPU_MSEM_QUERY,
		DRM_IOCTL_MEGPU_TASKQ_CHECK, DRM_IOCTL_MEGPU_TASKQ_NOTIFY,
		DRM_IOCTL_MEGPU_TASKQ_ATTACH, DRM_IOCTL_MEGPU_TASKQ_SLEEP,
		DRM_IOCTL_MEGPU_TASKQ_DETACH,
		DRM_IOCTL_GEM_CLOSE, DRM_IOCTL_PRIME_HANDLE_TO_FD,
		DRM_IOCTL_SYNCOBJ_WAIT, DRM_IOCTL_SYNCOBJ_CREATE,
	};
	unsigned long nr = nrs[R(f, sizeof(nrs) / sizeof(nrs[0]))];

	fz_ioctl(f, OP_BAD_ARG, fz_client(f, NULL)->fd, nr,
		 (void *)(uintptr_t)fz_bad_ptr(f, _IOC_SIZE(nr)));
}

/* Close one of the process's own files (jobs in flight) and open it again. */
static void fz_reopen(struct fz *f)
{
	int c = 1 + R(f, FZ_CLIENTS - 1);
	const char *node = c == 2 && f->card[0] ? f->card : f->node;

	if (f->cl[c].fd < 0)
		return;
	f->calls[OP_REOPEN]++;
	close(f->cl[c].fd);
	f->cl[c].fd = -1;
	/* their handles are now stale: kept, to be tried on the new file */
	for (int i = 0; i < FZ_BOS; i++)
		if (f->bo[i].c == c)
			f->bo[i].live = false;
	for (int i = 0; i < FZ_SYNCS; i++)
		if (f->sync[i].c == c)
			f->sync[i].live = false;
	if (fz_client_open(f, c, node))
		fz_fail(f, "reopening a client failed", c, 0);
	else
		f->oks[OP_REOPEN]++;
}

static void fz_one(struct fz *f, unsigned int total_weight)
{
	unsigned int w = R(f, total_weight), op;

	for (op = 0; op < OP_COUNT; op++) {
		if (w < fz_weight[op])
			break;
		w -= fz_weight[op];
	}
	switch (op) {
	case OP_GET_PARAM: fz_get_param(f); break;
	case OP_GEM_CREATE: fz_op_gem_create(f); break;
	case OP_MMAP_OFFSET: fz_mmap_offset(f); break;
	case OP_GEM_INFO: fz_gem_info(f); break;
	case OP_GEM_WAIT: fz_gem_wait(f); break;
	case OP_SUBMIT: fz_submit(f); break;
	case OP_FLUSH: fz_flush(f); break;
	case OP_SYSCALL_WAIT: fz_syscall_wait(f); break;
	case OP_SYSCALL_RETURN: fz_syscall_return(f); break;
	case OP_MSEM_QUERY: fz_msem_query(f); break;
	case OP_TASKQ: fz_taskq(f); break;
	case OP_GEM_CLOSE: fz_gem_close(f); break;
	case OP_PRIME_EXPORT: fz_prime_export(f); break;
	case OP_PRIME_IMPORT: fz_prime_import(f); break;
	case OP_SYNC_CREATE: fz_sync_create(f); break;
	case OP_SYNC_DESTROY: fz_sync_destroy(f); break;
	case OP_SYNC_WAIT: fz_sync_wait(f, false); break;
	case OP_SYNC_TL_WAIT: fz_sync_wait(f, true); break;
	case OP_SYNC_RESET:
	case OP_SYNC_SIGNAL:
	case OP_SYNC_TL_SIGNAL:
	case OP_SYNC_QUERY: fz_sync_array_op(f, op); break;
	case OP_SYNC_TRANSFER: fz_sync_transfer(f); break;
	case OP_SYNC_EXPORT: fz_sync_export(f); break;
	case OP_SYNC_IMPORT: fz_sync_import(f); break;
	case OP_SYNC_EVENTFD: fz_sync_eventfd(f); break;
	case OP_GET_CAP: fz_get_cap(f); break;
	case OP_SET_CLIENT_CAP: fz_set_client_cap(f); break;
	case OP_VERSION: fz_version(f); break;
	case OP_FLINK_OPEN: fz_flink_open(f); break;
	case OP_MMAP: fz_mmap(f); break;
	case OP_RAW_DRIVER: fz_raw_driver(f); break;
	case OP_RAW_GENERIC: fz_raw_generic(f); break;
	default: fz_bad_arg(f); break;
	}
}

/* The megpu primary node (/dev/dri/cardN) of the same device, if any. */
static void fz_find_card(struct fz *f)
{
	char path[64];
	int i, fd;

	f->card[0] = '\0';
	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (mt_drm_is(fd, "megpu")) {
			snprintf(f->card, sizeof(f->card), "%s", path);
			close(fd);
			return;
		}
		close(fd);
	}
}

/* One fuzzing process: returns its exit status. */
static int fz_process(struct fz *f, unsigned long ncalls)
{
	unsigned int total = 0, op;
	int c;

	for (op = 0; op < OP_COUNT; op++)
		total += fz_weight[op];
	f->arena = mmap(NULL, ARENA_BYTES + 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->arena == MAP_FAILED ||
	    mprotect(f->arena + ARENA_BYTES, 4096, PROT_NONE))
		return 2;
	for (c = 1; c < FZ_CLIENTS; c++)
		if (fz_client_open(f, c, c == 2 && f->card[0] ? f->card :
				   f->node)) {
			fz_fail(f, "opening a client failed", c, 0);
			return 1;
		}
	for (f->call = 0; f->call < ncalls && !f->failed; f->call++) {
		if (ONE_IN(f, 2000))
			fz_reopen(f);
		else
			fz_one(f, total);
	}
	if (f->failed)
		return 1;
	/* half of them clean up, the others leave it all to close() */
	if (f->proc & 1) {
		for (c = 0; c < FZ_BOS; c++)
			if (f->bo[c].live && f->cl[f->bo[c].c].fd >= 0) {
				struct drm_gem_close gc = {
					.handle = f->bo[c].handle,
				};

				ioctl(f->cl[f->bo[c].c].fd, DRM_IOCTL_GEM_CLOSE,
				      &gc);
			}
	}
	for (op = 0; op < OP_COUNT; op++)
		if (f->calls[op])
			printf("# process %u: %-24s %7lu calls %7lu ok %7.2f s\n",
			       f->proc, fz_op_names[op], f->calls[op],
			       f->oks[op], f->ns[op] / 1e9);
	fflush(stdout);
	return 0;
}

FIXTURE(fuzz) {
	struct mt t;
};

FIXTURE_SETUP(fuzz)
{
	ASSERT_EQ(0, mt_open(&self->t));
}

FIXTURE_TEARDOWN(fuzz)
{
	mt_close(&self->t);
}

/* Every engine runs a known-good job that writes what it should. */
static int fz_engines_work(struct mt *t)
{
	struct megpu_bo *bo;
	unsigned int e;
	int ret = mt_bo(&t->gpu, 4096, 0, &bo);

	for (e = 0; !ret && e < t->engines; e++)
		ret = mt_probe_engine(t, e, bo, e * 4, 0x600d0000 + e);
	megpu_bo_free(bo);
	return ret;
}

TEST_F_TIMEOUT(fuzz, ioctls, 1200)
{
	unsigned long ncalls = FZ_CALLS * (fz_long ? 10 : 1);
	uint64_t base[MT_COUNTERS], now[MT_COUNTERS];
	int64_t start = megpu_now_ns();
	pid_t pids[FZ_PROCS];
	struct fz shared;
	unsigned int i;
	int status, fails = 0;

	ASSERT_EQ(0, mt_counters(&self->t.gpu, base));
	memset(&shared, 0, sizeof(shared));
	shared.engines = self->t.engines;
	snprintf(shared.node, sizeof(shared.node), "%s", self->t.gpu.node);
	fz_find_card(&shared);
	for (i = 0; i < FZ_FDS; i++)
		shared.fds[i] = -1;
	for (i = 0; i < FZ_CLIENTS; i++)
		shared.cl[i].fd = -1;
	/* client 0 is one file shared by every process */
	ASSERT_EQ(0, fz_client_open(&shared, 0, shared.node));
	TH_LOG("%u processes x %lu calls, seed 0x%llx, primary node %s",
	       FZ_PROCS, ncalls, (unsigned long long)fz_seed,
	       shared.card[0] ? shared.card : "none");
	for (i = 0; i < FZ_PROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			struct fz *f = malloc(sizeof(*f));

			if (!f)
				_exit(2);
			*f = shared;
			f->proc = i;
			f->rng = fz_seed * 0x100000001b3ull + i;
			_exit(fz_process(f, ncalls));
		}
	}
	for (i = 0; i < FZ_PROCS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("process %u: status 0x%x (seed 0x%llx)", i,
			       status, (unsigned long long)fz_seed);
			fails++;
		}
	}
	close(shared.cl[0].fd);
	TH_LOG("%lu calls in %.1f s", ncalls * FZ_PROCS,
	       (megpu_now_ns() - start) / 1e9);
	EXPECT_EQ(0, fails) TH_LOG("seed 0x%llx", (unsigned long long)fz_seed);

	/* the device still works, and nothing of the fuzzers is left */
	EXPECT_EQ(0, fz_engines_work(&self->t))
		TH_LOG("seed 0x%llx", (unsigned long long)fz_seed);
	EXPECT_EQ(0, mt_counters_settle(&self->t.gpu, base, now, 60000))
		TH_LOG("counters bos %llu jobs %llu vms %llu, were %llu %llu "
		       "%llu (seed 0x%llx)", (unsigned long long)now[0],
		       (unsigned long long)now[1], (unsigned long long)now[2],
		       (unsigned long long)base[0], (unsigned long long)base[1],
		       (unsigned long long)base[2],
		       (unsigned long long)fz_seed);
}

FZ_HARNESS_MAIN
