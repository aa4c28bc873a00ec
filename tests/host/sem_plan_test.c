// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the driver's wait-bucket planner and ring-frame
 * builder (seed 001), built from the driver's own source; the frames are
 * decoded with libmegpu's decoder, the one the tool and the selftests use.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint32_t u32;
typedef uint64_t u64;

#include "../../drivers/gpu/drm/megpu/megpu_sem_plan.c"
#include "../../drivers/gpu/drm/megpu/megpu_frame.c"
#include "libmegpu.h"
#include "tap.h"

enum { X, Y, Z, W };

static struct megpu_sem_ref ref(u32 sem, u32 engine, u64 ts)
{
	return (struct megpu_sem_ref){ sem, engine, ts };
}

static bool ref_eq(struct megpu_sem_ref a, struct megpu_sem_ref b)
{
	return a.sem == b.sem && a.engine == b.engine && a.ts == b.ts;
}

static struct megpu_resource written_by(struct megpu_sem_ref r)
{
	struct megpu_resource res;

	memset(&res, 0, sizeof(res));
	res.write[r.engine] = r;
	return res;
}

/*
 * The seed's worked example: current X=212, Y=87, Z=75, next on Z is 88;
 * A=(X,213), D=(X,218), E=(Y,90); an operation on Z uses A, D and E, not
 * C=(W,40). The bucket keeps D for X (218 > 213) and E for Y: WAIT X@218,
 * WAIT Y@90; A, D and E become (sem 4, Z, 88); C is unchanged. The four
 * resource objects sit side by side, as the BOs' do in the driver, and
 * the operation's list names three of them.
 */
enum { RES_A, RES_C, RES_D, RES_E, NUM_RES };

static void worked_example_plan(struct megpu_resource *res,
				struct megpu_bucket *b,
				const struct megpu_sem_ref *own, bool check)
{
	static const unsigned int used[] = { RES_A, RES_D, RES_E };
	u64 cur[MEGPU_MAX_ENGINES] = { [X] = 212, [Y] = 87, [Z] = 75 };
	unsigned int i;

	res[RES_A] = written_by(ref(1, X, 213));
	res[RES_C] = written_by(ref(5, W, 40));
	res[RES_D] = written_by(ref(2, X, 218));
	res[RES_E] = written_by(ref(3, Y, 90));
	memset(b, 0, sizeof(*b));
	for (i = 0; i < 3; i++) {
		megpu_plan_resource(b, &res[used[i]], true, own, cur);
		/* after A the bucket holds X@213 */
		if (check && i == 0) {
			CHECK_EQ(b->mask, 1u << X);
			CHECK_EQ(b->wait[X].ts, 213);
		}
	}
}

static void worked_example(void)
{
	struct megpu_resource res[NUM_RES];
	struct megpu_resource c = written_by(ref(5, W, 40));
	struct megpu_sem_ref own = ref(4, Z, 88);
	struct megpu_bucket b;

	worked_example_plan(res, &b, &own, true);
	CHECK_EQ(b.mask, (1u << X) | (1u << Y));
	CHECK(ref_eq(b.wait[X], ref(2, X, 218)));
	CHECK(ref_eq(b.wait[Y], ref(3, Y, 90)));
	/* each now stands for the operation alone */
	CHECK(ref_eq(res[RES_A].write[Z], own));
	CHECK(ref_eq(res[RES_D].write[Z], own));
	CHECK(ref_eq(res[RES_E].write[Z], own));
	CHECK_EQ(res[RES_A].write[X].sem, 0);
	CHECK_EQ(res[RES_D].write[X].sem, 0);
	CHECK_EQ(res[RES_E].write[Y].sem, 0);
	/* C, between A and D, was not used: untouched */
	CHECK(!memcmp(&res[RES_C], &c, sizeof(c)));
}

#define SEM_BASE 0x7f0000000ull		/* the pool's device address */
#define SEQNO_Z 0x7e0000080ull		/* Z's timestamp memory */
#define RING_DW 1024u

static u64 sem_addr(u32 sem)
{
	return SEM_BASE + 8ull * sem;
}

struct lines {
	unsigned int n;
	char text[16][MEGPU_CS_LINE_MAX];
};

static void collect(void *priv, size_t dword, const char *text)
{
	struct lines *l = priv;

	(void)dword;
	if (l->n < 16)
		snprintf(l->text[l->n++], MEGPU_CS_LINE_MAX, "%s", text);
}

/*
 * The worked example's frame, built by the driver's frame builder from
 * the planner's bucket and decoded with libmegpu's decoder: exactly
 * WAIT X@218, WAIT Y@90, (our SET_CONTEXT), IB, SIGNAL Z@88 on the
 * operation's semaphore #4, TIMESTAMP 88 with its interrupt. The frame
 * starts near the ring's end, so that it wraps.
 */
static void worked_example_frame(void)
{
	static u32 ring[RING_DW];
	u32 flat[MEGPU_FRAME_MAX_DWORDS];
	struct megpu_resource res[NUM_RES];
	struct megpu_sem_ref own = ref(4, Z, 88);
	struct megpu_frame_desc d = {
		.pd = 0x1000, .ctx = 7, .ib_va = 0x200000, .ib_dwords = 12,
		.signal = { sem_addr(own.sem), own.ts },
		.seqno_addr = SEQNO_Z, .seqno = 88,
	};
	char want[7][MEGPU_CS_LINE_MAX];
	struct lines l = { 0 };
	struct megpu_bucket b;
	u32 tail = RING_DW - 9, end, ib_dw, n, i;

	worked_example_plan(res, &b, &own, false);
	for (i = 0; i < MEGPU_MAX_ENGINES; i++)
		if (b.mask & (1u << i))
			d.waits[d.nwaits++] = (struct megpu_frame_sem){
				sem_addr(b.wait[i].sem), b.wait[i].ts };
	memset(ring, 0xee, sizeof(ring));
	end = megpu_frame_build(ring, RING_DW, tail, &d, &ib_dw);
	n = (end - tail) & (RING_DW - 1);
	CHECK(n <= MEGPU_FRAME_MAX_DWORDS);
	for (i = 0; i < n && i < MEGPU_FRAME_MAX_DWORDS; i++)
		flat[i] = ring[(tail + i) & (RING_DW - 1)];
	CHECK_EQ(megpu_cs_decode(flat, n, collect, &l, NULL), 6);
	/* nothing written past the frame */
	CHECK_EQ(ring[end], 0xeeeeeeee);
	CHECK_EQ(ring[tail - 1], 0xeeeeeeee);

	snprintf(want[0], sizeof(want[0]), "WAIT addr=0x%llx value=218",
		 (unsigned long long)sem_addr(2));
	snprintf(want[1], sizeof(want[1]), "WAIT addr=0x%llx value=90",
		 (unsigned long long)sem_addr(3));
	snprintf(want[2], sizeof(want[2]), "SET_CONTEXT pt=0x1000 ctx=7");
	snprintf(want[3], sizeof(want[3]), "IB addr=0x200000 dwords=12");
	snprintf(want[4], sizeof(want[4]), "SIGNAL addr=0x%llx value=88",
		 (unsigned long long)sem_addr(4));
	snprintf(want[5], sizeof(want[5]), "TIMESTAMP addr=0x%llx value=88 irq",
		 SEQNO_Z);
	CHECK_EQ(l.n, 6);
	for (i = 0; i < 6 && i < l.n; i++) {
		if (strcmp(l.text[i], want[i]))
			printf("#   packet %u: '%s', want '%s'\n", i,
			       l.text[i], want[i]);
		CHECK(!strcmp(l.text[i], want[i]));
	}
	/* the IB packet's dword, for fault blame */
	CHECK_EQ(ib_dw, (tail + 2 * 5 + 4) & (RING_DW - 1));
	CHECK_EQ(MEGPU_PKT_OPCODE(ring[ib_dw]), MEGPU_PKT_IB);
}

/*
 * The other shapes: a cancelled job's IB is a NOP of the same length,
 * FLUSH before the SIGNAL, SET_MAILBOX after SET_CONTEXT, and a
 * host-flushed job's TIMESTAMP without interrupt, then IDLE_SIGNAL.
 */
static void frame_variants(void)
{
	static u32 ring[RING_DW];
	struct megpu_frame_desc d = {
		.pd = 0x1000, .ctx = 3, .mailbox = true, .mbox_addr = 0x5000,
		.mbox_slots = 4, .cancelled = true, .ib_va = 0x9000,
		.ib_dwords = 5, .flush = true, .host_flush = true,
		.signal = { sem_addr(9), 12 }, .seqno_addr = SEQNO_Z,
		.seqno = 12,
	};
	static const char *const want[] = {
		"SET_CONTEXT pt=0x1000 ctx=3",
		"SET_MAILBOX addr=0x5000 slots=4",
		"NOP count=3",
		"FLUSH",
		"SIGNAL addr=0x7f0000048 value=12",
		"TIMESTAMP addr=0x7e0000080 value=12",
		"IDLE_SIGNAL",
	};
	struct lines l = { 0 };
	u32 end, ib_dw, i;

	end = megpu_frame_build(ring, RING_DW, 0, &d, &ib_dw);
	CHECK_EQ(megpu_cs_decode(ring, end, collect, &l, NULL), 7);
	for (i = 0; i < 7 && i < l.n; i++) {
		if (strcmp(l.text[i], want[i]))
			printf("#   packet %u: '%s', want '%s'\n", i,
			       l.text[i], want[i]);
		CHECK(!strcmp(l.text[i], want[i]));
	}
	CHECK_EQ(ib_dw, 8);
}

/* The order the resources come in does not change the bucket. */
static void worked_example_any_order(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { [X] = 212, [Y] = 87, [Z] = 75 };
	struct megpu_resource a = written_by(ref(1, X, 213));
	struct megpu_resource d = written_by(ref(2, X, 218));
	struct megpu_resource e = written_by(ref(3, Y, 90));
	struct megpu_sem_ref own = ref(4, Z, 88);
	struct megpu_bucket b = { 0 };

	megpu_plan_resource(&b, &e, true, &own, cur);
	megpu_plan_resource(&b, &d, true, &own, cur);
	megpu_plan_resource(&b, &a, true, &own, cur);
	CHECK_EQ(b.mask, (1u << X) | (1u << Y));
	CHECK_EQ(b.wait[X].ts, 218);
	CHECK_EQ(b.wait[Y].ts, 90);
}

/* Blank, expired and same-engine resources need no wait. */
static void skip_rules(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { [X] = 10, [Y] = 20, [Z] = 30 };
	struct megpu_sem_ref own = ref(9, Z, 31);
	struct megpu_resource blank, expired, at_current, same, pending;
	struct megpu_bucket b = { 0 };

	memset(&blank, 0, sizeof(blank));
	expired = written_by(ref(1, X, 9));
	at_current = written_by(ref(2, X, 10));
	same = written_by(ref(3, Z, 35));
	megpu_plan_resource(&b, &blank, false, &own, cur);
	megpu_plan_resource(&b, &expired, false, &own, cur);
	megpu_plan_resource(&b, &at_current, false, &own, cur);
	megpu_plan_resource(&b, &same, false, &own, cur);
	CHECK_EQ(b.mask, 0);

	/* one past the engine's current timestamp: not expired */
	pending = written_by(ref(4, Y, 21));
	megpu_plan_resource(&b, &pending, false, &own, cur);
	CHECK_EQ(b.mask, 1u << Y);
	CHECK(ref_eq(b.wait[Y], ref(4, Y, 21)));
	/* the blank resource was used now: a reader on Z */
	CHECK(ref_eq(blank.read[Z], own));
	CHECK_EQ(blank.write[Z].sem, 0);
}

/* Two BOs last used on one engine: one wait, on the larger timestamp. */
static void one_entry_per_engine(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	struct megpu_sem_ref own = ref(9, Z, 1);
	unsigned int order;

	for (order = 0; order < 2; order++) {
		struct megpu_resource r1 = written_by(ref(1, X, 5));
		struct megpu_resource r2 = written_by(ref(2, X, 7));
		struct megpu_bucket b = { 0 };

		megpu_plan_resource(&b, order ? &r2 : &r1, false, &own, cur);
		megpu_plan_resource(&b, order ? &r1 : &r2, false, &own, cur);
		CHECK_EQ(b.mask, 1u << X);
		CHECK(ref_eq(b.wait[X], ref(2, X, 7)));
	}
}

/*
 * Readers and writers: readers on several engines do not wait for each
 * other; a writer waits for the last writer and every reader on another
 * engine; after the write, the readers are forgotten.
 */
static void readers_and_writers(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	struct megpu_resource res = written_by(ref(1, X, 1));
	struct megpu_sem_ref r_y = ref(2, Y, 1), r_z = ref(3, Z, 1);
	struct megpu_sem_ref w_w = ref(4, W, 1), r_x = ref(5, X, 2);
	struct megpu_bucket b;

	memset(&b, 0, sizeof(b));
	megpu_plan_resource(&b, &res, false, &r_y, cur);
	CHECK_EQ(b.mask, 1u << X);		/* the writer only */

	memset(&b, 0, sizeof(b));
	megpu_plan_resource(&b, &res, false, &r_z, cur);
	CHECK_EQ(b.mask, 1u << X);		/* not the reader on Y */

	memset(&b, 0, sizeof(b));
	megpu_plan_resource(&b, &res, true, &w_w, cur);
	CHECK_EQ(b.mask, (1u << X) | (1u << Y) | (1u << Z));
	CHECK(ref_eq(res.write[W], w_w));
	CHECK_EQ(res.write[X].sem, 0);
	CHECK_EQ(res.read[Y].sem, 0);
	CHECK_EQ(res.read[Z].sem, 0);

	/* a reader after the write waits for the writer alone */
	memset(&b, 0, sizeof(b));
	megpu_plan_resource(&b, &res, false, &r_x, cur);
	CHECK_EQ(b.mask, 1u << W);
	CHECK(ref_eq(res.read[X], r_x));
}

/* Each operation starts from an empty bucket: no stale waits. */
static void bucket_starts_empty(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { [X] = 3 };
	struct megpu_resource res = written_by(ref(1, X, 4));
	struct megpu_sem_ref first = ref(2, Y, 1), second = ref(3, Y, 2);
	struct megpu_bucket b = { 0 };

	megpu_plan_resource(&b, &res, true, &first, cur);
	CHECK_EQ(b.mask, 1u << X);
	memset(&b, 0, sizeof(b));
	/* same engine as the last writer now: nothing to wait for */
	megpu_plan_resource(&b, &res, true, &second, cur);
	CHECK_EQ(b.mask, 0);
}

/*
 * A writer without implicit sync waits for nothing and must not make the
 * resource forget what it did not wait for: after W1 (X), W2 without
 * implicit sync (Y) and reader R on Z, R waits for both writers; a later
 * implicit writer waits for W1, W2 and R, then stands for all of them.
 */
static void no_implicit_writer_keeps_history(void)
{
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	struct megpu_resource res = written_by(ref(1, X, 5));
	struct megpu_sem_ref w2 = ref(2, Y, 3), r = ref(3, Z, 4);
	struct megpu_sem_ref w3 = ref(4, W, 9);
	struct megpu_bucket b = { 0 };

	megpu_plan_resource(NULL, &res, true, &w2, cur);
	CHECK(ref_eq(res.write[X], ref(1, X, 5)));
	CHECK(ref_eq(res.write[Y], w2));

	megpu_plan_resource(&b, &res, false, &r, cur);
	CHECK_EQ(b.mask, (1u << X) | (1u << Y));
	CHECK_EQ(b.wait[X].ts, 5);
	CHECK_EQ(b.wait[Y].ts, 3);

	memset(&b, 0, sizeof(b));
	megpu_plan_resource(&b, &res, true, &w3, cur);
	CHECK_EQ(b.mask, (1u << X) | (1u << Y) | (1u << Z));
	CHECK(ref_eq(res.write[W], w3));
	CHECK_EQ(res.write[X].sem | res.write[Y].sem | res.read[Z].sem, 0);

	/* a reader without implicit sync is remembered, waits for nothing */
	memset(&b, 0, sizeof(b));
	megpu_plan_resource(NULL, &res, false, &r, cur);
	CHECK(ref_eq(res.read[Z], r));
}

int main(void)
{
	TEST_RUN(worked_example);
	TEST_RUN(worked_example_frame);
	TEST_RUN(frame_variants);
	TEST_RUN(worked_example_any_order);
	TEST_RUN(skip_rules);
	TEST_RUN(one_entry_per_engine);
	TEST_RUN(readers_and_writers);
	TEST_RUN(bucket_starts_empty);
	TEST_RUN(no_implicit_writer_keeps_history);
	return tap_done();
}
