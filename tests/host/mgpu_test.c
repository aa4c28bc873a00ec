// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the multi-GPU coordination rules (seed 000) in
 * libmegpu: the seed's worked numbers (summed semaphore, FIG. 5, Eq. 1,
 * Table 4A/4B), and exhaustive state searches showing that the
 * tournament arbiter is mutually exclusive and the literal 4-GPU tree
 * is not, and that the summed semaphore never over-admits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libmegpu.h"
#include "megpu_hw_mgpu.h"
#include "megpu_msem_check.h"
#include "tap.h"

/* ---- worked numbers ---- */

static void test_msem_worked_numbers(void)
{
	uint32_t two[2] = { 0xfffffff1, 0x1 };
	uint32_t pc[2] = { 0xffffffff, 0x1 };	/* producer, consumer */

	CHECK_EQ(megpu_msem_sum(two, 2, 0x3), 0xfffffff2);
	CHECK(megpu_msem_negative(megpu_msem_sum(two, 2, 0x3)));
	CHECK_EQ(megpu_msem_sum(pc, 2, 0x3), 0);
	megpu_msem_signal_model(pc, 0);
	CHECK_EQ(pc[0], 0);
	CHECK_EQ(megpu_msem_sum(pc, 2, 0x3), 1);
}

/* FIG. 5: UVD on GPU B signals twice; DISP on A and on B each wait. */
static void test_msem_fig5(void)
{
	uint32_t sem[2] = { 0, 0 }, sum;
	enum { A, B };

	megpu_msem_signal_model(sem, B);
	megpu_msem_signal_model(sem, B);
	CHECK_EQ(sem[B], 2);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, A, 0x3, &sum), 1);
	CHECK_EQ(sem[A], 0xffffffff);
	CHECK_EQ(sum, 1);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, B, 0x3, &sum), 1);
	CHECK_EQ(sem[B], 1);
	CHECK_EQ(sum, 0);
	/* a third wait blocks and leaves the slots as they were */
	CHECK_EQ(megpu_msem_wait_model(sem, 2, A, 0x3, &sum), 0);
	CHECK_EQ(sum, 0xffffffff);
	CHECK_EQ(sem[A], 0xffffffff);
	CHECK_EQ(sem[B], 1);
	megpu_msem_signal_model(sem, A);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, A, 0x3, &sum), 1);
}

/* Trace 3 of §II.D: signed wrap from 0x80000002 / 0x7ffffffe. */
static void test_msem_wrap(void)
{
	uint32_t sem[2] = { 0x80000002, 0x7ffffffe }, sum;

	CHECK_EQ(megpu_msem_sum(sem, 2, 0x3), 0);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, 1, 0x3, &sum), 0);
	megpu_msem_signal_model(sem, 0);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, 1, 0x3, &sum), 1);
	CHECK_EQ(sum, 0);
	CHECK_EQ(sem[1], 0x7ffffffd);
	/* random zero-sum starts: one signal admits exactly one wait */
	srand(7);
	for (int i = 0; i < 10000; i++) {
		uint32_t s[4], r = (uint32_t)rand() * 2654435761u;

		s[0] = r;
		s[1] = -r + 5;
		s[2] = (uint32_t)rand();
		s[3] = -s[2] - 5;
		megpu_msem_signal_model(s, i & 3);
		CHECK_EQ(megpu_msem_wait_model(s, 4, (i >> 2) & 3, 0xf, NULL),
			 1);
		CHECK_EQ(megpu_msem_wait_model(s, 4, (i >> 4) & 3, 0xf, NULL),
			 0);
	}
}

static void test_msem_masks(void)
{
	uint32_t sem[4] = { 1, 0, 0, 0x80000000 }, sum;

	/* garbage in a masked-off slot is ignored */
	CHECK_EQ(megpu_msem_wait_model(sem, 4, 1, 0x3, &sum), 1);
	CHECK_EQ(sum, 0);
	CHECK_EQ(megpu_msem_check_mask(0, 2, 0x3), 0);
	CHECK_EQ(megpu_msem_check_mask(0, 2, 0x2), -EINVAL);	/* not own */
	CHECK_EQ(megpu_msem_check_mask(0, 2, 0x7), -EINVAL);	/* beyond */
	CHECK_EQ(megpu_msem_check_mask(2, 2, 0x3), -EINVAL);	/* bad id */
	CHECK_EQ(megpu_msem_check_mask(0, 9, 0x1), -EINVAL);
	CHECK_EQ(megpu_msem_check_mask(0, 0, 0x1), -EINVAL);
	CHECK_EQ(megpu_msem_wait_model(sem, 2, 0, 0x4, NULL), -EINVAL);
}

/* Eq. 1 equals Peterson's rule wherever the own Req is set. */
static void test_arb_eq1(void)
{
	for (unsigned int id = 0; id < 2; id++)
		for (unsigned int other = 0; other < 2; other++)
			for (unsigned int last = 0; last < 2; last++) {
				unsigned int r0 = id ? other : 1;
				unsigned int r1 = id ? 1 : other;
				bool wait = other && last == id;

				/* the state "other last but not requesting"
				 * is unreachable: it wrote Last after Req */
				if (!other && last != id)
					continue;
				CHECK_EQ(megpu_arb_eq1(r0, r1, last, id),
					 !wait);
			}
	/* the seed's example: both request, GPU1 was last */
	CHECK_EQ(megpu_arb_eq1(1, 1, 1, 0), 1);
	CHECK_EQ(megpu_arb_eq1(1, 1, 1, 1), 0);
}

/* Table 4A/4B: GPUs 0, 2, 3 request; last: GPU0 in 01, GPU3 in 23. */
static void test_arb_table4(void)
{
	uint32_t dw1 = 1 | 0 << 8 | 0 << 16 | 0u << 24;	/* Req0, Last01 0 */
	uint32_t dw2 = 1 | 1 << 8 | 3 << 16;		/* Req2, Req3, 3 */

	CHECK_EQ(megpu_arb_eq2(dw1, dw2, 0), 0x30);	/* 0110000 */
	CHECK_EQ(megpu_arb_eq2(dw1, dw2, 2), 0x61);	/* 1100001 */
	CHECK_EQ(megpu_arb_eq2(dw1, dw2, 3), 0x51);	/* 1010001 */
	/* the decision tree: only GPU2 proceeds */
	CHECK(megpu_arb_literal_wait(dw1, dw2, 0));
	CHECK(!megpu_arb_literal_wait(dw1, dw2, 2));
	CHECK(megpu_arb_literal_wait(dw1, dw2, 3));
	/* Eq. 3 as printed gives GPU2 0, not 1: the seed's misprint */
	CHECK_EQ(megpu_arb_eq3(megpu_arb_eq2(dw1, dw2, 2)), 0);
}

static void test_arb_layout(void)
{
	unsigned int side;

	CHECK_EQ(megpu_arb_levels(2), 1);
	CHECK_EQ(megpu_arb_levels(4), 2);
	CHECK_EQ(megpu_arb_levels(8), 3);
	CHECK_EQ(megpu_arb_levels(3), -1);
	/* 4 agents: DW1 pair 01, DW2 pair 23, DW3 the pairs */
	CHECK_EQ(megpu_arb_node(4, 3, 0, &side), 2);
	CHECK_EQ(side, 1);
	CHECK_EQ(megpu_arb_node(4, 3, 1, &side), 3);
	CHECK_EQ(side, 1);
	CHECK_EQ(megpu_arb_node(4, 1, 1, &side), 3);
	CHECK_EQ(side, 0);
	/* 8 agents: DW1-4 leaves, DW5-6, DW7 the root: 8 dwords in all */
	CHECK_EQ(megpu_arb_node(8, 5, 0, &side), 3);
	CHECK_EQ(megpu_arb_node(8, 5, 1, &side), 6);
	CHECK_EQ(megpu_arb_node(8, 5, 2, &side), 7);
	CHECK_EQ(side, 1);
}

/* ---- exhaustive search of arbitration programs ---- */

enum { OP_W, OP_CHECK, OP_LCHECK, OP_CS };

struct op {
	uint8_t kind, byte, val, node, side;
};

#define MAXOPS 16
#define MEMB 32

static struct op mkop(unsigned int kind, unsigned int byte, unsigned int val,
		       unsigned int node, unsigned int side)
{
	return (struct op){ kind, byte, val, node, side };
}

struct prog {
	unsigned int agents, nops[8];
	struct op ops[8][MAXOPS];
};

struct st {
	uint8_t pc[8];
	uint8_t mem[MEMB];
};

static void prog_tournament(struct prog *p, unsigned int agents)
{
	int levels = megpu_arb_levels(agents);

	memset(p, 0, sizeof(*p));
	p->agents = agents;
	for (unsigned int a = 0; a < agents; a++) {
		unsigned int n = 0, side, node;

		for (int l = 0; l < levels; l++) {
			node = megpu_arb_node(agents, a, l, &side);
			p->ops[a][n++] = mkop(OP_W, node * 4 + side, 1, 0, 0);
			p->ops[a][n++] = mkop(OP_W, node * 4 + 				MEGPU_ARB_LAST, side, 0, 0);
			p->ops[a][n++] = mkop(OP_CHECK, 0, 0, node, side);
		}
		p->ops[a][n++] = mkop(OP_CS, 0, 0, 0, 0);
		for (int l = levels - 1; l >= 0; l--) {
			node = megpu_arb_node(agents, a, l, &side);
			p->ops[a][n++] = mkop(OP_W, node * 4 + side, 0, 0, 0);
		}
		p->nops[a] = n;
	}
}

static void prog_literal(struct prog *p)
{
	memset(p, 0, sizeof(*p));
	p->agents = 4;
	for (unsigned int i = 0; i < 4; i++) {
		unsigned int own = (1 + (i >> 1)) * 4;

		p->ops[i][0] = mkop(OP_W, own + (i & 1), 1, 0, 0);
		p->ops[i][1] = mkop(OP_W, own + MEGPU_ARB_LAST, i, 0, 0);
		p->ops[i][2] = mkop(OP_W, 4 + MEGPU_ARB_LASTPAIR, i >> 1, 0, 0);
		p->ops[i][3] = mkop(OP_LCHECK, 0, 0, 0, 0);
		p->ops[i][4] = mkop(OP_CS, 0, 0, 0, 0);
		p->ops[i][5] = mkop(OP_W, own + (i & 1), 0, 0, 0);
		p->nops[i] = 6;
	}
}

static uint32_t dw_of(const struct st *s, unsigned int n)
{
	return s->mem[n * 4] | s->mem[n * 4 + 1] << 8 |
	       s->mem[n * 4 + 2] << 16 | (uint32_t)s->mem[n * 4 + 3] << 24;
}

/* Agent @a takes one step from @s into @t; false if it must wait. */
static bool step(const struct prog *p, const struct st *s, unsigned int a,
		 struct st *t)
{
	const struct op *o = &p->ops[a][s->pc[a]];

	*t = *s;
	switch (o->kind) {
	case OP_W:
		t->mem[o->byte] = o->val;
		break;
	case OP_CHECK:
		if (!megpu_arb_eq1(s->mem[o->node * 4], s->mem[o->node * 4 + 1],
				   s->mem[o->node * 4 + 2], o->side))
			return false;
		break;
	case OP_LCHECK:
		if (megpu_arb_literal_wait(dw_of(s, 1), dw_of(s, 2), a))
			return false;
		break;
	}
	t->pc[a] = (s->pc[a] + 1) % p->nops[a];
	return true;
}

static unsigned int in_cs(const struct prog *p, const struct st *s)
{
	unsigned int n = 0;

	for (unsigned int a = 0; a < p->agents; a++)
		n += p->ops[a][s->pc[a]].kind == OP_CS;
	return n;
}

/* A set of states: open addressing on the raw bytes. */
struct set {
	struct st *v;
	uint8_t *used;
	size_t cap, n;
};

static size_t st_hash(const struct st *s)
{
	const uint8_t *b = (const uint8_t *)s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static bool set_add(struct set *set, const struct st *s)
{
	size_t i = st_hash(s) & (set->cap - 1);

	while (set->used[i]) {
		if (!memcmp(&set->v[i], s, sizeof(*s)))
			return false;
		i = (i + 1) & (set->cap - 1);
	}
	set->used[i] = 1;
	set->v[i] = *s;
	set->n++;
	return true;
}

/*
 * Breadth-first over every interleaving; returns the states seen, and
 * *violation whether two agents were ever in the critical section.
 */
static size_t explore(const struct prog *p, bool *violation)
{
	size_t cap = 1u << 22, head = 0, tail = 0;
	struct set set = { calloc(cap, sizeof(struct st)), calloc(cap, 1),
			   cap, 0 };
	struct st *q = calloc(cap, sizeof(struct st)), s0, t;

	memset(&s0, 0, sizeof(s0));
	*violation = false;
	set_add(&set, &s0);
	q[tail++] = s0;
	while (head < tail && !*violation) {
		struct st s = q[head++];

		if (in_cs(p, &s) > 1) {
			*violation = true;
			break;
		}
		for (unsigned int a = 0; a < p->agents; a++)
			if (step(p, &s, a, &t) && set_add(&set, &t)) {
				if (tail == cap || set.n > cap / 2) {
					/* out of room: count it as failing */
					*violation = true;
					break;
				}
				q[tail++] = t;
			}
	}
	free(q);
	free(set.v);
	free(set.used);
	return set.n;
}

static void test_tournament_exhaustive(void)
{
	struct prog p;
	bool bad;
	size_t n;

	prog_tournament(&p, 2);
	n = explore(&p, &bad);
	printf("# tournament 2 agents: %zu states, %s\n", n,
	       bad ? "VIOLATION" : "mutual exclusion");
	CHECK(!bad);
	prog_tournament(&p, 4);
	n = explore(&p, &bad);
	printf("# tournament 4 agents: %zu states, %s\n", n,
	       bad ? "VIOLATION" : "mutual exclusion");
	CHECK(!bad);
	CHECK(n > 1000);
}

static void test_literal_tree_fails(void)
{
	struct prog p;
	bool bad;
	size_t n;

	prog_literal(&p);
	n = explore(&p, &bad);
	printf("# literal 4-GPU tree: %zu states, %s\n", n,
	       bad ? "VIOLATION" : "mutual exclusion");
	CHECK(bad);
}

/* The counterexample of the seed notes, step by step: 0 and 2 in CS. */
static void test_literal_counterexample(void)
{
	static const uint8_t order[] = { 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 2 };
	struct prog p;
	struct st s, t;

	prog_literal(&p);
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < sizeof(order); i++) {
		CHECK(step(&p, &s, order[i], &t));
		s = t;
	}
	CHECK_EQ(in_cs(&p, &s), 2);
	CHECK(p.ops[0][s.pc[0]].kind == OP_CS);
	CHECK(p.ops[2][s.pc[2]].kind == OP_CS);
	CHECK(!step(&p, &s, 1, &t));	/* GPU1 still waits */
}

/* 8 agents: too many states to enumerate; long random interleavings. */
static void test_tournament8_random(void)
{
	struct prog p;
	struct st s, t;
	unsigned long entries = 0;
	uint8_t sched[4096];

	prog_tournament(&p, 8);
	memset(&s, 0, sizeof(s));
	for (uint64_t seed = 1; seed <= 200; seed++) {
		megpu_mgpu_schedule(seed, 0xff, sched, sizeof(sched));
		for (size_t i = 0; i < sizeof(sched); i++) {
			if (!step(&p, &s, sched[i], &t))
				continue;
			entries += p.ops[sched[i]][t.pc[sched[i]]].kind == OP_CS;
			s = t;
			CHECK(in_cs(&p, &s) <= 1);
		}
	}
	printf("# tournament 8 agents: %lu entries in 200 random runs\n",
	       entries);
	CHECK(entries > 1000);
}

static void test_schedule_seed(void)
{
	uint8_t a[64], b[64];
	unsigned int seen = 0;

	megpu_mgpu_schedule(42, 0x5, a, sizeof(a));
	megpu_mgpu_schedule(42, 0x5, b, sizeof(b));
	CHECK(!memcmp(a, b, sizeof(a)));
	for (size_t i = 0; i < sizeof(a); i++) {
		CHECK(a[i] == 0 || a[i] == 2);
		seen |= 1u << a[i];
	}
	CHECK_EQ(seen, 0x5);
	megpu_mgpu_schedule(43, 0x5, b, sizeof(b));
	CHECK(memcmp(a, b, sizeof(a)));
	CHECK_EQ(megpu_mgpu_schedule(1, 0, b, sizeof(b)), 0);
}

/* ---- summed semaphore: every interleaving of per-slot reads ---- */

struct ms {
	int8_t slot[4];
	uint8_t sig[4], waits[4];
	uint8_t pc[4];		/* 0 idle, 1+k: next read k, 9: decide */
	int8_t acc[4];
	uint8_t done_sig, done_wait;
};

static bool ms_explore(unsigned int n, const uint8_t *sig,
		       const uint8_t *waits, size_t *states)
{
	size_t cap = 1u << 20, head = 0, tail = 0;
	struct ms *q = calloc(cap, sizeof(*q)), s0;
	struct set set = { calloc(cap, sizeof(struct st)), calloc(cap, 1),
			   cap, 0 };
	bool ok = true;

	memset(&s0, 0, sizeof(s0));
	memcpy(s0.sig, sig, n);
	memcpy(s0.waits, waits, n);
	q[tail++] = s0;
	while (head < tail) {
		struct ms s = q[head++], nx[8];
		unsigned int k = 0;

		if (s.done_wait > s.done_sig)
			ok = false;
		for (unsigned int g = 0; g < n; g++) {
			if (s.sig[g]) {
				nx[k] = s;
				nx[k].slot[g]++;
				nx[k].sig[g]--;
				nx[k++].done_sig++;
			}
			nx[k] = s;
			if (!s.pc[g] && s.waits[g]) {
				nx[k].slot[g]--;
				nx[k].acc[g] = 0;
				nx[k++].pc[g] = 1;
			} else if (s.pc[g] && s.pc[g] <= n) {
				nx[k].acc[g] += s.slot[s.pc[g] - 1];
				nx[k].pc[g]++;
				k++;
			} else if (s.pc[g]) {
				nx[k].pc[g] = 0;
				if (s.acc[g] < 0) {
					nx[k].slot[g]++;
				} else {
					nx[k].waits[g]--;
					nx[k].done_wait++;
				}
				k++;
			}
		}
		for (unsigned int i = 0; i < k; i++) {
			struct st key;

			memset(&key, 0, sizeof(key));
			memcpy(&key, &nx[i], sizeof(nx[i]));
			if (set_add(&set, &key)) {
				if (tail == cap)
					ok = false;
				else
					q[tail++] = nx[i];
			}
		}
	}
	*states = set.n;
	free(q);
	free(set.v);
	free(set.used);
	return ok;
}

static void test_msem_exhaustive(void)
{
	static const struct {
		unsigned int n;
		uint8_t sig[4], waits[4];
	} cfg[] = {
		{ 2, { 2, 0 }, { 0, 2 } },
		{ 2, { 1, 1 }, { 1, 1 } },
		{ 3, { 2, 0, 0 }, { 0, 2, 2 } },
		{ 3, { 1, 1, 0 }, { 1, 1, 2 } },
		{ 4, { 2, 0, 0, 0 }, { 0, 1, 1, 1 } },
	};

	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		size_t states;
		bool ok = ms_explore(cfg[i].n, cfg[i].sig, cfg[i].waits,
				     &states);

		printf("# summed semaphore config %zu: %zu states, %s\n", i,
		       states, ok ? "never over-admits" : "OVER-ADMITS");
		CHECK(ok);
		CHECK(states > 10);
	}
}

static void rec(uint8_t *r, unsigned int agent, unsigned int kind,
		unsigned int slot, uint32_t value)
{
	r[MEGPU_MGPU_REC_AGENT] = agent;
	r[MEGPU_MGPU_REC_KIND] = kind;
	r[MEGPU_MGPU_REC_OFFSET] = 4 * slot;
	r[MEGPU_MGPU_REC_ENGINE] = 0;
	for (int i = 0; i < 4; i++)
		r[MEGPU_MGPU_REC_VALUE + i] = value >> (8 * i);
}

/*
 * The step-trace checker (megpu_msem_check.h) passes a right run and
 * finds each kind of wrong step: a stale read, a lost update of a signal
 * or a decrement, an undo with no failed check, a read outside the mask.
 * (Its last check, no more waits completed than signals, is the seed's
 * safety theorem: a consistent trace of the protocol cannot break it;
 * the device's run is held to it at every step.)
 */
static void test_msem_trace_check(void)
{
	uint8_t t[16][MEGPU_MGPU_REC_SIZE];
	struct megpu_msem_check r;
	uint32_t init[MEGPU_MGPU_MAX_AGENTS] = { 0 };
	unsigned int n = 0;

	/* B waits and fails, A signals, B undoes, re-checks, waits again */
	rec(t[n++], 1, MEGPU_MGPU_STEP_WAIT_DEC, 1, 0xffffffff);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 0, 0);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 1, 0xffffffff);
	rec(t[n++], 0, MEGPU_MGPU_STEP_SIGNAL, 0, 1);
	rec(t[n++], 1, MEGPU_MGPU_STEP_WAIT_UNDO, 1, 0);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 0, 1);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 1, 0);
	rec(t[n++], 1, MEGPU_MGPU_STEP_WAIT_DEC, 1, 0xffffffff);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 0, 1);
	rec(t[n++], 1, MEGPU_MGPU_STEP_READ, 1, 0xffffffff);
	CHECK_EQ(megpu_msem_check_trace(t[0], n, 0x3, init, &r), 0);
	CHECK_EQ(r.signals, 1);
	CHECK_EQ(r.waits, 1);
	CHECK_EQ(r.undos, 1);

	/* a read of an old value */
	rec(t[5], 1, MEGPU_MGPU_STEP_READ, 0, 0);
	CHECK_EQ(megpu_msem_check_trace(t[0], n, 0x3, init, &r), -1);
	CHECK_EQ(r.bad, 5);
	rec(t[5], 1, MEGPU_MGPU_STEP_READ, 0, 1);
	/* a signal that overwrote another (two engines, no atomic add) */
	rec(t[n], 0, MEGPU_MGPU_STEP_SIGNAL, 0, 1);
	CHECK_EQ(megpu_msem_check_trace(t[0], n + 1, 0x3, init, &r), -1);
	CHECK_EQ(r.bad, (int)n);
	/* an undo with no failed check before it */
	rec(t[n], 1, MEGPU_MGPU_STEP_WAIT_UNDO, 1, 0);
	CHECK_EQ(megpu_msem_check_trace(t[0], n + 1, 0x3, init, &r), -1);
	CHECK_EQ(r.bad, (int)n);
	/* a decrement from a slot value that is not the last one */
	init[1] = 5;
	CHECK_EQ(megpu_msem_check_trace(t[0], n, 0x3, init, &r), -1);
	CHECK_EQ(r.bad, 0);
	init[1] = 0;
	/* a check that reads a slot outside its mask */
	CHECK_EQ(megpu_msem_check_trace(t[0], n, 0x2, init, &r), -1);
}

int main(void)
{
	_Static_assert(sizeof(struct ms) <= sizeof(struct st), "key size");
	TEST_RUN(test_msem_worked_numbers);
	TEST_RUN(test_msem_fig5);
	TEST_RUN(test_msem_wrap);
	TEST_RUN(test_msem_masks);
	TEST_RUN(test_arb_eq1);
	TEST_RUN(test_arb_table4);
	TEST_RUN(test_arb_layout);
	TEST_RUN(test_tournament_exhaustive);
	TEST_RUN(test_literal_tree_fails);
	TEST_RUN(test_literal_counterexample);
	TEST_RUN(test_tournament8_random);
	TEST_RUN(test_schedule_seed);
	TEST_RUN(test_msem_exhaustive);
	TEST_RUN(test_msem_trace_check);
	return tap_done();
}
