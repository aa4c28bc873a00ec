// SPDX-License-Identifier: GPL-2.0
/*
 * Semaphores between engines with resource tracking (seed 001): a job
 * that depends on another engine's job of this GPU waits for it on the
 * GPU, with a WAIT packet in its ring frame, only when the dependency is
 * on another engine and has not completed yet (not expired).
 *
 * The tests read the frames the driver built (debugfs "frames", found by
 * the job's IB address), the resource objects ("resources"), the
 * timestamps and the semaphore pool, and check the data the jobs leave:
 * engine A fills a buffer with 0 and engine B turns the 0s into 1s, with
 * GPU semaphores, with CPU-side waits (gpu_semaphores=N) and, as the
 * negative control, with no waits at all (drop_waits=Y), where the race
 * must show. Producers are held back with gates (a WAIT on a BO the CPU
 * sets) and the device's delay_us knob, so that they have not expired
 * when their consumers are put in a ring.
 */

#include <stdint.h>

#include <inttypes.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define SETTLE_US 50000		/* a job that could run has run by then */
#define FRAME_MS 5000		/* a job whose producer is in a ring gets in */
#define FILL_BYTES 65536

/*
 * The module parameters and engine delays the tests change are put back
 * by the parent process, even when a test fails or crashes.
 */
FIXTURE(sem) {
	struct mt t;
	int gpu_semaphores, drop_waits;
	char delay_path[256];
};

FIXTURE_SETUP(sem)
{
	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_LT(0, self->t.engines);
	self->gpu_semaphores = mt_param_get("gpu_semaphores");
	self->drop_waits = mt_param_get("drop_waits");
	if (megpu_debugfs_path(&self->t.gpu, "delay_us", self->delay_path,
			       sizeof(self->delay_path)))
		self->delay_path[0] = '\0';
}

FIXTURE_TEARDOWN_PARENT(sem)
{
	char text[32];
	unsigned int e;

	if (self->gpu_semaphores >= 0)
		mt_param_set("gpu_semaphores", self->gpu_semaphores);
	if (self->drop_waits >= 0)
		mt_param_set("drop_waits", self->drop_waits);
	megpu_debugfs_write(&self->t.gpu, "sem_pool_limit", "0");
	for (e = 0; self->delay_path[0] && e < self->t.engines; e++) {
		snprintf(text, sizeof(text), "%u 0", e);
		mt_write_file(self->delay_path, text);
	}
	/* the test's process owned the file; its exit closed it */
}

/* Skip unless the driver has this seed's debugfs files. */
#define NEED_DEBUGFS(t)							\
	do {								\
		char _p[256];						\
		if (megpu_debugfs_path(&(t)->gpu, "frames", _p,		\
				       sizeof(_p)))			\
			SKIP(return, "no debugfs frames");		\
	} while (0)

/* The first engine of @type accepting @op, else any accepting it. */
static int engine_for(const struct mt *t, unsigned int type, unsigned int op,
		      int not)
{
	unsigned int e;

	for (e = 0; e < t->engines; e++)
		if ((int)e != not && mt_type(t, e) == type &&
		    mt_accepts(t, e, op))
			return (int)e;
	return mt_engine_for(t, op, not);
}

/*
 * Start a job on @engine that reads dword 0 of @src (listed READ) into
 * dword 0 of @dst (listed WRITE; its second half holds a DISPATCH argument
 * block when the engine has no COPY), after @gate opens when set and
 * after the @nin in-syncs.
 */
static int read_job(struct mt *t, struct mt_job *j, unsigned int engine,
		    struct megpu_bo *src, struct megpu_bo *dst,
		    struct megpu_bo *gate, const struct drm_megpu_sync *in,
		    unsigned int nin, uint32_t flags)
{
	struct megpu_cs cs;
	unsigned int i;
	int ret;

	ret = mt_job_prepare(&t->gpu, j, engine, NULL, 0, flags);
	ret = ret ?: megpu_job_add_bo(&j->job, src, DRM_MEGPU_BO_READ);
	ret = ret ?: megpu_job_add_bo(&j->job, dst, DRM_MEGPU_BO_WRITE);
	if (!ret && gate)
		ret = megpu_job_add_bo(&j->job, gate, DRM_MEGPU_BO_READ);
	for (i = 0; !ret && i < nin; i++)
		ret = megpu_job_wait_sync(&j->job, in[i].handle, in[i].point);
	megpu_cs_init(&cs);
	if (!ret && gate)
		mt_gate_hold(&cs, gate);
	ret = ret ?: mt_cs_copy_any(t, engine, &cs, src->va, dst->va, 1, dst,
				    dst->size / 2);
	ret = ret ?: mt_job_start(j, &cs);
	megpu_cs_fini(&cs);
	if (ret)
		mt_job_free(j);
	return ret;
}

/* The frame of a job that completed (the job is kept, see mt_frame_find). */
static int frame_of(struct mt *t, struct mt_job *j, struct mt_frame *f)
{
	return mt_frame_wait(t, j->job.engine, mt_job_ib_va(j), f, FRAME_MS);
}

/* --- engine A fills with 0, engine B turns 0 into 1 --- */

enum fti_mode {
	FTI_GPU,	/* GPU semaphores: B's frame WAITs for A */
	FTI_CPU,	/* gpu_semaphores=N: B's scheduler waits for A */
	FTI_NO_WAITS,	/* drop_waits=Y: nothing orders them */
};

static void fill_then_increment(struct __test_metadata *_metadata,
				struct mt *t, enum fti_mode mode)
{
	const unsigned int n = FILL_BYTES / 4;
	struct megpu_bo *buf, *kargs, *gate;
	struct megpu_kargs k = { .n = n };
	struct mt_frame fa, fb;
	unsigned int i, ones = 0;
	uint64_t args, cur, next;
	struct megpu_cs cs;
	struct mt_job a, b;
	int ea, eb;

	NEED_DEBUGFS(t);
	MT_NEED_ENGINES(t, 2);
	ea = engine_for(t, MEGPU_ENGINE_COPY, MEGPU_PKT_FILL, -1);
	eb = engine_for(t, MEGPU_ENGINE_COMPUTE, MEGPU_PKT_DISPATCH, ea);
	ASSERT_LE(0, ea);
	ASSERT_LE(0, eb);
	ASSERT_TRUE(megpu_engine_kernels(mt_type(t, eb)) &
		    MEGPU_BIT(MEGPU_KERNEL_INCREMENT));

	ASSERT_EQ(0, mt_param_set("gpu_semaphores", mode != FTI_CPU));
	ASSERT_EQ(0, mt_param_set("drop_waits", mode == FTI_NO_WAITS));
	ASSERT_EQ(0, mt_bo(&t->gpu, FILL_BYTES, 0, &buf));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &kargs));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	memset(buf->map, 0x55, FILL_BYTES);
	k.ptr[0] = buf->va;
	ASSERT_EQ(0, megpu_kargs_write(kargs, 0, &k, &args));
	ASSERT_EQ(0, mt_delay_us(t, ea, 2000));

	/* A: held by the gate, then slowly (2 ms a packet) fills with 0 */
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_job_prepare(&t->gpu, &a, ea, NULL, 0, 0));
	ASSERT_EQ(0, megpu_job_add_bo(&a.job, buf, DRM_MEGPU_BO_WRITE));
	ASSERT_EQ(0, megpu_job_add_bo(&a.job, gate, DRM_MEGPU_BO_READ));
	mt_gate_hold(&cs, gate);
	for (i = 0; i < 4; i++)
		megpu_cs_nop(&cs, 0);
	megpu_cs_fill(&cs, buf->va, FILL_BYTES, 0);
	ASSERT_EQ(0, mt_job_start(&a, &cs));

	/* B: adds 1 to every element; depends on A only through the BO */
	megpu_cs_reset(&cs);
	ASSERT_EQ(0, mt_job_prepare(&t->gpu, &b, eb, NULL, 0, 0));
	ASSERT_EQ(0, megpu_job_add_bo(&b.job, buf, DRM_MEGPU_BO_READ |
				      DRM_MEGPU_BO_WRITE));
	ASSERT_EQ(0, megpu_job_add_bo(&b.job, kargs, DRM_MEGPU_BO_READ));
	megpu_cs_dispatch(&cs, MEGPU_KERNEL_INCREMENT, args, n, 1, 256, 1);
	ASSERT_EQ(0, mt_job_start(&b, &cs));
	megpu_cs_fini(&cs);

	if (mode == FTI_NO_WAITS) {
		/* nothing holds B: it runs while A waits for its gate */
		EXPECT_EQ(0, mt_job_done(&b, mt_job_ns(t)));
	} else {
		usleep(SETTLE_US);
		EXPECT_TRUE(mt_pending(&t->gpu, b.sync, 0))
			TH_LOG("B completed before A ran");
		EXPECT_EQ(0x55555555, mt_u32(buf)[n - 1]);
	}
	if (mode == FTI_GPU) {
		/* B is in its ring, stalled on the WAIT: timestamp frozen */
		ASSERT_EQ(0, frame_of(t, &b, &fb));
		ASSERT_EQ(0, mt_timestamps(t, eb, &cur, &next));
		EXPECT_GT(fb.seqno, cur);
	}
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_done(&a, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_done(&b, mt_job_ns(t)));
	ASSERT_EQ(0, mt_delay_us(t, ea, 0));

	for (i = 0; i < n; i++)
		ones += mt_u32(buf)[i] == 1;
	ASSERT_EQ(0, frame_of(t, &a, &fa));
	ASSERT_EQ(0, frame_of(t, &b, &fb));
	switch (mode) {
	case FTI_GPU:
		EXPECT_EQ(n, ones) TH_LOG("B did not wait for A");
		EXPECT_EQ(1, fb.nwaits);
		EXPECT_TRUE(mt_frame_waits_for(&fb, ea, fa.seqno))
			TH_LOG("B's frame does not wait for A (%s@%llu)",
			       mt_name(t, ea), (unsigned long long)fa.seqno);
		break;
	case FTI_CPU:
		EXPECT_EQ(n, ones) TH_LOG("B did not wait for A");
		EXPECT_EQ(0, fb.nwaits);
		break;
	case FTI_NO_WAITS:
		EXPECT_EQ(0, fb.nwaits);
		EXPECT_NE(n, ones)
			TH_LOG("no race without waits: control broken");
		break;
	}
	EXPECT_EQ(0, fa.nwaits);
	mt_job_free(&a);
	mt_job_free(&b);
	megpu_bo_free(gate);
	megpu_bo_free(kargs);
	megpu_bo_free(buf);
}

TEST_F(sem, fill_then_increment)
{
	fill_then_increment(_metadata, &self->t, FTI_GPU);
}

TEST_F(sem, fill_then_increment_cpu_waits)
{
	fill_then_increment(_metadata, &self->t, FTI_CPU);
}

/* The negative control: with the WAITs dropped, B overtakes A. */
TEST_F(sem, fill_then_increment_without_waits_races)
{
	fill_then_increment(_metadata, &self->t, FTI_NO_WAITS);
}

/* --- the shape of frames --- */

/* No WAIT for a BO never used, one whose user completed, one on our engine. */
TEST_F(sem, no_wait_unused_expired_same_engine)
{
	struct megpu_bo *fresh, *done, *same, *gate;
	struct mt_job j, p, q, r, s;
	struct mt_frame f;
	int ea = 0, eb;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	eb = mt_other_engine(&self->t, ea);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &fresh));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &done));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &same));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));

	/* never used: a blank resource object */
	ASSERT_EQ(0, mt_write_job(&self->t, &j, eb, fresh, 0, 1, NULL, NULL,
				  0, 0));
	EXPECT_EQ(0, mt_job_done(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(0, frame_of(&self->t, &j, &f));
	EXPECT_EQ(0, f.nwaits);

	/* last written on another engine, by a job that completed */
	ASSERT_EQ(0, mt_write_job(&self->t, &p, ea, done, 0, 2, NULL, NULL,
				  0, 0));
	EXPECT_EQ(0, mt_job_done(&p, mt_job_ns(&self->t)));
	ASSERT_EQ(0, mt_write_job(&self->t, &q, eb, done, 0, 3, NULL, NULL,
				  0, 0));
	EXPECT_EQ(0, mt_job_done(&q, mt_job_ns(&self->t)));
	ASSERT_EQ(0, frame_of(&self->t, &q, &f));
	EXPECT_EQ(0, f.nwaits);
	EXPECT_EQ(3, mt_u32(done)[0]);

	/* last written on our engine by a job still held: ring order */
	ASSERT_EQ(0, mt_write_job(&self->t, &r, ea, same, 0, 4, gate, NULL,
				  0, 0));
	ASSERT_EQ(0, mt_write_job(&self->t, &s, ea, same, 0, 5, NULL, NULL,
				  0, 0));
	ASSERT_EQ(0, mt_frame_wait(&self->t, ea, mt_job_ib_va(&s), &f,
				   FRAME_MS));
	EXPECT_EQ(0, f.nwaits);
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, s.sync, 0));
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&r, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_finish(&s, mt_job_ns(&self->t)));
	EXPECT_EQ(5, mt_u32(same)[0]);

	mt_job_free(&j);
	mt_job_free(&p);
	mt_job_free(&q);
	megpu_bo_free(gate);
	megpu_bo_free(same);
	megpu_bo_free(done);
	megpu_bo_free(fresh);
}

/* BOs last written on two other engines, still running: two WAITs. */
TEST_F(sem, one_wait_per_foreign_engine)
{
	struct megpu_bo *x, *y, *gate, *bos[2];
	struct mt_frame fp, fq, fc;
	struct mt_job p, q, c;
	struct megpu_cs cs;
	int e[3];

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 3);
	e[0] = 0;
	e[1] = 1;
	e[2] = 2;
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &y));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(&self->t, &p, e[0], x, 0, 1, gate, NULL, 0,
				  0));
	ASSERT_EQ(0, mt_write_job(&self->t, &q, e[1], y, 0, 2, gate, NULL, 0,
				  0));
	/* c writes both: x and y after p and q */
	bos[0] = x;
	bos[1] = y;
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &c, e[2], bos, 2, 0));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, x->va, 10);
	megpu_cs_write32(&cs, y->va, 20);
	ASSERT_EQ(0, mt_job_start(&c, &cs));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, mt_frame_wait(&self->t, e[2], mt_job_ib_va(&c), &fc,
				   FRAME_MS));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, c.sync, 0));
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_done(&p, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&q, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&c, mt_job_ns(&self->t)));
	EXPECT_EQ(10, mt_u32(x)[0]);
	EXPECT_EQ(20, mt_u32(y)[0]);

	ASSERT_EQ(0, frame_of(&self->t, &p, &fp));
	ASSERT_EQ(0, frame_of(&self->t, &q, &fq));
	EXPECT_EQ(2, fc.nwaits);
	EXPECT_TRUE(mt_frame_waits_for(&fc, e[0], fp.seqno));
	EXPECT_TRUE(mt_frame_waits_for(&fc, e[1], fq.seqno));
	/* a WAIT is on the producer's own semaphore object */
	EXPECT_EQ(fp.signal.sem, fc.waits[0].engine == e[0] ?
		  fc.waits[0].sem : fc.waits[1].sem);
	mt_job_free(&p);
	mt_job_free(&q);
	mt_job_free(&c);
	megpu_bo_free(gate);
	megpu_bo_free(y);
	megpu_bo_free(x);
}

/*
 * Two BOs last written by two jobs of one other engine: one WAIT, on the
 * later job's timestamp, in whatever order the BOs are listed.
 */
TEST_F(sem, one_wait_keeps_largest_timestamp)
{
	struct megpu_bo *x, *y, *gate, *out[2];
	struct mt_frame fp, fq, fc;
	struct mt_job p, q, c[2];
	int ea = 0, eb, i;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	eb = mt_other_engine(&self->t, ea);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &y));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(&self->t, &p, ea, x, 0, 1, gate, NULL, 0,
				  0));
	ASSERT_EQ(0, mt_write_job(&self->t, &q, ea, y, 0, 2, NULL, NULL, 0,
				  0));
	for (i = 0; i < 2; i++) {
		struct megpu_cs cs;

		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out[i]));
		ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &c[i], eb, NULL, 0,
					    0));
		ASSERT_EQ(0, megpu_job_add_bo(&c[i].job, i ? y : x,
					      DRM_MEGPU_BO_READ));
		ASSERT_EQ(0, megpu_job_add_bo(&c[i].job, i ? x : y,
					      DRM_MEGPU_BO_READ));
		ASSERT_EQ(0, megpu_job_add_bo(&c[i].job, out[i],
					      DRM_MEGPU_BO_WRITE));
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, out[i]->va, 7);
		ASSERT_EQ(0, mt_job_start(&c[i], &cs));
		megpu_cs_fini(&cs);
	}
	ASSERT_EQ(0, mt_frame_wait(&self->t, eb, mt_job_ib_va(&c[1]), &fc,
				   FRAME_MS));
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_done(&p, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&q, mt_job_ns(&self->t)));
	ASSERT_EQ(0, frame_of(&self->t, &p, &fp));
	ASSERT_EQ(0, frame_of(&self->t, &q, &fq));
	EXPECT_LT(fp.seqno, fq.seqno);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, mt_job_done(&c[i], mt_job_ns(&self->t)));
		ASSERT_EQ(0, frame_of(&self->t, &c[i], &fc));
		EXPECT_EQ(1, fc.nwaits) TH_LOG("consumer %d", i);
		EXPECT_EQ(ea, fc.waits[0].engine);
		EXPECT_EQ(fq.seqno, fc.waits[0].ts)
			TH_LOG("consumer %d waits for %llu, not the later %llu",
			       i, (unsigned long long)fc.waits[0].ts,
			       (unsigned long long)fq.seqno);
		EXPECT_EQ(fq.signal.sem, fc.waits[0].sem);
		EXPECT_EQ(7, mt_u32(out[i])[0]);
		mt_job_free(&c[i]);
		megpu_bo_free(out[i]);
	}
	mt_job_free(&p);
	mt_job_free(&q);
	megpu_bo_free(gate);
	megpu_bo_free(y);
	megpu_bo_free(x);
}

/* The resource object of a BO: blank, then its last writer and readers. */
TEST_F(sem, resource_objects)
{
	const uint64_t size = 13 * 4096;	/* no other BO has this size */
	struct megpu_bo *x, *out;
	char key[64], want[128], *text, *line, *nl;
	struct mt_frame fw, fr;
	struct mt_job w, r;
	int ea = 0, eb;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	eb = mt_other_engine(&self->t, ea);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, size, 0, &x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	snprintf(key, sizeof(key), " size %llu ", (unsigned long long)size);

	text = mt_debugfs(&self->t, "resources");
	ASSERT_NE(NULL, text);
	line = strstr(text, key);
	ASSERT_NE(NULL, line) TH_LOG("no BO of %llu bytes in:\n%s",
				     (unsigned long long)size, text);
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	EXPECT_NE(NULL, strstr(line, "write - reads blank")) TH_LOG("%s", line);
	free(text);

	ASSERT_EQ(0, mt_write_job(&self->t, &w, ea, x, 0, 0x77, NULL, NULL, 0,
				  0));
	EXPECT_EQ(0, mt_job_done(&w, mt_job_ns(&self->t)));
	ASSERT_EQ(0, read_job(&self->t, &r, eb, x, out, NULL, NULL, 0, 0));
	EXPECT_EQ(0, mt_job_done(&r, mt_job_ns(&self->t)));
	EXPECT_EQ(0x77, mt_u32(out)[0]);
	ASSERT_EQ(0, frame_of(&self->t, &w, &fw));
	ASSERT_EQ(0, frame_of(&self->t, &r, &fr));

	text = mt_debugfs(&self->t, "resources");
	ASSERT_NE(NULL, text);
	line = strstr(text, key);
	ASSERT_NE(NULL, line);
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	{
		char wn[16], rn[16];

		megpu_engine_name(self->t.types, ea, wn, sizeof(wn));
		megpu_engine_name(self->t.types, eb, rn, sizeof(rn));
		snprintf(want, sizeof(want),
			 "write %s@%llu:sem%u reads %s@%llu:sem%u", wn,
			 (unsigned long long)fw.seqno, fw.signal.sem, rn,
			 (unsigned long long)fr.seqno, fr.signal.sem);
	}
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want '%s' in '%s'", want,
						   line);
	EXPECT_EQ(NULL, strstr(line, "blank"));
	free(text);
	mt_job_free(&w);
	mt_job_free(&r);
	megpu_bo_free(out);
	megpu_bo_free(x);
}

/* --- readers and writers --- */

/*
 * Two readers on two engines do not wait for each other; a writer on a
 * third waits for both; a reader after it waits for the writer only.
 */
TEST_F(sem, readers_and_writers)
{
	struct megpu_bo *x, *gate, *out[3];
	struct mt_frame f1, f2, fw, f3;
	struct mt_job r1, r2, w, r3;
	int e[4], i;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 3);
	e[0] = 0;
	e[1] = 1;
	e[2] = 2;
	e[3] = self->t.engines > 3 ? 3 : 0;
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &out[i]));
	mt_u32(x)[0] = 0x1111;

	ASSERT_EQ(0, read_job(&self->t, &r1, e[0], x, out[0], gate, NULL, 0,
			      0));
	ASSERT_EQ(0, read_job(&self->t, &r2, e[1], x, out[1], gate, NULL, 0,
			      0));
	ASSERT_EQ(0, mt_write_job(&self->t, &w, e[2], x, 0, 0x2222, NULL,
				  NULL, 0, 0));
	ASSERT_EQ(0, read_job(&self->t, &r3, e[3], x, out[2], NULL, NULL, 0,
			      0));
	ASSERT_EQ(0, mt_frame_wait(&self->t, e[3], mt_job_ib_va(&r3), &f3,
				   FRAME_MS));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, w.sync, 0));
	EXPECT_EQ(0x1111, mt_u32(x)[0]);
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_done(&r1, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&r2, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&w, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_done(&r3, mt_job_ns(&self->t)));
	EXPECT_EQ(0x1111, mt_u32(out[0])[0]);
	EXPECT_EQ(0x1111, mt_u32(out[1])[0]);
	EXPECT_EQ(0x2222, mt_u32(out[2])[0]);

	ASSERT_EQ(0, frame_of(&self->t, &r1, &f1));
	ASSERT_EQ(0, frame_of(&self->t, &r2, &f2));
	ASSERT_EQ(0, frame_of(&self->t, &w, &fw));
	ASSERT_EQ(0, frame_of(&self->t, &r3, &f3));
	EXPECT_EQ(0, f1.nwaits);
	EXPECT_EQ(0, f2.nwaits) TH_LOG("a reader waits for a reader");
	EXPECT_EQ(2, fw.nwaits);
	EXPECT_TRUE(mt_frame_waits_for(&fw, e[0], f1.seqno));
	EXPECT_TRUE(mt_frame_waits_for(&fw, e[1], f2.seqno));
	EXPECT_EQ(1, f3.nwaits);
	EXPECT_TRUE(mt_frame_waits_for(&f3, e[2], fw.seqno));

	mt_job_free(&r1);
	mt_job_free(&r2);
	mt_job_free(&w);
	mt_job_free(&r3);
	for (i = 0; i < 3; i++)
		megpu_bo_free(out[i]);
	megpu_bo_free(gate);
	megpu_bo_free(x);
}

/* --- in-syncs and foreign fences --- */

/*
 * An in-sync on a job of another engine becomes a WAIT (no BO relates
 * them: NO_IMPLICIT); on a job of the same engine it needs none.
 */
TEST_F(sem, in_syncs_become_waits)
{
	struct megpu_bo *x, *gate, *out[2];
	struct drm_megpu_sync in;
	struct mt_frame fp, fc;
	struct mt_job p, c;
	int ea = 0, ec, i;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &x));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &out[i]));
		ec = i ? ea : mt_other_engine(&self->t, ea);
		ASSERT_EQ(0, mt_write_job(&self->t, &p, ea, x, 0, 0xab + i,
					  gate, NULL, 0,
					  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		in = (struct drm_megpu_sync){ .handle = p.sync };
		ASSERT_EQ(0, read_job(&self->t, &c, ec, x, out[i], NULL, &in,
				      1, DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		usleep(SETTLE_US);
		EXPECT_TRUE(mt_pending(&self->t.gpu, c.sync, 0));
		mt_gate_open(gate);
		EXPECT_EQ(0, mt_job_done(&p, mt_job_ns(&self->t)));
		EXPECT_EQ(0, mt_job_done(&c, mt_job_ns(&self->t)));
		EXPECT_EQ(0xab + i, mt_u32(out[i])[0]);
		ASSERT_EQ(0, frame_of(&self->t, &p, &fp));
		ASSERT_EQ(0, frame_of(&self->t, &c, &fc));
		if (ec != ea) {
			EXPECT_EQ(1, fc.nwaits);
			EXPECT_TRUE(mt_frame_waits_for(&fc, ea, fp.seqno));
			EXPECT_EQ(fp.signal.sem, fc.waits[0].sem);
		} else {
			EXPECT_EQ(0, fc.nwaits) TH_LOG("same engine");
		}
		mt_job_free(&p);
		mt_job_free(&c);
		megpu_bo_free(gate);
		megpu_bo_free(out[i]);
	}
	megpu_bo_free(x);
}

/* A vgem fence on a BO holds a megpu job until vgem signals it. */
TEST_F(sem, foreign_fence_holds_job)
{
	struct megpu_bo *shared, *out;
	uint32_t vhandle = 0, fence = 0;
	struct mt_frame f;
	struct megpu_cs cs;
	struct mt_job j;
	int vgem, e;

	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	e = mt_other_engine(&self->t, 0) < 0 ? 0 : 1;
	ASSERT_EQ(0, mt_vgem_bo(vgem, &self->t.gpu, 4096, &vhandle, &shared));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	ASSERT_EQ(0, mt_vgem_fence(vgem, vhandle, &fence));

	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, e, NULL, 0, 0));
	ASSERT_EQ(0, megpu_job_add_bo(&j.job, shared, DRM_MEGPU_BO_READ));
	ASSERT_EQ(0, megpu_job_add_bo(&j.job, out, DRM_MEGPU_BO_WRITE));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, out->va, 0xf0f0);
	ASSERT_EQ(0, mt_job_start(&j, &cs));
	megpu_cs_fini(&cs);

	usleep(200000);
	EXPECT_TRUE(mt_pending(&self->t.gpu, j.sync, 0))
		TH_LOG("the job did not wait for the foreign fence");
	EXPECT_EQ(0, mt_u32(out)[0]);
	ASSERT_EQ(0, mt_vgem_signal(vgem, fence));
	EXPECT_EQ(0, mt_job_done(&j, mt_job_ns(&self->t)));
	EXPECT_EQ(0xf0f0, mt_u32(out)[0]);
	ASSERT_EQ(0, mt_frame_find(&self->t, e, mt_job_ib_va(&j), &f))
		TH_LOG("the job's frame is not in debugfs \"frames\"");
	EXPECT_EQ(0, f.nwaits) TH_LOG("a foreign fence is no semaphore");
	mt_job_free(&j);
	megpu_bo_free(out);
	megpu_bo_free(shared);
	close(vgem);
}

/* --- timestamps and the semaphore pool --- */

/* Each job takes its engine's next timestamp; idle: current = next - 1. */
TEST_F(sem, timestamps_follow_jobs)
{
	uint64_t cur0, next0, cur, next;
	struct mt_job j[8];
	struct megpu_bo *bo;
	struct mt_frame f;
	unsigned int e, i, k;

	NEED_DEBUGFS(&self->t);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	for (e = 0; e < self->t.engines; e++) {
		k = 2 + e % 6;
		ASSERT_EQ(0, mt_engine_settle(&self->t, e, 5000));
		ASSERT_EQ(0, mt_timestamps(&self->t, e, &cur0, &next0));
		EXPECT_EQ(cur0 + 1, next0);
		for (i = 0; i < k; i++)
			ASSERT_EQ(0, mt_write_job(&self->t, &j[i], e, bo,
						  4 * e, i, NULL, NULL, 0, 0));
		EXPECT_EQ(0, mt_job_done(&j[k - 1], mt_job_ns(&self->t)));
		ASSERT_EQ(0, mt_engine_settle(&self->t, e, 5000));
		ASSERT_EQ(0, mt_timestamps(&self->t, e, &cur, &next));
		EXPECT_EQ(next0 + k, next) TH_LOG("engine %u", e);
		EXPECT_EQ(next - 1, cur);
		ASSERT_EQ(0, frame_of(&self->t, &j[k - 1], &f));
		EXPECT_EQ(cur, f.seqno);
		for (i = 0; i < k; i++)
			EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(&self->t)));
	}
	megpu_bo_free(bo);
}

#define POOL_BOS 4
#define POOL_BATCH 256
#define POOL_IB_STRIDE 64

/*
 * Reuse after expiry, with a pool of two objects (debugfs sem_pool_limit):
 * both are used and expire on engine B at timestamps above engine A's
 * next one; a producer P on A, held by a gate, is handed one of them
 * again, and a consumer C on B WAITs for it. The object's stale value
 * (B's timestamp, larger than P's) must not satisfy C's WAIT: C stays
 * pending until P runs, then reads P's value.
 */
static void reuse_after_expiry(struct __test_metadata *_metadata,
			       struct mt *t)
{
	struct megpu_bo *x, *out, *gate, *pad;
	struct mt_frame fq[2], fp, fc;
	uint64_t ca, na, cb, nb, next[MEGPU_MAX_ENGINES];
	struct mt_job q[2], p, c;
	unsigned int ea, eb, e, i;

	/* A: the engine with the smallest next timestamp, B the largest */
	for (e = 0; e < t->engines; e++) {
		ASSERT_EQ(0, mt_engine_settle(t, e, 5000));
		ASSERT_EQ(0, mt_timestamps(t, e, &ca, &next[e]));
	}
	ea = 0;
	for (e = 1; e < t->engines; e++)
		if (next[e] < next[ea])
			ea = e;
	eb = mt_other_engine(t, ea);
	for (e = 0; e < t->engines; e++)
		if (e != ea && next[e] > next[eb])
			eb = e;
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &out));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &pad));
	/* B's next timestamp well above A's */
	ASSERT_EQ(0, mt_timestamps(t, ea, &ca, &na));
	ASSERT_EQ(0, mt_timestamps(t, eb, &cb, &nb));
	for (i = 0; nb <= na + 4; i++, nb++) {
		ASSERT_EQ(0, mt_write_job(t, &q[0], eb, pad, 0, i, NULL, NULL,
					  0, DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		ASSERT_EQ(0, mt_job_finish(&q[0], mt_job_ns(t)));
	}

	ASSERT_EQ(0, megpu_debugfs_write(&t->gpu, "sem_pool_limit", "2"));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mt_write_job(t, &q[i], eb, pad, 4 * i, i, NULL,
					  NULL, 0,
					  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		ASSERT_EQ(0, mt_job_done(&q[i], mt_job_ns(t)));
		ASSERT_EQ(0, frame_of(t, &q[i], &fq[i]));
	}
	ASSERT_NE(fq[0].signal.sem, fq[1].signal.sem);
	ASSERT_EQ(0, mt_engine_settle(t, eb, 5000));

	ASSERT_EQ(0, mt_write_job(t, &p, ea, x, 0, 0x5eed, gate, NULL, 0, 0));
	ASSERT_EQ(0, read_job(t, &c, eb, x, out, NULL, NULL, 0, 0));
	ASSERT_EQ(0, mt_frame_wait(t, ea, mt_job_ib_va(&p), &fp, FRAME_MS));
	ASSERT_EQ(0, mt_frame_wait(t, eb, mt_job_ib_va(&c), &fc, FRAME_MS));
	/* P's object is one B's jobs used and expired: handed out again */
	EXPECT_TRUE(fp.signal.sem == fq[0].signal.sem ||
		    fp.signal.sem == fq[1].signal.sem)
		TH_LOG("P signals sem%u, B's jobs used sem%u and sem%u",
		       fp.signal.sem, fq[0].signal.sem, fq[1].signal.sem);
	EXPECT_LT(fp.seqno, fq[0].seqno);
	ASSERT_EQ(1, fc.nwaits);
	EXPECT_EQ(fp.signal.sem, fc.waits[0].sem);
	EXPECT_EQ(fp.seqno, fc.waits[0].ts);

	/* the stale value is above the timestamp C waits for: not enough */
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&t->gpu, c.sync, 0))
		TH_LOG("C ran before P: a stale semaphore value satisfied it");
	EXPECT_EQ(0, mt_u32(out)[0]);
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&p, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&c, mt_job_ns(t)));
	EXPECT_EQ(0x5eed, mt_u32(out)[0]);
	ASSERT_EQ(0, megpu_debugfs_write(&t->gpu, "sem_pool_limit", "0"));
	for (i = 0; i < 2; i++)
		mt_job_free(&q[i]);
	megpu_bo_free(pad);
	megpu_bo_free(gate);
	megpu_bo_free(out);
	megpu_bo_free(x);
}

/*
 * More jobs than the pool has semaphore objects, each depending on jobs
 * of other engines: none fails (objects are reused once expired), and
 * once idle almost none is busy; then an object reused after expiry
 * cannot satisfy a new wait with its stale value.
 */
TEST_F_TIMEOUT(sem, pool_is_reused, 180)
{
	struct megpu_bo *bos[POOL_BOS], *ibs;
	unsigned int pool, busy, n, i, k;
	uint32_t sync[POOL_BATCH];
	struct megpu_job job;
	struct megpu_cs cs;

	NEED_DEBUGFS(&self->t);
	MT_NEED_ENGINES(&self->t, 2);
	ASSERT_EQ(0, mt_sem_busy(&self->t, &pool, &busy));
	EXPECT_EQ(4095, pool);
	n = pool + 1000;
	for (k = 0; k < POOL_BOS; k++)
		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bos[k]));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, POOL_BATCH * POOL_IB_STRIDE, 0,
			   &ibs));
	for (k = 0; k < POOL_BATCH; k++)
		ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &sync[k]));
	megpu_cs_init(&cs);
	for (i = 0; i < n; i += POOL_BATCH) {
		for (k = 0; k < POOL_BATCH && i + k < n; k++) {
			unsigned int id = i + k;

			/* writes bos[id % 4], read by id - 1: a chain */
			megpu_job_init(&job, id % self->t.engines);
			megpu_job_add_bo(&job, bos[id % POOL_BOS],
					 DRM_MEGPU_BO_WRITE);
			megpu_job_add_bo(&job, bos[(id + 1) % POOL_BOS],
					 DRM_MEGPU_BO_READ);
			megpu_job_set_ib(&job, ibs, k * POOL_IB_STRIDE);
			megpu_job_signal_sync(&job, sync[k], 0);
			megpu_cs_reset(&cs);
			megpu_cs_write32(&cs, bos[id % POOL_BOS]->va, id);
			ASSERT_EQ(0, megpu_job_run(&self->t.gpu, &job, &cs))
				TH_LOG("job %u", id);
		}
		ASSERT_EQ(0, megpu_syncobj_wait_many(&self->t.gpu, sync, k,
						     true,
						     mt_job_ns(&self->t)));
		for (k = 0; k < POOL_BATCH && i + k < n; k++)
			ASSERT_EQ(0, megpu_fence_status(self->t.gpu.fd,
							sync[k], 0))
				TH_LOG("job %u", i + k);
	}
	megpu_cs_fini(&cs);
	for (k = 0; k < POOL_BOS; k++)
		EXPECT_EQ(n - 1 - (n - 1 - k) % POOL_BOS, mt_u32(bos[k])[0]);
	EXPECT_EQ(0, mt_sem_settle(&self->t, self->t.engines, &busy, 5000))
		TH_LOG("%u semaphore objects still busy when idle", busy);
	reuse_after_expiry(_metadata, &self->t);
	for (k = 0; k < POOL_BATCH; k++)
		megpu_syncobj_free(&self->t.gpu, sync[k]);
	megpu_bo_free(ibs);
	for (k = 0; k < POOL_BOS; k++)
		megpu_bo_free(bos[k]);
}

/* --- failure --- */

/*
 * A producer that hangs, with a consumer of its result (an in-sync) on
 * another engine already waiting for it on the GPU, submitted @late_ms
 * after the producer: the producer times out, the consumer is cancelled
 * without running, and both engines go on.
 */
static void hung_producer(struct __test_metadata *_metadata, struct mt *t,
			  unsigned int late_ms)
{
	struct megpu_bo *never, *out, *probe;
	struct drm_megpu_sync in;
	struct mt_frame fp, fc;
	struct megpu_cs cs;
	struct mt_job p, c;
	int ea = 0, eb;
	struct mt o;

	NEED_DEBUGFS(t);
	MT_NEED_ENGINES(t, 2);
	eb = mt_other_engine(t, ea);
	ASSERT_EQ(0, mt_param_set("gpu_semaphores", true));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &never));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &out));

	megpu_cs_init(&cs);
	mt_gate_hold(&cs, never);	/* never opened */
	megpu_cs_write32(&cs, never->va + 64, 1);
	ASSERT_EQ(0, mt_submit(&t->gpu, &p, ea, &cs, &never, 1, 0));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, mt_frame_wait(t, ea, mt_job_ib_va(&p), &fp, FRAME_MS));
	usleep(late_ms * 1000);
	in = (struct drm_megpu_sync){ .handle = p.sync };
	ASSERT_EQ(0, mt_write_job(t, &c, eb, out, 0, 0xbad, NULL, &in, 1,
				  DRM_MEGPU_SUBMIT_NO_IMPLICIT));

	/* the consumer waits on the GPU: in its ring, with a WAIT */
	ASSERT_EQ(0, mt_frame_wait(t, eb, mt_job_ib_va(&c), &fc, FRAME_MS));
	EXPECT_EQ(1, fc.nwaits);
	EXPECT_TRUE(mt_frame_waits_for(&fc, ea, fp.seqno))
		TH_LOG("consumer (ctx %u seqno %llu) waits for engine %d@%llu; producer (ctx %u) is engine %d@%llu",
		       fc.ctx, (unsigned long long)fc.seqno,
		       fc.waits[0].engine, (unsigned long long)fc.waits[0].ts,
		       fp.ctx, ea, (unsigned long long)fp.seqno);
	EXPECT_TRUE(mt_pending(&t->gpu, c.sync, 0));

	EXPECT_EQ(-ETIMEDOUT, mt_job_done(&p, mt_job_ns(t)));
	EXPECT_EQ(-ECANCELED, mt_job_done(&c, mt_job_ns(t)))
		TH_LOG("the consumer waiting on the GPU was not cancelled");
	EXPECT_EQ(0, mt_u32(out)[0]) TH_LOG("the cancelled consumer ran");
	EXPECT_EQ(0, mt_u32(never)[16]);

	/* the hang banned this client: probe from another one */
	ASSERT_EQ(0, mt_open_client(t, &o));
	ASSERT_EQ(0, mt_bo(&o.gpu, 4096, 0, &probe));
	EXPECT_EQ(0, mt_probe_engine(&o, eb, probe, 0, 0x600d))
		TH_LOG("consumer's engine after the cancel");
	EXPECT_EQ(0, mt_probe_engine(&o, ea, probe, 4, 0x600e))
		TH_LOG("producer's engine after its reset");
	mt_job_free(&p);
	mt_job_free(&c);
	megpu_bo_free(probe);
	mt_close(&o);
	megpu_bo_free(out);
	megpu_bo_free(never);
}

/*
 * Implicit sync after a writer without it: W1 (engine A, held by a gate)
 * writes x[0], W2 with NO_IMPLICIT (engine B) writes x[1], then R with
 * implicit sync (engine C) copies x[0..1]. R must wait for both writers,
 * though W2 did not wait for W1: it sees 0x11 and 0x22.
 */
TEST_F(sem, no_implicit_writer_keeps_earlier_writer)
{
	struct megpu_bo *x, *out, *gate;
	struct mt *t = &self->t;
	struct mt_job w1, w2, r;
	struct megpu_cs cs;
	int ea = 0, eb = 1, ec;

	MT_NEED_ENGINES(t, 3);
	ec = mt_engine_for(t, MEGPU_PKT_COPY, ea);
	if (ec == eb || ec < 0)
		ec = 2;
	ASSERT_EQ(0, mt_param_set("gpu_semaphores", true));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &out));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(t, &w1, ea, x, 0, 0x11, gate, NULL, 0, 0));
	ASSERT_EQ(0, mt_write_job(t, &w2, eb, x, 4, 0x22, NULL, NULL, 0,
				  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	EXPECT_EQ(0, mt_job_finish(&w2, mt_job_ns(t)));

	ASSERT_EQ(0, mt_job_prepare(&t->gpu, &r, ec, NULL, 0, 0));
	ASSERT_EQ(0, megpu_job_add_bo(&r.job, x, DRM_MEGPU_BO_READ));
	ASSERT_EQ(0, megpu_job_add_bo(&r.job, out, DRM_MEGPU_BO_WRITE));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_cs_copy_any(t, ec, &cs, x->va, out->va, 2, out,
				    out->size / 2));
	ASSERT_EQ(0, mt_job_start(&r, &cs));
	megpu_cs_fini(&cs);

	/* R must still be waiting: for W1 */
	usleep(100000);
	EXPECT_TRUE(mt_pending(&t->gpu, r.sync, 0));
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&w1, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&r, mt_job_ns(t)));
	EXPECT_EQ(0x11, mt_u32(out)[0]);
	EXPECT_EQ(0x22, mt_u32(out)[1]);
	megpu_bo_free(gate);
	megpu_bo_free(out);
	megpu_bo_free(x);
}

/* debugfs "semaphores": pool_waits (libmegpu), or -1. */
static long long pool_waits(struct mt *t)
{
	struct megpu_debug_sems s;

	return megpu_debug_semaphores(&t->gpu, &s, 0) ? -1 :
	       (long long)s.pool_waits;
}

#define POOL_JOBS 24

/*
 * A semaphore pool of 4 objects (debugfs sem_pool_limit) and jobs that
 * hold theirs behind a gate: the jobs that find the pool in use wait for
 * a job to complete, and then run; none fails.
 */
TEST_F(sem, full_pool_makes_jobs_wait)
{
	struct mt_job j[POOL_JOBS];
	struct megpu_bo *gate, *bo;
	struct mt *t = &self->t;
	char path[256];
	long long waits0;
	int i;

	NEED_DEBUGFS(t);
	MT_NEED_ENGINES(t, 2);
	ASSERT_EQ(0, megpu_debugfs_path(&t->gpu, "sem_pool_limit", path,
					sizeof(path)));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &bo));
	waits0 = pool_waits(t);
	ASSERT_LE(0, waits0);
	ASSERT_EQ(0, mt_write_file(path, "4"));
	for (i = 0; i < POOL_JOBS; i++)
		ASSERT_EQ(0, mt_write_job(t, &j[i], i % 2, bo, 4 * i, 100 + i,
					  i % 2 ? NULL : gate, NULL, 0,
					  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	usleep(100000);
	mt_gate_open(gate);
	for (i = 0; i < POOL_JOBS; i++)
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(t)))
			TH_LOG("job %d", i);
	for (i = 0; i < POOL_JOBS; i++)
		EXPECT_EQ(100 + i, mt_u32(bo)[i]);
	EXPECT_LT(waits0, pool_waits(t));
	mt_write_file(path, "0");
	megpu_bo_free(bo);
	megpu_bo_free(gate);
}

#define TINY_POOL_JOBS 16

/*
 * A pool of one object, jobs on two engines at once, and each job held
 * between its reservation and run_job (debugfs sem_reserve_hold_ms): the
 * other engine's job finds the object reserved and no job in a ring to
 * wait for. It waits for the reservation to become a ring job and runs;
 * none fails (an early driver ran it without an object: -EBUSY).
 */
TEST_F(sem, reserved_pool_makes_other_engines_wait)
{
	struct mt_job j[TINY_POOL_JOBS];
	struct mt *t = &self->t;
	char limit[256], hold[256];
	struct megpu_bo *bo;
	int e[2], i;

	NEED_DEBUGFS(t);
	e[0] = mt_engine_for(t, MEGPU_PKT_WRITE_DATA, -1);
	e[1] = mt_engine_for(t, MEGPU_PKT_WRITE_DATA, e[0]);
	if (e[1] < 0)
		SKIP(return, "needs 2 engines taking WRITE_DATA");
	ASSERT_EQ(0, megpu_debugfs_path(&t->gpu, "sem_pool_limit", limit,
					sizeof(limit)));
	ASSERT_EQ(0, megpu_debugfs_path(&t->gpu, "sem_reserve_hold_ms", hold,
					sizeof(hold)));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_write_file(limit, "1"));
	ASSERT_EQ(0, mt_write_file(hold, "20"));
	for (i = 0; i < TINY_POOL_JOBS; i++)
		ASSERT_EQ(0, mt_write_job(t, &j[i], e[i % 2], bo, 4 * i,
					  200 + i, NULL, NULL, 0,
					  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	for (i = 0; i < TINY_POOL_JOBS; i++)
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(t)))
			TH_LOG("job %d on engine %d", i, e[i % 2]);
	for (i = 0; i < TINY_POOL_JOBS; i++)
		EXPECT_EQ(200 + i, mt_u32(bo)[i]);
	mt_write_file(hold, "0");
	mt_write_file(limit, "0");
	megpu_bo_free(bo);
}

/* The first engine other than @not that can run read_job(), or -1. */
static int copy_engine(const struct mt *t, int not)
{
	unsigned int e;

	for (e = 0; e < t->engines; e++)
		if ((int)e != not &&
		    (mt_accepts(t, e, MEGPU_PKT_COPY) ||
		     (mt_accepts(t, e, MEGPU_PKT_DISPATCH) &&
		      (megpu_engine_kernels(mt_type(t, e)) &
		       MEGPU_BIT(MEGPU_KERNEL_COPY)))))
			return (int)e;
	return -1;
}

/*
 * Two objects of this device over one dma_resv, @xt in @t and @xb in @b:
 * implicit synchronization orders the two clients' jobs on engines @e0
 * (writes) and @e1 (reads), both ways: @b's read waits for @t's write
 * (read after write), and @t's next write waits for that read (write
 * after read).
 */
static void keeps_implicit_sync(struct __test_metadata *_metadata,
				struct mt *t, struct mt *b, int e0, int e1,
				struct megpu_bo *xt, struct megpu_bo *xb)
{
	struct megpu_bo *out, *gate, *gate_b;
	struct mt_job w, r;

	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&b->gpu, 8192, 0, &out));
	ASSERT_EQ(0, mt_bo(&b->gpu, 4096, 0, &gate_b));

	/* read after write: the owner's gated write, then the import read */
	ASSERT_EQ(0, mt_write_job(t, &w, e0, xt, 0, 0x77, gate, NULL, 0, 0));
	ASSERT_EQ(0, read_job(b, &r, e1, xb, out, NULL, NULL, 0, 0));
	usleep(100000);
	EXPECT_TRUE(mt_pending(&b->gpu, r.sync, 0))
		TH_LOG("the second object's read ran before the write");
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&w, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&r, mt_job_ns(t)));
	EXPECT_EQ(0x77, mt_u32(out)[0]);

	/* write after read: the import's gated read, then the owner's write */
	ASSERT_EQ(0, read_job(b, &r, e1, xb, out, gate_b, NULL, 0, 0));
	ASSERT_EQ(0, mt_write_job(t, &w, e0, xt, 0, 0x99, NULL, NULL, 0, 0));
	usleep(100000);
	EXPECT_TRUE(mt_pending(&t->gpu, w.sync, 0))
		TH_LOG("the write ran before the second object's read");
	mt_gate_open(gate_b);
	EXPECT_EQ(0, mt_job_finish(&r, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&w, mt_job_ns(t)));
	EXPECT_EQ(0x77, mt_u32(out)[0]);
	/* @xt may be an import, which has no device mapping for the CPU */
	ASSERT_EQ(0, read_job(b, &r, e1, xb, out, NULL, NULL, 0, 0));
	EXPECT_EQ(0, mt_job_finish(&r, mt_job_ns(t)));
	EXPECT_EQ(0x99, mt_u32(out)[0]);

	megpu_bo_free(gate_b);
	megpu_bo_free(out);
	megpu_bo_free(gate);
}

/*
 * A BO exported without DRM_RDWR and imported by another client of the
 * same device is an object of its own (read-only) over the same pages and
 * dma_resv. An early driver let each side's resource object miss the
 * other's jobs: the read ran before the write.
 */
TEST_F(sem, read_only_reimport_keeps_implicit_sync)
{
	struct megpu_bo *x, *ximp;
	struct mt *t = &self->t, b;
	int e0, e1, fd;

	e0 = mt_engine_for(t, MEGPU_PKT_WRITE_DATA, -1);
	e1 = copy_engine(t, e0);
	if (e1 < 0)
		SKIP(return, "needs a second engine that copies");
	ASSERT_EQ(0, mt_open_client(t, &b));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, drmPrimeHandleToFD(t->gpu.fd, x->handle, DRM_CLOEXEC,
					&fd));
	ASSERT_EQ(0, megpu_bo_import(&b.gpu, fd, &ximp));
	close(fd);
	ASSERT_EQ(DRM_MEGPU_GEM_CREATE_READ_ONLY, ximp->flags);
	keeps_implicit_sync(_metadata, t, &b, e0, e1, x, ximp);
	megpu_bo_free(ximp);
	megpu_bo_free(x);
	mt_close(&b);
}

/*
 * Two clients import one foreign dma-buf (vgem's): each file gets an
 * object of its own over its dma_resv, as for any other driver's buffer.
 * An early driver kept implicit sync only through the resource object of
 * each, which did not see the other client's jobs: the read ran first.
 */
TEST_F(sem, two_imports_of_a_foreign_buffer_keep_implicit_sync)
{
	struct drm_mode_create_dumb dumb = {
		.width = 1024, .height = 1, .bpp = 32,
	};
	struct megpu_bo *xt, *xb;
	struct mt *t = &self->t, b;
	int e0, e1, fd, vgem;

	e0 = mt_engine_for(t, MEGPU_PKT_WRITE_DATA, -1);
	e1 = copy_engine(t, e0);
	if (e1 < 0)
		SKIP(return, "needs a second engine that copies");
	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	ASSERT_EQ(0, drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	ASSERT_EQ(0, drmPrimeHandleToFD(vgem, dumb.handle,
					DRM_CLOEXEC | DRM_RDWR, &fd));
	ASSERT_EQ(0, mt_open_client(t, &b));
	ASSERT_EQ(0, megpu_bo_import(&t->gpu, fd, &xt));
	ASSERT_EQ(0, megpu_bo_import(&b.gpu, fd, &xb));
	close(fd);
	keeps_implicit_sync(_metadata, t, &b, e0, e1, xt, xb);
	megpu_bo_free(xb);
	megpu_bo_free(xt);
	mt_close(&b);
	close(vgem);
}

#define ring_pkt megpu_debug_packet

static bool is(const struct ring_pkt *k, unsigned int op)
{
	return k->op == op;
}

/*
 * The frames of a ring, in the seed's order: WAIT* SET_CONTEXT
 * [SET_MAILBOX] IB|NOP [FLUSH] SIGNAL TIMESTAMP [IDLE_SIGNAL]. Returns
 * the number of frames, or -(index + 1) of the first packet out of place.
 * The frame whose IB is at @ib gets its packets' range in @first and @last.
 */
static int ring_frames(const struct ring_pkt *k, int n, uint64_t ib,
		       int *first, int *last)
{
	int i = 0, frames = 0, start;

	while (i < n) {
		start = i;
		while (i < n && is(&k[i], MEGPU_PKT_WAIT))
			i++;
		if (i >= n || !is(&k[i++], MEGPU_PKT_SET_CONTEXT))
			return -i;
		if (i < n && is(&k[i], MEGPU_PKT_SET_MAILBOX))
			i++;
		if (i >= n || !(is(&k[i], MEGPU_PKT_IB) || is(&k[i], MEGPU_PKT_NOP)))
			return -(i + 1);
		if (is(&k[i], MEGPU_PKT_IB) && k[i].a == ib) {
			*first = start;
			*last = i;
		}
		i++;
		if (i < n && is(&k[i], MEGPU_PKT_FLUSH))
			i++;
		if (i >= n || !is(&k[i++], MEGPU_PKT_SIGNAL))
			return -i;
		if (i >= n || !is(&k[i++], MEGPU_PKT_TIMESTAMP))
			return -i;
		if (i < n && is(&k[i], MEGPU_PKT_IDLE_SIGNAL))
			i++;
		frames++;
	}
	return frames;
}

/*
 * The frames as the engines run them, decoded from the rings themselves
 * (not from the planner's record): every frame of both rings is in the
 * seed's order, and the consumer's frame WAITs, before its IB, for the
 * semaphore the producer's frame SIGNALs, at the producer's timestamp.
 */
TEST_F(sem, frames_in_ring_order)
{
	struct ring_pkt pa[256], pb[256];
	struct megpu_bo *gate, *x, *out;
	int ea = 0, eb, na, nb, fa = -1, la = -1, fb = -1, lb = -1, i;
	struct mt *t = &self->t;
	struct drm_megpu_sync in;
	uint64_t sig = 0, ts = 0;
	struct mt_job p, c;

	NEED_DEBUGFS(t);
	MT_NEED_ENGINES(t, 2);
	eb = mt_other_engine(t, ea);
	ASSERT_EQ(0, mt_param_set("gpu_semaphores", true));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &x));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &out));
	ASSERT_EQ(0, mt_write_job(t, &p, ea, x, 0, 5, gate, NULL, 0, 0));
	in = (struct drm_megpu_sync){ .handle = p.sync };
	ASSERT_EQ(0, read_job(t, &c, eb, x, out, NULL, &in, 1, 0));
	usleep(100000);
	EXPECT_TRUE(mt_pending(&t->gpu, c.sync, 0));

	na = mt_ring_packets(t, ea, pa, 256);
	nb = mt_ring_packets(t, eb, pb, 256);
	ASSERT_LT(0, na);
	ASSERT_LT(0, nb);
	EXPECT_LT(0, ring_frames(pa, na, mt_job_ib_va(&p), &fa, &la));
	EXPECT_LT(0, ring_frames(pb, nb, mt_job_ib_va(&c), &fb, &lb));
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	/* the producer's SIGNAL and TIMESTAMP follow its IB */
	for (i = la; i < na && !is(&pa[i], MEGPU_PKT_SIGNAL); i++)
		;
	ASSERT_GT(na, i);
	sig = pa[i].a;
	ts = pa[i].b;
	ASSERT_TRUE(is(&pa[i + 1], MEGPU_PKT_TIMESTAMP));
	EXPECT_EQ(ts, pa[i + 1].b);
	/* the consumer's one WAIT, first in its frame, is for that */
	ASSERT_TRUE(is(&pb[fb], MEGPU_PKT_WAIT));
	EXPECT_EQ(sig, pb[fb].a);
	EXPECT_EQ(ts, pb[fb].b);
	EXPECT_TRUE(is(&pb[fb + 1], MEGPU_PKT_SET_CONTEXT));

	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&p, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&c, mt_job_ns(t)));
	EXPECT_EQ(5, mt_u32(out)[0]);
	megpu_bo_free(out);
	megpu_bo_free(x);
	megpu_bo_free(gate);
}

/* The resource object of the BO of @size (sizes are unique here). */
static int resource_of(struct mt *t, uint64_t size,
		       struct megpu_debug_resource *out)
{
	static struct megpu_debug_resource r[1024];
	int n = megpu_debug_resources(&t->gpu, r, 1024), i, found = -ENOENT;

	for (i = 0; i < n; i++)
		if (r[i].size == size) {
			*out = r[i];
			found = found == -ENOENT ? 0 : -EEXIST;
		}
	return n < 0 ? n : found;
}

static bool ref_is(const struct megpu_debug_ref *r, unsigned int engine,
		   uint64_t ts, uint32_t sem)
{
	return r->engine == (int)engine && r->ts == ts && r->sem == sem;
}

/* The decoded packets of the frame whose IB is at @ib on @engine. */
static int frame_packets(struct __test_metadata *_metadata, struct mt *t,
			 unsigned int engine, uint64_t ib,
			 struct ring_pkt *k, int max, int *first, int *last)
{
	int n = mt_ring_packets(t, engine, k, max);

	*first = *last = -1;
	EXPECT_LT(0, n);
	EXPECT_LT(0, ring_frames(k, n, ib, first, last));
	return n;
}

/*
 * The seed's worked example replayed through the driver, on engines
 * X=0, Y=1, Z=2: A written on X (held by a gate: not expired), D written
 * later on X (a larger timestamp), E written on Y (held), C written on Y
 * and completed, not used. The operation on Z writes A, D and E. Its
 * frame, decoded from Z's ring, is exactly WAIT X@D, WAIT Y@E, (our
 * SET_CONTEXT), IB, (our FLUSH), SIGNAL Z@seqno on its own semaphore,
 * TIMESTAMP seqno;
 * the WAITs name the semaphores D's and E's frames SIGNAL. A, D and E
 * then stand for the operation alone; C is unchanged.
 */
TEST_F(sem, worked_example_replay)
{
	enum { X, Y, Z };
	static const uint64_t size[4] = {
		17 * 4096, 19 * 4096, 23 * 4096, 29 * 4096,	/* A C D E */
	};
	static struct ring_pkt kx[256], ky[256], kz[256];
	struct megpu_debug_resource rc0, r;
	struct megpu_bo *bo[4], *gx, *gy;
	struct mt_frame ff, fd, fe;
	struct mt_job ja, jc, jd, je, op;
	int fx, lx, fy, ly, fz, lz, i, m;
	struct mt *t = &self->t;
	struct megpu_cs cs;

	NEED_DEBUGFS(t);
	MT_NEED_ENGINES(t, 3);
	ASSERT_EQ(0, mt_param_set("gpu_semaphores", true));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, mt_bo(&t->gpu, size[i], 0, &bo[i]));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gx));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gy));

	/* C: used before, on Y, done */
	ASSERT_EQ(0, mt_write_job(t, &jc, Y, bo[1], 0, 0xc, NULL, NULL, 0, 0));
	ASSERT_EQ(0, mt_job_finish(&jc, mt_job_ns(t)));
	ASSERT_EQ(0, resource_of(t, size[1], &rc0));
	ASSERT_EQ(1, rc0.nwrites);

	/* A then D on X, E on Y: not expired while their gates are shut */
	ASSERT_EQ(0, mt_write_job(t, &ja, X, bo[0], 0, 0xa, gx, NULL, 0, 0));
	ASSERT_EQ(0, mt_write_job(t, &jd, X, bo[2], 0, 0xd, NULL, NULL, 0,
				  0));
	ASSERT_EQ(0, mt_write_job(t, &je, Y, bo[3], 0, 0xe, gy, NULL, 0, 0));
	ASSERT_EQ(0, mt_frame_wait(t, X, mt_job_ib_va(&jd), &fd, FRAME_MS));
	ASSERT_EQ(0, mt_frame_wait(t, Y, mt_job_ib_va(&je), &fe, FRAME_MS));

	/* the operation on Z uses A, D and E */
	ASSERT_EQ(0, mt_job_prepare(&t->gpu, &op, Z, NULL, 0, 0));
	for (i = 0; i < 4; i++)
		if (i != 1)
			ASSERT_EQ(0, megpu_job_add_bo(&op.job, bo[i],
						      DRM_MEGPU_BO_WRITE));
	megpu_cs_init(&cs);
	for (i = 0; i < 4; i++)
		if (i != 1)
			megpu_cs_write32(&cs, bo[i]->va + 4, 0x88);
	ASSERT_EQ(0, mt_job_start(&op, &cs));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, mt_frame_wait(t, Z, mt_job_ib_va(&op), &ff, FRAME_MS));
	EXPECT_TRUE(mt_pending(&t->gpu, op.sync, 0));

	/* Z's frame, decoded from Z's ring */
	frame_packets(_metadata, t, X, mt_job_ib_va(&jd), kx, 256, &fx, &lx);
	frame_packets(_metadata, t, Y, mt_job_ib_va(&je), ky, 256, &fy, &ly);
	frame_packets(_metadata, t, Z, mt_job_ib_va(&op), kz, 256, &fz, &lz);
	ASSERT_LE(0, fx);
	ASSERT_LE(0, fy);
	ASSERT_LE(0, fz);
	/* D's and E's SIGNALs follow their IBs and FLUSHes */
	ASSERT_TRUE(is(&kx[lx + 1], MEGPU_PKT_FLUSH));
	ASSERT_TRUE(is(&ky[ly + 1], MEGPU_PKT_FLUSH));
	lx++;
	ly++;
	ASSERT_TRUE(is(&kx[lx + 1], MEGPU_PKT_SIGNAL));
	ASSERT_TRUE(is(&ky[ly + 1], MEGPU_PKT_SIGNAL));
	EXPECT_EQ(fd.seqno, kx[lx + 1].b);
	EXPECT_EQ(fe.seqno, ky[ly + 1].b);
	m = lz - fz;
	/* WAIT X@D, WAIT Y@E, SET_CONTEXT [SET_MAILBOX], IB */
	ASSERT_TRUE(m == 3 || m == 4) TH_LOG("%d packets before the IB", m);
	ASSERT_TRUE(is(&kz[fz], MEGPU_PKT_WAIT)) TH_LOG("%s", kz[fz].text);
	EXPECT_EQ(kx[lx + 1].a, kz[fz].a) TH_LOG("not D's semaphore");
	EXPECT_EQ(fd.seqno, kz[fz].b) TH_LOG("not X@D's timestamp");
	ASSERT_TRUE(is(&kz[fz + 1], MEGPU_PKT_WAIT)) TH_LOG("%s",
							    kz[fz + 1].text);
	EXPECT_EQ(ky[ly + 1].a, kz[fz + 1].a) TH_LOG("not E's semaphore");
	EXPECT_EQ(fe.seqno, kz[fz + 1].b) TH_LOG("not Y@E's timestamp");
	EXPECT_TRUE(is(&kz[fz + 2], MEGPU_PKT_SET_CONTEXT));
	EXPECT_TRUE(is(&kz[lz], MEGPU_PKT_IB));
	/* ours: the FLUSH that makes the writes visible before the SIGNAL */
	ASSERT_TRUE(is(&kz[lz + 1], MEGPU_PKT_FLUSH)) TH_LOG("%s",
							     kz[lz + 1].text);
	lz++;
	ASSERT_TRUE(is(&kz[lz + 1], MEGPU_PKT_SIGNAL))
		TH_LOG("%s", kz[lz + 1].text);
	EXPECT_EQ(ff.seqno, kz[lz + 1].b);
	EXPECT_NE(kx[lx + 1].a, kz[lz + 1].a);
	EXPECT_NE(ky[ly + 1].a, kz[lz + 1].a);
	ASSERT_TRUE(is(&kz[lz + 2], MEGPU_PKT_TIMESTAMP));
	EXPECT_EQ(ff.seqno, kz[lz + 2].b);
	EXPECT_NE(NULL, strstr(kz[lz + 2].text, " irq"));
	/* the planner's record agrees: D and E, the own semaphore */
	ASSERT_EQ(2, ff.nwaits);
	EXPECT_TRUE(ref_is(&ff.waits[0], X, fd.seqno, fd.signal.sem));
	EXPECT_TRUE(ref_is(&ff.waits[1], Y, fe.seqno, fe.signal.sem));

	/* A, D, E: (own sem, Z, seqno) alone; C as it was */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, resource_of(t, size[i], &r));
		if (i == 1) {
			EXPECT_EQ(1, r.nwrites);
			EXPECT_EQ(0, r.nreads);
			EXPECT_TRUE(ref_is(&r.write[0], rc0.write[0].engine,
					   rc0.write[0].ts, rc0.write[0].sem))
				TH_LOG("C changed");
			continue;
		}
		EXPECT_EQ(1, r.nwrites) TH_LOG("BO %d", i);
		EXPECT_EQ(0, r.nreads) TH_LOG("BO %d", i);
		EXPECT_TRUE(ref_is(&r.write[0], Z, ff.seqno, ff.signal.sem))
			TH_LOG("BO %d", i);
	}

	mt_gate_open(gx);
	mt_gate_open(gy);
	EXPECT_EQ(0, mt_job_finish(&ja, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&jd, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&je, mt_job_ns(t)));
	EXPECT_EQ(0, mt_job_finish(&op, mt_job_ns(t)));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(i == 1 ? 0 : 0x88, mt_u32(bo[i])[1]);
		megpu_bo_free(bo[i]);
	}
	megpu_bo_free(gy);
	megpu_bo_free(gx);
}

/* The consumer is put in its ring right after the producer. */
TEST_F_TIMEOUT(sem, hung_producer_cancels_gpu_consumer, 120)
{
	hung_producer(_metadata, &self->t, 0);
}

/* The consumer comes half a timeout later: the producer's reset finds it. */
TEST_F_TIMEOUT(sem, hung_producer_cancels_late_gpu_consumer, 120)
{
	hung_producer(_metadata, &self->t, self->t.timeout_ms / 2);
}

TEST_HARNESS_MAIN
