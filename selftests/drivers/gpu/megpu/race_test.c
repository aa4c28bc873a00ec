// SPDX-License-Identifier: GPL-2.0
/*
 * The concurrency fuzzer (issue 21): several threads of one client race
 * random ioctl sequences on one file: task-queue attach, detach and
 * notify, GEM create and close (of the queue BO too), submits, syncobj
 * waits. Each ioctl may fail only with the errnos its uAPI documents; the
 * kernel must not crash, corrupt a list or leak (the guest's console is
 * checked for BUG/WARNING/KASAN/lockdep reports by tools/vm/run.sh), and
 * the client still works afterwards. On the debug kernel (make
 * check-debug) KASAN and lockdep watch every step.
 *
 * Before the fix, an ATTACH published its attachment and armed its
 * watchdog and work only after dropping the list lock, so a DETACH from
 * another thread freed it in between: list_add corruption in
 * __queue_work or a NULL dereference in the work (issue 21). The window
 * is a few instructions: on Debian's kernel (voluntary preemption) this
 * fuzzer did not hit it in 3 runs of 6723761's driver; on the debug
 * kernel it did within seconds: "ODEBUG: free active ... work_struct
 * hint: megpu_kdq_work" (the attachment freed with its work armed) and a
 * mutex WARNING, several times in a 20 s run.
 *
 * megpu_test.race_s=N runs each case N seconds (default 4).
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define RACE_THREADS	4
#define RACE_SLOTS	64
#define RACE_QBYTES	MEGPU_TQ_BYTES(RACE_SLOTS)

struct race {
	struct mt *t;
	uint32_t engines;	/* gfx and compute engines */
	int64_t until;		/* megpu_now_ns() */
	atomic_uint handle;	/* the queue BO's handle, 0: none */
	atomic_uint ops;
	atomic_uint attached;
	atomic_uint bad_errno;	/* an ioctl failed with an errno not allowed */
	atomic_int last_bad;	/* (op << 16) | errno of the last one */
};

enum race_op {
	OP_ATTACH, OP_DETACH, OP_NOTIFY, OP_NEW_QUEUE, OP_CLOSE_QUEUE,
	OP_SUBMIT, OP_WAIT, OP_COUNT,
};

static bool race_allowed(int op, int err)
{
	switch (op) {
	case OP_ATTACH:
		/*
		 * The queue BO closed meanwhile (its handle maybe another,
		 * smaller BO's now), or attached already.
		 */
		return err == ENOENT || err == ERANGE || err == EBUSY ||
		       err == ENOMEM;
	case OP_DETACH:
		return err == ENOENT;
	case OP_WAIT:
		/* no attachment, not done yet, or what it completed with */
		return err == ENOENT || err == ETIME || err == ECANCELED ||
		       err == ETIMEDOUT || err == EIO || err == EPROTO;
	case OP_NOTIFY:
		return false;
	case OP_NEW_QUEUE:
		return err == ENOMEM || err == ENOSPC;
	case OP_CLOSE_QUEUE:
		return err == EINVAL || err == ENOENT;
	case OP_SUBMIT:
		/* a BO handle another thread closed; the IB's allocation */
		return err == ENOENT || err == ENOMEM || err == ENOSPC;
	}
	return false;
}

static void race_check(struct race *r, int op, int ret)
{
	if (ret >= 0 || race_allowed(op, -ret))
		return;
	atomic_fetch_add(&r->bad_errno, 1);
	atomic_store(&r->last_bad, op << 16 | -ret);
}

/* A queue BO with RACE_SLOTS-slot queues (CLOSED, empty) in it. */
static int race_new_queue(struct race *r, uint32_t *handle)
{
	struct drm_megpu_gem_create c = { .size = 2 * RACE_QBYTES };
	struct drm_megpu_gem_mmap_offset mo = { 0 };
	uint8_t *map;
	int ret;

	if (drmIoctl(r->t->gpu.fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c))
		return -errno;
	mo.handle = c.handle;
	ret = drmIoctl(r->t->gpu.fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &mo) ?
	      -errno : 0;
	if (!ret) {
		map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   r->t->gpu.fd, mo.offset);
		if (map == MAP_FAILED) {
			ret = -errno;
		} else {
			for (unsigned int i = 0; i < 2; i++) {
				uint8_t *q = map + i * RACE_QBYTES;

				memset(q, 0, MEGPU_TQ_HDR_BYTES);
				*(uint32_t *)(q + MEGPU_TQ_HDR_MAGIC) =
					MEGPU_TQ_MAGIC;
				*(uint32_t *)(q + MEGPU_TQ_HDR_SIZE) =
					RACE_SLOTS;
				*(uint32_t *)(q + MEGPU_TQ_HDR_FLAGS) =
					MEGPU_TQ_F_CLOSED;
			}
			munmap(map, c.size);
		}
	}
	*handle = c.handle;
	return ret;
}

static int race_close(struct race *r, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return drmIoctl(r->t->gpu.fd, DRM_IOCTL_GEM_CLOSE, &c) ? -errno : 0;
}

static int race_attach(struct race *r, uint32_t handle)
{
	struct drm_megpu_taskq_queue refs[2];
	int ret;

	for (unsigned int i = 0; i < 2; i++)
		refs[i] = (struct drm_megpu_taskq_queue) {
			.handle = handle, .slots = RACE_SLOTS,
			.offset = i * RACE_QBYTES,
		};
	ret = megpu_taskq_attach(&r->t->gpu, refs, 2, r->engines);
	if (!ret)
		atomic_fetch_add(&r->attached, 1);
	return ret;
}

/* A small job that names the queue BO (maybe closed meanwhile). */
static int race_submit(struct race *r, unsigned int engine)
{
	uint32_t handle = atomic_load(&r->handle);
	struct megpu_cs cs;
	struct megpu_job job;
	int ret;

	megpu_cs_init(&cs);
	megpu_job_init(&job, engine);
	ret = megpu_cs_nop(&cs, 4);
	if (handle) {
		job.bos[0] = (struct drm_megpu_bo_ref) {
			.handle = handle, .flags = DRM_MEGPU_BO_READ,
		};
		job.bo_count = 1;
	}
	ret = ret ?: megpu_job_upload(&r->t->gpu, &job, &cs);
	ret = ret ?: megpu_job_submit(&r->t->gpu, &job);
	megpu_job_fini(&job);
	megpu_cs_fini(&cs);
	return ret;
}

/* Attach, or detach, in a tight loop: the storm's two kinds of thread. */
static void *race_attacher(void *arg)
{
	struct race *r = arg;

	while (megpu_now_ns() < r->until) {
		race_check(r, OP_ATTACH, race_attach(r, atomic_load(&r->handle)));
		atomic_fetch_add(&r->ops, 1);
	}
	return NULL;
}

static void *race_detacher(void *arg)
{
	struct race *r = arg;

	while (megpu_now_ns() < r->until) {
		race_check(r, OP_DETACH, megpu_taskq_detach(&r->t->gpu));
		atomic_fetch_add(&r->ops, 1);
	}
	return NULL;
}

static void *race_thread(void *arg)
{
	struct race *r = arg;
	unsigned int seed = (unsigned int)(uintptr_t)pthread_self() ^
			    (unsigned int)megpu_now_ns();

	while (megpu_now_ns() < r->until) {
		int op = rand_r(&seed) % OP_COUNT, ret = 0;
		uint32_t h, old;

		switch (op) {
		case OP_ATTACH:
			ret = race_attach(r, atomic_load(&r->handle));
			break;
		case OP_DETACH:
			ret = megpu_taskq_detach(&r->t->gpu);
			break;
		case OP_NOTIFY:
			ret = megpu_taskq_wake(&r->t->gpu);
			break;
		case OP_WAIT:
			ret = megpu_taskq_wait(&r->t->gpu, rand_r(&seed) % 2 ?
					       0 : 1000000);
			break;
		case OP_NEW_QUEUE:
			ret = race_new_queue(r, &h);
			if (ret)
				break;
			old = atomic_exchange(&r->handle, h);
			if (old)
				race_check(r, OP_CLOSE_QUEUE,
					   race_close(r, old));
			break;
		case OP_CLOSE_QUEUE:
			old = atomic_exchange(&r->handle, 0);
			if (old)
				ret = race_close(r, old);
			break;
		case OP_SUBMIT:
			ret = race_submit(r, ffs(r->engines) - 1);
			break;
		}
		race_check(r, op, ret);
		atomic_fetch_add(&r->ops, 1);
	}
	return NULL;
}

MT_FIXTURE(race);

/* The engines the driver's dequeuer serves, and a queue BO; 0 or skip. */
static int race_prepare(struct race *r, struct mt *t)
{
	uint32_t h;
	int ret;

	r->t = t;
	for (unsigned int e = 0; e < t->engines; e++)
		if (mt_type(t, e) == MEGPU_ENGINE_GFX ||
		    mt_type(t, e) == MEGPU_ENGINE_COMPUTE)
			r->engines |= 1u << e;
	if (!r->engines)
		return -ENODEV;
	if (megpu_taskq_detach(&t->gpu) == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	ret = race_new_queue(r, &h);
	if (!ret)
		atomic_store(&r->handle, h);
	return ret;
}

/* Run @fn[i] in RACE_THREADS threads for race_s seconds. */
static void race_spawn(struct race *r,
		       void *(*const fn[RACE_THREADS])(void *))
{
	pthread_t th[RACE_THREADS];

	r->until = megpu_now_ns() +
		   megpu_test_cmdline("race_s", 4) * 1000000000ll;
	for (unsigned int i = 0; i < RACE_THREADS; i++)
		pthread_create(&th[i], NULL, fn[i], r);
	for (unsigned int i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
}

/* The client and its engines still work after a race. */
static void race_verify(struct __test_metadata *_metadata, struct race *r)
{
	struct megpu_bo *probe;
	uint32_t h;
	int err = atomic_load(&r->last_bad);

	TH_LOG("%u ioctls, %u attachments, %u unexpected errnos",
	       atomic_load(&r->ops), atomic_load(&r->attached),
	       atomic_load(&r->bad_errno));
	EXPECT_EQ(0, atomic_load(&r->bad_errno)) {
		TH_LOG("last: op %d errno %d", err >> 16, err & 0xffff);
	}
	EXPECT_LT(0, atomic_load(&r->attached));
	megpu_taskq_detach(&r->t->gpu);
	ASSERT_EQ(0, race_new_queue(r, &h));
	EXPECT_EQ(0, race_attach(r, h));
	EXPECT_EQ(0, megpu_taskq_detach(&r->t->gpu));
	EXPECT_EQ(0, race_close(r, h));
	ASSERT_EQ(0, mt_bo(&r->t->gpu, 4096, 0, &probe));
	for (unsigned int e = 0; e < r->t->engines; e++)
		EXPECT_EQ(0, mt_probe_engine(r->t, e, probe, 4 * e,
					     0x5a00 + e));
	megpu_bo_free(probe);
}

/* What the threads of each case run. */
FIXTURE_VARIANT(race) {
	void *(*fn[RACE_THREADS])(void *);
};

/*
 * One thread attaches and three detach, as fast as they can: a DETACH
 * finds each attachment the moment it is published (before the fix it
 * freed it under the attaching thread, which then armed its watchdog
 * and work in freed memory).
 */
FIXTURE_VARIANT_ADD(race, attach_detach_storm) {
	.fn = { race_attacher, race_detacher, race_detacher, race_detacher },
};

/*
 * Attach, detach, notify, queue BOs coming and going and submits, in a
 * random mix on every thread.
 */
FIXTURE_VARIANT_ADD(race, random_ops) {
	.fn = { race_thread, race_thread, race_thread, race_thread },
};

/* Only documented errnos, no kernel report, the client works afterwards. */
TEST_F_TIMEOUT(race, taskq, 300)
{
	struct race r = { 0 };
	int ret = race_prepare(&r, &self->t);

	if (ret == -ENODEV || ret == -EOPNOTSUPP)
		SKIP(return, "no task queues or no engine for them");
	ASSERT_EQ(0, ret);
	race_spawn(&r, variant->fn);
	race_verify(_metadata, &r);
}

TEST_HARNESS_MAIN
