// SPDX-License-Identifier: GPL-2.0
/*
 * Flushes for dependent computations (seed 004). In the device's relaxed
 * write mode the data writes of an engine reach memory late and out of
 * order; the driver's memory model (uapi "Memory model") says when they
 * are visible:
 *
 * - a job's fence means visible data with the default GPU-internal flush
 *   (a FLUSH at the end of its frame) and with DRM_MEGPU_SUBMIT_HOST_FLUSH
 *   (the host-driven handshake of FIG. 4: idle, flush, flush done, then
 *   the fence), and only that the packets ran with DRM_MEGPU_SUBMIT_NO_FLUSH;
 * - an engine going idle says nothing about its writes; a flush does
 *   (DRM_IOCTL_MEGPU_FLUSH);
 * - inside an IB, a FLUSH packet orders the writes before a later SIGNAL.
 *
 * Every guarantee is checked beside its negative control, where the race
 * must show within a bounded number of tries. The device's delays and
 * landing order are seeded (per-engine generators, a memory clock of
 * engine ticks and virtual time: Documentation/megpu-hw.rst "Timing
 * model"), but in a guest virtual time runs at host speed between a
 * fence and the CPU's read, so each control stops at the first stale
 * read; the device's own qtests check the replay. Booted with
 * x-test-regs=on (the hold and debug-kernel lanes) the controls hold the
 * posted writes with TEST_HOLD instead, and every run must be stale.
 * The controls need relaxed mode and skip with a message when
 * debugfs says the device is strict. Counters come from debugfs "flush"
 * through the library (megpu_flush_stats()).
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define PAGES 32		/* a pattern of 32 posted writes, one a page */
#define PAGE_DW 16		/* dwords written per page */
#define DATA_BYTES (PAGES * 4096)
#define TRIES 200		/* negative controls: at most this many */
#define RUNS 100		/* guarantees: this many clean runs */
#define BUDGET_NS 25000000000ll	/* a loop stops early after 25 s */
#define IMG_W 128
#define IMG_H 128

MT_FIXTURE(gpu)

/* Skip unless the device posts writes and debugfs "flush" reads. */
#define NEED_FLUSH(t)							\
	do {								\
		struct megpu_flush_stats _st;				\
		if (!mt_has_flush(t))					\
			SKIP(return, "the device has no posted writes");\
		if (mt_flush_stats(t, &_st))				\
			SKIP(return, "no debugfs \"flush\"");		\
	} while (0)

/* Negative controls need writes that can be late. */
#define NEED_RELAXED(t)							\
	do {								\
		if (mt_relaxed(t) != 1)					\
			SKIP(return, "debugfs \"flush\" says write_mode "\
			     "strict: writes are never late, nothing to "\
			     "show");					\
	} while (0)

/*
 * Negative controls: TEST_HOLD_TIME (x-test-regs boots) keeps posted
 * writes queued until a flush lands them, so every run without a flush
 * must read stale data, however slow the guest is. Without it the
 * control is the timed race, stopped at its first stale run; a slow
 * guest (the debug kernel: KASAN and lockdep under TCG) can take longer
 * from a fence to the read than the device takes to land the writes, and
 * lose that race every time.
 */
static bool hold_writes(struct mt *t)
{
	return !mt_hold_set(t, MEGPU_TEST_HOLD_TIME) &&
	       mt_hold_get(t) == MEGPU_TEST_HOLD_TIME;
}

/* Land what the control left queued and let time land writes again. */
static void release_writes(struct __test_metadata *_metadata, struct mt *t)
{
	EXPECT_EQ(0, megpu_flush(&t->gpu, NULL));
	ASSERT_EQ(0, mt_hold_set(t, MEGPU_TEST_HOLD_NONE));
}

/* Two different engines: producer @p and consumer @c (1 and 2 if any). */
static void pick_pair(const struct mt *t, unsigned int *p, unsigned int *c)
{
	*p = 1 % t->engines;
	*c = 2 % t->engines;
	if (*c == *p)
		*c = (*p + 1) % t->engines;
}

/* WRITE_DATA @value to the first PAGE_DW dwords of each of the pages. */
static void cs_pattern(struct megpu_cs *cs, struct megpu_bo *bo,
		       uint32_t value)
{
	uint32_t data[PAGE_DW];
	unsigned int i;

	for (i = 0; i < PAGE_DW; i++)
		data[i] = value;
	for (i = 0; i < PAGES; i++)
		megpu_cs_write_data(cs, bo->va + i * 4096, data, PAGE_DW);
}

/* Pages of @bo whose pattern is not (yet) @value. */
static unsigned int stale_pages(struct megpu_bo *bo, uint32_t value)
{
	const volatile uint32_t *p = bo->map;
	unsigned int i, j, stale = 0;

	for (i = 0; i < PAGES; i++)
		for (j = 0; j < PAGE_DW; j++)
			if (p[i * 1024 + j] != value) {
				stale++;
				break;
			}
	return stale;
}

/*
 * Run the pattern @value on the prepared producer @j and wait for its
 * fence; nothing is freed (freeing a BO flushes NO_FLUSH writes first).
 */
static int produce(struct mt *t, struct mt_job *j, struct megpu_bo *bo,
		   uint32_t value)
{
	struct megpu_cs cs;
	int ret;

	megpu_cs_init(&cs);
	cs_pattern(&cs, bo, value);
	ret = mt_job_start(j, &cs);
	megpu_cs_fini(&cs);
	return ret ?: mt_job_done(j, mt_job_ns(t));
}

/*
 * Producer runs with @flags, the CPU reads right after each fence: how
 * many of @tries runs (stopping at the first, when @stop) saw stale data.
 */
static int cpu_reads(struct __test_metadata *_metadata, struct mt *t,
		     uint32_t flags, unsigned int tries, bool stop,
		     unsigned int *runs)
{
	int64_t end = megpu_now_ns() + BUDGET_NS;
	struct megpu_bo *bo;
	unsigned int i, stale = 0, pages = 0;
	struct mt_job j;

	ASSERT_EQ(0, mt_bo(&t->gpu, DATA_BYTES, 0, &bo));
	ASSERT_EQ(0, mt_job_prepare(&t->gpu, &j, 0, &bo, 1, flags));
	for (i = 0; i < tries && megpu_now_ns() < end; i++) {
		int ret = produce(t, &j, bo, i + 1);

		EXPECT_EQ(0, ret);
		if (ret)
			break;
		pages = stale_pages(bo, i + 1);
		if (pages) {
			stale++;
			if (stop) {
				i++;
				break;
			}
		}
	}
	*runs = i;
	TH_LOG("flags 0x%x: %u of %u runs read stale data (last: %u of %u "
	       "pages)", flags, stale, i, pages, PAGES);
	mt_job_free(&j);
	megpu_bo_free(bo);
	return stale;
}

/* Relaxed mode without a flush: the CPU sees data after the fence late. */
TEST_F_TIMEOUT(gpu, no_flush_cpu_reads_stale, 60)
{
	const uint32_t noflush = DRM_MEGPU_SUBMIT_NO_FLUSH;
	unsigned int runs;
	int stale;

	NEED_FLUSH(&self->t);
	NEED_RELAXED(&self->t);
	if (!hold_writes(&self->t)) {
		EXPECT_LT(0, cpu_reads(_metadata, &self->t, noflush, TRIES,
				       true, &runs))
			TH_LOG("no stale read in %u NO_FLUSH runs: are "
			       "writes posted?", runs);
		return;
	}
	stale = cpu_reads(_metadata, &self->t, noflush, 8, false, &runs);
	release_writes(_metadata, &self->t);
	EXPECT_EQ(8, runs);
	EXPECT_EQ((int)runs, stale)
		TH_LOG("writes held: only %d of %u NO_FLUSH runs read stale "
		       "data", stale, runs);
}

/* The default frame flush: a fence means visible data, every time. */
TEST_F_TIMEOUT(gpu, gpu_flush_cpu_reads_fresh, 60)
{
	unsigned int runs;

	NEED_FLUSH(&self->t);
	EXPECT_EQ(0, cpu_reads(_metadata, &self->t, 0, RUNS, false, &runs));
	EXPECT_LT(10, runs);
}

/* The host-driven handshake: the fence comes after the flush is done. */
TEST_F_TIMEOUT(gpu, host_flush_cpu_reads_fresh, 60)
{
	struct megpu_flush_stats a, b;
	unsigned int runs;

	NEED_FLUSH(&self->t);
	ASSERT_EQ(0, mt_flush_stats(&self->t, &a));
	EXPECT_EQ(0, cpu_reads(_metadata, &self->t,
			       DRM_MEGPU_SUBMIT_HOST_FLUSH, RUNS, false,
			       &runs));
	EXPECT_LT(10, runs);
	/* one host flush at least per job, started by the driver */
	ASSERT_EQ(0, mt_flush_stats(&self->t, &b));
	EXPECT_LE(a.host_started + runs, b.host_started);
	EXPECT_LE(a.host_done + runs, b.host_done);
}

/* Poll debugfs until @engine's idle counters passed @a's; 0 or -ETIME. */
static int wait_idle_counted(struct mt *t, unsigned int engine,
			     const struct megpu_flush_stats *a,
			     struct megpu_flush_stats *b)
{
	int64_t end = megpu_now_ns() + 2000000000ll;
	int ret;

	for (;;) {
		ret = mt_flush_stats(t, b);
		if (ret)
			return ret;
		if (b->eng[engine].idle_irqs > a->eng[engine].idle_irqs &&
		    b->eng[engine].idle_signals > a->eng[engine].idle_signals)
			return 0;
		if (megpu_now_ns() > end)
			return -ETIME;
		usleep(200);
	}
}

/*
 * F3: the engine going idle (its IDLE interrupt counted by the driver
 * and the device) does not make its writes visible; a host flush
 * (DRM_IOCTL_MEGPU_FLUSH) does, every time. Deterministic: the device's
 * TEST_HOLD keeps posted writes queued until a flush (x-test-regs boot),
 * so every run must be stale after idle with the writes shown queued.
 */
TEST_F_TIMEOUT(gpu, idle_is_not_visibility, 90)
{
	struct megpu_flush_stats a, b;
	uint64_t seqno, last = 0;
	unsigned int i, e = 0;
	struct megpu_bo *bo;
	struct mt_job j;

	NEED_FLUSH(&self->t);
	NEED_RELAXED(&self->t);
	if (mt_hold_set(&self->t, MEGPU_TEST_HOLD_TIME) ||
	    mt_hold_get(&self->t) != MEGPU_TEST_HOLD_TIME)
		SKIP(return, "no TEST_HOLD (boot with x-test-regs=on)");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, DATA_BYTES, 0, &bo));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, e, &bo, 1,
				    DRM_MEGPU_SUBMIT_NO_FLUSH));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mt_flush_stats(&self->t, &a));
		ASSERT_EQ(0, produce(&self->t, &j, bo, i + 1));
		ASSERT_EQ(0, wait_idle_counted(&self->t, e, &a, &b))
			TH_LOG("run %u: no idle interrupt counted on %s", i,
			       b.eng[e].name);
		/* idle, and the data is not there: its writes are queued */
		EXPECT_LT(0, stale_pages(bo, i + 1))
			TH_LOG("run %u: fresh after idle, writes held", i);
		EXPECT_LT(0, b.eng[e].queue + b.mc_queue)
			TH_LOG("run %u: stale after idle, but debugfs showed "
			       "empty queues", i);
		/* the flush makes it visible, always, and empties them */
		ASSERT_EQ(0, megpu_flush(&self->t.gpu, &seqno));
		EXPECT_LT(last, seqno);
		last = seqno;
		ASSERT_EQ(0, stale_pages(bo, i + 1))
			TH_LOG("run %u: stale after the flush", i);
		ASSERT_EQ(0, mt_flush_stats(&self->t, &b));
		EXPECT_EQ(0, b.eng[e].queue + b.mc_queue)
			TH_LOG("run %u: %u + %u writes queued after the flush",
			       i, b.eng[e].queue, b.mc_queue);
	}
	ASSERT_EQ(0, mt_hold_set(&self->t, MEGPU_TEST_HOLD_NONE));
	mt_job_free(&j);
	megpu_bo_free(bo);
}

/*
 * DRM_IOCTL_MEGPU_FLUSH: with nothing queued it completes and the queues
 * read empty; sequential flushes number 1, 2, 3...; the acknowledged
 * count in debugfs follows; bad flags or pad are refused.
 */
TEST_F(gpu, flush_ioctl)
{
	struct megpu_flush_stats st;
	uint64_t seq[16];
	unsigned int i, e;

	NEED_FLUSH(&self->t);
	/* anything earlier tests left is in memory after this one */
	ASSERT_EQ(0, megpu_flush(&self->t.gpu, &seq[0]));
	ASSERT_EQ(0, mt_flush_stats(&self->t, &st));
	EXPECT_EQ(0, st.mc_queue);
	for (e = 0; e < st.engines; e++)
		EXPECT_EQ(0, st.eng[e].queue)
			TH_LOG("%s", st.eng[e].name);
	/* nothing queued: still a flush, acknowledged */
	for (i = 1; i < 16; i++) {
		ASSERT_EQ(0, megpu_flush(&self->t.gpu, &seq[i]));
		EXPECT_EQ(seq[i - 1] + 1, seq[i])
			TH_LOG("flush %u: seqno %llu after %llu", i,
			       (unsigned long long)seq[i],
			       (unsigned long long)seq[i - 1]);
	}
	ASSERT_EQ(0, mt_flush_stats(&self->t, &st));
	EXPECT_LE(seq[15], st.host_done);
	EXPECT_LE(seq[15], st.host_started);
	EXPECT_EQ(st.host_started, st.host_done);

	EXPECT_EQ(-EINVAL, mt_flush_ioctl(&self->t, 1, 0, NULL));
	EXPECT_EQ(-EINVAL, mt_flush_ioctl(&self->t, 0x80000000, 0, NULL));
	EXPECT_EQ(-EINVAL, mt_flush_ioctl(&self->t, 0, 1, NULL));
	/* a refused call starts no flush */
	ASSERT_EQ(0, megpu_flush(&self->t.gpu, &seq[0]));
	EXPECT_EQ(seq[15] + 1, seq[0]);
}

/*
 * Producer on one engine, consumer copying its output on another, many
 * times; NO_IMPLICIT so that only the chosen link orders them:
 *   CHAIN_FENCE  the consumer waits for the producer's fence (in-sync);
 *                @flags are the producer's submit flags;
 *   CHAIN_IB_SEM the producer's IB writes, FLUSHes when @flags has
 *                CHAIN_FLUSH_PACKET, then SIGNALs a semaphore in a BO; the
 *                consumer, submitted first, WAITs for it in its own IB
 *                (the frame's flush comes after the IB, too late for it);
 *                the other @flags are the producer's submit flags.
 * Returns the iterations whose copy was stale (-1 on an error); stops at
 * the first one when @stop.
 */
enum chain_link { CHAIN_FENCE, CHAIN_IB_SEM };
#define CHAIN_FLUSH_PACKET	0x80000000u

static int stale_chain(struct __test_metadata *_metadata, struct mt *t,
		 enum chain_link link, uint32_t flags, unsigned int iters,
		 bool stop, unsigned int *runs)
{
	const uint32_t noimp = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	uint32_t prod_flags = flags & ~CHAIN_FLUSH_PACKET;
	int64_t end = megpu_now_ns() + BUDGET_NS;
	struct megpu_bo *src, *dst, *kargs, *sem;
	struct mt_job prod, cons;
	unsigned int p, c, i, stale = 0;
	struct megpu_cs cs;
	int ret;

	pick_pair(t, &p, &c);
	ASSERT_EQ(0, mt_bo(&t->gpu, DATA_BYTES, 0, &src));
	ASSERT_EQ(0, mt_bo(&t->gpu, DATA_BYTES, 0, &dst));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &kargs));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &sem));
	megpu_cs_init(&cs);
	ret = mt_job_prepare(&t->gpu, &prod, p, &src, 1, noimp | prod_flags);
	ret = ret ?: mt_job_prepare(&t->gpu, &cons, c, &dst, 1, noimp);
	ret = ret ?: megpu_job_add_bo(&cons.job, src, DRM_MEGPU_BO_READ);
	ret = ret ?: megpu_job_add_bo(&cons.job, kargs, DRM_MEGPU_BO_READ);
	if (link == CHAIN_FENCE) {
		ret = ret ?: megpu_job_wait_sync(&cons.job, prod.sync, 0);
		ret = ret ?: mt_cs_copy_any(t, c, &cs, src->va, dst->va,
					    DATA_BYTES / 4, kargs, 0);
		ret = ret ?: megpu_job_upload(&t->gpu, &cons.job, &cs);
	} else {
		ret = ret ?: megpu_job_add_bo(&prod.job, sem,
					      DRM_MEGPU_BO_WRITE);
		ret = ret ?: megpu_job_add_bo(&cons.job, sem,
					      DRM_MEGPU_BO_READ);
	}
	EXPECT_EQ(0, ret);
	for (i = 0; !ret && i < iters && megpu_now_ns() < end; i++) {
		if (link == CHAIN_IB_SEM) {
			megpu_cs_reset(&cs);
			megpu_cs_wait(&cs, sem->va, i + 1);
			ret = mt_cs_copy_any(t, c, &cs, src->va, dst->va,
					     DATA_BYTES / 4, kargs, 0);
			ret = ret ?: mt_job_start(&cons, &cs);
		}
		megpu_cs_reset(&cs);
		cs_pattern(&cs, src, i + 1);
		if (link == CHAIN_IB_SEM) {
			if (flags & CHAIN_FLUSH_PACKET)
				megpu_cs_flush(&cs);
			megpu_cs_signal(&cs, sem->va, i + 1);
		}
		ret = ret ?: mt_job_start(&prod, &cs);
		if (link == CHAIN_FENCE)
			ret = ret ?: megpu_job_submit(&t->gpu, &cons.job);
		ret = ret ?: mt_job_done(&cons, mt_job_ns(t));
		ret = ret ?: mt_job_done(&prod, mt_job_ns(t));
		EXPECT_EQ(0, ret)
			TH_LOG("iteration %u", i);
		if (!ret && stale_pages(dst, i + 1)) {
			stale++;
			if (stop) {
				i++;
				break;
			}
		}
	}
	*runs = i;
	TH_LOG("%s (engine %u) -> %s (engine %u), %s, flags 0x%x: %u of %u "
	       "consumers copied stale data", mt_name(t, p), p,
	       mt_name(t, c), c,
	       link == CHAIN_FENCE ? "in-sync" : "IB semaphore", flags,
	       stale, i);
	megpu_cs_fini(&cs);
	mt_job_free(&cons);
	mt_job_free(&prod);
	megpu_bo_free(sem);
	megpu_bo_free(kargs);
	megpu_bo_free(dst);
	megpu_bo_free(src);
	return ret ? -1 : (int)stale;
}

/*
 * The negative control of a chain (@link) whose producer does not flush
 * (@missing says what is left out): with the writes held every one of 8
 * consumers copies stale data, else the race shows within TRIES.
 */
static void chain_control(struct __test_metadata *_metadata, struct mt *t,
			  enum chain_link link, const char *missing)
{
	const uint32_t noflush = DRM_MEGPU_SUBMIT_NO_FLUSH;
	unsigned int runs;
	int stale;

	if (!hold_writes(t)) {
		EXPECT_LT(0, stale_chain(_metadata, t, link, noflush, TRIES,
					 true, &runs))
			TH_LOG("no stale copy in %u runs without %s", runs,
			       missing);
		return;
	}
	stale = stale_chain(_metadata, t, link, noflush, 8, false, &runs);
	release_writes(_metadata, t);
	EXPECT_EQ(8, runs);
	EXPECT_EQ((int)runs, stale)
		TH_LOG("writes held: only %d of %u consumers copied stale "
		       "data without %s", stale, runs, missing);
}

/* F6 with the host-driven handshake (FIG. 4): never a stale copy. */
TEST_F_TIMEOUT(gpu, dependent_launch_host_flush, 90)
{
	unsigned int runs;

	NEED_FLUSH(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	EXPECT_EQ(0, stale_chain(_metadata, &self->t, CHAIN_FENCE,
				 DRM_MEGPU_SUBMIT_HOST_FLUSH, 200, false,
				 &runs));
	EXPECT_LT(20, runs);
}

/* F8, the GPU-internal flush (the default): never a stale copy. */
TEST_F_TIMEOUT(gpu, dependent_launch_gpu_flush, 90)
{
	unsigned int runs;

	NEED_FLUSH(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	EXPECT_EQ(0, stale_chain(_metadata, &self->t, CHAIN_FENCE, 0, 200,
				 false, &runs));
	EXPECT_LT(20, runs);
}

/* The negative control: a NO_FLUSH producer's consumer copies old data. */
TEST_F_TIMEOUT(gpu, dependent_launch_no_flush_is_stale, 90)
{
	NEED_FLUSH(&self->t);
	NEED_RELAXED(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	chain_control(_metadata, &self->t, CHAIN_FENCE, "a flush");
}

TEST_F_TIMEOUT(gpu, flush_packet_orders_signal, 90)
{
	struct megpu_flush_stats a, b;
	unsigned int p, c, runs;

	NEED_FLUSH(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	pick_pair(&self->t, &p, &c);
	ASSERT_EQ(0, mt_flush_stats(&self->t, &a));
	EXPECT_EQ(0, stale_chain(_metadata, &self->t, CHAIN_IB_SEM,
				 CHAIN_FLUSH_PACKET, RUNS, false, &runs));
	EXPECT_LT(10, runs);
	/* the packet in the IB and the frame's: two FLUSHes a job */
	ASSERT_EQ(0, mt_flush_stats(&self->t, &b));
	EXPECT_LE(a.eng[p].flushes + 2 * runs, b.eng[p].flushes);
}

/*
 * The negative control of flush_packet_orders_signal: a SIGNAL without a
 * FLUSH packet before it lets the consumer copy old data. The producer's
 * job is NO_FLUSH: its frame's FLUSH would come after the SIGNAL, too
 * late to order anything, but it lands the writes a few microseconds
 * later, usually before the consumer's engine has woken up, so the race
 * would show only now and then. With TEST_HOLD (x-test-regs boot) only
 * flushes land writes, and every run must copy stale data.
 */
TEST_F_TIMEOUT(gpu, signal_without_flush_packet_is_stale, 90)
{
	NEED_FLUSH(&self->t);
	NEED_RELAXED(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	chain_control(_metadata, &self->t, CHAIN_IB_SEM, "the FLUSH packet");
}

/* Poll until @engine's idle_signals reach @want; the last stats in @b. */
static int wait_idle_signals(struct mt *t, unsigned int engine,
			     uint32_t want, struct megpu_flush_stats *b)
{
	int64_t end = megpu_now_ns() + 2000000000ll;
	int ret;

	for (;;) {
		ret = mt_flush_stats(t, b);
		if (ret || (int32_t)(b->eng[engine].idle_signals - want) >= 0)
			return ret;
		if (megpu_now_ns() > end)
			return -ETIME;
		usleep(1000);
	}
}

/*
 * F9: IDLE_SIGNAL raises the engine's IDLE interrupt where it is: a job
 * with three of them raises three more than the same job without (which
 * raises one, when the engine runs out of work), on every engine.
 */
TEST_F(gpu, idle_signal_packet_counts)
{
	struct megpu_flush_stats a, b;
	struct megpu_bo *bo;
	struct megpu_cs cs;
	uint32_t plain, with, want;
	unsigned int e;

	NEED_FLUSH(&self->t);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		/* the job alone */
		ASSERT_EQ(0, mt_flush_stats(&self->t, &a));
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, bo->va + 8 * e, 1);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1));
		ASSERT_EQ(0, wait_idle_signals(&self->t, e,
					       a.eng[e].idle_signals + 1, &b));
		usleep(20000);	/* anything late shows up */
		ASSERT_EQ(0, mt_flush_stats(&self->t, &b));
		plain = b.eng[e].idle_signals - a.eng[e].idle_signals;

		/* with three IDLE_SIGNAL packets */
		ASSERT_EQ(0, mt_flush_stats(&self->t, &a));
		megpu_cs_reset(&cs);
		megpu_cs_idle_signal(&cs);
		megpu_cs_write32(&cs, bo->va + 8 * e, 2);
		megpu_cs_idle_signal(&cs);
		megpu_cs_idle_signal(&cs);
		megpu_cs_write32(&cs, bo->va + 8 * e + 4, 3);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1));
		want = a.eng[e].idle_signals + plain + 3;
		ASSERT_EQ(0, wait_idle_signals(&self->t, e, want, &b))
			TH_LOG("%s: idle signals %u -> %u, the plain job "
			       "raised %u", b.eng[e].name,
			       a.eng[e].idle_signals, b.eng[e].idle_signals,
			       plain);
		usleep(20000);
		ASSERT_EQ(0, mt_flush_stats(&self->t, &b));
		with = b.eng[e].idle_signals - a.eng[e].idle_signals;
		EXPECT_EQ(plain + 3, with)
			TH_LOG("%s: %u idle signals with 3 IDLE_SIGNAL "
			       "packets, %u without", b.eng[e].name, with,
			       plain);
		/* and the driver counted interrupts for them */
		EXPECT_LT(a.eng[e].idle_irqs, b.eng[e].idle_irqs);
		/* the job's writes are in place (default flush) */
		EXPECT_EQ(2, mt_u32(bo)[2 * e]);
		EXPECT_EQ(3, mt_u32(bo)[2 * e + 1]);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

/* The blur and the sepia engines of the chain: compute and video. */
static int chain_engines(struct mt *t, unsigned int *be, unsigned int *se)
{
	int b = -1, s = -1;
	unsigned int e, k;

	for (e = 0; e < t->engines && b < 0; e++) {
		k = megpu_engine_kernels(mt_type(t, e));
		if (k & MEGPU_BIT(MEGPU_KERNEL_BLUR3X3))
			b = (int)e;
	}
	for (e = t->engines; e-- > 0 && s < 0;) {
		k = megpu_engine_kernels(mt_type(t, e));
		if ((int)e != b && (k & MEGPU_BIT(MEGPU_KERNEL_SEPIA)))
			s = (int)e;
	}
	if (b < 0 || s < 0)
		return -ENODEV;
	*be = (unsigned int)b;
	*se = (unsigned int)s;
	return 0;
}

/* A new image for each run, so that an old blurred image is wrong too. */
static void chain_image(struct megpu_chain *c, uint32_t seed)
{
	uint32_t *px = c->src->map, x = seed * 2654435761u + 1;
	uint64_t i, n = (uint64_t)c->width * c->height;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		px[i] = x | 0x80000000u;
	}
}

/*
 * Run the chain @runs times with the blur's @flags, each on a new image
 * with tmp and dst poisoned (after a host flush, so that no late write of
 * an earlier run lands on them). Returns the runs with a mismatching
 * result; stops at the first when @stop.
 */
static int chain(struct __test_metadata *_metadata, struct mt *t,
		 uint32_t flags, unsigned int runs, bool stop,
		 unsigned int *done)
{
	int64_t end = megpu_now_ns() + BUDGET_NS;
	uint64_t bad = 0, n = IMG_W * IMG_H;
	unsigned int be, se, i, failed = 0;
	struct megpu_chain c;
	uint32_t *expect;
	int ret;

	if (chain_engines(t, &be, &se))
		return -ENODEV;
	expect = malloc(n * 4);
	ASSERT_NE(NULL, expect);
	ret = megpu_chain_init(&c, &t->gpu, be, se, IMG_W, IMG_H);
	EXPECT_EQ(0, ret);
	for (i = 0; !ret && i < runs && megpu_now_ns() < end; i++) {
		ret = megpu_flush(&t->gpu, NULL);
		chain_image(&c, i);
		memset(c.tmp->map, 0x5a, n * 4);
		memset(c.dst->map, 0xa5, n * 4);
		ret = ret ?: megpu_chain_reference(&c, expect);
		ret = ret ?: megpu_chain_run(&c, flags, mt_job_ns(t), NULL);
		EXPECT_EQ(0, ret);
		if (ret)
			break;
		bad = megpu_chain_mismatches(&c, expect);
		if (bad) {
			failed++;
			if (stop) {
				i++;
				break;
			}
		}
	}
	*done = i;
	TH_LOG("blur on %s (engine %u), sepia on %s (engine %u), blur "
	       "flags 0x%x: %u of %u runs mismatched (last: %llu of %llu "
	       "pixels)", mt_name(t, be), be,
	       mt_name(t, se), se, flags, failed, i,
	       (unsigned long long)bad, (unsigned long long)n);
	megpu_chain_fini(&c);
	free(expect);
	return ret ? -1 : (int)failed;
}

/* F7: the FIG. 5 chain through the library matches the CPU reference. */
TEST_F_TIMEOUT(gpu, blur_sepia_host_flush, 90)
{
	unsigned int runs;
	int ret;

	NEED_FLUSH(&self->t);
	ret = chain(_metadata, &self->t, DRM_MEGPU_SUBMIT_HOST_FLUSH, 10,
		    false, &runs);
	if (ret == -ENODEV)
		SKIP(return, "needs two engines that run image kernels");
	EXPECT_EQ(0, ret);
	EXPECT_LT(2, runs);
}

TEST_F_TIMEOUT(gpu, blur_sepia_gpu_flush, 90)
{
	unsigned int runs;
	int ret;

	NEED_FLUSH(&self->t);
	ret = chain(_metadata, &self->t, 0, 10, false, &runs);
	if (ret == -ENODEV)
		SKIP(return, "needs two engines that run image kernels");
	EXPECT_EQ(0, ret);
	EXPECT_LT(2, runs);
}

/* Without the flush between blur and sepia, a mismatch is detected. */
TEST_F_TIMEOUT(gpu, blur_sepia_no_flush_mismatches, 90)
{
	unsigned int runs;
	int ret;

	NEED_FLUSH(&self->t);
	NEED_RELAXED(&self->t);
	if (!hold_writes(&self->t)) {
		ret = chain(_metadata, &self->t, DRM_MEGPU_SUBMIT_NO_FLUSH, 20,
			    true, &runs);
		if (ret == -ENODEV)
			SKIP(return, "needs two engines that run image kernels");
		EXPECT_LT(0, ret)
			TH_LOG("the chain matched in all %u runs without a "
			       "flush", runs);
		return;
	}
	ret = chain(_metadata, &self->t, DRM_MEGPU_SUBMIT_NO_FLUSH, 4, false,
		    &runs);
	release_writes(_metadata, &self->t);
	if (ret == -ENODEV)
		SKIP(return, "needs two engines that run image kernels");
	EXPECT_EQ(4, runs);
	EXPECT_EQ((int)runs, ret)
		TH_LOG("writes held: only %d of %u chains mismatched without "
		       "a flush", ret, runs);
}

TEST_HARNESS_MAIN
