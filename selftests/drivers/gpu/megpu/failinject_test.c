// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures on every path a client reaches (issue 13's fault
 * injection; the test of issue 15 item 1): BO creation, PRIME import
 * (from vgem, and from another megpu file), SUBMIT with syncobjs and a
 * BO list (and its out-sync extension), opening and closing the render
 * node, attaching the driver's task-queue dequeuer, waiting for system
 * calls.
 *
 * Not swept, because the kernel's own code cannot take it (the failure
 * is not the driver's): the probe (6.12's drm_dev_init() error path puts
 * an ERR_PTR device when its minor's allocation fails: a general
 * protection fault in drm_minor_alloc_release(); the probe's own error
 * paths are tested with inject_probe_failure, hotunplug_test), and
 * MSEM_QUERY on an imported BO (dma_buf_vmap() WARNs when the exporter's
 * vmap fails for want of memory).
 *
 * The sweep: for N = 1, 2, ... the Nth allocation the operation makes
 * fails (/proc/thread-self/fail-nth, counting the failslab and
 * fail_page_alloc sites, GFP_KERNEL and highmem pages included) until
 * the operation needs fewer than N. Every failure must come back as an
 * errno and leave nothing behind: after the sweeps the driver's live
 * object counters (debugfs "counters") are back at their values before
 * it, the resource list (debugfs "resources", which walks every BO the
 * device knows) reads cleanly, every BO still works, and kmemleak finds
 * nothing of the driver's. A random mode then fails a share of this
 * process's allocations (task-filter, /proc/self/make-it-fail) over a
 * mixed workload.
 *
 * Needs a kernel with CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (make check-debug's); skips on others.
 */

#include <sys/mman.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define FI_ROOT "/sys/kernel/debug/"
#define FI_NTH "/proc/thread-self/fail-nth"
#define FI_KMEMLEAK FI_ROOT "kmemleak"
/* A sweep that has not finished by then has run away. */
#define FI_MAX_N 5000

/* The knobs this test sets, and their values before it. */
static const char *const fi_knobs[] = {
	"failslab/verbose", "failslab/ignore-gfp-wait",
	"failslab/probability", "failslab/interval", "failslab/times",
	"failslab/task-filter",
	"fail_page_alloc/verbose", "fail_page_alloc/ignore-gfp-wait",
	"fail_page_alloc/ignore-gfp-highmem", "fail_page_alloc/min-order",
	"fail_page_alloc/probability", "fail_page_alloc/interval",
	"fail_page_alloc/times", "fail_page_alloc/task-filter",
};
#define FI_KNOBS (sizeof(fi_knobs) / sizeof(fi_knobs[0]))

static int fi_write(const char *rel, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%s", rel[0] == '/' ? "" : FI_ROOT,
		 rel);
	return mt_write_file(path, val);
}

static int fi_read(const char *rel, char *buf, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), FI_ROOT "%s", rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Both attributes quiet, counting sleeping and highmem allocations. */
static int fi_configure(void)
{
	static const char *const set[][2] = {
		{ "failslab/verbose", "0" },
		{ "failslab/ignore-gfp-wait", "N" },
		{ "failslab/probability", "0" },
		{ "failslab/interval", "1" },
		{ "failslab/times", "-1" },
		{ "failslab/task-filter", "Y" },
		{ "fail_page_alloc/verbose", "0" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "fail_page_alloc/min-order", "0" },
		{ "fail_page_alloc/probability", "0" },
		{ "fail_page_alloc/interval", "1" },
		{ "fail_page_alloc/times", "-1" },
		{ "fail_page_alloc/task-filter", "Y" },
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		ret = fi_write(set[i][0], set[i][1]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Arm fail-nth: the @n-th allocation from now on of this thread fails. */
static int fi_nth_arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

/* Was the armed failure injected (the count ran down to 0)? */
static bool fi_nth_fired(int fd)
{
	char buf[16] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	bool fired = n > 0 && strtoul(buf, NULL, 10) == 0;

	pwrite(fd, "0", 1, 0);	/* disarm */
	return fired;
}

/* An operation of a sweep: run (injected), then clean up (not). */
struct fi_op {
	const char *name;
	int (*run)(void *ctx);
	void (*cleanup)(void *ctx, int ret);
	/* before each run, not injected; may be NULL */
	int (*prepare)(void *ctx);
};

/* The errnos an allocation failure may legitimately surface as. */
static bool fi_errno_ok(int ret)
{
	return ret == -ENOMEM || ret == -ENOSPC || ret == -EFAULT ||
	       ret == -ENFILE || ret == -EMFILE || ret == -EAGAIN ||
	       ret == -EINTR;
}

FIXTURE(fi) {
	struct mt t;
	int nth;
	int make_it_fail;	/* /proc/self/make-it-fail, kept open */
	char saved[FI_KNOBS][32];
	uint64_t base[MT_COUNTERS];
	uint64_t pinned;
	int vgem;
};

/*
 * Pinned bytes but page tables: an address space keeps the tables it
 * grew until it ends (the "vms" counter covers those).
 */
static uint64_t fi_pinned(struct __test_metadata *_metadata, struct mt *t)
{
	uint64_t pinned = 0, pt = 0;

	EXPECT_EQ(0, megpu_debugfs_counter(&t->gpu, "pinned_bytes", &pinned));
	EXPECT_EQ(0, megpu_debugfs_counter(&t->gpu, "page_table_bytes", &pt));
	return pinned - pt;
}

FIXTURE_SETUP(fi)
{
	unsigned int i;

	self->nth = -1;
	self->make_it_fail = -1;
	self->vgem = -1;
	if (access(FI_ROOT "failslab", F_OK) ||
	    access(FI_ROOT "fail_page_alloc", F_OK))
		SKIP(return,
		     "no %sfailslab or fail_page_alloc: the kernel lacks CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC or CONFIG_FAULT_INJECTION_DEBUG_FS (run make check-debug)",
		     FI_ROOT);
	for (i = 0; i < FI_KNOBS; i++)
		ASSERT_EQ(0, fi_read(fi_knobs[i], self->saved[i],
				     sizeof(self->saved[i])));
	self->nth = open(FI_NTH, O_RDWR);
	ASSERT_LE(0, self->nth) TH_LOG("%s: %s", FI_NTH, strerror(errno));
	/*
	 * Written without opening it again: an open could fail under
	 * injection and leave the process failing.
	 */
	self->make_it_fail = open("/proc/self/make-it-fail", O_WRONLY);
	ASSERT_LE(0, self->make_it_fail);
	ASSERT_EQ(0, fi_configure());
	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_EQ(0, mt_counters(&self->t.gpu, self->base));
	self->pinned = fi_pinned(_metadata, &self->t);
	self->vgem = mt_vgem_open();
}

FIXTURE_TEARDOWN(fi)
{
	unsigned int i;

	if (self->nth < 0)
		return;
	if (self->make_it_fail >= 0) {
		pwrite(self->make_it_fail, "0", 1, 0);
		close(self->make_it_fail);
	}
	for (i = 0; i < FI_KNOBS; i++)
		fi_write(fi_knobs[i], self->saved[i]);
	close(self->nth);
	if (self->vgem >= 0)
		close(self->vgem);
	mt_close(&self->t);
}

/*
 * Sweep @op: fail its 1st, 2nd, ... allocation until it makes fewer.
 * Returns the number of injected failures; failed (a crash aside) when
 * an injected failure came back as a success with no effect or as an
 * errno an allocation failure cannot explain.
 */
static unsigned int fi_sweep(struct __test_metadata *_metadata, int nth,
			     const struct fi_op *op, void *ctx)
{
	unsigned int n, fired = 0, ok = 0, errs = 0;
	int ret;

	for (n = 1; n <= FI_MAX_N; n++) {
		if (op->prepare)
			ASSERT_EQ(0, op->prepare(ctx)) TH_LOG("%s: prepare",
							      op->name);
		ASSERT_EQ(0, fi_nth_arm(nth, n));
		ret = op->run(ctx);
		if (!fi_nth_fired(nth)) {
			/* fewer than n allocations: it must have worked */
			EXPECT_EQ(0, ret) TH_LOG("%s: %d without a failure",
						 op->name, ret);
			op->cleanup(ctx, ret);
			break;
		}
		fired++;
		if (ret)
			errs++;
		else
			ok++;
		EXPECT_TRUE(!ret || fi_errno_ok(ret))
			TH_LOG("%s: allocation %u failed: %s", op->name, n,
			       strerror(-ret));
		op->cleanup(ctx, ret);
	}
	EXPECT_GE(FI_MAX_N, n) TH_LOG("%s: more than %u allocations",
				      op->name, FI_MAX_N);
	TH_LOG("%s: %u allocations failed one at a time: %u errnos, %u recovered",
	       op->name, fired, errs, ok);
	return fired;
}

/* Everything back: counters, pinned bytes, the BO list, kmemleak. */
static void fi_expect_clean(struct __test_metadata *_metadata,
			    FIXTURE_DATA(fi) *self)
{
	uint64_t now[MT_COUNTERS], pinned = 0;
	unsigned int i;
	char *res;

	EXPECT_EQ(0, mt_counters_settle(&self->t.gpu, self->base, now,
					(int)(mt_job_ns(&self->t) / 1000000)));
	for (i = 0; i < MT_COUNTERS; i++) {
		const char *key = mt_counter_keys[i];

		EXPECT_EQ(self->base[i], now[i])
			TH_LOG("counter %s", key ? key : "?");
	}
	pinned = fi_pinned(_metadata, &self->t);
	EXPECT_EQ(self->pinned, pinned);
	/* walks every BO the device knows: a dangling one is a KASAN report */
	res = mt_debugfs(&self->t, "resources");
	EXPECT_NE(NULL, res);
	free(res);
}

/* --- the operations --- */

struct fi_ctx {
	struct mt *t;
	struct megpu *other;		/* a second file of the device */
	int vgem;
	uint32_t handle;		/* what run made */
	int dmabuf;
	int fd;
	/* submit */
	struct megpu_bo *bos[3];
	uint32_t in_sync, out_sync;
	struct megpu_job job;
	uint32_t value;
	uint32_t ext_sync;		/* 0: no out-sync extension */
	/* task queue */
	struct drm_megpu_taskq_queue tq;
};

static int gem_close(struct megpu *gpu, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return drmIoctl(gpu->fd, DRM_IOCTL_GEM_CLOSE, &c) ? -errno : 0;
}

static void gem_close_vgem(int vgem, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	drmIoctl(vgem, DRM_IOCTL_GEM_CLOSE, &c);
}

static int op_create_run(void *p)
{
	struct fi_ctx *c = p;
	struct drm_megpu_gem_create args = { .size = 64 * 1024 };

	if (drmIoctl(c->t->gpu.fd, DRM_IOCTL_MEGPU_GEM_CREATE, &args))
		return -errno;
	c->handle = args.handle;
	return 0;
}

static void op_create_cleanup(void *p, int ret)
{
	struct fi_ctx *c = p;

	if (!ret)
		gem_close(&c->t->gpu, c->handle);
}

/* Import c->dmabuf into c->other (a BO from vgem, or of another file). */
static int op_import_run(void *p)
{
	struct fi_ctx *c = p;

	return drmPrimeFDToHandle(c->other->fd, c->dmabuf, &c->handle) ?
	       -errno : 0;
}

static void op_import_cleanup(void *p, int ret)
{
	struct fi_ctx *c = p;

	if (!ret)
		gem_close(c->other, c->handle);
}

static int op_submit_prepare(void *p)
{
	struct fi_ctx *c = p;
	struct megpu_cs cs;
	unsigned int i;
	int ret = 0;

	megpu_job_init(&c->job, 0);
	for (i = 0; !ret && i < 3; i++)
		ret = megpu_job_add_bo(&c->job, c->bos[i], i ?
				       DRM_MEGPU_BO_READ :
				       DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE);
	ret = ret ?: megpu_job_wait_sync(&c->job, c->in_sync, 0);
	megpu_job_signal_sync(&c->job, c->out_sync, 0);
	if (c->ext_sync)
		ret = ret ?: megpu_job_add_signal_sync(&c->job, c->ext_sync, 0);
	c->value++;
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, c->bos[0]->va, c->value);
	ret = ret ?: megpu_job_upload(&c->t->gpu, &c->job, &cs);
	megpu_cs_fini(&cs);
	return ret;
}

static int op_submit_run(void *p)
{
	struct fi_ctx *c = p;

	return megpu_job_submit(&c->t->gpu, &c->job);
}

static void op_submit_cleanup(void *p, int ret)
{
	struct fi_ctx *c = p;

	if (!ret) {
		/* the job ran, with its write */
		if (megpu_syncobj_wait(&c->t->gpu, c->out_sync, 0,
				       mt_job_ns(c->t)) ||
		    megpu_fence_status(c->t->gpu.fd, c->out_sync, 0) ||
		    mt_u32(c->bos[0])[0] != c->value)
			c->value |= 0x80000000u;	/* seen by the test */
		/* and the extension's syncobj got the same fence */
		if (c->ext_sync &&
		    megpu_syncobj_wait(&c->t->gpu, c->ext_sync, 0,
				       mt_job_ns(c->t)))
			c->value |= 0x80000000u;
	}
	megpu_job_fini(&c->job);
}

static int op_open_run(void *p)
{
	struct fi_ctx *c = p;

	c->fd = open(c->t->gpu.node, O_RDWR | O_CLOEXEC);
	return c->fd < 0 ? -errno : 0;
}

static void op_open_cleanup(void *p, int ret)
{
	struct fi_ctx *c = p;

	if (!ret)
		close(c->fd);
}

/* A file with BOs, an import and a finished job in it, to be closed. */
static int op_close_prepare(void *p)
{
	struct fi_ctx *c = p;
	struct megpu gpu;
	struct megpu_bo *bo, *imp;
	struct megpu_cs cs;
	struct megpu_job job;
	int ret;

	ret = megpu_reopen(&c->t->gpu, &gpu);
	if (ret)
		return ret;
	ret = megpu_bo_new(&gpu, 16384, 0, &bo);
	ret = ret ?: megpu_bo_import(&gpu, c->dmabuf, &imp);
	if (ret)
		return ret;
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, bo->va, 1);
	megpu_job_init(&job, 0);
	ret = megpu_job_add_bo(&job, bo, DRM_MEGPU_BO_WRITE);
	ret = ret ?: megpu_job_add_bo(&job, imp, DRM_MEGPU_BO_READ);
	ret = ret ?: megpu_job_run(&gpu, &job, &cs);
	ret = ret ?: megpu_bo_wait(bo, mt_job_ns(c->t));
	megpu_cs_fini(&cs);
	/* the IB goes (it is mmapped); the BOs' handles stay for close() */
	megpu_job_fini(&job);
	free(bo);
	free(imp);
	c->fd = gpu.fd;
	return ret;
}

static int op_close_run(void *p)
{
	struct fi_ctx *c = p;

	return close(c->fd) ? -errno : 0;
}

static void op_close_cleanup(void *p, int ret)
{
	(void)p;
	(void)ret;
}


/* The driver dequeues one (empty) queue for engine 0, then lets go. */
static int op_attach_run(void *p)
{
	struct fi_ctx *c = p;

	return megpu_taskq_attach(&c->t->gpu, &c->tq, 1, 1u << 0);
}

static void op_attach_cleanup(void *p, int ret)
{
	struct fi_ctx *c = p;

	if (!ret)
		megpu_taskq_detach(&c->t->gpu);
}

/* A poll of the mailbox: nothing is pending (-ETIME) is success here. */
static int op_syscall_wait_run(void *p)
{
	struct fi_ctx *c = p;
	struct drm_megpu_syscall calls[4];
	int ret = megpu_syscall_wait(&c->t->gpu, calls, 4, 0);

	return ret == -ETIME ? 0 : ret < 0 ? ret : -EPROTO;
}

static void op_nothing(void *p, int ret)
{
	(void)p;
	(void)ret;
}

static const struct fi_op op_create = {
	"GEM_CREATE", op_create_run, op_create_cleanup, NULL,
};
static const struct fi_op op_import = {
	"PRIME import", op_import_run, op_import_cleanup, NULL,
};
static const struct fi_op op_submit = {
	"SUBMIT", op_submit_run, op_submit_cleanup, op_submit_prepare,
};
static const struct fi_op op_open = {
	"open", op_open_run, op_open_cleanup, NULL,
};
static const struct fi_op op_close = {
	"close", op_close_run, op_close_cleanup, op_close_prepare,
};
static const struct fi_op op_attach = {
	"TASKQ_ATTACH", op_attach_run, op_attach_cleanup, NULL,
};
static const struct fi_op op_syscall_wait = {
	"SYSCALL_WAIT", op_syscall_wait_run, op_nothing, NULL,
};


TEST_F_TIMEOUT(fi, gem_create, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	struct megpu_bo *probe;

	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_create, &c));
	fi_expect_clean(_metadata, self);
	/* the device's BOs still work */
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &probe));
	EXPECT_EQ(0, mt_probe_engine(&self->t, 0, probe, 8, 0x77));
	megpu_bo_free(probe);
}

TEST_F_TIMEOUT(fi, prime_import, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	struct megpu_bo *bo;
	struct megpu other;
	uint32_t vh;

	ASSERT_EQ(0, megpu_reopen(&self->t.gpu, &other));
	c.other = &other;
	/* from another megpu file: a new mapping of the same BO */
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 65536, 0, &bo));
	ASSERT_EQ(0, megpu_bo_export(bo, &c.dmabuf));
	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_import, &c));
	close(c.dmabuf);
	megpu_bo_free(bo);
	/* from vgem: a new megpu BO (import_sg_table) */
	if (self->vgem >= 0) {
		struct drm_mode_create_dumb dumb = {
			.width = 65536 / 4, .height = 1, .bpp = 32,
		};

		ASSERT_EQ(0, drmIoctl(self->vgem, DRM_IOCTL_MODE_CREATE_DUMB,
				      &dumb));
		vh = dumb.handle;
		ASSERT_EQ(0, drmPrimeHandleToFD(self->vgem, vh, DRM_CLOEXEC |
						DRM_RDWR, &c.dmabuf));
		EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_import, &c));
		close(c.dmabuf);
		gem_close_vgem(self->vgem, vh);
	} else {
		TH_LOG("no vgem: imports from another driver not swept");
	}
	megpu_close(&other);
	fi_expect_clean(_metadata, self);
}

/* SUBMIT swept, with the out-sync extension when @ext; then one more. */
static void fi_submit(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fi) *self, bool ext)
{
	struct fi_ctx c = { .t = &self->t };
	unsigned int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &c.bos[i]));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, true, &c.in_sync));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &c.out_sync));
	if (ext)
		ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false,
					       &c.ext_sync));
	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_submit, &c));
	EXPECT_EQ(0, c.value & 0x80000000u)
		TH_LOG("a submit that succeeded did not run its job (or signal its extension's syncobj)");
	/* and a last one, not injected, still runs */
	ASSERT_EQ(0, op_submit_prepare(&c));
	ASSERT_EQ(0, op_submit_run(&c));
	op_submit_cleanup(&c, 0);
	EXPECT_EQ(0, c.value & 0x80000000u);
	if (ext)
		megpu_syncobj_free(&self->t.gpu, c.ext_sync);
	megpu_syncobj_free(&self->t.gpu, c.out_sync);
	megpu_syncobj_free(&self->t.gpu, c.in_sync);
	for (i = 0; i < 3; i++)
		megpu_bo_free(c.bos[i]);
	fi_expect_clean(_metadata, self);
}

TEST_F_TIMEOUT(fi, submit_with_syncobjs_and_bos, 1800)
{
	fi_submit(_metadata, self, false);
}

TEST_F_TIMEOUT(fi, open_and_close, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	struct megpu_bo *bo;

	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_open, &c));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 65536, 0, &bo));
	ASSERT_EQ(0, megpu_bo_export(bo, &c.dmabuf));
	/* close() cannot fail; what it frees must all go all the same */
	fi_sweep(_metadata, self->nth, &op_close, &c);
	close(c.dmabuf);
	megpu_bo_free(bo);
	fi_expect_clean(_metadata, self);
}

TEST_F_TIMEOUT(fi, submit_with_out_sync_extension, 1800)
{
	fi_submit(_metadata, self, true);
}

/* The driver's dequeuer (seed 002's discrete variant) is attached. */
TEST_F_TIMEOUT(fi, taskq_attach, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	struct megpu_taskq q;
	struct megpu_bo *qbo;

	if (!mt_has_cap(&self->t, MEGPU_CAP_TASKQ))
		SKIP(return, "no task queues");
	ASSERT_EQ(0, mt_taskq_bo(&self->t, 64, &q, &qbo));
	c.tq = (struct drm_megpu_taskq_queue) {
		.handle = qbo->handle, .slots = 64,
	};
	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_attach, &c));
	/* and it still attaches and ends once the queue is closed */
	ASSERT_EQ(0, op_attach_run(&c));
	megpu_taskq_close(&q);
	EXPECT_EQ(0, megpu_taskq_wait(&self->t.gpu, mt_job_ns(&self->t)));
	megpu_taskq_detach(&self->t.gpu);
	megpu_bo_free(qbo);
	fi_expect_clean(_metadata, self);
}

TEST_F_TIMEOUT(fi, syscall_wait, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	uint32_t slots = 0;

	if (megpu_mailbox_slots(&self->t.gpu, &slots) || !slots)
		SKIP(return, "no mailbox");
	EXPECT_LT(0, fi_sweep(_metadata, self->nth, &op_syscall_wait, &c));
	fi_expect_clean(_metadata, self);
}

/*
 * A share of this process's allocations fail (task-filter), at random,
 * over a mixed workload: every call gives a result or an errno, and all
 * is released at the end.
 */
TEST_F_TIMEOUT(fi, random_failures_mixed, 1800)
{
	struct fi_ctx c = { .t = &self->t };
	unsigned int i, k, errs = 0, fine = 0;
	struct megpu other;
	struct megpu_bo *bo;
	int ret;

	ASSERT_EQ(0, megpu_reopen(&self->t.gpu, &other));
	c.other = &other;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &c.bos[i]));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, true, &c.in_sync));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &c.out_sync));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 65536, 0, &bo));
	ASSERT_EQ(0, megpu_bo_export(bo, &c.dmabuf));
	ASSERT_EQ(0, fi_write("failslab/probability", "20"));
	ASSERT_EQ(0, fi_write("fail_page_alloc/probability", "10"));
	for (k = 0; k < 200; k++) {
		const struct fi_op *op;

		switch (k % 4) {
		case 0: op = &op_create; break;
		case 1: op = &op_import; break;
		case 2: op = &op_submit; break;
		default: op = &op_open; break;
		}
		if (op->prepare)
			ASSERT_EQ(0, op->prepare(&c));
		ASSERT_EQ(1, pwrite(self->make_it_fail, "1", 1, 0));
		ret = op->run(&c);
		ASSERT_EQ(1, pwrite(self->make_it_fail, "0", 1, 0));
		EXPECT_TRUE(!ret || fi_errno_ok(ret))
			TH_LOG("%s: %s", op->name, strerror(-ret));
		if (ret)
			errs++;
		else
			fine++;
		op->cleanup(&c, ret);
	}
	ASSERT_EQ(0, fi_write("failslab/probability", "0"));
	ASSERT_EQ(0, fi_write("fail_page_alloc/probability", "0"));
	TH_LOG("200 operations under random failures: %u errnos, %u done",
	       errs, fine);
	EXPECT_LT(0, errs);
	EXPECT_EQ(0, c.value & 0x80000000u);
	close(c.dmabuf);
	megpu_bo_free(bo);
	megpu_syncobj_free(&self->t.gpu, c.out_sync);
	megpu_syncobj_free(&self->t.gpu, c.in_sync);
	for (i = 0; i < 3; i++)
		megpu_bo_free(c.bos[i]);
	megpu_close(&other);
	fi_expect_clean(_metadata, self);
}

/*
 * Last: kmemleak, when the kernel has it, finds nothing of the driver's
 * (the sweeps above ran in this process; the end of the guest run scans
 * once more for everything).
 */
TEST_F_TIMEOUT(fi, kmemleak_clean, 600)
{
	char *report, *p;
	unsigned int ours = 0;

	if (access(FI_KMEMLEAK, F_OK))
		SKIP(return, "no kmemleak");
	/* objects younger than 5 s are not reported yet */
	sleep(6);
	ASSERT_EQ(0, mt_write_file(FI_KMEMLEAK, "scan"));
	report = mt_slurp(FI_KMEMLEAK);
	ASSERT_NE(NULL, report);
	for (p = report; (p = strstr(p, "megpu")); p++)
		ours++;
	if (ours)
		TH_LOG("kmemleak:\n%s", report);
	EXPECT_EQ(0, ours);
	free(report);
}

TEST_HARNESS_MAIN
