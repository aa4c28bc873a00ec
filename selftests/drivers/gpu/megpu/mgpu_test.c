// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-GPU coordination (seed 000) on the real driver: every megpu
 * device of the guest is an agent; one BO exported by device 0 and
 * imported by the others with PRIME holds the coordination words; the
 * engines of all devices decide by their own atomics on it (run with
 * GPUS=4).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_test.h"
#include "megpu_msem_check.h"

#define MAXG	MEGPU_MGPU_MAX_AGENTS
#define SLOTS	0x000		/* MSEM slots */
#define ARB	0x100		/* ARB block */
#define COUNTER	0x200
#define TMP(d)	(0x300 + 0x10 * (d))
#define KARGS(d) (0x400 + 0x40 * (d))
#define MARK(a)	(0x800 + 8 * (a))	/* "in the critical section" */
#define GO(a)	(0x880 + 8 * (a))
#define DONE(a)	(0x900 + 8 * (a))
#define SIGLOG(a) (0x980 + 8 * (a))	/* signals about to be made */
#define WAITLOG(a) (0xa00 + 8 * (a))	/* waits completed */
#define SNAP(a, i) (0x1000 + 0x400 * (a) + 8 * (i))	/* bypass log */
#define BO_SIZE	0x4000
#define STRADDLE 0x1ff8		/* MSEM slots across a page boundary */
#define SEC	(1000ll * 1000 * 1000)
/*
 * The devices' jobs on the shared BO must run at the same time: without
 * this, implicit sync (the dma-buf's fences) would serialize them.
 */
#define NOIMP	DRM_MEGPU_SUBMIT_NO_IMPLICIT

FIXTURE(mgpu) {
	unsigned int n;
	struct megpu gpu[MAXG];
	struct megpu_bo *bo[MAXG];	/* bo[0] made, the others imported */
	unsigned int dev[MAXG];		/* the device of each agent id */
};

/* Agent @a's device and its view of the shared BO. */
#define G(a)	(&self->gpu[self->dev[a]])
#define BO(a)	(self->bo[self->dev[a]])
#define VA(a, off) (BO(a)->va + (off))

FIXTURE_SETUP(mgpu)
{
	int fd;

	self->n = 0;
	/* the non-atomic boot is for the one test that checks atomicity */
	if (megpu_test_cmdline("nonatomic", 0) &&
	    strcmp(_metadata->name, "msem_signals_of_two_engines_atomic"))
		SKIP(return, "the x-mgpu-nonatomic control boot");
	while (self->n < MAXG && !megpu_open(&self->gpu[self->n], self->n))
		self->n++;
	if (self->n < 2)
		SKIP(return, "needs 2 megpu devices, found %u", self->n);
	for (unsigned int d = 0; d < self->n; d++) {
		unsigned int id, count;

		ASSERT_EQ(0, megpu_mgpu_agent(&self->gpu[d], &id, &count));
		ASSERT_LT(id, self->n);
		self->dev[id] = d;
	}
	ASSERT_EQ(0, mt_bo(&self->gpu[0], BO_SIZE, 0, &self->bo[0]));
	ASSERT_EQ(0, megpu_bo_export(self->bo[0], &fd));
	for (unsigned int d = 1; d < self->n; d++)
		ASSERT_EQ(0, megpu_bo_import(&self->gpu[d], fd, &self->bo[d]));
	close(fd);
}

FIXTURE_TEARDOWN(mgpu)
{
	if (self->n >= 2)
		megpu_mgpu_schedule_set(&self->gpu[0], NULL, 0);
	for (unsigned int d = 0; d < self->n; d++) {
		megpu_bo_free(self->bo[d]);
		megpu_close(&self->gpu[d]);
	}
}

/* Each device an agent: ids 0..n-1 once each, the same count. */
TEST_F(mgpu, agents_numbered)
{
	unsigned int seen = 0, id, count;

	for (unsigned int d = 0; d < self->n; d++) {
		ASSERT_EQ(0, megpu_mgpu_agent(&self->gpu[d], &id, &count));
		EXPECT_EQ(self->n, count);
		ASSERT_LT(id, count);
		EXPECT_EQ(0, seen & (1u << id));
		seen |= 1u << id;
	}
	EXPECT_EQ((1u << self->n) - 1, seen);
}

/* Run @cs on engine 0 of every device at once; all must succeed. */
static int run_all(struct __test_metadata *_metadata,
		   FIXTURE_DATA(mgpu) *self, struct megpu_cs *cs)
{
	struct mt_job j[MAXG];
	int bad = 0;

	for (unsigned int d = 0; d < self->n; d++)
		ASSERT_EQ(0, mt_submit(&self->gpu[d], &j[d], 0, &cs[d],
				       &self->bo[d], 1, NOIMP));
	for (unsigned int d = 0; d < self->n; d++)
		if (mt_job_finish(&j[d], 20ll * 1000 * 1000 * 1000))
			bad++;
	return bad;
}

/*
 * Signals on the shared BO through each device's own import: each slot
 * counts only its owner's signals, the CPU sees the same pages, the
 * query ioctl sums them; then as many waits bring the sum to 0.
 */
TEST_F(mgpu, summed_semaphore_shared_pages)
{
	enum { K = 50 };
	struct megpu_cs cs[MAXG];
	unsigned int id[MAXG], count;
	uint32_t *slot = mt_u32(self->bo[0]), sum, all = (1u << self->n) - 1;

	for (unsigned int d = 0; d < self->n; d++) {
		ASSERT_EQ(0, megpu_mgpu_agent(&self->gpu[d], &id[d], &count));
		megpu_cs_init(&cs[d]);
		for (int i = 0; i < K * (int)(d + 1); i++)
			ASSERT_EQ(0, megpu_cs_msem_signal(&cs[d],
					self->bo[d]->va + SLOTS));
	}
	ASSERT_EQ(0, run_all(_metadata, self, cs));
	for (unsigned int d = 0; d < self->n; d++)
		EXPECT_EQ((uint32_t)(K * (d + 1)), slot[id[d]]);
	ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, all, &sum));
	EXPECT_EQ((uint32_t)(K * self->n * (self->n + 1) / 2), sum);
	/* bad masks are refused */
	EXPECT_EQ(-EINVAL, megpu_msem_query(self->bo[0], SLOTS, 0, &sum));
	EXPECT_EQ(-EINVAL, megpu_msem_query(self->bo[0], SLOTS,
					    1u << self->n, &sum));
	EXPECT_EQ(-EINVAL, megpu_msem_query(self->bo[0], 2, all, &sum));
	/* slots across a page boundary, through the BO and an import */
	for (unsigned int a = 0; a < self->n; a++)
		mt_u32(self->bo[0])[(STRADDLE >> 2) + a] = 10 * (a + 1);
	for (unsigned int d = 0; d < self->n && d < 2; d++) {
		ASSERT_EQ(0, megpu_msem_query(self->bo[d], STRADDLE, all,
					      &sum));
		EXPECT_EQ(5 * self->n * (self->n + 1), sum)
			TH_LOG("device %u", d);
	}

	/* every device now waits as often as the last one signalled */
	for (unsigned int d = 0; d < self->n; d++) {
		megpu_cs_reset(&cs[d]);
		for (unsigned int i = 0; i < K * (self->n + 1) / 2; i++)
			ASSERT_EQ(0, megpu_cs_msem_wait(&cs[d],
					self->bo[d]->va + SLOTS, all));
	}
	ASSERT_EQ(0, run_all(_metadata, self, cs));
	ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, all, &sum));
	EXPECT_EQ(0, sum);
	for (unsigned int d = 0; d < self->n; d++)
		megpu_cs_fini(&cs[d]);
}

/*
 * A read-delay-write counter (COPY out, INCREMENT, COPY back) inside
 * ARB_ACQUIRE/RELEASE on every device: no increment may be lost.
 */
static void arb_counter(struct __test_metadata *_metadata,
			FIXTURE_DATA(mgpu) *self, uint32_t flags, bool arb)
{
	enum { K = 30 };
	struct megpu_cs cs[MAXG];
	uint32_t *w = mt_u32(self->bo[0]);

	memset(w, 0, 4096);
	for (unsigned int d = 0; d < self->n; d++) {
		uint64_t va = self->bo[d]->va, kva = va + KARGS(d);
		struct megpu_kargs k = { .ptr = { va + TMP(d) }, .n = 1 };

		/* through device 0's CPU mapping: the same pages */
		megpu_kargs_pack((uint8_t *)w + KARGS(d), &k);
		megpu_cs_init(&cs[d]);
		for (int i = 0; i < K; i++) {
			if (arb)
				ASSERT_EQ(0, megpu_cs_arb(&cs[d], true,
							  va + ARB, flags));
			ASSERT_EQ(0, megpu_cs_copy(&cs[d], va + COUNTER,
						   va + TMP(d), 4));
			ASSERT_EQ(0, megpu_cs_flush(&cs[d]));
			ASSERT_EQ(0, megpu_cs_dispatch(&cs[d],
					MEGPU_KERNEL_INCREMENT, kva, 1, 1, 1,
					1));
			ASSERT_EQ(0, megpu_cs_flush(&cs[d]));
			ASSERT_EQ(0, megpu_cs_copy(&cs[d], va + TMP(d),
						   va + COUNTER, 4));
			if (arb) {
				ASSERT_EQ(0, megpu_cs_arb(&cs[d], false,
							  va + ARB, flags));
			} else {
				ASSERT_EQ(0, megpu_cs_flush(&cs[d]));
			}
		}
	}
	ASSERT_EQ(0, run_all(_metadata, self, cs));
	ASSERT_EQ(0, megpu_flush(&self->gpu[0], NULL));
	if (arb) {
		EXPECT_EQ(K * self->n, w[COUNTER / 4]);
	} else {
		EXPECT_GT(K * self->n, w[COUNTER / 4]);
	}
	for (unsigned int d = 0; d < self->n; d++)
		megpu_cs_fini(&cs[d]);
}

TEST_F(mgpu, arbiter_mutual_exclusion)
{
	arb_counter(_metadata, self, 0, true);
}

/* debugfs delay_us on engine 0 of every device (0: off). */
static int delay_all(FIXTURE_DATA(mgpu) *self, unsigned int usec)
{
	char path[256], text[32];
	int ret = 0;

	snprintf(text, sizeof(text), "0 %u", usec);
	for (unsigned int d = 0; d < self->n && !ret; d++) {
		ret = megpu_debugfs_path(&self->gpu[d], "delay_us", path,
					 sizeof(path));
		ret = ret ?: mt_write_file(path, text);
	}
	return ret;
}

/*
 * Control: the same counter without the arbiter, each packet delayed so
 * that the devices' jobs overlap, loses increments. This shows the test
 * above can fail.
 */
TEST_F(mgpu, counter_unprotected_loses)
{
	ASSERT_EQ(0, delay_all(self, 1000));
	arb_counter(_metadata, self, 0, false);
	ASSERT_EQ(0, delay_all(self, 0));
}

/* And with the same delay, inside the arbiter, none is lost. */
TEST_F(mgpu, arbiter_mutual_exclusion_delayed)
{
	ASSERT_EQ(0, delay_all(self, 200));
	arb_counter(_metadata, self, 0, true);
	ASSERT_EQ(0, delay_all(self, 0));
}

/*
 * Engines of one GPU are one agent, so the arbiter must exclude them too
 * (issue 22 item 1: before, two engines of a device both passed). Engine
 * 0 (GFX) and 1 (COMPUTE) of every device run a wave program that reads
 * the counter, spins, and writes it plus one, K times each, inside
 * ARB_ACQUIRE/RELEASE (@arb): no increment may be lost. Without the
 * arbiter (the control) the same jobs lose increments.
 */
#define PROG	0x2000
#define PARGS(d) (0x2800 + 0x100 * (d))
static const char counter_prog[] =
	"	ldarg	r1, 0\n"		/* the counter */
	"	ldarg32	r4, 8\n"		/* spins */
	"	ld32	r2, [r1]\n"
	"	li	r3, 0\n"
	"loop:	add	r3, r3, 1\n"
	"	cmpltu	r5, r3, r4\n"
	"	brany	r5, loop\n"
	"	add	r2, r2, 1\n"
	"	st32	[r1], r2\n"
	"	end\n";

static void arb_engines(struct __test_metadata *_metadata,
			FIXTURE_DATA(mgpu) *self, bool arb)
{
	enum { K = 20, ENG = 2 };
	struct megpu_cs cs[MAXG][ENG];
	struct mt_job j[MAXG][ENG];
	uint8_t *w = (uint8_t *)mt_u32(self->bo[0]);
	struct megpu_prog prog;
	unsigned int engines;
	uint32_t counter;
	uint64_t types;

	ASSERT_EQ(0, megpu_engines(&self->gpu[0], &engines, &types));
	if (engines < ENG)
		SKIP(return, "needs %u engines per device", ENG);
	memset(w, 0, BO_SIZE);
	ASSERT_EQ(0, megpu_asm(counter_prog, &prog, NULL, 0));
	megpu_prog_store(&prog, w + PROG);
	for (unsigned int d = 0; d < self->n; d++) {
		uint64_t va = self->bo[d]->va;
		struct megpu_pargs pa = {
			.program = va + PROG, .len = prog.len,
			.user = { va + COUNTER, 20000 },
		};

		/* through device 0's CPU mapping: the same pages */
		megpu_pargs_pack(w + PARGS(d), &pa);
		for (unsigned int e = 0; e < ENG; e++) {
			megpu_cs_init(&cs[d][e]);
			for (int i = 0; i < K; i++) {
				if (arb)
					ASSERT_EQ(0, megpu_cs_arb(&cs[d][e], true,
								  va + ARB, 0));
				ASSERT_EQ(0, megpu_cs_dispatch_program(&cs[d][e],
						va + PARGS(d), 1, 1, 1, 1));
				if (arb) {
					ASSERT_EQ(0, megpu_cs_arb(&cs[d][e], false,
								  va + ARB, 0));
				} else {
					ASSERT_EQ(0, megpu_cs_flush(&cs[d][e]));
				}
			}
		}
	}
	megpu_prog_fini(&prog);
	for (unsigned int d = 0; d < self->n; d++)
		for (unsigned int e = 0; e < ENG; e++)
			ASSERT_EQ(0, mt_submit(&self->gpu[d], &j[d][e], e,
					       &cs[d][e], &self->bo[d], 1, NOIMP));
	for (unsigned int d = 0; d < self->n; d++)
		for (unsigned int e = 0; e < ENG; e++) {
			EXPECT_EQ(0, mt_job_finish(&j[d][e], 60 * SEC));
			megpu_cs_fini(&cs[d][e]);
		}
	ASSERT_EQ(0, megpu_flush(&self->gpu[0], NULL));
	counter = *(uint32_t *)(w + COUNTER);
	TH_LOG("%u of %u increments with%s the arbiter", counter,
	       K * ENG * self->n, arb ? "" : "out");
	if (arb) {
		EXPECT_EQ(K * ENG * self->n, counter);
	} else {
		EXPECT_GT(K * ENG * self->n, counter);
	}
}

TEST_F(mgpu, arbiter_excludes_engines_of_one_gpu)
{
	arb_engines(_metadata, self, true);
}

TEST_F(mgpu, engines_unprotected_lose)
{
	arb_engines(_metadata, self, false);
}

/* Every agent steps in the order of @order from now on. */
static int schedule(FIXTURE_DATA(mgpu) *self, const uint8_t *order,
		    size_t len)
{
	return megpu_mgpu_schedule_set(&self->gpu[0], order, len);
}

/* Wait (bounded) until the devices have taken every step of it. */
static int schedule_done(FIXTURE_DATA(mgpu) *self)
{
	struct megpu_mgpu_status st;

	for (int ms = 0; ms < 20000; ms++) {
		int ret = megpu_mgpu_status(&self->gpu[0], &st);

		if (ret)
			return ret;
		if (st.sched_pos >= st.sched_len)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static uint64_t rd64(FIXTURE_DATA(mgpu) *self, unsigned int off)
{
	return __atomic_load_n((uint64_t *)((uint8_t *)self->bo[0]->map + off),
			       __ATOMIC_SEQ_CST);
}

static void wr64(FIXTURE_DATA(mgpu) *self, unsigned int off, uint64_t v)
{
	__atomic_store_n((uint64_t *)((uint8_t *)self->bo[0]->map + off), v,
			 __ATOMIC_SEQ_CST);
}

/* The agents (of the first three) marked inside the critical section. */
static uint32_t inside(FIXTURE_DATA(mgpu) *self)
{
	uint32_t in = 0;

	for (unsigned int a = 0; a < 3; a++)
		if (rd64(self, MARK(a)))
			in |= 1u << a;
	return in;
}

/*
 * Agents 0..2 each: ACQUIRE, mark inside, wait for their go, unmark,
 * RELEASE; the steps in @order. Returns who is inside once the schedule
 * is used up and the engines ran freely a while.
 */
static uint32_t replay(struct __test_metadata *_metadata,
		       FIXTURE_DATA(mgpu) *self, uint32_t flags,
		       const uint8_t *order, size_t len, struct mt_job *j)
{
	struct megpu_cs cs;

	memset(self->bo[0]->map, 0, BO_SIZE);
	EXPECT_EQ(0, schedule(self, order, len));
	for (unsigned int a = 0; a < 3; a++) {
		megpu_cs_init(&cs);
		EXPECT_EQ(0, megpu_cs_arb(&cs, true, VA(a, ARB), flags));
		EXPECT_EQ(0, megpu_cs_write32(&cs, VA(a, MARK(a)), 1));
		EXPECT_EQ(0, megpu_cs_flush(&cs));
		EXPECT_EQ(0, megpu_cs_wait(&cs, VA(a, GO(a)), 1));
		EXPECT_EQ(0, megpu_cs_write32(&cs, VA(a, MARK(a)), 0));
		EXPECT_EQ(0, megpu_cs_arb(&cs, false, VA(a, ARB), flags));
		EXPECT_EQ(0, mt_submit(G(a), &j[a], 0, &cs, &BO(a), 1, NOIMP));
		megpu_cs_fini(&cs);
	}
	EXPECT_EQ(0, schedule_done(self));
	usleep(100 * 1000);
	return inside(self);
}

/*
 * The seed notes' counterexample (§1C.2) against the literal 4-GPU tree:
 * GPU0 enters; GPU1 writes Req1, Last01; GPU2 writes Req2, Last23,
 * LastPair = 23; GPU1 writes LastPair = 01; GPU2 checks and enters.
 * Agents 0 and 2 are in the critical section together: the tree as
 * printed is broken, on real devices.
 */
TEST_F(mgpu, literal_tree_fails_counterexample)
{
	static const uint8_t order[] = { 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 2 };
	struct mt_job j[3];

	if (self->n != 4)
		SKIP(return, "the literal tree is for 4 agents, have %u",
		     self->n);
	EXPECT_EQ(0x5, replay(_metadata, self, MEGPU_ARB_FLAG_LITERAL, order,
			      sizeof(order), j));
	for (unsigned int a = 0; a < 3; a++)
		wr64(self, GO(a), 1);
	for (unsigned int a = 0; a < 3; a++)
		EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
}

/*
 * The same race against the tournament (the default): agent 0 enters,
 * agents 1 and 2 interleave as above and keep checking: only agent 0 is
 * inside; then each go lets exactly one more in.
 */
TEST_F(mgpu, tournament_holds_counterexample)
{
	static const uint8_t order[] = {
		0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 2, 2, 2, 2, 1, 2, 1, 2,
	};
	struct megpu_mgpu_status st;
	struct mt_job j[3];
	uint32_t spins[2];

	if (self->n != 4)
		SKIP(return, "this schedule is for 4 agents, have %u", self->n);
	for (unsigned int a = 1; a < 3; a++) {
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st));
		spins[a - 1] = st.arb_spins[0];
	}
	EXPECT_EQ(0x1, replay(_metadata, self, 0, order, sizeof(order), j));
	for (unsigned int a = 1; a < 3; a++) {
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st));
		EXPECT_LT(spins[a - 1], st.arb_spins[0]);
	}
	for (unsigned int round = 0; round < 3; round++) {
		uint32_t in = 0;
		int ms;

		for (ms = 0; ms < 20000 && !in; ms++) {
			in = inside(self);
			ASSERT_EQ(0, in & (in - 1));
			if (!in)
				usleep(1000);
		}
		ASSERT_NE(0, in);
		usleep(20 * 1000);
		EXPECT_EQ(in, inside(self));
		wr64(self, GO(__builtin_ctz(in)), 1);
		EXPECT_EQ(0, mt_job_finish(&j[__builtin_ctz(in)], 20 * SEC));
	}
}

/* Two agents' MSEM slots, through device 0's mapping. */
static uint32_t slot(FIXTURE_DATA(mgpu) *self, unsigned int a)
{
	return __atomic_load_n(mt_u32(self->bo[0]) + a, __ATOMIC_SEQ_CST);
}

/* B (agent 1) signals once and waits, A (agent 0) waits; each marks DONE. */
static void race_submit(FIXTURE_DATA(mgpu) *self, struct mt_job j[2],
			struct __test_metadata *_metadata)
{
	struct megpu_cs cs;

	for (unsigned int a = 0; a < 2; a++) {
		megpu_cs_init(&cs);
		if (a == 1)
			ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(a, SLOTS)));
		ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(a, SLOTS), 0x3));
		ASSERT_EQ(0, megpu_cs_timestamp(&cs, VA(a, DONE(a)), 1, false));
		ASSERT_EQ(0, mt_submit(G(a), &j[a], 0, &cs, &BO(a), 1, NOIMP));
		megpu_cs_fini(&cs);
	}
}

/*
 * The seed's §II.D traces on the devices, agent 0 = GPU A, agent 1 =
 * GPU B, mask 0x3. A race with a false block (F10), every coordination
 * step scripted: B signals once (slot B = 1); A and B pre-decrement (A =
 * -1, B = 0) and sum, interleaved: both read -1 and block although a
 * signal is there. A compensates (A = 0) and sums again: 0, nothing
 * there, it stalls. B compensates (B = 1) and sums again: 1, so its
 * block was false (counted), it retries at once and passes (B = 0). A
 * stays blocked (one signal, one pass) until a final signal from either
 * GPU; the sum is 0 again.
 */
TEST_F(mgpu, msem_trace_false_block)
{
	static const uint8_t order[] = {
		1,			/* B: signal */
		0, 1, 0, 1, 0, 1,	/* A, B: decrement, read A, read B */
		0, 0, 0,		/* A: compensate, read A, read B */
		1, 1, 1,		/* B: compensate, read A, read B */
		1, 1, 1,		/* B: decrement, read A, read B */
	};
	struct megpu_mgpu_status st[2], st2[2];
	struct mt_job j[2], fin;
	unsigned int a;
	struct megpu_cs cs;
	uint32_t sum;
	int done = 0;

	memset(self->bo[0]->map, 0, BO_SIZE);
	for (a = 0; a < 2; a++)
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st[a]));
	ASSERT_EQ(0, schedule(self, order, sizeof(order)));
	race_submit(self, j, _metadata);
	ASSERT_EQ(0, schedule_done(self));
	/* B passed within the script; A is blocked */
	for (int ms = 0; ms < 20000 && !rd64(self, DONE(1)); ms++)
		usleep(1000);
	EXPECT_NE(0, rd64(self, DONE(1)));
	EXPECT_EQ(0, rd64(self, DONE(0)));
	for (a = 0; a < 2; a++)
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st2[a]));
	/* exactly one false block, B's; each blocked at least once */
	EXPECT_EQ(0, st2[0].msem_false_blocks[0] - st[0].msem_false_blocks[0]);
	EXPECT_EQ(1, st2[1].msem_false_blocks[0] - st[1].msem_false_blocks[0]);
	EXPECT_EQ(1, st2[1].msem_retries[0] - st[1].msem_retries[0]);
	EXPECT_LE(1, st2[0].msem_retries[0] - st[0].msem_retries[0]);
	/* exactly one passes */
	for (int ms = 0; ms < 20000 && !done; ms++) {
		done = !!rd64(self, DONE(0)) + !!rd64(self, DONE(1));
		usleep(1000);
	}
	EXPECT_EQ(1, done);
	usleep(100 * 1000);
	EXPECT_EQ(1, !!rd64(self, DONE(0)) + !!rd64(self, DONE(1)));
	/* the final signal from the GPU that passed resolves it */
	a = rd64(self, DONE(0)) ? 0 : 1;
	if (a < 2) {
		EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
		megpu_cs_init(&cs);
		ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(a, SLOTS)));
		ASSERT_EQ(0, mt_submit(G(a), &fin, 0, &cs, &BO(a), 1, NOIMP));
		megpu_cs_fini(&cs);
		EXPECT_EQ(0, mt_job_finish(&fin, 20 * SEC));
		EXPECT_EQ(0, mt_job_finish(&j[!a], 20 * SEC));
		/* each slot: its owner's signals - waits */
		EXPECT_EQ((uint32_t)(a == 0) - 1, slot(self, 0));
		EXPECT_EQ((uint32_t)(a == 1), slot(self, 1));
	}
	ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, 0x3, &sum));
	EXPECT_EQ(0, sum);
}

/*
 * One signal, two waiters (the false-block race) under a random schedule
 * of 256 steps, explicit (@seeded false: libmegpu's list) or drawn by
 * the devices from the seed (seed mode). *@passer: the agent that passed
 * first; @fb: each agent's false blocks by then.
 */
static void race_seeded(FIXTURE_DATA(mgpu) *self, bool seeded, uint64_t seed,
			unsigned int *passer, uint32_t fb[2],
			struct __test_metadata *_metadata)
{
	struct megpu_mgpu_status st[2], st2;
	struct mt_job j[2], fin;
	uint8_t order[256];
	struct megpu_cs cs;
	unsigned int a;
	uint32_t sum;

	memset(self->bo[0]->map, 0, BO_SIZE);
	for (a = 0; a < 2; a++)
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st[a]));
	if (seeded) {
		ASSERT_EQ(0, megpu_mgpu_schedule_seeded(G(0), seed, 0x3,
							sizeof(order)));
	} else {
		megpu_mgpu_schedule(seed, 0x3, order, sizeof(order));
		ASSERT_EQ(0, schedule(self, order, sizeof(order)));
	}
	race_submit(self, j, _metadata);
	for (int ms = 0; ms < 20000 && !rd64(self, DONE(0)) &&
	     !rd64(self, DONE(1)); ms++)
		usleep(1000);
	ASSERT_EQ(1, !!rd64(self, DONE(0)) + !!rd64(self, DONE(1)));
	*passer = rd64(self, DONE(0)) ? 0 : 1;
	for (a = 0; a < 2; a++) {
		ASSERT_EQ(0, megpu_mgpu_status(G(a), &st2));
		fb[a] = st2.msem_false_blocks[0] - st[a].msem_false_blocks[0];
	}
	/* free running again: a final signal lets the other one pass */
	ASSERT_EQ(0, schedule(self, NULL, 0));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(*passer, SLOTS)));
	ASSERT_EQ(0, mt_submit(G(*passer), &fin, 0, &cs, &BO(*passer), 1,
			       NOIMP));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_job_finish(&fin, 20 * SEC));
	for (a = 0; a < 2; a++)
		EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
	ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, 0x3, &sum));
	EXPECT_EQ(0, sum);
}

/*
 * F17's seed mode: the devices draw the step order from a seed alone and
 * replay the race exactly as the explicit list libmegpu expands from the
 * same seed (who passes, who counts false blocks); different seeds give
 * different races.
 */
TEST_F(mgpu, seeded_schedule_replays)
{
	unsigned int outcomes = 0;

	for (uint64_t seed = 1; seed <= 6; seed++) {
		unsigned int p_list, p_seed;
		uint32_t fb_list[2], fb_seed[2];

		race_seeded(self, false, seed, &p_list, fb_list, _metadata);
		race_seeded(self, true, seed, &p_seed, fb_seed, _metadata);
		TH_LOG("seed %llu: agent %u passed, false blocks %u/%u "
		       "(seed mode: agent %u, %u/%u)",
		       (unsigned long long)seed, p_list, fb_list[0],
		       fb_list[1], p_seed, fb_seed[0], fb_seed[1]);
		EXPECT_EQ(p_list, p_seed);
		EXPECT_EQ(fb_list[0], fb_seed[0]);
		EXPECT_EQ(fb_list[1], fb_seed[1]);
		outcomes |= 1u << p_list;
	}
	/* the seed decides: each agent wins the race under some seed */
	EXPECT_EQ(0x3, outcomes);
}

/*
 * Trace 3 (signed wrap) and the FIG. 5 numbers, stepped: slots start at
 * 0x80000002 / 0x7ffffffe (sum 0); B signals (sum 1), A waits: OK,
 * A = 0x80000001, sum 0; then B signals twice (FIG. 5: 2 copies), A and
 * B wait once each, both OK, sum 0; a third wait (A) blocks until B
 * signals again.
 */
TEST_F(mgpu, msem_trace_wrap_fig5)
{
	static const uint8_t order[] = { 1, 0, 0, 1, 1, 0, 0, 1, 1 };
	struct mt_job ja, jb, j3;
	struct megpu_cs cs;
	uint32_t *w = mt_u32(self->bo[0]);

	memset(self->bo[0]->map, 0, BO_SIZE);
	w[0] = 0x80000002;
	w[1] = 0x7ffffffe;
	ASSERT_EQ(0, schedule(self, order, sizeof(order)));
	/* B: signal; signal, signal; wait.  A: wait; wait */
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(1, SLOTS)));
	ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(1, SLOTS)));
	ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(1, SLOTS)));
	ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(1, SLOTS), 0x3));
	ASSERT_EQ(0, mt_submit(G(1), &jb, 0, &cs, &BO(1), 1, NOIMP));
	megpu_cs_fini(&cs);
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(0, SLOTS), 0x3));
	ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(0, SLOTS), 0x3));
	ASSERT_EQ(0, mt_submit(G(0), &ja, 0, &cs, &BO(0), 1, NOIMP));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, schedule_done(self));
	EXPECT_EQ(0, mt_job_finish(&ja, 20 * SEC));
	EXPECT_EQ(0, mt_job_finish(&jb, 20 * SEC));
	EXPECT_EQ(0x80000000u, slot(self, 0));
	EXPECT_EQ(0x80000000u, slot(self, 1));
	ASSERT_EQ(0, schedule(self, NULL, 0));

	/* a third wait blocks (its slot whole between tries) */
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(0, SLOTS), 0x3));
	ASSERT_EQ(0, megpu_cs_timestamp(&cs, VA(0, DONE(0)), 1, false));
	ASSERT_EQ(0, mt_submit(G(0), &j3, 0, &cs, &BO(0), 1, NOIMP));
	megpu_cs_fini(&cs);
	usleep(200 * 1000);
	EXPECT_EQ(0, rd64(self, DONE(0)));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(1, SLOTS)));
	ASSERT_EQ(0, mt_submit(G(1), &jb, 0, &cs, &BO(1), 1, NOIMP));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_job_finish(&jb, 20 * SEC));
	EXPECT_EQ(0, mt_job_finish(&j3, 20 * SEC));
	EXPECT_EQ(0x7fffffffu, slot(self, 0));
	EXPECT_EQ(0x80000001u, slot(self, 1));
}

/*
 * Failed Wait (semaphore-guarded arbitration): DW0 = 0, so agent 0's
 * ARB_ACQUIRE (SEM) wins the arbiter, finds the semaphore empty and
 * unlocks: DW0 and Last stay, its Req is cleared between tries; agent
 * 1's ARB_RELEASE (SEM) makes DW0 1 and agent 0 takes it.
 */
TEST_F(mgpu, failed_wait)
{
	struct megpu_mgpu_status st0, st;
	uint32_t *w = mt_u32(self->bo[0]), dw1 = 0;
	struct mt_job ja, jb;
	struct megpu_cs cs;
	int ms;

	memset(self->bo[0]->map, 0, BO_SIZE);
	ASSERT_EQ(0, megpu_mgpu_status(G(0), &st0));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_arb(&cs, true, VA(0, ARB), MEGPU_ARB_FLAG_SEM));
	ASSERT_EQ(0, megpu_cs_timestamp(&cs, VA(0, DONE(0)), 1, false));
	ASSERT_EQ(0, mt_submit(G(0), &ja, 0, &cs, &BO(0), 1, NOIMP));
	megpu_cs_fini(&cs);
	for (ms = 0; ms < 20000; ms++) {
		ASSERT_EQ(0, megpu_mgpu_status(G(0), &st));
		if (st.arb_failed_waits[0] > st0.arb_failed_waits[0])
			break;
		usleep(1000);
	}
	EXPECT_LT(st0.arb_failed_waits[0], st.arb_failed_waits[0]);
	for (ms = 0; ms < 20000; ms++) {
		dw1 = __atomic_load_n(&w[(ARB + MEGPU_ARB_DW(1)) / 4],
				      __ATOMIC_SEQ_CST);
		EXPECT_EQ(0, (dw1 >> 16) & 0xff);	/* Last: agent 0 */
		EXPECT_EQ(0, w[(ARB + MEGPU_ARB_SEM) / 4]);
		if (!(dw1 & 0xffff))
			break;
		usleep(50);
	}
	EXPECT_EQ(0, dw1 & 0xffff);
	EXPECT_EQ(0, rd64(self, DONE(0)));

	megpu_cs_init(&cs);
	ASSERT_EQ(0, megpu_cs_arb(&cs, false, VA(1, ARB), MEGPU_ARB_FLAG_SEM));
	ASSERT_EQ(0, mt_submit(G(1), &jb, 0, &cs, &BO(1), 1, NOIMP));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_job_finish(&jb, 20 * SEC));
	EXPECT_EQ(0, mt_job_finish(&ja, 20 * SEC));
	EXPECT_EQ(1, rd64(self, DONE(0)));
	EXPECT_EQ(0, w[(ARB + MEGPU_ARB_SEM) / 4]);
}

/*
 * Bounded bypass (2 agents, Eq. 1 / the tournament's first node): in its
 * critical section each of agents 0 and 1 logs the node word (DW1) and
 * the shared entry counter. Whenever an agent entered while the other
 * had finished its doorway (Req set, Last = the other), the other enters
 * before that agent's next entry. Steps in a seeded random order.
 */
TEST_F(mgpu, bounded_bypass_two_agents)
{
	enum { K = 30 };
	uint8_t order[4 * K];
	uint32_t *w = mt_u32(self->bo[0]);
	struct megpu_cs cs[2];
	struct mt_job j[2];
	int contended = 0;

	memset(w, 0, BO_SIZE);
	megpu_mgpu_schedule(0xb1a5, 0x3, order, sizeof(order));
	ASSERT_EQ(0, schedule(self, order, sizeof(order)));
	for (unsigned int a = 0; a < 2; a++) {
		struct megpu_kargs k = { .ptr = { VA(a, TMP(a)) }, .n = 1 };

		megpu_kargs_pack((uint8_t *)w + KARGS(a), &k);
		megpu_cs_init(&cs[a]);
		for (int i = 0; i < K; i++) {
			ASSERT_EQ(0, megpu_cs_arb(&cs[a], true, VA(a, ARB), 0));
			ASSERT_EQ(0, megpu_cs_copy(&cs[a], VA(a, ARB) + 4,
						   VA(a, SNAP(a, i)), 4));
			ASSERT_EQ(0, megpu_cs_copy(&cs[a], VA(a, COUNTER),
						   VA(a, SNAP(a, i)) + 4, 4));
			ASSERT_EQ(0, megpu_cs_copy(&cs[a], VA(a, COUNTER),
						   VA(a, TMP(a)), 4));
			ASSERT_EQ(0, megpu_cs_flush(&cs[a]));
			ASSERT_EQ(0, megpu_cs_dispatch(&cs[a],
					MEGPU_KERNEL_INCREMENT,
					VA(a, KARGS(a)), 1, 1, 1, 1));
			ASSERT_EQ(0, megpu_cs_flush(&cs[a]));
			ASSERT_EQ(0, megpu_cs_copy(&cs[a], VA(a, TMP(a)),
						   VA(a, COUNTER), 4));
			ASSERT_EQ(0, megpu_cs_arb(&cs[a], false, VA(a, ARB), 0));
		}
	}
	for (unsigned int a = 0; a < 2; a++)
		ASSERT_EQ(0, mt_submit(G(a), &j[a], 0, &cs[a], &BO(a), 1, NOIMP));
	for (unsigned int a = 0; a < 2; a++) {
		EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
		megpu_cs_fini(&cs[a]);
	}
	ASSERT_EQ(0, megpu_flush(&self->gpu[0], NULL));
	EXPECT_EQ(2 * K, w[COUNTER / 4]);
	for (unsigned int a = 0; a < 2; a++) {
		unsigned int b = !a;

		for (int i = 0; i + 1 < K; i++) {
			uint32_t node = w[SNAP(a, i) / 4];
			uint32_t seen = w[SNAP(a, i) / 4 + 1];
			uint32_t next = w[SNAP(a, i + 1) / 4 + 1];

			if (!((node >> (8 * b)) & 0xff) ||
			    ((node >> 16) & 0xff) != b)
				continue;
			contended++;
			/* the other entered in between */
			if (seen + 1 >= next)
				TH_LOG("agent %u entry %d bypassed agent %u",
				       a, i, b);
			EXPECT_LT(seen + 1, next);
		}
	}
	TH_LOG("%d contended entries", contended);
	EXPECT_LT(0, contended);
}

/*
 * Slots written only by their owner, masked slots ignored: agents
 * 0..m-1 (m = n - 1) signal and wait unevenly (the totals equal) with a
 * mask without agent n-1, whose slot holds 0x80000000 (it would make
 * every sum negative). Every slot ends as its owner's signals - waits,
 * the masked one untouched.
 */
TEST_F(mgpu, slots_owned_masked_ignored)
{
	enum { K = 6 };
	unsigned int m = self->n > 2 ? self->n - 1 : 2;
	uint32_t mask = (1u << m) - 1, *w = mt_u32(self->bo[0]), sum;
	struct megpu_cs cs;
	struct mt_job j[MAXG];

	memset(w, 0, BO_SIZE);
	for (unsigned int a = m; a < MAXG; a++)
		w[a] = 0x80000000;
	for (unsigned int a = 0; a < m; a++) {
		megpu_cs_init(&cs);
		for (unsigned int i = 0; i < K * (a + 1); i++)
			ASSERT_EQ(0, megpu_cs_msem_signal(&cs, VA(a, SLOTS)));
		for (unsigned int i = 0; i < K * (m - a); i++)
			ASSERT_EQ(0, megpu_cs_msem_wait(&cs, VA(a, SLOTS),
							mask));
		ASSERT_EQ(0, mt_submit(G(a), &j[a], 0, &cs, &BO(a), 1, NOIMP));
		megpu_cs_fini(&cs);
	}
	for (unsigned int a = 0; a < m; a++)
		EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
	for (unsigned int a = 0; a < m; a++)
		EXPECT_EQ((uint32_t)(K * (a + 1)) - K * (m - a), w[a]);
	for (unsigned int a = m; a < MAXG; a++)
		EXPECT_EQ(0x80000000, w[a]);
	ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, mask, &sum));
	EXPECT_EQ(0, sum);
}

/* A job with packet @op / @flags / payload @p: its fence status. */
static int run_packet(FIXTURE_DATA(mgpu) *self, unsigned int a,
		      unsigned int op, unsigned int flags, const uint32_t *p,
		      unsigned int count)
{
	struct megpu_cs cs;
	struct mt_job j;
	int ret;

	megpu_cs_init(&cs);
	ret = megpu_cs_packet(&cs, op, flags, p, count);
	ret = ret ?: mt_submit(G(a), &j, 0, &cs, &BO(a), 1, NOIMP);
	ret = ret ?: mt_job_finish(&j, 20 * SEC);
	megpu_cs_fini(&cs);
	return ret;
}

/* Bad masks and modes fault the job (-EFAULT); the devices go on. */
TEST_F(mgpu, bad_input_faults)
{
	uint64_t va = VA(0, SLOTS);
	uint32_t p[3] = { (uint32_t)va, (uint32_t)(va >> 32), 0 };
	uint32_t *w = mt_u32(self->bo[0]);

	memset(w, 0, BO_SIZE);
	p[2] = 0x2;		/* without the own agent */
	EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_MSEM_WAIT, 0, p, 3));
	p[2] = (1u << self->n) | 1;	/* beyond the agent count */
	if (self->n < 32)
		EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_MSEM_WAIT, 0,
					      p, 3));
	p[2] = 0;		/* empty */
	EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_MSEM_WAIT, 0, p, 3));
	/* unknown ARB flag; the literal tree with other than 4 agents */
	EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_ARB_ACQUIRE, 0x80,
				      p, 2));
	if (self->n != 4)
		EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_ARB_ACQUIRE,
					      MEGPU_ARB_FLAG_LITERAL, p, 2));
	/* unaligned slots */
	p[0] += 2;
	EXPECT_EQ(-EFAULT, run_packet(self, 0, MEGPU_PKT_MSEM_SIGNAL, 0, p, 2));
	p[0] -= 2;
	/* nothing was written; the device still works */
	for (unsigned int a = 0; a < self->n; a++)
		EXPECT_EQ(0, w[a]);
	EXPECT_EQ(0, run_packet(self, 0, MEGPU_PKT_MSEM_SIGNAL, 0, p, 2));
	EXPECT_EQ(1, w[0]);
}

/*
 * Safety under seeded random schedules, 2, 3, 4 and 8 agents (as many as
 * the boot has), two seeds each: each agent runs a random mix of signals
 * and waits (never more waits than signals in any prefix of its own
 * list, so all complete), and the devices take every step of the whole
 * run in the seed's order (an agent whose job completed is marked done,
 * so its turns pass). The devices' own step trace is then replayed
 * (megpu_msem_check.h): every read saw the last write, every write is
 * one off the last, and at no step had more waits completed than
 * signals. At the end every slot is its owner's signals - waits.
 */
TEST_F(mgpu, msem_safety_random_schedules)
{
	enum { OPS = 40, MAX_RECS = 8192 };
	uint32_t *w = mt_u32(self->bo[0]);
	uint8_t *recs = malloc((size_t)MAX_RECS * MEGPU_MGPU_REC_SIZE);

	ASSERT_NE(NULL, recs);
	for (unsigned int m = 2; m <= MAXG && m <= self->n;
	     m = m < 4 ? m + 1 : 2 * m) {
		for (uint64_t seed = 1; seed <= 2; seed++) {
			uint32_t mask = (1u << m) - 1, sig[MAXG] = { 0 };
			uint32_t waits[MAXG] = { 0 }, sum, count, done = 0;
			uint32_t all_sig = 0, all_waits = 0;
			struct megpu_msem_check r;
			struct mt_job j[MAXG];
			uint64_t x = seed * 0x9e3779b97f4a7c15ull + m;

			memset(w, 0, BO_SIZE);
			ASSERT_EQ(0, megpu_mgpu_schedule_traced(G(0),
					seed * 7 + m, mask,
					MEGPU_MGPU_SCHED_MAX));
			for (unsigned int a = 0; a < m; a++) {
				struct megpu_cs cs;

				megpu_cs_init(&cs);
				for (int i = 0; i < OPS; i++) {
					x ^= x << 13;
					x ^= x >> 7;
					x ^= x << 17;
					if ((x & 1) && waits[a] < sig[a]) {
						waits[a]++;
						ASSERT_EQ(0, megpu_cs_msem_wait(&cs,
							VA(a, SLOTS), mask));
					} else {
						sig[a]++;
						ASSERT_EQ(0, megpu_cs_msem_signal(&cs,
							VA(a, SLOTS)));
					}
				}
				all_sig += sig[a];
				all_waits += waits[a];
				ASSERT_EQ(0, mt_submit(G(a), &j[a], 0, &cs,
						       &BO(a), 1, NOIMP));
				megpu_cs_fini(&cs);
			}
			/* an agent whose job completed has no step left */
			for (int ms = 0; done != mask && ms < 60000; ms++) {
				for (unsigned int a = 0; a < m; a++) {
					if ((done & (1u << a)) ||
					    mt_pending(G(a), j[a].sync, 0))
						continue;
					ASSERT_EQ(0, megpu_mgpu_schedule_done(
							G(0), a));
					done |= 1u << a;
				}
				usleep(1000);
			}
			for (unsigned int a = 0; a < m; a++)
				EXPECT_EQ(0, mt_job_finish(&j[a], 20 * SEC));
			ASSERT_EQ(mask, done);
			ASSERT_EQ(0, megpu_mgpu_trace_read(G(0), recs, MAX_RECS,
							   &count));
			ASSERT_LE(count, MAX_RECS);
			EXPECT_EQ(0, megpu_msem_check_trace(recs, count, mask,
							    NULL, &r))
				TH_LOG("step %d: %s", r.bad, r.why);
			EXPECT_EQ(all_sig, r.signals);
			EXPECT_EQ(all_waits, r.waits);
			ASSERT_EQ(0, megpu_flush(&self->gpu[0], NULL));
			for (unsigned int a = 0; a < m; a++)
				EXPECT_EQ(sig[a] - waits[a], w[a]);
			ASSERT_EQ(0, megpu_msem_query(self->bo[0], SLOTS, mask,
						      &sum));
			EXPECT_EQ(0, (int32_t)sum < 0);
			TH_LOG("%u agents, seed %llu: %u steps traced, %u "
			       "signals, %u waits, %u failed checks", m,
			       (unsigned long long)seed, count, r.signals,
			       r.waits, r.undos);
			ASSERT_EQ(0, schedule(self, NULL, 0));
		}
	}
	free(recs);
}

/*
 * Two engines of every GPU signal the GPU's own slot at once, and with
 * no schedule: each slot ends at exactly both engines' signals, because
 * the device adds atomically. Booted with x-mgpu-nonatomic (the negative
 * control: read, pause, write) updates are lost and the same check must
 * see it.
 */
TEST_F(mgpu, msem_signals_of_two_engines_atomic)
{
	enum { K = 200 };
	uint32_t *slot = mt_u32(self->bo[0]), lost = 0, engines = 0;
	struct mt_job j[MAXG][2];

	for (unsigned int d = 0; d < self->n; d++) {
		unsigned int e = 0;
		uint64_t types = 0;

		ASSERT_EQ(0, megpu_engines(&self->gpu[d], &e, &types));
		engines = d ? (e < engines ? e : engines) : e;
	}
	if (engines < 2)
		SKIP(return, "one engine per GPU");
	memset(slot, 0, 64);
	for (unsigned int d = 0; d < self->n; d++) {
		for (unsigned int e = 0; e < 2; e++) {
			struct megpu_cs cs;

			megpu_cs_init(&cs);
			for (int i = 0; i < K; i++)
				ASSERT_EQ(0, megpu_cs_msem_signal(&cs,
						VA(d, SLOTS)));
			ASSERT_EQ(0, mt_submit(G(d), &j[d][e], e, &cs, &BO(d),
					       1, NOIMP));
			megpu_cs_fini(&cs);
		}
	}
	for (unsigned int d = 0; d < self->n; d++)
		for (unsigned int e = 0; e < 2; e++)
			EXPECT_EQ(0, mt_job_finish(&j[d][e], 20 * SEC));
	ASSERT_EQ(0, megpu_flush(&self->gpu[0], NULL));
	for (unsigned int d = 0; d < self->n; d++)
		lost += 2 * K - slot[d];
	TH_LOG("%u GPUs, 2 engines each, %u signals each: %u lost", self->n,
	       K, lost);
	if (megpu_test_cmdline("nonatomic", 0)) {
		EXPECT_LT(0, lost);
	} else {
		EXPECT_EQ(0, lost);
	}
}

/* The megpu tool: "megpu @args" exits 0 and its output has @text. */
static bool tool_ok(const char *args, const char *text)
{
	char buf[8192];

	return !mt_tool(args, buf, sizeof(buf)) && strstr(buf, text);
}

/* megpu mgpu info and msem pass. */
TEST_F(mgpu, tool_mgpu)
{
	char want[64];

	snprintf(want, sizeof(want), "agent %u of %u", self->n - 1, self->n);
	EXPECT_TRUE(tool_ok("mgpu info", want));
	EXPECT_TRUE(tool_ok("mgpu msem --signals 5 --waits 2",
			    ": PASS"));
	/* the bench table runs (its numbers are for reading, not testing) */
	EXPECT_TRUE(tool_ok("bench mgpu --quick", "  2 "));
}

/*
 * FIG. 5: the demo passes with the figure's one READY semaphore signalled
 * twice per frame (its slots end at A -N, B N), and its control fails:
 * without the displays' common refresh, GPU B's display held until A's
 * has taken 12 signals, A takes B's signals and scans out ring slots the
 * video engine has not written (A's frames 8-11 at least are stale
 * copies; with --frames 12 nothing deadlocks and B gets all 12).
 */
TEST_F(mgpu, tool_demo_video)
{
	unsigned int engines = 0, good = 0;
	char buf[8192];
	const char *p;

	/* GPU B's video and display jobs need two engines that copy */
	ASSERT_EQ(0, megpu_engines(&self->gpu[0], &engines, NULL));
	if (engines < 3)
		SKIP(return, "the demo needs 3 engines, the GPU has %u",
		     engines);
	EXPECT_TRUE(tool_ok("demo video --frames 40",
			    "megpu demo video: PASS"));
	EXPECT_TRUE(tool_ok("demo video --frames 40",
			    "READY slots: A -40, B 40"));
	EXPECT_EQ(1, mt_tool("demo video --frames 12 --no-vsync --lag 12",
			     buf, sizeof(buf)));
	p = strstr(buf, "display on GPU A: ");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1, sscanf(p, "display on GPU A: %u of 12", &good));
	/*
	 * Frames 8-11 are stale for certain: the video engine cannot write
	 * them before B gives ring slots back, and B waits for A's 12th
	 * take. Earlier ones are stale too when A outruns the video engine.
	 */
	EXPECT_GE(8, good);
	/* B takes what is left and the video's next four frames: all good */
	EXPECT_NE(NULL, strstr(buf, "display on GPU B: 12 of 12 frames"));
	EXPECT_NE(NULL, strstr(buf, "megpu demo video: FAIL"));
	/* the barrier and a held display would deadlock: refused */
	EXPECT_EQ(2, mt_tool("demo video --lag 2", buf, sizeof(buf)));
}

/*
 * An import never grants more than the export (issue 21): a READ_ONLY
 * BO of device 0, and a writable one exported without DRM_RDWR, are
 * read-only on device 1 too: a write job there faults and changes
 * nothing, and a job may not list it as written (-EACCES). A writable
 * BO exported with DRM_RDWR stays writable (the control). Before, every
 * import was mapped writable.
 */
TEST_F(mgpu, import_never_grants_write)
{
	static const struct {
		uint32_t flags;		/* GEM_CREATE */
		uint32_t prime;		/* PRIME_HANDLE_TO_FD */
		bool writable;
	} cases[] = {
		{ DRM_MEGPU_GEM_CREATE_READ_ONLY, DRM_CLOEXEC, false },
		{ DRM_MEGPU_GEM_CREATE_READ_ONLY, DRM_CLOEXEC | DRM_RDWR, false },
		{ 0, DRM_CLOEXEC, false },
		{ 0, DRM_CLOEXEC | DRM_RDWR, true },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		struct megpu_bo *src, *imp;
		struct megpu_cs cs;
		int fd;

		ASSERT_EQ(0, mt_bo(&self->gpu[0], 4096, cases[i].flags, &src));
		mt_u32(src)[0] = 0x1234;
		ASSERT_EQ(0, drmPrimeHandleToFD(self->gpu[0].fd, src->handle,
						cases[i].prime, &fd));
		ASSERT_EQ(0, megpu_bo_import(&self->gpu[1], fd, &imp));
		close(fd);
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, imp->va, 0xbad);
		{
			struct mt_job j;
			int ret;

			EXPECT_EQ(cases[i].writable ? 0 :
				  DRM_MEGPU_GEM_CREATE_READ_ONLY, imp->flags);
			/* listed as written: only where it may be written */
			ret = mt_submit(&self->gpu[1], &j, 0, &cs, &imp, 1, 0);
			EXPECT_EQ(cases[i].writable ? 0 : -EACCES, ret) {
				TH_LOG("case %u", i);
			}
			if (!ret)
				EXPECT_EQ(0, mt_job_finish(&j, 20 * SEC));
			/* listed as read, its write faults */
			ASSERT_EQ(0, mt_job_prepare(&self->gpu[1], &j, 0,
						    NULL, 0, 0));
			ASSERT_EQ(0, megpu_job_add_bo(&j.job, imp,
						      DRM_MEGPU_BO_READ));
			ASSERT_EQ(0, mt_job_start(&j, &cs));
			EXPECT_EQ(cases[i].writable ? 0 : -EFAULT,
				  mt_job_finish(&j, 20 * SEC)) {
				TH_LOG("case %u", i);
			}
		}
		EXPECT_EQ(cases[i].writable ? 0xbad : 0x1234,
			  mt_u32(src)[0]) {
			TH_LOG("case %u", i);
		}
		megpu_cs_fini(&cs);
		megpu_bo_free(imp);
		megpu_bo_free(src);
	}
}

TEST_HARNESS_MAIN
