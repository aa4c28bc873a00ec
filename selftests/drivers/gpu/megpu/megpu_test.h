/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the megpu selftests. */
#ifndef MEGPU_TEST_H
#define MEGPU_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "megpu_drm.h"
#include "megpu_hw.h"
#include "libmegpu.h"

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
};

static inline int mt_open(struct mt *t)
{
	int ret = megpu_open(&t->gpu, 0);

	ret = ret ?: megpu_engines(&t->gpu, &t->engines, &t->types);
	ret = ret ?: megpu_get_param(&t->gpu, DRM_MEGPU_PARAM_JOB_TIMEOUT_MS,
				     &t->timeout_ms);
	return ret;
}

/* Another client (own file, own GPU address space) of the same device. */
static inline int mt_open_client(struct mt *t, struct mt *other)
{
	*other = *t;
	return megpu_reopen(&t->gpu, &other->gpu);
}

static inline void mt_close(struct mt *t)
{
	megpu_close(&t->gpu);
}

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
static inline int mt_job_finish(struct mt_job *j, int64_t timeout_ns)
{
	int ret = megpu_syncobj_wait(j->gpu, j->sync, 0, timeout_ns);

	if (!ret)
		ret = megpu_fence_status(j->gpu->fd, j->sync, 0);
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

/* The live-object counters the driver shows in debugfs "counters". */
#define MT_COUNTERS 3
static const char *const mt_counter_keys[MT_COUNTERS] = {
	"bos", "jobs", "vms",
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

#endif
