// SPDX-License-Identifier: GPL-2.0
/*
 * Semaphores between engines under stress: several clients (processes,
 * each its own fd, BOs and address space) submit a random DAG of jobs over
 * all engines. Each job reads and writes random "cells" (one BO each, so
 * the driver orders them through the BOs' resource objects) and sometimes
 * waits for an earlier job through an in-sync. A job first copies the
 * value of every cell it reads into its own log slot, then writes its own
 * id into every cell it writes.
 *
 * Job ids count from 1 in submission order; 0 is a cell's initial value.
 * A CPU checker replays each client's submission order with the rule for
 * readers and writers: every job must have read, for each cell, the id of
 * the last job before it in submission order that wrote the cell. Then:
 * no deadlock (every fence signals within a bound, without error), the
 * semaphore pool drains when idle, and the live-object counters return
 * to where they started. That the run exercised GPU semaphores at all is
 * made certain, not left to timing: client 0 submits its first jobs with
 * one engine held at a gate, alone, and the frames then in the rings
 * must WAIT for that engine's jobs.
 *
 * The log, argument and IB BOs are not listed in the jobs' BO lists: they
 * are mapped in the client's address space anyway, no job writes what
 * another job reads in them, and listing them as written would order all
 * jobs. The random seed is printed; boot with megpu_test.seed=N to replay.
 * Booting with megpu_test.sem_drop_waits=1 runs it with drop_waits=Y: the
 * checker must then report wrong values (it checks the checker).
 */

#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define CLIENTS 4
#define JOBS 1280		/* per client: 5,120 in all */
#define CELLS 16		/* per client */
#define MAX_READS 3
#define MAX_WRITES 2
#define DEP_WINDOW 64		/* in-syncs name one of the last 64 jobs */
#define IB_STRIDE 256		/* bytes of IB per job */
#define KARGS_STRIDE 64		/* a DISPATCH argument block per read */
#define DEADLINE_S 90		/* every fence of a client, or a deadlock */
#define UNREAD 0xffffffffu
#define SAMPLE_HELD 32		/* client 0's first jobs, one engine held */

struct plan {
	uint8_t engine;
	uint8_t nr, nw;
	uint8_t r[MAX_READS];
	uint8_t w[MAX_WRITES];
	int dep;		/* job whose out-sync is an in-sync, or -1 */
};

static uint64_t rnd_state;
static unsigned int njobs = JOBS;	/* jobs per client this run */
/*
 * Client 0 closes it once its held sample is taken: the other clients'
 * frames would otherwise push its own out of the rings' frame logs.
 */
static int started_fd = -1;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (rnd_state * 0x2545f4914f6cdd1dull) >> 32;
}

static bool has(const uint8_t *set, unsigned int n, uint8_t v)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}

static void make_plan(struct plan *p, unsigned int jobs, unsigned int engines)
{
	unsigned int j, k;
	uint8_t c;

	for (j = 0; j < jobs; j++) {
		p[j].engine = rnd() % engines;
		p[j].nr = rnd() % (MAX_READS + 1);
		p[j].nw = rnd() % (MAX_WRITES + 1);
		if (!p[j].nr && !p[j].nw)
			p[j].nw = 1;
		for (k = 0; k < p[j].nr; k++) {
			do
				c = rnd() % CELLS;
			while (has(p[j].r, k, c));
			p[j].r[k] = c;
		}
		for (k = 0; k < p[j].nw; k++) {
			do
				c = rnd() % CELLS;
			while (has(p[j].w, k, c));
			p[j].w[k] = c;
		}
		p[j].dep = j && rnd() % 8 == 0 ?
			   (int)j - 1 - (int)(rnd() % (j < DEP_WINDOW ? j :
							 DEP_WINDOW)) : -1;
	}
}

/* The number of WAITs in the frames debugfs shows now (libmegpu). */
static unsigned int frame_waits(struct mt *t)
{
	static struct megpu_debug_frame f[16 * MEGPU_MAX_ENGINES];
	int n = megpu_debug_frames(&t->gpu, f, 16 * MEGPU_MAX_ENGINES), i;
	unsigned int w = 0;

	for (i = 0; i < n; i++)
		w += f[i].nwaits;
	return w;
}

struct client {
	struct mt t;
	unsigned int id;
	struct megpu_bo *cells[CELLS], *log, *kargs, *ibs;
	struct megpu_bo *gate;	/* the negative control's hold */
	struct mt_job hold;
	unsigned int held;	/* the engine it holds */
	uint32_t sync[JOBS];
	struct plan plan[JOBS];
};

static int submit(struct client *cl, unsigned int j, struct megpu_cs *cs)
{
	const struct plan *p = &cl->plan[j];
	struct megpu_job job;
	unsigned int k, slot;
	int ret = 0;

	megpu_job_init(&job, p->engine);
	megpu_cs_reset(cs);
	for (k = 0; !ret && k < p->nr; k++) {
		slot = j * MAX_READS + k;
		ret = megpu_job_add_bo(&job, cl->cells[p->r[k]],
				       DRM_MEGPU_BO_READ);
		ret = ret ?: mt_cs_copy_any(&cl->t, p->engine, cs,
					    cl->cells[p->r[k]]->va,
					    cl->log->va + 4 * slot, 1,
					    cl->kargs, KARGS_STRIDE * slot);
	}
	for (k = 0; !ret && k < p->nw; k++) {
		ret = megpu_job_add_bo(&job, cl->cells[p->w[k]],
				       DRM_MEGPU_BO_WRITE);
		megpu_cs_write32(cs, cl->cells[p->w[k]]->va, j + 1);
	}
	if (!ret && p->dep >= 0)
		ret = megpu_job_wait_sync(&job, cl->sync[p->dep], 0);
	if (ret)
		return ret;
	megpu_job_set_ib(&job, cl->ibs, (uint64_t)j * IB_STRIDE);
	megpu_job_signal_sync(&job, cl->sync[j], 0);
	return megpu_job_run(&cl->t.gpu, &job, cs);
}

/* Replay the submission order; the number of wrong values. */
static unsigned int check(struct client *cl)
{
	uint32_t last[CELLS] = { 0 }, *log = mt_u32(cl->log), got;
	unsigned int j, k, bad = 0;

	for (j = 0; j < njobs; j++) {
		const struct plan *p = &cl->plan[j];

		for (k = 0; k < p->nr; k++) {
			got = log[j * MAX_READS + k];
			if (got == last[p->r[k]])
				continue;
			if (bad++ < 8)
				fprintf(stderr, "# client %u: job %u (engine "
					"%u) read cell %u = %u, want %u "
					"(job %d, engine %d)\n", cl->id, j + 1,
					p->engine, p->r[k], got,
					last[p->r[k]], (int)last[p->r[k]],
					last[p->r[k]] ?
					cl->plan[last[p->r[k]] - 1].engine :
					-1);
		}
		for (k = 0; k < p->nw; k++)
			last[p->w[k]] = j + 1;
	}
	for (k = 0; k < CELLS; k++)
		if (mt_u32(cl->cells[k])[0] != last[k] && bad++ < 8)
			fprintf(stderr, "# client %u: cell %u = %u, want %u\n",
				cl->id, k, mt_u32(cl->cells[k])[0], last[k]);
	return bad;
}

/*
 * Reads among the first @upto jobs, on another engine, of a cell whose
 * last writer (in submission order) ran on engine @h: the wrong values
 * the control must produce at least when @h is held, and the reads that
 * must WAIT on the GPU for @h's jobs while it is held.
 */
static unsigned int control_expected(const struct client *cl, unsigned int h,
				     unsigned int upto)
{
	int last[CELLS];
	unsigned int j, k, n = 0;

	for (k = 0; k < CELLS; k++)
		last[k] = -1;
	for (j = 0; j < upto; j++) {
		const struct plan *p = &cl->plan[j];

		for (k = 0; p->engine != h && k < p->nr; k++)
			if (last[p->r[k]] >= 0 &&
			    cl->plan[last[p->r[k]]].engine == h)
				n++;
		for (k = 0; k < p->nw; k++)
			last[p->w[k]] = (int)j;
	}
	return n;
}

/*
 * Before the plan, a job on the engine whose holding shows most in the
 * first @upto jobs, that WAITs in its IB for a gate the CPU opens.
 *
 * The negative control (drop_waits=Y) opens it only once every job of
 * the other engines is done. That engine's jobs run after all of them
 * then, whatever the timing: each read on another engine of a cell it
 * wrote last sees an older value, and the checker must count it.
 *
 * The stress run (client 0) opens it after the first frames are sampled:
 * the jobs that read what the held engine's jobs write are in their
 * rings by then, which only a WAIT can order. Without the hold a slow
 * guest (the debug kernel) may run every producer before its consumer
 * is built, and no frame would need to wait.
 */
static int hold_engine(struct client *cl, struct megpu_cs *cs,
		       unsigned int upto)
{
	unsigned int e, best = 0;
	int ret;

	for (e = 1; e < cl->t.engines; e++)
		if (control_expected(cl, e, upto) >
		    control_expected(cl, best, upto))
			best = e;
	cl->held = best;
	ret = mt_bo(&cl->t.gpu, 4096, 0, &cl->gate);
	if (ret)
		return ret;
	megpu_cs_reset(cs);
	mt_gate_hold(cs, cl->gate);
	return mt_submit(&cl->t.gpu, &cl->hold, best, cs, &cl->gate, 1,
			 DRM_MEGPU_SUBMIT_NO_IMPLICIT);
}

static int open_gate(struct client *cl)
{
	int ret;

	mt_gate_open(cl->gate);
	ret = mt_job_finish(&cl->hold, mt_job_ns(&cl->t));
	megpu_bo_free(cl->gate);
	return ret;
}

static int release_engine(struct client *cl)
{
	int64_t deadline = megpu_now_ns() + DEADLINE_S * 1000000000ll;
	unsigned int j;
	int ret;

	for (j = 0; j < njobs; j++) {
		if (cl->plan[j].engine == cl->held)
			continue;
		ret = megpu_syncobj_wait(&cl->t.gpu, cl->sync[j], 0,
					 deadline - megpu_now_ns());
		if (ret) {
			fprintf(stderr, "# control: job %u (engine %u) not "
				"done with engine %u held: %s\n", j + 1,
				cl->plan[j].engine, cl->held, strerror(-ret));
			return ret;
		}
	}
	/* the held engine still at its gate: the hold did not time out */
	if (!mt_pending(&cl->t.gpu, cl->hold.sync, 0)) {
		fprintf(stderr, "# control: the hold on engine %u ended early "
			"(%s)\n", cl->held,
			strerror(-mt_job_done(&cl->hold, 0)));
		return -EIO;
	}
	return open_gate(cl);
}

/* One client's work; 0 when everything was right. */
static int client(unsigned int id, uint64_t seed, unsigned int *nbad)
{
	struct client *cl = calloc(1, sizeof(*cl));
	unsigned int j, k, bad = 0, waits = 0, sample, held_waits = 0;
	bool want_waits = false;
	int64_t deadline;
	struct megpu_cs cs;
	int ret;

	if (!cl)
		return 1;
	cl->id = id;
	rnd_state = seed * 0x9e3779b97f4a7c15ull + id + 1;
	ret = mt_open(&cl->t);
	for (k = 0; !ret && k < CELLS; k++)
		ret = mt_bo(&cl->t.gpu, 4096, 0, &cl->cells[k]);
	ret = ret ?: mt_bo(&cl->t.gpu, JOBS * MAX_READS * 4, 0, &cl->log);
	ret = ret ?: mt_bo(&cl->t.gpu, JOBS * MAX_READS * KARGS_STRIDE, 0,
			   &cl->kargs);
	ret = ret ?: mt_bo(&cl->t.gpu, JOBS * IB_STRIDE, 0, &cl->ibs);
	for (j = 0; !ret && j < JOBS; j++)
		ret = megpu_syncobj_new(&cl->t.gpu, false, &cl->sync[j]);
	if (ret) {
		fprintf(stderr, "# client %u: setup: %s\n", id, strerror(-ret));
		return 1;
	}
	memset(cl->log->map, 0xff, cl->log->size);
	make_plan(cl->plan, njobs, cl->t.engines);

	megpu_cs_init(&cs);
	/* the control holds one engine until the others are done */
	sample = nbad ? 0 : id == 0 && cl->t.engines > 1 ?
		 (njobs < SAMPLE_HELD ? njobs : SAMPLE_HELD) : 0;
	if (nbad || sample) {
		ret = hold_engine(cl, &cs, nbad ? njobs : sample);
		if (ret)
			return 1;
	}
	for (j = 0; j < njobs; j++) {
		ret = submit(cl, j, &cs);
		if (ret) {
			fprintf(stderr, "# client %u job %u: submit: %s\n", id,
				j + 1, strerror(-ret));
			return 1;
		}
		if (id == 0 && j % 64 == 63)
			waits += frame_waits(&cl->t);
		if (j + 1 != sample)
			continue;
		/* frames queued behind the held engine's jobs */
		held_waits = frame_waits(&cl->t);
		want_waits = !!control_expected(cl, cl->held, sample);
		if (open_gate(cl))
			return 1;
		if (started_fd >= 0)
			close(started_fd);	/* the other clients start */
	}
	megpu_cs_fini(&cs);
	if (nbad && release_engine(cl))
		return 1;

	deadline = megpu_now_ns() + DEADLINE_S * 1000000000ll;
	for (j = 0; j < njobs; j++) {
		ret = megpu_syncobj_wait(&cl->t.gpu, cl->sync[j], 0,
					 deadline - megpu_now_ns());
		if (ret) {
			fprintf(stderr, "# client %u: job %u not done in %d s "
				"(%s): deadlock?\n", id, j + 1, DEADLINE_S,
				strerror(-ret));
			return 1;
		}
		ret = megpu_fence_status(cl->t.gpu.fd, cl->sync[j], 0);
		if (ret && nbad) {
			fprintf(stderr, "# control: job %u: %s\n", j + 1,
				strerror(-ret));
			return 1;
		}
		if (ret && bad++ < 8)
			fprintf(stderr, "# client %u job %u: %s\n", id, j + 1,
				strerror(-ret));
	}
	bad += check(cl);
	if (nbad) {
		unsigned int want = control_expected(cl, cl->held, njobs);

		fprintf(stderr, "# control: engine %u held, %u wrong values, "
			"at least %u expected\n", cl->held, bad, want);
		*nbad = bad;
		bad = !want || bad < want;
	}
	if (id == 0 && !nbad) {
		fprintf(stderr, "# client 0: %u WAITs in sampled frames, %u "
			"with engine %u held (%u reads behind it)\n", waits,
			held_waits, cl->held,
			sample ? control_expected(cl, cl->held, sample) : 0);
		if (want_waits && !held_waits && bad++ < 8)
			fprintf(stderr, "# client 0: no frame waited on the "
				"GPU for the held engine: semaphores not "
				"exercised\n");
	}

	for (j = 0; j < njobs; j++)
		megpu_syncobj_free(&cl->t.gpu, cl->sync[j]);
	megpu_bo_free(cl->ibs);
	megpu_bo_free(cl->kargs);
	megpu_bo_free(cl->log);
	for (k = 0; k < CELLS; k++)
		megpu_bo_free(cl->cells[k]);
	mt_close(&cl->t);
	free(cl);
	return bad ? 1 : 0;
}

MT_FIXTURE(gpu)

TEST_F_TIMEOUT(gpu, random_dag_many_clients, 300)
{
	uint64_t base[MT_COUNTERS];
	struct mt *t = &self->t;
	unsigned int c, busy;
	pid_t pid[CLIENTS];
	int started[2];
	char byte;
	bool drop = megpu_test_cmdline("sem_drop_waits", 0);
	uint64_t seed;
	int64_t t0;
	int status;

	if (megpu_debugfs_path(&t->gpu, "semaphores", (char[256]){ 0 }, 256))
		SKIP(return, "no debugfs semaphores");
	seed = megpu_test_cmdline("seed", 0);
	if (!seed)
		seed = (uint64_t)megpu_now_ns() ^ getpid();
	ASSERT_EQ(0, mt_counters(&t->gpu, base));
	TH_LOG("seed %llu (megpu_test.seed=%llu replays it): %d clients x "
	       "%d jobs on %u engines", (unsigned long long)seed,
	       (unsigned long long)seed, CLIENTS, JOBS, t->engines);

	if (drop)
		ASSERT_EQ(0, mt_param_set("drop_waits", true));
	t0 = megpu_now_ns();
	ASSERT_EQ(0, pipe(started));
	for (c = 0; c < CLIENTS; c++) {
		pid[c] = fork();
		ASSERT_LE(0, pid[c]);
		if (!pid[c]) {
			close(started[0]);
			started_fd = c ? -1 : started[1];
			if (c)
				close(started[1]);
			_exit(client(c, seed, NULL));
		}
		if (!c) {
			/* until client 0 took its sample (or exited) */
			close(started[1]);
			while (read(started[0], &byte, 1) < 0 && errno == EINTR)
				;
			close(started[0]);
		}
	}
	for (c = 0; c < CLIENTS; c++) {
		ASSERT_EQ(pid[c], waitpid(pid[c], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("client %u failed (status 0x%x)", c, status);
	}
	TH_LOG("%d jobs in %.1f s", CLIENTS * JOBS,
	       (megpu_now_ns() - t0) / 1e9);
	if (drop)
		ASSERT_EQ(0, mt_param_set("drop_waits", false));

	EXPECT_EQ(0, mt_sem_settle(t, t->engines, &busy, 5000))
		TH_LOG("%u semaphore objects still busy when idle", busy);
	MT_EXPECT_COUNTERS_SETTLE(&t->gpu, base, 5000, "objects left over");
}

#define CONTROL_JOBS 64

/*
 * The checker checked, in every run: with the WAITs dropped (drop_waits)
 * and one engine held until the others are done, the checker finds
 * at least the wrong values the plan implies (a deterministic lower
 * bound, not a race that may or may not show).
 */
TEST_F_TIMEOUT(gpu, dropped_waits_are_caught, 120)
{
	struct mt *t = &self->t;
	unsigned int bad = 0;
	int status;
	pid_t pid;

	MT_NEED_ENGINES(t, 2);
	if (mt_param_get("drop_waits") < 0)
		SKIP(return, "no drop_waits parameter");
	ASSERT_EQ(0, mt_param_set("drop_waits", true));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		njobs = CONTROL_JOBS;
		status = client(0, 0xc0ffee, &bad);
		_exit(status ? 1 : bad ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, mt_param_set("drop_waits", false));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the checker missed the dropped waits (status 0x%x)",
		       status);
}

TEST_HARNESS_MAIN
