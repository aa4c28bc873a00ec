// SPDX-License-Identifier: GPL-2.0
/*
 * Tests that hold the device's posted writes at runtime (the test-only
 * register TEST_HOLD, with the device property x-test-regs=on; debugfs
 * "test_hold"), for what only a held write shows:
 *
 * - free_job never waits for the device: a job whose release waits for
 *   a host flush that is held does not keep the next job of its engine
 *   out of the ring, and its BO is freed, not kept, once the flush comes
 *   (issue 15, item 7);
 * - an engine reset is preceded by a host flush, so the writes of a
 *   completed NO_FLUSH job land instead of being dropped (item 6);
 * - a HOST_FLUSH job whose flush never comes times out alone: the
 *   engine is not reset and the job behind it completes (item 5);
 * - a flush a function level reset swallowed is not waited for again;
 * - a HOST_FLUSH job failed at its timeout leaves its BO's pages to a
 *   flush, and so does a mapping that failed half-made;
 * - a BO kept because its unmap gave up on a flush goes with the device.
 *
 * Without x-test-regs every test skips. The write mode must be relaxed.
 */

#include <pthread.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

FIXTURE(hold) {
	struct mt t;
};

FIXTURE_SETUP(hold)
{
	ASSERT_EQ(0, mt_open(&self->t));
	if (mt_relaxed(&self->t) != 1)
		SKIP(return, "write mode strict: no posted writes to hold");
	if (mt_hold_set(&self->t, MEGPU_TEST_HOLD_ALL) ||
	    mt_hold_get(&self->t) != MEGPU_TEST_HOLD_ALL)
		SKIP(return, "no TEST_HOLD (boot with x-test-regs=on)");
	ASSERT_EQ(0, mt_hold_set(&self->t, MEGPU_TEST_HOLD_NONE));
}

/* Whatever a test did: release the writes, let them land. */
FIXTURE_TEARDOWN_PARENT(hold)
{
	uint64_t seqno;

	mt_hold_set(&self->t, MEGPU_TEST_HOLD_NONE);
	megpu_flush(&self->t.gpu, &seqno);
	mt_close(&self->t);
}

/* debugfs "engines": the resets of @engine, or -1. */
static long resets(struct mt *t, unsigned int engine)
{
	return mt_engine_count(t, engine, " resets ");
}

/*
 * J1 (NO_FLUSH) writes a BO whose handle is closed while J1 runs: J1's
 * release drops the BO's last mapping, whose pages wait for a host flush,
 * and the flush is held. J2, the next job of the engine, must still be
 * put in the ring and complete meanwhile: free_job must not wait. Once
 * the hold ends, J1's release finishes and frees the BO; a release that
 * gave up waiting would keep the BO for good (the counters say).
 */
TEST_F_TIMEOUT(hold, release_does_not_wait_for_the_flush, 120)
{
	uint64_t base[MT_COUNTERS];
	struct megpu_flush_stats st;
	struct megpu_bo *b, *c, *gate;
	struct mt *t = &self->t;
	struct mt_job j1, j2;
	unsigned int e = 0;
	uint64_t seqno;

	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &c));
	ASSERT_EQ(0, mt_counters(&t->gpu, base));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &b));
	ASSERT_EQ(0, mt_write_job(t, &j1, e, b, 0, 0x1, gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	megpu_bo_free(b);	/* J1 holds the last reference of the mapping */

	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	mt_gate_open(gate);
	/*
	 * Its TIMESTAMP is no posted write: J1 completes, its data is held.
	 * The jobs' IB BOs stay open until the hold ends: closing one would
	 * unmap it in the ioctl, which waits for a flush too.
	 */
	ASSERT_EQ(0, mt_job_done(&j1, mt_job_ns(t)));

	/* the next job of the engine runs while J1's release waits */
	ASSERT_EQ(0, mt_write_job(t, &j2, e, c, 0, 0x2, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	EXPECT_EQ(0, mt_job_done(&j2, mt_job_ns(t)))
		TH_LOG("the engine's next job did not complete while a "
		       "released job's flush was held");
	/*
	 * and the flush J1's release started (in the cleanup worker, which
	 * may come a little after J2) is still not acknowledged
	 */
	for (unsigned int i = 0; i < 200; i++) {
		ASSERT_EQ(0, mt_flush_stats(t, &st));
		if (st.host_done < st.host_started)
			break;
		usleep(10 * 1000);
	}
	EXPECT_LT(st.host_done, st.host_started);
	EXPECT_EQ(MEGPU_TEST_HOLD_ALL, mt_hold_get(t));

	/* the flush comes: J1's release frees the BO, nothing is kept */
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	mt_job_free(&j1);
	mt_job_free(&j2);
	MT_EXPECT_COUNTERS_SETTLE(&t->gpu, base, 10000,
				  "the release gave up and kept the BO");
	ASSERT_EQ(0, megpu_flush(&t->gpu, &seqno));
	EXPECT_EQ(0x2, mt_u32(c)[0]);
	megpu_bo_free(c);
	megpu_bo_free(gate);
}

/*
 * A completed NO_FLUSH job's write is still queued (held until a flush)
 * when another client's job hangs on the same engine. The engine reset
 * that ends the hang drops the engine's queued writes, so the driver
 * flushes first: the completed job's write lands, as the uAPI promises.
 */
TEST_F_TIMEOUT(hold, reset_keeps_completed_writes, 120)
{
	struct megpu_bo *x, *never, *gate;
	struct mt *t = &self->t;
	struct mt_job w, h;
	unsigned int e = 0;
	uint64_t seqno;
	long resets0;
	struct mt o;

	resets0 = resets(t, e);
	ASSERT_LE(0, resets0);
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_TIME));
	ASSERT_EQ(0, mt_write_job(t, &w, e, x, 0, 0x600d, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	/* its IB BO stays open: closing it would flush (see above) */
	ASSERT_EQ(0, mt_job_done(&w, mt_job_ns(t)));
	/* held: only a flush lands it */
	EXPECT_EQ(0, mt_u32(x)[0]) TH_LOG("the write landed without a flush");

	/* another client hangs the engine: timeout, engine reset */
	ASSERT_EQ(0, mt_open_client(t, &o));
	ASSERT_EQ(0, mt_bo(&o.gpu, 4096, 0, &never));
	ASSERT_EQ(0, mt_bo(&o.gpu, 4096, 0, &gate));	/* never opened */
	ASSERT_EQ(0, mt_write_job(&o, &h, e, never, 0, 1, gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	EXPECT_EQ(-ETIMEDOUT, mt_job_finish(&h, mt_job_ns(t)));
	EXPECT_EQ(resets0 + 1, resets(t, e));

	/* whatever is still queued lands now; a dropped write never does */
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	ASSERT_EQ(0, megpu_flush(&t->gpu, &seqno));
	EXPECT_EQ(0x600d, mt_u32(x)[0])
		TH_LOG("the engine reset dropped a completed job's write");
	mt_job_free(&w);
	megpu_bo_free(gate);
	megpu_bo_free(never);
	mt_close(&o);
	megpu_bo_free(x);
}

/*
 * J1's release waits for a host flush that is held, as above, and then a
 * function level reset drops the device's queued writes and its flush
 * count: the flush is as done as it will ever be, and the release must
 * free the BO. (The driver used to count its flushes from 0 again after
 * the reset, and the release went on waiting for its flush's number to
 * come round: the BO was kept for good. A few flushes first make that
 * number larger than the flushes that come after the reset.)
 */
TEST_F_TIMEOUT(hold, flush_swallowed_by_a_reset_is_not_waited_for, 120)
{
	uint64_t base[MT_COUNTERS], seqno;
	struct megpu_flush_stats st;
	struct megpu_bo *b, *gate;
	struct mt *t = &self->t;
	struct mt_job j1;
	int ret;

	for (unsigned int i = 0; i < 20; i++)
		ASSERT_EQ(0, megpu_flush(&t->gpu, &seqno));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_counters(&t->gpu, base));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &b));
	ASSERT_EQ(0, mt_write_job(t, &j1, 0, b, 0, 0x1, gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	megpu_bo_free(b);	/* J1 holds the last reference of the mapping */
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	mt_gate_open(gate);
	ASSERT_EQ(0, mt_job_done(&j1, mt_job_ns(t)));
	mt_job_free(&j1);
	/* the release's flush is waiting, held (once its worker started it) */
	for (unsigned int i = 0; i < 500; i++) {
		ASSERT_EQ(0, mt_flush_stats(t, &st));
		if (st.host_done < st.host_started)
			break;
		usleep(10 * 1000);
	}
	EXPECT_LT(st.host_done, st.host_started);

	ret = mt_flr(&t->gpu);
	if (ret == -ENOENT || ret == -EACCES)
		SKIP(return, "no function level reset (%d)", ret);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	MT_EXPECT_COUNTERS_SETTLE(&t->gpu, base, 10000,
				  "the release waits for a flush the reset dropped");
	/* the driver's counts went on: a flush after the reset completes */
	ASSERT_EQ(0, mt_flush_stats(t, &st));
	EXPECT_EQ(st.host_done, st.host_started);
	EXPECT_EQ(0, megpu_flush(&t->gpu, &seqno));
	EXPECT_LT(20, seqno);
	megpu_bo_free(gate);
}

/*
 * A HOST_FLUSH job H whose host flush is held: its engine is done with
 * it, its fence waits for the flush acknowledgment, and it times out.
 * H alone is blamed: the engine is not reset, and J, on the same engine
 * behind H and held by a gate when H times out, completes fine.
 */
TEST_F_TIMEOUT(hold, stuck_host_flush_blames_only_its_job, 120)
{
	struct megpu_bo *x, *y, *gate;
	struct mt *t = &self->t;
	struct mt_job hj, j;
	unsigned int e = 0;
	long resets0;

	resets0 = resets(t, e);
	ASSERT_LE(0, resets0);
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &y));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	ASSERT_EQ(0, mt_write_job(t, &hj, e, x, 0, 0x11, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_HOST_FLUSH));
	ASSERT_EQ(0, mt_write_job(t, &j, e, y, 0, 0x22, gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH |
				  DRM_MEGPU_SUBMIT_NO_IMPLICIT));

	/* the IB BOs stay open until the hold ends (see above) */
	EXPECT_EQ(-ETIMEDOUT, mt_job_done(&hj, mt_job_ns(t)))
		TH_LOG("the job whose flush never came was not blamed");
	/* J, in the ring behind H when H timed out, was not */
	EXPECT_TRUE(mt_pending(&t->gpu, j.sync, 0));
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_done(&j, mt_job_ns(t)))
		TH_LOG("an innocent job was blamed for the stuck flush");
	EXPECT_EQ(resets0, resets(t, e)) TH_LOG("the engine was reset");
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	mt_job_free(&hj);
	mt_job_free(&j);
	megpu_bo_free(gate);
	megpu_bo_free(y);
	megpu_bo_free(x);
}

/*
 * A HOST_FLUSH job its engine finishes just before its timeout, its host
 * flush held a little past it: the flush gets a timeout period of its
 * own, and the job completes when the flush comes. (The timeout used to
 * fail it at once, -ETIMEDOUT for a job that ran fine, and its
 * consumers with it.)
 */
TEST_F_TIMEOUT(hold, host_flush_gets_its_own_timeout, 120)
{
	struct megpu_bo *x, *gate;
	struct mt *t = &self->t;
	unsigned int e = 0;
	struct mt_job hj;

	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	ASSERT_EQ(0, mt_write_job(t, &hj, e, x, 0, 0x11, gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_HOST_FLUSH));
	/* the engine ends the job a fifth of the timeout before it */
	usleep((t->timeout_ms - t->timeout_ms / 5) * 1000);
	mt_gate_open(gate);
	/* the flush comes a fifth of the timeout after it */
	usleep(t->timeout_ms * 2 / 5 * 1000);
	EXPECT_TRUE(mt_pending(&t->gpu, hj.sync, 0))
		TH_LOG("the job whose engine finished it was failed");
	EXPECT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	EXPECT_EQ(0, mt_job_done(&hj, mt_job_ns(t)));
	EXPECT_EQ(0x11, *(volatile uint32_t *)x->map);
	mt_job_free(&hj);
	megpu_bo_free(gate);
	megpu_bo_free(x);
}

/*
 * @key once it holds still for 50 ms (up to 2 s): what earlier tests
 * released may still be freed by the driver's workers meanwhile.
 */
static long long settled(struct mt *t, const char *key)
{
	long long v = mt_counter(&t->gpu, key), was;

	for (unsigned int i = 0; i < 40; i++) {
		usleep(50 * 1000);
		was = v;
		v = mt_counter(&t->gpu, key);
		if (v == was)
			break;
	}
	return v;
}

/*
 * H (HOST_FLUSH) writes X, whose handle is closed after the submit: H's
 * release drops X's last mapping. H's flush is held, so H times out, its
 * write still queued. Its release must not take that for drained: X's
 * pages wait for a flush. (The failed job left no dirty mark, and its
 * release freed X at once, with H's write queued for X's pages.)
 */
TEST_F_TIMEOUT(hold, timed_out_host_flush_leaves_its_bo_to_a_flush, 120)
{
	uint64_t base[MT_COUNTERS], seqno;
	struct megpu_flush_stats st;
	struct mt *t = &self->t;
	struct megpu_bo *x;
	struct mt_job hj;
	long long bos;

	/* nothing dirty from before: only H's write may need a flush */
	ASSERT_EQ(0, megpu_flush(&t->gpu, &seqno));
	settled(t, "bos");
	ASSERT_EQ(0, mt_counters(&t->gpu, base));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	ASSERT_EQ(0, mt_write_job(t, &hj, 0, x, 0, 0x11, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_HOST_FLUSH));
	megpu_bo_free(x);	/* H holds the last reference of the mapping */
	bos = mt_counter(&t->gpu, "bos");
	ASSERT_LT(0, bos);
	ASSERT_EQ(-ETIMEDOUT, mt_job_done(&hj, mt_job_ns(t)));
	/* the job is freed and released meanwhile; X must stay */
	for (unsigned int i = 0; i < 100; i++) {
		EXPECT_EQ(bos, mt_counter(&t->gpu, "bos"))
			TH_LOG("X was freed with a failed job's write queued");
		if (mt_counter(&t->gpu, "bos") != bos)
			break;
		usleep(10 * 1000);
	}
	ASSERT_EQ(0, mt_flush_stats(t, &st));
	EXPECT_LT(st.host_done, st.host_started);

	/* the flush comes: X goes */
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	mt_job_free(&hj);	/* its IB BO: after the hold (see above) */
	MT_EXPECT_COUNTERS_SETTLE(&t->gpu, base, 10000,
				  "X was kept after the flush came");
}

#define PT_SPAN		(4ull << 20)	/* what one page table maps */
#define BIG		(8ull << 20)

/* pinned_mb headroom: the limit in MiB less what all megpu BOs pin */
static long long headroom(struct mt *t, unsigned long long limit_mb)
{
	long long pinned = mt_counter(&t->gpu, "pinned_bytes");

	return pinned < 0 ? -1 : (long long)(limit_mb << 20) - pinned;
}

/*
 * A BO's mapping that fails half-made (its first page table existed,
 * the next could not be charged: pinned_mb leaves room for the BO's
 * pages, not for another page table) had its first entries written: a
 * job may have queued writes through them. Its pages may go only after
 * a flush, when a job may not have drained its writes (a NO_FLUSH job
 * completed). The failed mapping used to count as never made, and its
 * pages went without one.
 */
TEST_F_TIMEOUT(hold, half_made_mapping_is_drained, 120)
{
	uint64_t base[MT_COUNTERS];
	struct megpu_flush_stats st0, st1;
	struct megpu_bo *a, *b, *x, *fill[8];
	unsigned long long limit;
	char *old, lim[32];
	struct mt *t = &self->t;
	unsigned int nfill = 0;
	long long room;
	struct mt_job w;
	struct mt o;
	int ret;

	ASSERT_EQ(0, mt_open_client(t, &o));
	ASSERT_EQ(0, mt_bo(&o.gpu, 4096, 0, &a));
	/* the big BO goes after A and its guard page, in A's page table */
	if ((a->va + 8192) % PT_SPAN == 0)
		SKIP(goto out_a, "A ends where a page table does");

	/* a completed NO_FLUSH job: the device may hold unflushed writes */
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_write_job(t, &w, 0, x, 0, 0x5, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	ASSERT_EQ(0, mt_job_done(&w, mt_job_ns(t)));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_TIME));

	/* room for the big BO's pages exactly, none for a page table */
	old = mt_slurp(MT_PARAM_DIR "pinned_mb");
	ASSERT_NE(NULL, old);
	limit = (settled(t, "pinned_bytes") + BIG + (1 << 20) - 1) >> 20;
	for (unsigned int i = 0; (room = headroom(t, limit)) != (long long)BIG;
	     i++) {
		/* each round fills up or raises the limit: a few suffice */
		ASSERT_LT(i, 16) TH_LOG("pinned_bytes kept moving");
		ASSERT_LE(0, room);
		if (room < (long long)BIG) {
			limit++;	/* a filler's page table took some */
			continue;
		}
		ASSERT_GT(ARRAY_SIZE(fill), nfill);
		ASSERT_EQ(0, mt_bo(&t->gpu, room - BIG, 0, &fill[nfill++]));
	}
	snprintf(lim, sizeof(lim), "%llu", limit);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "pinned_mb", lim));
	ASSERT_EQ(0, mt_counters(&t->gpu, base));
	ASSERT_EQ(0, mt_flush_stats(t, &st0));
	ret = megpu_bo_new(&o.gpu, BIG, 0, &b);
	mt_write_file(MT_PARAM_DIR "pinned_mb", old);
	free(old);
	ASSERT_EQ(-ENOMEM, ret) {
		if (!ret)
			megpu_bo_free(b);
		TH_LOG("the big BO's mapping did not fail at its page table");
	}
	ASSERT_EQ(0, mt_flush_stats(t, &st1));
	EXPECT_LT(st0.host_started, st1.host_started)
		TH_LOG("a half-made mapping's pages went without a flush");
	EXPECT_EQ(st1.host_done, st1.host_started);
	MT_EXPECT_COUNTERS_SETTLE(&t->gpu, base, 10000,
				  "the failed BO was kept");

	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	while (nfill--)
		megpu_bo_free(fill[nfill]);
	mt_job_free(&w);
	megpu_bo_free(x);
out_a:
	megpu_bo_free(a);
	mt_close(&o);
}

#define FLUSH_THREADS 96	/* more than the driver's 64 waiting slots */

/*
 * A thread that waits for a flush once every thread is ready (@start):
 * the hold then lasts from the first wait to its release, not through
 * the threads' creation (slow on the debug kernel, and past the 1 s a
 * waiter may wait).
 */
struct flusher {
	struct megpu *gpu;
	pthread_barrier_t *start;
	int ret;
};

static void *flusher(void *arg)
{
	struct flusher *f = arg;
	uint64_t seqno;

	pthread_barrier_wait(f->start);
	f->ret = megpu_flush(f->gpu, &seqno);
	return NULL;
}

/* debugfs "flush": the waiters for a flush acknowledgment, or -1. */
static long flush_waiters(struct mt *t)
{
	char *text = mt_debugfs(t, "flush"), *p;
	long n = -1;

	p = text ? strstr(text, "flush_waiters ") : NULL;
	if (p)
		n = strtol(p + strlen("flush_waiters "), NULL, 10);
	free(text);
	return n;
}

/* A BO made and closed: its unmap waits for a host flush when dirty. */
static void *closer(void *arg)
{
	struct flusher *f = arg;
	struct megpu_bo *bo;

	f->ret = mt_bo(f->gpu, 4096, 0, &bo);
	pthread_barrier_wait(f->start);
	if (!f->ret)
		megpu_bo_free(bo);
	return NULL;
}

/*
 * The device dirty, its flushes held: a NO_FLUSH job's write (0x1 into
 * @b), done, that no flush drains until mt_hold_set(NONE). Unmaps and
 * FLUSH wait for it meanwhile.
 */
static void dirty_and_held(struct __test_metadata *_metadata, struct mt *t,
			   struct mt_job *j, struct megpu_bo **gate,
			   struct megpu_bo **b)
{
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, b));
	ASSERT_EQ(0, mt_write_job(t, j, 0, *b, 0, 0x1, *gate, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_FLUSH));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_ALL));
	mt_gate_open(*gate);
	ASSERT_EQ(0, mt_job_done(j, mt_job_ns(t)));
}

/*
 * FLUSH_THREADS threads run @fn while a completed NO_FLUSH job's write
 * is held, so that their flushes wait; the hold ends within the flush's
 * 1 s timeout. At most 64 of them may wait for the acknowledgment at once
 * (debugfs "flush"), and each must succeed once the hold ends.
 */
static void expect_flush_waiters_bounded(struct __test_metadata *_metadata,
					 struct mt *t, void *(*fn)(void *))
{
	struct flusher f[FLUSH_THREADS];
	pthread_t th[FLUSH_THREADS];
	struct megpu_bo *gate, *b;
	pthread_barrier_t start;
	long most = 0, n;
	struct mt_job j;
	int i;

	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, FLUSH_THREADS + 1));
	dirty_and_held(_metadata, t, &j, &gate, &b);
	for (i = 0; i < FLUSH_THREADS; i++) {
		f[i] = (struct flusher){ &t->gpu, &start, 1 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fn, &f[i]));
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < 10; i++) {
		usleep(10000);
		n = flush_waiters(t);
		ASSERT_LE(0, n) TH_LOG("no flush_waiters in debugfs flush");
		if (n > most)
			most = n;
	}
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	for (i = 0; i < FLUSH_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	EXPECT_LT(0, most);
	EXPECT_GE(64, most);
	for (i = 0; i < FLUSH_THREADS; i++)
		EXPECT_EQ(0, f[i].ret) TH_LOG("thread %d", i);
	EXPECT_EQ(0x1, mt_u32(b)[0]);
	mt_job_free(&j);
	megpu_bo_free(b);
	megpu_bo_free(gate);
}

/*
 * The FLUSH_DONE interrupt wakes every waiter of a flush, interrupts off:
 * however many threads call FLUSH while flushes are held, at most 64
 * wait for the acknowledgment (the others for a slot), and all of them
 * get their flush once the hold ends.
 */
TEST_F_TIMEOUT(hold, flush_waiters_are_bounded, 120)
{
	expect_flush_waiters_bounded(_metadata, &self->t, flusher);
}

/*
 * Closing a BO while the device is dirty waits for a host flush too (its
 * pages may not be freed under a queued write): the same bound holds for
 * any number of threads closing BOs. An early driver let them all wait.
 */
TEST_F_TIMEOUT(hold, unmap_flush_waiters_are_bounded, 120)
{
	expect_flush_waiters_bounded(_metadata, &self->t, closer);
}

/* /proc/meminfo's Shmem (where BOs' pages are), in KiB; -1 if unread */
static long long shmem_kib(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Shmem: %lld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

#define KEPT_BO	(16u << 20)

/*
 * An unmap that gives up waiting for a held flush (1 s) keeps its BO: the
 * device may still write its pages. But only until the device goes: the
 * unbind resets it (its queued writes are dropped) and the release frees
 * the BO, its pages and its mmap offset. An early driver kept it for good
 * (16 MiB gone, and drm_mm_takedown warned at the release).
 */
TEST_F_TIMEOUT(hold, kept_bo_goes_with_the_device, 120)
{
	long long before, now = -1, freed, kept;
	struct megpu_bo *gate, *b, *x;
	struct mt *t = &self->t;
	struct mt_job j;
	uint64_t seqno;
	char addr[64];
	int bound;

	ASSERT_EQ(0, mt_pci_address(&t->gpu, addr, sizeof(addr)));
	kept = mt_counter(&t->gpu, "kept");
	ASSERT_LE(0, kept) TH_LOG("no kept in debugfs counters");
	dirty_and_held(_metadata, t, &j, &gate, &b);
	ASSERT_EQ(0, mt_bo(&t->gpu, KEPT_BO, 0, &x));
	memset(mt_u32(x), 0x5a, KEPT_BO);
	megpu_bo_free(x);	/* its unmap waits 1 s for the flush */
	EXPECT_EQ(kept + 1, mt_counter(&t->gpu, "kept"))
		TH_LOG("the unmap did not keep the BO under a held flush");
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	ASSERT_EQ(0, megpu_flush(&t->gpu, &seqno));
	mt_job_free(&j);
	megpu_bo_free(b);
	megpu_bo_free(gate);
	mt_close(t);

	before = shmem_kib();
	ASSERT_LT(0, before);
	bound = mt_write_file(MT_DRIVER_DIR "/unbind", addr);
	/* the device's release follows its last job's, in a worker */
	for (int i = 0; !bound && i < 100; i++) {
		now = shmem_kib();
		if (before - now >= (KEPT_BO >> 10) * 3 / 4)
			break;
		usleep(20 * 1000);
	}
	freed = before - now;
	/* bound again, and the fixture's client back, whatever happened */
	ASSERT_EQ(0, bound);
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/bind", addr));
	ASSERT_EQ(0, mt_open(t));
	EXPECT_LE((long long)(KEPT_BO >> 10) * 3 / 4, freed)
		TH_LOG("the kept BO outlived its device: %lld KiB freed", freed);
}

struct closing {
	struct mt *client;
	int ret;
	volatile bool done;
};

static void *detacher(void *arg)
{
	struct closing *c = arg;

	c->ret = megpu_taskq_detach(&c->client->gpu);
	c->done = true;
	return NULL;
}

static void *client_closer(void *arg)
{
	struct closing *c = arg;

	mt_close(c->client);
	c->done = true;
	return NULL;
}

/*
 * A detach frees the attachment's IB, whose unmap waits for a host flush
 * while the device is dirty, under the device's attachment mutex. An
 * unrelated client's close, which has no attachment, must not wait for
 * it: an early driver took that mutex in every close.
 */
TEST_F_TIMEOUT(hold, close_does_not_wait_for_a_detach, 60)
{
	struct drm_megpu_taskq_queue ref = { .slots = 64 };
	struct closing d = { 0 }, c = { 0 };
	struct megpu_bo *qbo, *gate, *b;
	struct mt *t = &self->t, other;
	pthread_t td, tc;
	struct megpu_taskq q;
	struct mt_job j;
	int i;

	if (!mt_has_cap(t, MEGPU_CAP_TASKQ))
		SKIP(return, "no task queues");
	ASSERT_EQ(0, mt_taskq_bo(t, 64, &q, &qbo));
	ref.handle = qbo->handle;
	ASSERT_EQ(0, megpu_taskq_attach(&t->gpu, &ref, 1, 1u << 0));
	ASSERT_EQ(0, mt_open_client(t, &other));

	dirty_and_held(_metadata, t, &j, &gate, &b);

	d.client = t;
	ASSERT_EQ(0, pthread_create(&td, NULL, detacher, &d));
	for (i = 0; i < 50 && flush_waiters(t) < 1; i++)
		usleep(10000);
	ASSERT_LE(1, flush_waiters(t)) TH_LOG("the detach did not flush");
	c.client = &other;
	ASSERT_EQ(0, pthread_create(&tc, NULL, client_closer, &c));
	/* the held flush lasts up to its 1 s timeout: well before that */
	for (i = 0; i < 30 && !c.done; i++)
		usleep(10000);
	EXPECT_TRUE(c.done) TH_LOG("a close waited for another file's detach");
	EXPECT_FALSE(d.done);
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
	pthread_join(tc, NULL);
	pthread_join(td, NULL);
	EXPECT_EQ(0, d.ret);
	mt_job_free(&j);
	megpu_bo_free(b);
	megpu_bo_free(gate);
	megpu_bo_free(qbo);
}

TEST_HARNESS_MAIN
