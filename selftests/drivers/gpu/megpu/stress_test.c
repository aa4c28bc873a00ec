// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: several clients (processes, each its own fd) submit over 10,000
 * small jobs across all engines at once; each job writes a distinct value.
 * Every fence must signal without error, every value must land, and the
 * driver's live-object counters must return to where they started.
 */

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define CLIENTS 4
#define JOBS_PER_CLIENT 2560	/* 10,240 in all */
#define BATCH 64		/* jobs in flight per client */
#define IB_STRIDE 16		/* one WRITE_DATA of one dword */

static uint32_t value_of(unsigned int client, unsigned int i)
{
	return (client + 1) << 24 | i;
}

/* One client's work; returns the number of problems (0: all good). */
static int client(unsigned int c)
{
	struct megpu_bo *results, *ibs;
	struct megpu_job *jobs;
	uint32_t sync[BATCH];
	struct megpu_cs cs;
	unsigned int i, k, bad = 0;
	struct mt t;
	int ret;

	ret = mt_open(&t);
	ret = ret ?: mt_bo(&t.gpu, JOBS_PER_CLIENT * 4, 0, &results);
	ret = ret ?: mt_bo(&t.gpu, BATCH * IB_STRIDE, 0, &ibs);
	jobs = calloc(BATCH, sizeof(*jobs));
	if (ret || !jobs) {
		fprintf(stderr, "# client %u: setup: %s\n", c, strerror(-ret));
		return 1;
	}
	for (k = 0; k < BATCH; k++)
		if (megpu_syncobj_new(&t.gpu, false, &sync[k]))
			return 1;
	megpu_cs_init(&cs);

	for (i = 0; i < JOBS_PER_CLIENT; i += BATCH) {
		for (k = 0; k < BATCH; k++) {
			struct megpu_job *j = &jobs[k];

			/* Clients start on different engines. */
			megpu_job_init(j, (i + k + c) % t.engines);
			j->flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
			megpu_job_add_bo(j, results, DRM_MEGPU_BO_WRITE);
			megpu_job_set_ib(j, ibs, k * IB_STRIDE);
			megpu_job_signal_sync(j, sync[k], 0);
			megpu_cs_reset(&cs);
			megpu_cs_write32(&cs, results->va + 4 * (i + k),
					 value_of(c, i + k));
			ret = megpu_job_run(&t.gpu, j, &cs);
			if (ret) {
				fprintf(stderr, "# client %u job %u: %s\n", c,
					i + k, strerror(-ret));
				return 1;
			}
		}
		ret = megpu_syncobj_wait_many(&t.gpu, sync, BATCH, true,
					      mt_job_ns(&t));
		if (ret) {
			fprintf(stderr, "# client %u: wait: %s\n", c,
				strerror(-ret));
			return 1;
		}
		for (k = 0; k < BATCH; k++) {
			ret = megpu_fence_status(t.gpu.fd, sync[k], 0);
			if (ret && bad++ < 5)
				fprintf(stderr, "# client %u job %u: %s\n", c,
					i + k, strerror(-ret));
		}
		if (c == 0 && (i + BATCH) % (JOBS_PER_CLIENT / 4) == 0)
			fprintf(stderr, "# client 0: %u/%u jobs done\n",
				i + BATCH, JOBS_PER_CLIENT);
	}
	for (i = 0; i < JOBS_PER_CLIENT; i++)
		if (mt_u32(results)[i] != value_of(c, i) && bad++ < 10)
			fprintf(stderr, "# client %u: slot %u = 0x%x\n", c, i,
				mt_u32(results)[i]);

	megpu_cs_fini(&cs);
	for (k = 0; k < BATCH; k++)
		megpu_syncobj_free(&t.gpu, sync[k]);
	free(jobs);
	megpu_bo_free(ibs);
	megpu_bo_free(results);
	mt_close(&t);
	return bad ? 1 : 0;
}

MT_FIXTURE(gpu)

TEST_F_TIMEOUT(gpu, many_clients_many_jobs, 240)
{
	uint64_t base[MT_COUNTERS], now[MT_COUNTERS];
	struct mt *t = &self->t;
	bool counters = true;
	pid_t pid[CLIENTS];
	struct stat st;
	int64_t t0;
	unsigned int c;
	int status, ret;

	if (stat("/sys/kernel/debug/dri", &st)) {
		TH_LOG("debugfs not mounted: not checking the counters");
		counters = false;
	} else {
		ASSERT_EQ(0, mt_counters(&t->gpu, base))
			TH_LOG("debugfs 'counters' lacks bos, jobs or vms");
	}

	TH_LOG("%d clients x %d jobs on %u engines", CLIENTS,
	       JOBS_PER_CLIENT, t->engines);
	t0 = megpu_now_ns();
	for (c = 0; c < CLIENTS; c++) {
		pid[c] = fork();
		ASSERT_LE(0, pid[c]);
		if (!pid[c])
			_exit(client(c));
	}
	for (c = 0; c < CLIENTS; c++) {
		ASSERT_EQ(pid[c], waitpid(pid[c], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("client %u failed (status 0x%x)", c, status);
	}
	TH_LOG("%d jobs in %.1f s", CLIENTS * JOBS_PER_CLIENT,
	       (megpu_now_ns() - t0) / 1e9);

	if (counters) {
		ret = mt_counters_settle(&t->gpu, base, now, 5000);
		EXPECT_EQ(0, ret)
			TH_LOG("counters bos/jobs/vms: %llu/%llu/%llu, were "
			       "%llu/%llu/%llu",
			       (unsigned long long)now[0],
			       (unsigned long long)now[1],
			       (unsigned long long)now[2],
			       (unsigned long long)base[0],
			       (unsigned long long)base[1],
			       (unsigned long long)base[2]);
	}
}

/*
 * A client killed with work queued and running: the driver cleans up
 * (queued jobs are dropped, running ones finish or time out), nothing
 * leaks, and the GPU keeps working for others.
 */
TEST_F_TIMEOUT(gpu, client_killed_with_jobs_in_flight, 120)
{
	uint64_t base[MT_COUNTERS], now[MT_COUNTERS];
	struct mt *t = &self->t;
	struct megpu_kargs k = { .n = 1 << 18 };
	int ready[2], status, round;
	struct megpu_bo *probe;
	char byte;
	pid_t pid;

	if (mt_counters(&t->gpu, base))
		SKIP(return, "no debugfs counters");

	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct megpu_bo *buf, *args;
			struct megpu_cs cs;
			struct mt c;
			uint64_t a;
			int i;

			close(ready[0]);
			if (mt_open(&c) || mt_bo(&c.gpu, 4 * k.n, 0, &buf) ||
			    mt_bo(&c.gpu, 4096, 0, &args))
				_exit(1);
			k.ptr[0] = buf->va;
			if (megpu_kargs_write(args, 0, &k, &a))
				_exit(1);
			megpu_cs_init(&cs);
			megpu_cs_dispatch(&cs, MEGPU_KERNEL_INCREMENT, a, k.n,
					  1, 256, 1);
			/* a deep queue of long jobs (each 2^18 increments) */
			for (i = 0; i < 40; i++) {
				struct megpu_bo *bos[2] = { buf, args };
				struct mt_job j;
				int e = mt_engine_for(&c, MEGPU_PKT_DISPATCH,
						      -1);

				if (e < 0 || mt_submit(&c.gpu, &j, e, &cs, bos,
						       2, 0))
					_exit(1);
			}
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &byte, 1));
		close(ready[0]);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
	}

	EXPECT_EQ(0, mt_counters_settle(&t->gpu, base, now, 30000))
		TH_LOG("counters bos/jobs/vms: %llu/%llu/%llu, were "
		       "%llu/%llu/%llu",
		       (unsigned long long)now[0], (unsigned long long)now[1],
		       (unsigned long long)now[2], (unsigned long long)base[0],
		       (unsigned long long)base[1], (unsigned long long)base[2]);
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &probe));
	for (round = 0; round < (int)t->engines; round++)
		EXPECT_EQ(0, mt_probe_engine(t, round, probe, 4 * round,
					     0x600d + round));
	megpu_bo_free(probe);
}

TEST_HARNESS_MAIN
