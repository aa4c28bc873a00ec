// SPDX-License-Identifier: GPL-2.0
/*
 * Packet fuzzer: random IBs on random engines. Each IB mixes valid
 * packets from the libmegpu builder with random opcodes and operands, IB
 * packets (which may not nest: chains and self-references fault), huge
 * sizes and grids, and program DISPATCHes of random wave words. Jobs go
 * in batches; every job must end with 0, -EFAULT, -ETIMEDOUT or
 * -ECANCELED within a generous timeout, and after each batch a known-good
 * job on every engine (from another client, whose memory the fuzzed jobs
 * cannot reach) must write what it should.
 *
 * A job that hangs bans its file (SUBMIT then fails with -EIO): the
 * fuzzing client is then opened again. Seeded and replayable, see
 * megpu_fuzz.h.
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_fuzz.h"

#define PF_JOBS		10000	/* per run; 10x in a long run */
#define PF_BATCH	40
#define PF_IB_SLOT	4096	/* bytes of IB per job in the IB BO */
#define PF_IB_BYTES	(PF_BATCH * PF_IB_SLOT)
#define PF_DATA_BYTES	(256 * 1024)
#define PF_PROG_WORDS	64

/* A client being fuzzed and its BOs. */
struct pf_client {
	struct mt t;
	struct megpu_bo *ib, *data, *prog, *args;
};

struct pf {
	uint64_t rng;
	struct pf_client c;
	unsigned long jobs, submitted, status[5], reopen, submit_err;
	unsigned long valid_pkts, random_pkts;
	bool clean;		/* this IB: valid packets on our BOs only */
};

static uint64_t R(struct pf *p, uint64_t n)
{
	return n ? fz_below(&p->rng, n) : 0;
}

static bool ONE_IN(struct pf *p, uint64_t n)
{
	return fz_one_in(&p->rng, n);
}

static int pf_client_open(struct mt *base, struct pf_client *c)
{
	int ret = mt_open_client(base, &c->t);

	ret = ret ?: mt_bo(&c->t.gpu, PF_IB_BYTES, 0, &c->ib);
	ret = ret ?: mt_bo(&c->t.gpu, PF_DATA_BYTES, 0, &c->data);
	ret = ret ?: mt_bo(&c->t.gpu, PF_BATCH * PF_PROG_WORDS * 8, 0,
			   &c->prog);
	ret = ret ?: mt_bo(&c->t.gpu, 64 * 1024, 0, &c->args);
	return ret;
}

static void pf_client_close(struct pf_client *c)
{
	megpu_bo_free(c->args);
	megpu_bo_free(c->prog);
	megpu_bo_free(c->data);
	megpu_bo_free(c->ib);
	mt_close(&c->t);
	memset(c, 0, sizeof(*c));
}

/* A GPU address: mostly in our BOs (data, IB, program), else anywhere. */
static uint64_t pf_addr(struct pf *p, unsigned int align)
{
	struct pf_client *c = &p->c;
	uint64_t a;

	if (p->clean)
		return (c->data->va + R(p, c->data->size / 2)) &
		       ~(uint64_t)(align ? align - 1 : 0);
	switch (R(p, 10)) {
	case 0:
		a = c->ib->va + R(p, c->ib->size);
		break;
	case 1:
		a = c->prog->va + R(p, c->prog->size);
		break;
	case 2:		/* just past a BO */
		a = c->data->va + c->data->size - R(p, 64);
		break;
	case 3:
		a = R(p, 2) ? (uint32_t)fz_next(&p->rng) : fz_value(&p->rng);
		break;
	case 4:
		a = R(p, 0x10000);
		break;
	default:
		a = c->data->va + R(p, c->data->size);
		break;
	}
	return align ? a & ~(uint64_t)(align - 1) : a;
}

/* A size: mostly small, sometimes huge. */
static uint32_t pf_size(struct pf *p)
{
	if (p->clean)
		return R(p, 4096);
	switch (R(p, 8)) {
	case 0:
		return (uint32_t)fz_value(&p->rng);
	case 1:
		return R(p, 1u << 20);
	default:
		return R(p, 4096);
	}
}

/*
 * A random wave program word; no user SYSCALL, which waits for a service.
 * SLEEP and INTERRUPT stay: they fault (the driver leaves them disabled).
 */
static uint64_t pf_wave_word(struct pf *p)
{
	uint64_t w;

	if (ONE_IN(p, 3)) {
		w = fz_next(&p->rng);
	} else {
		w = MEGPU_INSN(R(p, 0x64), R(p, 34), R(p, 34),
			       R(p, 8) ? R(p, 34) : MEGPU_ISA_IMM,
			       R(p, 2) ? R(p, PF_PROG_WORDS + 2) :
			       (uint32_t)fz_value(&p->rng));
	}
	if (MEGPU_INSN_OP(w) == MEGPU_OP_SYSCALL)
		w = (w & 0xffffffffull) |
		    (uint64_t)(((uint32_t)R(p, 0x100) << 8) | R(p, 40)) << 32;
	return w;
}

/* A DISPATCH of a random wave program in slot @slot of the program BO. */
static void pf_program(struct pf *p, struct megpu_cs *cs, unsigned int slot)
{
	struct pf_client *c = &p->c;
	uint64_t *code = (uint64_t *)c->prog->map + slot * PF_PROG_WORDS;
	struct megpu_pargs pa = { 0 };
	unsigned int i, len = 1 + R(p, PF_PROG_WORDS);
	uint64_t va;

	for (i = 0; i < len; i++)
		code[i] = pf_wave_word(p);
	if (R(p, 2))
		code[len - 1] = MEGPU_INSN(MEGPU_OP_END, 0, 0, 0, 0);
	pa.program = c->prog->va + slot * PF_PROG_WORDS * 8;
	pa.len = ONE_IN(p, 8) ? (uint32_t)fz_value(&p->rng) : len;
	if (ONE_IN(p, 8))
		pa.program = pf_addr(p, R(p, 2) ? 8 : 0);
	for (i = 0; i < 16; i++)
		pa.user[i] = R(p, 2) ? pf_addr(p, 8) : fz_next(&p->rng);
	megpu_pargs_write(c->args, slot * 256, &pa, &va);
	megpu_cs_dispatch_program(cs, ONE_IN(p, 10) ? pf_addr(p, 8) : va,
				  1 + R(p, 256), 1 + R(p, 2), 1 + R(p, 64),
				  1);
}

/* One valid packet from the builder (valid in form; may still fault). */
static void pf_valid(struct pf *p, struct megpu_cs *cs, unsigned int slot)
{
	struct pf_client *c = &p->c;
	struct megpu_kargs k = { 0 };
	uint32_t data[8];
	uint64_t va;
	unsigned int i;

	static const uint8_t clean_ops[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 12 };

	p->valid_pkts++;
	/* clean IBs: no wave words, IB or ring-only packets, which fault */
	switch (p->clean ? clean_ops[R(p, sizeof(clean_ops))] : R(p, 14)) {
	case 0:
		megpu_cs_nop(cs, R(p, 8));
		break;
	case 1:
		for (i = 0; i < 8; i++)
			data[i] = fz_next(&p->rng);
		megpu_cs_write_data(cs, pf_addr(p, 4), data, 1 + R(p, 8));
		break;
	case 2:
		megpu_cs_timestamp(cs, pf_addr(p, 8), fz_next(&p->rng),
				   R(p, 2));
		break;
	case 3:
		megpu_cs_copy(cs, pf_addr(p, 4), pf_addr(p, 4), pf_size(p));
		break;
	case 4:
		megpu_cs_fill(cs, pf_addr(p, 4), pf_size(p) & ~3u,
			      fz_next(&p->rng));
		break;
	case 5:		/* a built-in kernel over our BOs */
		for (i = 0; i < 4; i++)
			k.ptr[i] = pf_addr(p, 4);
		k.n = R(p, 4) ? R(p, 4096) : (uint32_t)fz_value(&p->rng);
		for (i = 0; i < 3; i++)
			k.param[i] = R(p, 2) ? R(p, 64) : fz_next(&p->rng);
		megpu_kargs_write(c->args, 32768 + slot * 64, &k, &va);
		megpu_cs_dispatch(cs, R(p, MEGPU_KERNEL_COUNT + 1),
				  ONE_IN(p, 8) ? pf_addr(p, 8) : va,
				  1 + R(p, 4096), 1 + R(p, 4), 1 + R(p, 256),
				  1 + R(p, 2));
		break;
	case 6:
		pf_program(p, cs, slot);
		break;
	case 7:		/* semaphores that are already reached */
		megpu_cs_signal(cs, c->data->va + 8 * R(p, 8), 1 + R(p, 8));
		megpu_cs_wait(cs, c->data->va + 8 * R(p, 8) + 4096, 0);
		break;
	case 8:
		megpu_cs_flush(cs);
		break;
	case 9:
		megpu_cs_idle_signal(cs);
		break;
	case 10:	/* IB chains: IBs do not nest, this one faults */
		megpu_cs_ib(cs, R(p, 2) ? c->ib->va + slot * PF_IB_SLOT :
			    pf_addr(p, 4), R(p, 64));
		break;
	case 11:	/* ring-only packets, refused in an IB */
		if (R(p, 2))
			megpu_cs_set_context(cs, fz_next(&p->rng), R(p, 16));
		else
			megpu_cs_set_mailbox(cs, fz_next(&p->rng), R(p, 16));
		break;
	default:
		megpu_cs_write32(cs, pf_addr(p, 4), fz_next(&p->rng));
		break;
	}
}

/* One random packet: any opcode, any length, operands from pf_addr(). */
static void pf_random(struct pf *p, struct megpu_cs *cs)
{
	uint32_t payload[16];
	unsigned int op, count, i;

	p->random_pkts++;
	op = R(p, 4) ? R(p, MEGPU_PKT_ARB_RELEASE + 2) : R(p, 256);
	count = R(p, 8) ? R(p, 10) : R(p, 17);
	for (i = 0; i < count && i < 16; i++) {
		switch (R(p, 3)) {
		case 0: {
			uint64_t a = pf_addr(p, 4);

			payload[i] = a;
			if (i + 1 < count && i + 1 < 16)
				payload[++i] = a >> 32;
			break;
		}
		case 1:
			payload[i] = R(p, 64);
			break;
		default:
			payload[i] = fz_next(&p->rng);
			break;
		}
	}
	/* a WAIT for a value that may never come hangs: keep it rare */
	if ((op == MEGPU_PKT_WAIT || op == MEGPU_PKT_MSEM_WAIT ||
	     op == MEGPU_PKT_ARB_ACQUIRE) && !ONE_IN(p, 64))
		op = MEGPU_PKT_NOP;
	megpu_cs_packet(cs, op, R(p, 4) ? 0 : R(p, 256), payload,
			count > 16 ? 16 : count);
	if (count > 16)		/* a length past what follows */
		cs->dw[cs->len - 17] = MEGPU_PKT_HEADER(op, count, 0);
}

/* The IB of job @slot, into its slot of the IB BO. */
static uint32_t pf_build(struct pf *p, struct megpu_cs *cs, unsigned int slot)
{
	unsigned int n = 1 + R(p, 12), i;
	uint32_t bytes;

	megpu_cs_reset(cs);
	p->clean = ONE_IN(p, 3);
	for (i = 0; i < n; i++) {
		if (p->clean || R(p, 4))
			pf_valid(p, cs, slot);
		else
			pf_random(p, cs);
		if (megpu_cs_bytes(cs) > PF_IB_SLOT - 512)
			break;
	}
	if (!p->clean && ONE_IN(p, 20))	/* a random word at the end */
		megpu_cs_packet(cs, R(p, 256), 0, NULL, 0);
	cs->error = 0;
	bytes = megpu_cs_bytes(cs);
	if (bytes > PF_IB_SLOT)
		bytes = PF_IB_SLOT;
	memcpy((uint8_t *)p->c.ib->map + slot * PF_IB_SLOT, cs->dw, bytes);
	return bytes;
}

struct pf_job {
	struct megpu_job job;
	uint32_t sync;
	bool live;
};

static int pf_status_index(int st)
{
	switch (st) {
	case 0: return 0;
	case -EFAULT: return 1;
	case -ETIMEDOUT: return 2;
	case -ECANCELED: return 3;
	default: return 4;
	}
}

FIXTURE(pf) {
	struct mt probe;	/* the known-good jobs' client */
	struct megpu_bo *good;
};

FIXTURE_SETUP(pf)
{
	ASSERT_EQ(0, mt_open(&self->probe));
	ASSERT_EQ(0, mt_bo(&self->probe.gpu, 4096, 0, &self->good));
}

FIXTURE_TEARDOWN(pf)
{
	megpu_bo_free(self->good);
	mt_close(&self->probe);
}

/* Every engine runs a known-good job, all at once: 0 or the error. */
static int pf_engines_work(struct mt *t, struct megpu_bo *bo, uint32_t tag)
{
	struct mt_job j[MEGPU_MAX_ENGINES];
	struct megpu_cs cs;
	unsigned int e;
	int ret = 0, r;

	memset(bo->map, 0, 4 * t->engines);
	for (e = 0; e < t->engines; e++) {
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, bo->va + 4 * e, tag + e);
		r = mt_submit(&t->gpu, &j[e], e, &cs, &bo, 1, 0);
		megpu_cs_fini(&cs);
		if (r)
			return r;
	}
	for (e = 0; e < t->engines; e++) {
		r = mt_job_finish(&j[e], mt_job_ns(t));
		if (!ret && r)
			ret = r;
		if (!ret && mt_u32(bo)[e] != tag + e)
			ret = -EIO;
	}
	return ret;
}

TEST_F_TIMEOUT(pf, packets, 1800)
{
	unsigned long total = PF_JOBS * (fz_long ? 10 : 1), batch = 0;
	struct pf_job *jobs = calloc(PF_BATCH, sizeof(*jobs));
	int64_t start = megpu_now_ns();
	struct megpu_cs cs;
	struct pf *p = calloc(1, sizeof(*p));
	unsigned int i;

	ASSERT_NE(NULL, jobs);
	ASSERT_NE(NULL, p);
	p->rng = fz_seed;
	ASSERT_EQ(0, pf_client_open(&self->probe, &p->c));
	megpu_cs_init(&cs);
	TH_LOG("%lu jobs in batches of %d, seed 0x%llx", total, PF_BATCH,
	       (unsigned long long)fz_seed);
	while (p->jobs < total) {
		bool banned = false;

		for (i = 0; i < PF_BATCH; i++) {
			struct pf_job *j = &jobs[i];
			uint32_t bytes = pf_build(p, &cs, i);
			uint32_t flags = R(p, 4) ? 0 :
				(uint32_t[]){ DRM_MEGPU_SUBMIT_NO_FLUSH,
					      DRM_MEGPU_SUBMIT_HOST_FLUSH,
					      DRM_MEGPU_SUBMIT_NO_IMPLICIT }
					      [R(p, 3)];
			int ret;

			megpu_job_init(&j->job, R(p, p->c.t.engines));
			j->job.flags = flags;
			megpu_job_set_ib(&j->job, p->c.ib, i * PF_IB_SLOT);
			j->job.ib_dwords = bytes / 4;
			/* huge: the whole IB BO from here, mostly not ours */
			if (ONE_IN(p, 50))
				j->job.ib_dwords = (PF_IB_BYTES -
						    i * PF_IB_SLOT) / 4;
			megpu_job_add_bo(&j->job, p->c.data, DRM_MEGPU_BO_READ |
					 DRM_MEGPU_BO_WRITE);
			megpu_job_add_bo(&j->job, p->c.prog, DRM_MEGPU_BO_READ);
			megpu_job_add_bo(&j->job, p->c.args, DRM_MEGPU_BO_READ);
			/* an explicit dependency passes a failure on */
			if (i && ONE_IN(p, 8) && jobs[i - 1].live)
				megpu_job_wait_sync(&j->job, jobs[i - 1].sync,
						    0);
			ASSERT_EQ(0, megpu_syncobj_new(&p->c.t.gpu, false,
						       &j->sync));
			megpu_job_signal_sync(&j->job, j->sync, 0);
			ret = megpu_job_submit(&p->c.t.gpu, &j->job);
			p->jobs++;
			j->live = !ret;
			if (ret) {
				/* a hang earlier in this batch banned us */
				ASSERT_EQ(-EIO, ret)
					TH_LOG("SUBMIT: %d (seed 0x%llx)", ret,
					       (unsigned long long)fz_seed);
				p->submit_err++;
				banned = true;
				megpu_syncobj_free(&p->c.t.gpu, j->sync);
				megpu_job_fini(&j->job);
				continue;
			}
			p->submitted++;
		}
		for (i = 0; i < PF_BATCH; i++) {
			struct pf_job *j = &jobs[i];
			int st;

			if (!j->live)
				continue;
			st = megpu_syncobj_wait(&p->c.t.gpu, j->sync, 0,
						mt_job_ns(&p->c.t));
			ASSERT_EQ(0, st)
				TH_LOG("job %u of batch %lu never ended "
				       "(seed 0x%llx)", i, batch,
				       (unsigned long long)fz_seed);
			st = megpu_fence_status(p->c.t.gpu.fd, j->sync, 0);
			p->status[pf_status_index(st)]++;
			ASSERT_NE(4, pf_status_index(st))
				TH_LOG("job %u of batch %lu ended with %d "
				       "(seed 0x%llx)", i, batch, st,
				       (unsigned long long)fz_seed);
			if (st == -ETIMEDOUT)
				banned = true;
			megpu_syncobj_free(&p->c.t.gpu, j->sync);
			megpu_job_fini(&j->job);
			j->live = false;
		}
		ASSERT_EQ(0, pf_engines_work(&self->probe, self->good,
					     (batch & 0xffff) << 16))
			TH_LOG("known-good jobs after batch %lu (seed 0x%llx)",
			       batch, (unsigned long long)fz_seed);
		if (banned) {
			pf_client_close(&p->c);
			ASSERT_EQ(0, pf_client_open(&self->probe, &p->c));
			p->reopen++;
		}
		batch++;
	}
	TH_LOG("%lu jobs (%lu submitted) in %.1f s: %lu ok, %lu faulted, "
	       "%lu timed out, %lu canceled; %lu refused (banned), %lu new "
	       "clients; %lu valid and %lu random packets",
	       p->jobs, p->submitted, (megpu_now_ns() - start) / 1e9,
	       p->status[0], p->status[1], p->status[2], p->status[3],
	       p->submit_err, p->reopen, p->valid_pkts, p->random_pkts);
	megpu_cs_fini(&cs);
	pf_client_close(&p->c);
	free(jobs);
	free(p);
}

FZ_HARNESS_MAIN
