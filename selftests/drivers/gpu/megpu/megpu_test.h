/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the megpu selftests. */
#ifndef MEGPU_TEST_H
#define MEGPU_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "megpu_hw.h"
#include "libmegpu.h"

/*
 * An opcode no engine knows: it faults BAD_OPCODE. Above every opcode of
 * the contract (not "the last one + 1", which a new packet takes).
 */
#define MT_PKT_UNKNOWN 0xff
_Static_assert(MT_PKT_UNKNOWN > MEGPU_PKT_IDLE_SIGNAL,
	       "MT_PKT_UNKNOWN must not be a real opcode");

/*
 * The host harness boots the guest with "megpu_test.<key>=<value>" on the
 * kernel command line to tell the tests how it configured the device.
 * Returns the value, or def when the key is absent.
 */
static inline long megpu_test_cmdline(const char *key, long def)
{
	char buf[4096], pat[64], *p;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return def;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	snprintf(pat, sizeof(pat), "megpu_test.%s=", key);
	p = strstr(buf, pat);
	return p ? strtol(p + strlen(pat), NULL, 0) : def;
}

/* Read a number from a sysfs file; -1 on error. */
static inline long megpu_sysfs_read(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%li", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * A client of the first megpu device and what the tests need to know
 * about it. Helpers return 0 or -errno so tests can ASSERT on them.
 */
struct mt {
	struct megpu gpu;
	unsigned int engines;
	uint64_t types;
	uint64_t timeout_ms;	/* DRM_MEGPU_PARAM_JOB_TIMEOUT_MS */
	uint32_t ctx;		/* GPU context, as debugfs shows it; 0: unknown */
};

/* This file's GPU context, from fdinfo ("drm-megpu-context:"), or 0. */
static inline uint32_t mt_context(struct megpu *gpu)
{
	char path[64], line[128];
	unsigned int ctx = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", gpu->fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "drm-megpu-context: %u", &ctx) == 1)
			break;
	fclose(f);
	return ctx;
}

static inline int mt_open(struct mt *t)
{
	int ret = megpu_open(&t->gpu, 0);

	ret = ret ?: megpu_engines(&t->gpu, &t->engines, &t->types);
	ret = ret ?: megpu_get_param(&t->gpu, DRM_MEGPU_PARAM_JOB_TIMEOUT_MS,
				     &t->timeout_ms);
	t->ctx = ret ? 0 : mt_context(&t->gpu);
	return ret;
}

/* Another client (own file, own GPU address space) of the same device. */
static inline int mt_open_client(struct mt *t, struct mt *other)
{
	int ret;

	*other = *t;
	ret = megpu_reopen(&t->gpu, &other->gpu);
	other->ctx = ret ? 0 : mt_context(&other->gpu);
	return ret;
}

static inline void mt_close(struct mt *t)
{
	megpu_close(&t->gpu);
}

/* Skip the test when the GPU has fewer than @n engines. */
#define MT_NEED_ENGINES(t, n)						\
	do {								\
		if ((t)->engines < (n))					\
			SKIP(return, "needs %d engines", (n));		\
	} while (0)

/* Fixture "name" with a struct mt in self->t, for TEST_F(name, ...). */
#define MT_FIXTURE(name)						\
	FIXTURE(name) {							\
		struct mt t;						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		ASSERT_EQ(0, mt_open(&self->t));			\
		ASSERT_LT(0, self->t.engines);				\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		mt_close(&self->t);					\
	}

static inline unsigned int mt_type(const struct mt *t, unsigned int engine)
{
	return MEGPU_ENGINE_TYPE(t->types, engine);
}

static inline bool mt_accepts(const struct mt *t, unsigned int engine,
			      unsigned int op)
{
	return megpu_engine_packets(mt_type(t, engine)) & MEGPU_BIT(op);
}

static inline const char *mt_name(const struct mt *t, unsigned int engine)
{
	return megpu_engine_type_name(mt_type(t, engine));
}

/* First engine accepting @op, other than @not (-1: any); -1 if none. */
static inline int mt_engine_for(const struct mt *t, unsigned int op, int not)
{
	unsigned int e;

	for (e = 0; e < t->engines; e++)
		if ((int)e != not && mt_accepts(t, e, op))
			return (int)e;
	return -1;
}

/* How long a job that should work may take: well past a hang's timeout. */
static inline int64_t mt_job_ns(const struct mt *t)
{
	return (int64_t)(2 * t->timeout_ms + 10000) * 1000000;
}

/* A BO mapped for the CPU and zeroed. */
static inline int mt_bo(struct megpu *gpu, uint64_t size, uint32_t flags,
			struct megpu_bo **bo)
{
	int ret = megpu_bo_new(gpu, size, flags, bo);

	if (ret)
		return ret;
	ret = megpu_bo_map(*bo);
	if (ret) {
		megpu_bo_free(*bo);
		*bo = NULL;
		return ret;
	}
	memset((*bo)->map, 0, (*bo)->size);
	return 0;
}

static inline uint32_t *mt_u32(struct megpu_bo *bo)
{
	return bo->map;
}

/* A submitted job with its own out-syncobj. */
struct mt_job {
	struct megpu *gpu;
	struct megpu_job job;
	uint32_t sync;
	int64_t submitted;	/* megpu_now_ns() at submit */
};

/*
 * Start @cs on @engine; @bos (n of them) are listed READ | WRITE. The
 * caller may add in-syncs to j->job first by setting them up after
 * mt_job_prepare() and before mt_job_start().
 */
static inline int mt_job_prepare(struct megpu *gpu, struct mt_job *j,
				 unsigned int engine, struct megpu_bo **bos,
				 unsigned int n, uint32_t flags)
{
	unsigned int i;
	int ret;

	memset(j, 0, sizeof(*j));
	j->gpu = gpu;
	megpu_job_init(&j->job, engine);
	j->job.flags = flags;
	for (i = 0; i < n; i++) {
		ret = megpu_job_add_bo(&j->job, bos[i], DRM_MEGPU_BO_READ |
				       DRM_MEGPU_BO_WRITE);
		if (ret)
			return ret;
	}
	ret = megpu_syncobj_new(gpu, false, &j->sync);
	if (ret)
		return ret;
	megpu_job_signal_sync(&j->job, j->sync, 0);
	return 0;
}

static inline int mt_job_start(struct mt_job *j, const struct megpu_cs *cs)
{
	int ret = megpu_job_upload(j->gpu, &j->job, cs);

	j->submitted = megpu_now_ns();
	return ret ?: megpu_job_submit(j->gpu, &j->job);
}

/* Free what mt_job_prepare() made. */
static inline void mt_job_free(struct mt_job *j)
{
	megpu_syncobj_free(j->gpu, j->sync);
	megpu_job_fini(&j->job);
	j->sync = 0;
}

/*
 * Wait up to @timeout_ns for the job, then free it. Returns its fence
 * status (0, -EFAULT, -ETIMEDOUT, -ECANCELED), or -ETIME when it did not
 * complete in time (the job is then left to the driver).
 */
/* Like mt_job_finish() but keep the job (its IB, for debugfs "frames"). */
static inline int mt_job_done(struct mt_job *j, int64_t timeout_ns)
{
	int ret = megpu_syncobj_wait(j->gpu, j->sync, 0, timeout_ns);

	return ret ?: megpu_fence_status(j->gpu->fd, j->sync, 0);
}

static inline int mt_job_finish(struct mt_job *j, int64_t timeout_ns)
{
	int ret = mt_job_done(j, timeout_ns);

	mt_job_free(j);
	return ret;
}

static inline int mt_submit(struct megpu *gpu, struct mt_job *j,
			    unsigned int engine, const struct megpu_cs *cs,
			    struct megpu_bo **bos, unsigned int n,
			    uint32_t flags)
{
	int ret = mt_job_prepare(gpu, j, engine, bos, n, flags);

	ret = ret ?: mt_job_start(j, cs);
	if (ret)
		mt_job_free(j);
	return ret;
}

/* Run @cs on @engine to completion: its fence status, or an error. */
static inline int mt_run(struct mt *t, unsigned int engine,
			 const struct megpu_cs *cs, struct megpu_bo **bos,
			 unsigned int n)
{
	struct mt_job j;
	int ret = mt_submit(&t->gpu, &j, engine, cs, bos, n, 0);

	return ret ?: mt_job_finish(&j, mt_job_ns(t));
}

/*
 * Run @cs on @engine with @bo listed as read only: its fence status. A
 * BO the GPU may only read cannot be listed as written (mt_run(): SUBMIT
 * fails with -EACCES); this shows what a write to it does on the GPU.
 */
static inline int mt_run_reading(struct mt *t, unsigned int engine,
				 const struct megpu_cs *cs, struct megpu_bo *bo)
{
	struct mt_job j;
	int ret = mt_job_prepare(&t->gpu, &j, engine, NULL, 0, 0);

	ret = ret ?: megpu_job_add_bo(&j.job, bo, DRM_MEGPU_BO_READ);
	ret = ret ?: mt_job_start(&j, cs);
	if (ret) {
		mt_job_free(&j);
		return ret;
	}
	return mt_job_finish(&j, mt_job_ns(t));
}

/*
 * Write @value at @offset of @bo from @engine and check it arrived: the
 * probe that an engine (still) works. 0, a fence error or -EIO.
 */
static inline int mt_probe_engine(struct mt *t, unsigned int engine,
				  struct megpu_bo *bo, uint64_t offset,
				  uint32_t value)
{
	struct megpu_cs cs;
	int ret;

	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, bo->va + offset, value);
	ret = mt_run(t, engine, &cs, &bo, 1);
	megpu_cs_fini(&cs);
	if (!ret && mt_u32(bo)[offset / 4] != value)
		ret = -EIO;
	return ret;
}

/*
 * A gate holds jobs: they WAIT until its 64-bit semaphore (offset 0)
 * reaches 1. Jobs holding on it list it READ only.
 */
static inline int mt_gate_hold(struct megpu_cs *cs, struct megpu_bo *gate)
{
	return megpu_cs_wait(cs, gate->va, 1);
}

/*
 * Open the gate from the CPU: an engine stalled on WAIT re-reads memory
 * (the device polls every millisecond), so no GPU SIGNAL is needed.
 */
static inline void mt_gate_open(struct megpu_bo *gate)
{
	__atomic_store_n((uint64_t *)gate->map, 1, __ATOMIC_SEQ_CST);
}

/* An engine other than @engine, or -1 when there is only one. */
static inline int mt_other_engine(const struct mt *t, unsigned int engine)
{
	return t->engines > 1 ? (int)((engine + 1) % t->engines) : -1;
}

/* Not done yet: a wait that only polls times out. */
static inline bool mt_pending(struct megpu *gpu, uint32_t syncobj,
			      uint64_t point)
{
	return megpu_syncobj_wait(gpu, syncobj, point, 0) == -ETIME;
}

/*
 * Start a job on @engine that writes @value at @offset of @bo, after the
 * @nin in-syncs and, when @gate is set, after the gate opens.
 */
static inline int mt_write_job(struct mt *t, struct mt_job *j,
			       unsigned int engine, struct megpu_bo *bo,
			       uint64_t offset, uint32_t value,
			       struct megpu_bo *gate,
			       const struct drm_megpu_sync *in,
			       unsigned int nin, uint32_t flags)
{
	struct megpu_cs cs;
	unsigned int i;
	int ret;

	ret = mt_job_prepare(&t->gpu, j, engine, &bo, 1, flags);
	if (!ret && gate)
		ret = megpu_job_add_bo(&j->job, gate, DRM_MEGPU_BO_READ);
	for (i = 0; !ret && i < nin; i++)
		ret = megpu_job_wait_sync(&j->job, in[i].handle, in[i].point);
	if (ret) {
		mt_job_free(j);
		return ret;
	}
	megpu_cs_init(&cs);
	if (gate)
		mt_gate_hold(&cs, gate);
	megpu_cs_write32(&cs, bo->va + offset, value);
	ret = mt_job_start(j, &cs);
	megpu_cs_fini(&cs);
	if (ret)
		mt_job_free(j);
	return ret;
}

/* One value of debugfs "counters" (@key: "pinned_bytes", "bos", ...), or -1. */
static inline long long mt_counter(struct megpu *gpu, const char *key)
{
	uint64_t v;

	return megpu_debugfs_counter(gpu, key, &v) ? -1 : (long long)v;
}

/* The live-object counters the driver shows in debugfs "counters". */
#define MT_COUNTERS 5
static const char *const mt_counter_keys[MT_COUNTERS] = {
	"bos", "jobs", "vms", "files", "mappings",
};

static inline int mt_counters(struct megpu *gpu, uint64_t v[MT_COUNTERS])
{
	int i, ret;

	for (i = 0; i < MT_COUNTERS; i++) {
		ret = megpu_debugfs_counter(gpu, mt_counter_keys[i], &v[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Poll until the counters are back at @base (cleanup may be deferred to
 * a worker); 0, or -EBUSY with the last values in @now.
 */
static inline int mt_counters_settle(struct megpu *gpu,
				     const uint64_t base[MT_COUNTERS],
				     uint64_t now[MT_COUNTERS],
				     int timeout_ms)
{
	int64_t end = megpu_now_ns() + (int64_t)timeout_ms * 1000000;
	int ret;

	for (;;) {
		ret = mt_counters(gpu, now);
		if (ret)
			return ret;
		if (!memcmp(base, now, sizeof(uint64_t) * MT_COUNTERS))
			return 0;
		if (megpu_now_ns() > end)
			return -EBUSY;
		usleep(20000);
	}
}

/*
 * EXPECT the counters back at @base within @ms (in a test: _metadata),
 * logging them and @why when they are not.
 */
#define MT_EXPECT_COUNTERS_SETTLE(gpu, base, ms, why)			\
	do {								\
		uint64_t now_[MT_COUNTERS];				\
									\
		EXPECT_EQ(0, mt_counters_settle(gpu, base, now_, ms))	\
			TH_LOG("bos/jobs/vms %llu/%llu/%llu, were "	\
			       "%llu/%llu/%llu: %s",			\
			       (unsigned long long)now_[0],		\
			       (unsigned long long)now_[1],		\
			       (unsigned long long)now_[2],		\
			       (unsigned long long)(base)[0],		\
			       (unsigned long long)(base)[1],		\
			       (unsigned long long)(base)[2], why);	\
	} while (0)

/* GPU address of a started job's IB: how debugfs "frames" names it. */
static inline uint64_t mt_job_ib_va(const struct mt_job *j)
{
	return j->job.ib->va + j->job.ib_offset;
}

/*
 * Copy @dwords dwords from @src to @dst on @engine: a COPY packet where
 * the engine takes one, else a DISPATCH of the COPY kernel (compute) whose
 * argument block goes at @kargs_off of the mapped BO @kargs.
 */
static inline int mt_cs_copy_any(const struct mt *t, unsigned int engine,
				 struct megpu_cs *cs, uint64_t src,
				 uint64_t dst, uint32_t dwords,
				 struct megpu_bo *kargs, uint64_t kargs_off)
{
	struct megpu_kargs k = { .ptr = { src, dst }, .n = dwords };
	uint64_t va;
	int ret;

	if (mt_accepts(t, engine, MEGPU_PKT_COPY))
		return megpu_cs_copy(cs, src, dst, dwords * 4);
	if (!mt_accepts(t, engine, MEGPU_PKT_DISPATCH) ||
	    !(megpu_engine_kernels(mt_type(t, engine)) &
	      MEGPU_BIT(MEGPU_KERNEL_COPY)))
		return -EOPNOTSUPP;
	ret = megpu_kargs_write(kargs, kargs_off, &k, &va);
	return ret ?: megpu_cs_dispatch(cs, MEGPU_KERNEL_COPY, va, dwords, 1,
					dwords < 256 ? dwords : 256, 1);
}

/* --- debugfs, module parameters --- */

/* A whole text file (debugfs, sysfs, procfs) in a new buffer, or NULL. */
static inline char *mt_slurp(const char *path)
{
	return megpu_read_file(path);
}

/* The device's debugfs file @name, read whole, or NULL. */
static inline char *mt_debugfs(struct mt *t, const char *name)
{
	return megpu_debugfs_read(&t->gpu, name);
}

/*
 * A counter of @engine's block in debugfs "engines" (" faults ",
 * " resets ", with the spaces), or -1.
 */
static inline long mt_engine_count(struct mt *t, unsigned int engine,
				   const char *key)
{
	char *text = mt_debugfs(t, "engines"), head[48], *p;
	long n = -1;

	snprintf(head, sizeof(head), ": engine %u status", engine);
	p = text ? strstr(text, head) : NULL;
	p = p ? strstr(p, key) : NULL;
	if (p)
		n = strtol(p + strlen(key), NULL, 10);
	free(text);
	return n;
}

static inline int mt_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	if (n < 0)
		return -errno;
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

#define MT_PARAM_DIR "/sys/module/megpu/parameters/"

/* A bool parameter of megpu.ko: 1 (Y), 0 (N) or -errno (libmegpu). */
static inline int mt_param_get(const char *name)
{
	return megpu_module_param_get(name);
}

/* Set a bool parameter of megpu.ko (gpu_semaphores, drop_waits). */
static inline int mt_param_set(const char *name, bool on)
{
	return megpu_module_param_set(name, on);
}

/* debugfs delay_us: @engine sleeps @usec before each packet (0: off). */
static inline int mt_delay_us(struct mt *t, unsigned int engine,
			      unsigned int usec)
{
	return megpu_debug_delay_us(&t->gpu, engine, usec);
}

/* --- posted writes and flushes (seed 004) --- */

/* Does the device have the feature @cap (MEGPU_CAP_*)? */
static inline bool mt_has_cap(struct mt *t, uint64_t cap)
{
	uint64_t feat = 0;

	return !megpu_get_param(&t->gpu, DRM_MEGPU_PARAM_FEATURES, &feat) &&
	       (feat & cap);
}

/* Does the device post writes (CAP_FLUSH)? */
static inline bool mt_has_flush(struct mt *t)
{
	return mt_has_cap(t, MEGPU_CAP_FLUSH);
}

/* An empty task queue of @slots in a BO of its own (@q, @bo). */
static inline int mt_taskq_bo(struct mt *t, uint32_t slots,
			      struct megpu_taskq *q, struct megpu_bo **bo)
{
	int ret = mt_bo(&t->gpu, MEGPU_TQ_BYTES((uint64_t)slots), 0, bo);

	return ret ?: megpu_taskq_init(q, (*bo)->map, (*bo)->va, slots, 0, 0,
				       0);
}

/* debugfs "flush", parsed by the library; 0, -ENOENT or -EBADMSG. */
static inline int mt_flush_stats(struct mt *t, struct megpu_flush_stats *st)
{
	int ret = megpu_flush_stats(&t->gpu, st);

	if (!ret && st->engines != t->engines)
		ret = -EBADMSG;
	return ret;
}

/* The write mode debugfs "flush" shows: 1 relaxed, 0 strict, -errno. */
static inline int mt_relaxed(struct mt *t)
{
	struct megpu_flush_stats st;
	int ret = mt_flush_stats(t, &st);

	return ret ?: st.relaxed;
}

/* DRM_IOCTL_MEGPU_FLUSH with any @flags and @pad: 0 or -errno. */
static inline int mt_flush_ioctl(struct mt *t, uint32_t flags, uint32_t pad,
				 uint64_t *seqno)
{
	struct drm_megpu_flush args = { .flags = flags, .pad = pad };

	if (drmIoctl(t->gpu.fd, DRM_IOCTL_MEGPU_FLUSH, &args))
		return -errno;
	if (seqno)
		*seqno = args.seqno;
	return 0;
}

/* debugfs "timestamps": the engine's current and next timestamps. */
static inline int mt_timestamps(struct mt *t, unsigned int engine,
				uint64_t *cur, uint64_t *next)
{
	return megpu_debug_timestamps(&t->gpu, engine, cur, next);
}

/* Poll until @engine is idle (current == next - 1); 0 or -EBUSY. */
static inline int mt_engine_settle(struct mt *t, unsigned int engine,
				   int timeout_ms)
{
	int64_t end = megpu_now_ns() + (int64_t)timeout_ms * 1000000;
	uint64_t cur, next;
	int ret;

	for (;;) {
		ret = mt_timestamps(t, engine, &cur, &next);
		if (ret)
			return ret;
		if (cur + 1 == next)
			return 0;
		if (megpu_now_ns() > end)
			return -EBUSY;
		usleep(2000);
	}
}

/* debugfs "semaphores": the pool size and the objects in use. */
static inline int mt_sem_busy(struct mt *t, unsigned int *pool,
			      unsigned int *busy)
{
	struct megpu_debug_sems s;
	int ret = megpu_debug_semaphores(&t->gpu, &s, 0);

	*pool = s.pool;
	*busy = s.busy;
	return ret;
}

/* Poll until at most @most semaphore objects are busy; 0 or -EBUSY. */
static inline int mt_sem_settle(struct mt *t, unsigned int most,
				unsigned int *busy, int timeout_ms)
{
	int64_t end = megpu_now_ns() + (int64_t)timeout_ms * 1000000;
	unsigned int pool;
	int ret;

	for (;;) {
		ret = mt_sem_busy(t, &pool, busy);
		if (ret)
			return ret;
		if (*busy <= most)
			return 0;
		if (megpu_now_ns() > end)
			return -EBUSY;
		usleep(10000);
	}
}

/* A frame as debugfs "frames" shows it (libmegpu parses it). */
#define mt_frame megpu_debug_frame
#define MT_FRAMES (16 * MEGPU_MAX_ENGINES)

/*
 * The newest frame in debugfs "frames" of @engine whose IB is at @ib_va
 * (mt_job_ib_va()); keep the job until then, so that no other IB takes
 * its address. 0, -ENOENT or -EBADMSG.
 */
static inline int mt_frame_find(struct mt *t, unsigned int engine,
				uint64_t ib_va, struct mt_frame *f)
{
	struct mt_frame *all = calloc(MT_FRAMES, sizeof(*all));
	int n, i, ret = -ENOENT;

	memset(f, 0, sizeof(*f));
	if (!all)
		return -ENOMEM;
	n = megpu_debug_frames(&t->gpu, all, MT_FRAMES);
	if (n < 0)
		ret = n;
	for (i = 0; i < n; i++) {
		/* IB addresses repeat across clients: the context tells */
		if (all[i].engine == engine && all[i].ib == ib_va &&
		    (!t->ctx || all[i].ctx == t->ctx)) {
			*f = all[i];
			ret = 0;
		}
	}
	free(all);
	return ret;
}

/*
 * The packets of the last frames in @engine's ring, decoded by libmegpu
 * from the ring words debugfs "rings" shows: their count, or -errno.
 */
static inline int mt_ring_packets(struct mt *t, unsigned int engine,
				  struct megpu_debug_packet *out, int max)
{
	struct megpu_debug_ring r[MEGPU_MAX_ENGINES];
	int n, i, ret = -ENOENT;

	n = megpu_debug_rings(&t->gpu, r, MEGPU_MAX_ENGINES);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (r[i].engine == engine)
			ret = megpu_debug_ring_packets(&r[i], out, max);
	megpu_debug_rings_free(r, n);
	return ret;
}

/* Poll for a frame until it is in the ring (mt_frame_find()). */
static inline int mt_frame_wait(struct mt *t, unsigned int engine,
				uint64_t ib_va, struct mt_frame *f,
				int timeout_ms)
{
	int64_t end = megpu_now_ns() + (int64_t)timeout_ms * 1000000;
	int ret;

	for (;;) {
		ret = mt_frame_find(t, engine, ib_va, f);
		if (ret != -ENOENT || megpu_now_ns() > end)
			return ret;
		usleep(2000);
	}
}

/* Does the frame wait for @engine, at timestamp @ts (0: any)? */
static inline bool mt_frame_waits_for(const struct mt_frame *f,
				      unsigned int engine, uint64_t ts)
{
	unsigned int i;

	for (i = 0; i < f->nwaits; i++)
		if (f->waits[i].engine == (int)engine &&
		    (!ts || f->waits[i].ts == ts))
			return true;
	return false;
}

/*
 * vgem, the source of foreign fences: its uAPI (drivers/gpu/drm/vgem),
 * which libdrm has no header for.
 */
struct mt_vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct mt_vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define MT_VGEM_FENCE_WRITE 0x1
#define MT_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct mt_vgem_fence_attach)
#define MT_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOWR(DRM_COMMAND_BASE + 0x2, struct mt_vgem_fence_signal)

/* Is @fd a node of the DRM driver @name? */
static inline bool mt_drm_is(int fd, const char *name)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool is = v && v->name && !strcmp(v->name, name);

	drmFreeVersion(v);
	return is;
}

/*
 * Open vgem's card node (dumb buffers need it): an fd, or -ENODEV. vgem
 * is a platform device that drmGetDevices2() may not list without a
 * device tree, so the card nodes are tried as well.
 */
static inline int mt_vgem_open(void)
{
	drmDevicePtr devs[64];
	char path[64];
	int n, i, fd;

	n = drmGetDevices2(0, devs, 64);
	for (i = 0; i < n; i++) {
		if (!(devs[i]->available_nodes & (1 << DRM_NODE_PRIMARY)))
			continue;
		fd = open(devs[i]->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC);
		if (fd >= 0 && mt_drm_is(fd, "vgem")) {
			drmFreeDevices(devs, n);
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	if (n > 0)
		drmFreeDevices(devs, n);
	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && mt_drm_is(fd, "vgem"))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -ENODEV;
}

/*
 * A vgem BO of @size bytes shared with megpu through PRIME: its vgem
 * handle in *@vhandle and the imported megpu BO in *@bo.
 */
static inline int mt_vgem_bo(int vgem, struct megpu *gpu, uint32_t size,
			     uint32_t *vhandle, struct megpu_bo **bo)
{
	struct drm_mode_create_dumb dumb = {
		.width = size / 4, .height = 1, .bpp = 32,
	};
	int dmabuf, ret;

	if (drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	*vhandle = dumb.handle;
	if (drmPrimeHandleToFD(vgem, dumb.handle, DRM_CLOEXEC | DRM_RDWR,
			       &dmabuf))
		return -errno;
	ret = megpu_bo_import(gpu, dmabuf, bo);
	close(dmabuf);
	return ret;
}

/* Attach a (write) fence to a vgem BO: its id for mt_vgem_signal(). */
static inline int mt_vgem_fence(int vgem, uint32_t vhandle, uint32_t *fence)
{
	struct mt_vgem_fence_attach a = {
		.handle = vhandle, .flags = MT_VGEM_FENCE_WRITE,
	};

	if (drmIoctl(vgem, MT_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

static inline int mt_vgem_signal(int vgem, uint32_t fence)
{
	struct mt_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(vgem, MT_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

/* --- wave programs (seed 003) --- */

/* Can @engine run wave programs (DISPATCH of MEGPU_KERNEL_PROGRAM)? */
static inline bool mt_runs_waves(const struct mt *t, unsigned int engine)
{
	unsigned int type = mt_type(t, engine);

	return type == MEGPU_ENGINE_GFX || type == MEGPU_ENGINE_COMPUTE;
}

/* First engine that runs wave programs, other than @not; -1 if none. */
static inline int mt_wave_engine(const struct mt *t, int not)
{
	unsigned int e;

	for (e = 0; e < t->engines; e++)
		if ((int)e != not && mt_runs_waves(t, e))
			return (int)e;
	return -1;
}

/* A program in a BO and a BO for its argument blocks. */
struct mt_prog {
	struct megpu_bo *code, *args;
	uint32_t len;
};

/* Assemble @src into @p; on an assembler error the message is printed. */
static inline int mt_prog_load(struct megpu *gpu, const char *src,
			       struct mt_prog *p)
{
	char err[128] = "";
	int ret;

	memset(p, 0, sizeof(*p));
	ret = megpu_prog_load(gpu, src, &p->code, &p->len, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "# assembling: %s\n", err);
		return ret;
	}
	ret = mt_bo(gpu, 64 * 1024, 0, &p->args);
	if (ret) {
		megpu_bo_free(p->code);
		p->code = NULL;
	}
	return ret;
}

static inline void mt_prog_free(struct mt_prog *p)
{
	megpu_bo_free(p->code);
	megpu_bo_free(p->args);
	memset(p, 0, sizeof(*p));
}

/*
 * Emit a DISPATCH of @p over @grid x 1 items in groups of @group, with
 * @n user arguments (u64 each) in argument block @block (up to 400).
 */
static inline int mt_prog_dispatch(struct megpu_cs *cs, struct mt_prog *p,
				   unsigned int block, const uint64_t *user,
				   unsigned int n, uint32_t grid,
				   uint32_t group)
{
	struct megpu_pargs pa = { .program = p->code->va, .len = p->len };
	uint64_t va;
	int ret;

	memcpy(pa.user, user, n * sizeof(*user));
	ret = megpu_pargs_write(p->args, (uint64_t)block * 160, &pa, &va);
	return ret ?: megpu_cs_dispatch_program(cs, va, grid, 1, group, 1);
}

/* The BOs a job of @p lists, then @extra ones; returns the count. */
static inline unsigned int mt_prog_bos(struct mt_prog *p,
				       struct megpu_bo **bos,
				       struct megpu_bo **extra,
				       unsigned int n)
{
	unsigned int i;

	bos[0] = p->code;
	bos[1] = p->args;
	for (i = 0; i < n; i++)
		bos[2 + i] = extra[i];
	return n + 2;
}

/* A sync_file wait, which needs no DRM ioctl: 0, or -ETIME after @ms. */
static inline int mt_sync_file_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n < 0 ? -errno : n ? 0 : -ETIME;
}

/* The driver's sysfs directory: bind and unbind a device by address. */
#define MT_DRIVER_DIR "/sys/bus/pci/drivers/megpu"

/* The PCI address ("0000:00:01.0") of the client's device. */
static inline int mt_pci_address(struct megpu *gpu, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct stat st;
	ssize_t n;
	char *base;

	if (fstat(gpu->fd, &st))
		return -errno;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

/*
 * A function level reset of the client's device (echo 1 > .../reset):
 * 0, or -errno (-ENOENT or -EACCES: the device cannot be reset so).
 */
static inline int mt_flr(struct megpu *gpu)
{
	char addr[64], path[128];
	int fd, ret;

	ret = mt_pci_address(gpu, addr, sizeof(addr));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", addr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Run "megpu @args" with both output streams in @buf (@len bytes, NUL
 * terminated, also logged); its exit status, -1 if it did not exit.
 */
static inline int mt_tool(const char *args, char *buf, size_t len)
{
	char cmd[512];
	size_t n = 0;
	int status;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "megpu %s >/tmp/mt-tool.out 2>&1", args);
	status = system(cmd);
	f = fopen("/tmp/mt-tool.out", "r");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	fputs(buf, stderr);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The device's TEST_HOLD (debugfs "test_hold", boots with x-test-regs=on):
 * set it, 0 or -errno; read it back (a device without it reads 0).
 */
static inline int mt_hold_set(struct mt *t, unsigned int mode)
{
	char text[16];

	snprintf(text, sizeof(text), "%u", mode);
	return megpu_debugfs_write(&t->gpu, "test_hold", text);
}

static inline int mt_hold_get(struct mt *t)
{
	char *text = mt_debugfs(t, "test_hold");
	int v;

	if (!text)
		return -errno;
	v = atoi(text);
	free(text);
	return v;
}

#ifdef TEST_HARNESS_MAIN
/*
 * megpu_test.timeout_scale=N on the kernel command line multiplies every
 * test's harness timeout: the debug kernel (KASAN, lockdep, kmemleak)
 * under TCG runs the same tests several times slower. Only the time a
 * test is allowed grows; no assertion changes.
 */
static inline void mt_scale_timeouts(void)
{
	long scale = megpu_test_cmdline("timeout_scale", 1);
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	if (scale <= 1 || scale > 100)
		return;
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= scale;
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		mt_scale_timeouts();					\
		return test_harness_run(argc, argv);			\
	}
#endif

#endif
