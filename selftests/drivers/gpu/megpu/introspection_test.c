// SPDX-License-Identifier: GPL-2.0
/*
 * What users and tools read about the GPU: debugfs (engines, decoded ring
 * frames, faults), fdinfo engine busy time per client, and tracepoints.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_drm.h"
#include "megpu_hw_packets.h"
#include "libmegpu.h"
#include "megpu_test.h"

#define TRACEFS "/sys/kernel/tracing"

MT_FIXTURE(gpu);

/* A job's frame is SET_CONTEXT, IB (its address), TIMESTAMP with irq. */
TEST_F(gpu, ring_dump_shows_frames)
{
	static struct megpu_debug_packet k[512];
	struct megpu_bo *bo;
	struct megpu_cs cs;
	struct mt_job j;
	uint64_t ib_va;
	int n, i;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, bo->va, 1);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &j, 0, &cs, &bo, 1, 0));
	ib_va = j.job.ib->va + j.job.ib_offset;
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));

	/* the ring's words, decoded by libmegpu */
	n = mt_ring_packets(&self->t, 0, k, 512);
	if (n == -ENOENT)
		SKIP(return, "no debugfs");
	ASSERT_LT(0, n);
	for (i = n - 1; i >= 0; i--)
		if (k[i].op == MEGPU_PKT_IB && k[i].a == ib_va)
			break;
	ASSERT_LE(0, i) TH_LOG("no IB at 0x%llx in engine 0's ring",
			       (unsigned long long)ib_va);
	EXPECT_EQ(cs.len, k[i].b);
	/* the IB is preceded by SET_CONTEXT and followed by the TIMESTAMP */
	ASSERT_LE(1, i);
	EXPECT_TRUE(k[i - 1].op == MEGPU_PKT_SET_CONTEXT ||
		    k[i - 1].op == MEGPU_PKT_SET_MAILBOX);
	/* the job flushes its writes (no NO_FLUSH) before its SIGNAL */
	ASSERT_GT(n, i + 1);
	EXPECT_EQ(MEGPU_PKT_FLUSH, k[i + 1].op);
	i++;
	ASSERT_GT(n, i + 2);
	EXPECT_EQ(MEGPU_PKT_SIGNAL, k[i + 1].op);
	EXPECT_EQ(MEGPU_PKT_TIMESTAMP, k[i + 2].op);
	EXPECT_NE(NULL, strstr(k[i + 2].text, " irq")) TH_LOG("%s",
							     k[i + 2].text);
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

TEST_F(gpu, engines_show_progress)
{
	char *engines, name[64];
	unsigned int e;

	engines = mt_debugfs(&self->t, "engines");
	if (!engines)
		SKIP(return, "no debugfs");
	for (e = 0; e < self->t.engines; e++) {
		char engine[16];

		megpu_engine_name(self->t.types, e, engine, sizeof(engine));
		snprintf(name, sizeof(name), "%s: engine %u status", engine, e);
		EXPECT_NE(NULL, strstr(engines, name)) TH_LOG("%s", engines);
	}
	EXPECT_NE(NULL, strstr(engines, "completed"));
	free(engines);
}

/* A fault is recorded with its code, access, address and context. */
TEST_F(gpu, fault_is_recorded)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	char want[96], *faults;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	/* the guard page right after the BO is never mapped */
	megpu_cs_write32(&cs, bo->va + 4096 + 8, 1);
	ASSERT_EQ(-EFAULT, mt_run(&self->t, 0, &cs, &bo, 1));

	faults = mt_debugfs(&self->t, "faults");
	if (!faults)
		SKIP(return, "no debugfs");
	snprintf(want, sizeof(want), "code %u write ib addr 0x%" PRIx64,
		 MEGPU_FAULT_MMU, bo->va + 4096 + 8);
	EXPECT_NE(NULL, strstr(faults, want)) TH_LOG("no '%s' in:\n%s", want,
						     faults);
	free(faults);
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

static uint64_t fdinfo_value(int fd, const char *key)
{
	char path[64], *text, *p;
	uint64_t v = UINT64_MAX;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = mt_slurp(path);
	if (!text)
		return UINT64_MAX;
	p = strstr(text, key);
	if (p)
		v = strtoull(p + strlen(key), NULL, 0);
	free(text);
	return v;
}

static void fdinfo_key(struct mt *t, unsigned int e, char *buf, size_t len)
{
	char name[16];

	megpu_engine_name(t->types, e, name, sizeof(name));
	snprintf(buf, len, "drm-engine-%s:", name);
}

/* drm-engine-<name> grows with the client's work on that engine only. */
TEST_F(gpu, fdinfo_engine_busy_time)
{
	struct megpu_kargs k = { .n = 200000 };
	uint64_t before[MEGPU_MAX_ENGINES], after, args;
	struct megpu_bo *bos[2];
	char key[64];
	struct megpu_cs cs;
	unsigned int e;
	int busy;

	busy = mt_engine_for(&self->t, MEGPU_PKT_DISPATCH, -1);
	ASSERT_LE(0, busy);
	EXPECT_NE(UINT64_MAX, fdinfo_value(self->t.gpu.fd, "drm-driver:"));
	for (e = 0; e < self->t.engines; e++) {
		fdinfo_key(&self->t, e, key, sizeof(key));
		before[e] = fdinfo_value(self->t.gpu.fd, key);
		ASSERT_NE(UINT64_MAX, before[e]) TH_LOG("no %s", key);
	}

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4 * k.n, 0, &bos[0]));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bos[1]));
	k.ptr[0] = bos[0]->va;
	ASSERT_EQ(0, megpu_kargs_write(bos[1], 0, &k, &args));
	megpu_cs_init(&cs);
	megpu_cs_dispatch(&cs, MEGPU_KERNEL_INCREMENT, args, k.n, 1, 256, 1);
	ASSERT_EQ(0, mt_run(&self->t, busy, &cs, bos, 2));

	for (e = 0; e < self->t.engines; e++) {
		fdinfo_key(&self->t, e, key, sizeof(key));
		after = fdinfo_value(self->t.gpu.fd, key);
		if ((int)e == busy) {
			EXPECT_LT(before[e], after) TH_LOG("%s", key);
		} else {
			EXPECT_EQ(before[e], after) TH_LOG("%s", key);
		}
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bos[0]);
	megpu_bo_free(bos[1]);
}

/* An fdinfo memory key ("drm-resident-memory:") in bytes, or -1. */
static long long fdinfo_bytes(int fd, const char *key)
{
	long long v = fdinfo_value(fd, key) == UINT64_MAX ? -1 : 0;
	char path[64], unit[8] = "", *text, *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = mt_slurp(path);
	p = text && !v ? strstr(text, key) : NULL;
	if (p && sscanf(p + strlen(key), " %lld %7s", &v, unit) >= 1) {
		if (!strcmp(unit, "KiB"))
			v <<= 10;
		else if (!strcmp(unit, "MiB"))
			v <<= 20;
	}
	free(text);
	return v;
}

/*
 * fdinfo follows Documentation/gpu/drm-usage-stats.rst: every key the
 * driver adds starts with "drm-", and a client's BOs show as resident
 * memory (all of a BO's pages are pinned). An early driver printed
 * "megpu-context:" and no memory keys.
 */
TEST_F(gpu, fdinfo_follows_drm_usage_stats)
{
	static const char *const vfs[] = { "pos:", "flags:", "mnt_id:",
					   "ino:" };
	long long before, after;
	char path[64], *text, *line, *save;
	struct megpu_bo *bo, *small;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->t.gpu.fd);
	text = mt_slurp(path);
	ASSERT_NE(NULL, text);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		bool known = !strncmp(line, "drm-", 4);

		for (unsigned int i = 0; i < 4; i++)
			known |= !strncmp(line, vfs[i], strlen(vfs[i]));
		EXPECT_TRUE(known) TH_LOG("fdinfo key without drm-: %s", line);
	}
	free(text);
	EXPECT_LT(0, mt_context(&self->t.gpu));

	/* the core shows memory keys only for a client with a BO */
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &small));
	before = fdinfo_bytes(self->t.gpu.fd, "drm-resident-memory:");
	ASSERT_LE(4096, before) TH_LOG("no drm-resident-memory in fdinfo");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4 << 20, 0, &bo));
	after = fdinfo_bytes(self->t.gpu.fd, "drm-resident-memory:");
	EXPECT_LE(before + (4 << 20), after);
	megpu_bo_free(bo);
	megpu_bo_free(small);
}

/* submit, run and done tracepoints fire for a job. */
TEST_F(gpu, tracepoints)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	char *trace;

	if (access(TRACEFS "/events", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (access(TRACEFS "/events/megpu", F_OK))
		SKIP(return, "no tracefs");
	ASSERT_EQ(0, mt_write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, mt_write_file(TRACEFS "/events/megpu/enable", "1"));

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, bo->va, 1);
	ASSERT_EQ(0, mt_run(&self->t, 0, &cs, &bo, 1));

	ASSERT_EQ(0, mt_write_file(TRACEFS "/events/megpu/enable", "0"));
	trace = mt_slurp(TRACEFS "/trace");
	ASSERT_NE(NULL, trace);
	EXPECT_NE(NULL, strstr(trace, "megpu_job_submit: engine=0"));
	EXPECT_NE(NULL, strstr(trace, "megpu_job_run: engine=0"));
	EXPECT_NE(NULL, strstr(trace, "megpu_job_done: engine=0"));
	free(trace);
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

/*
 * Seed 001's dump of the semaphore pool while a dependency is live: gfx0
 * is held on a gate writing a BO that copy0 then reads, so copy0 WAITs on
 * the semaphore of gfx0's job. "semaphores" shows it in use, tagged with
 * gfx0's job, and copy0 among its waiters; once both ran it is free.
 */
TEST_F(gpu, semaphores_show_a_live_dependency)
{
	struct megpu_debug_sems s = { 0 };
	struct megpu_bo *gate, *bo, *bos[2];
	struct mt_job prod, cons;
	struct megpu_cs cs;
	unsigned int i, busy0;
	bool tagged = false;
	char *txt;

	if (self->t.engines < 3)
		SKIP(return, "needs gfx0 and copy0");
	ASSERT_EQ(0, megpu_debug_semaphores(&self->t.gpu, &s, 0));
	busy0 = s.busy;
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	bos[0] = gate;
	bos[1] = bo;
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, gate);
	megpu_cs_write32(&cs, bo->va, 0x5e3a);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &prod, 0, &cs, bos, 2, 0));
	megpu_cs_fini(&cs);
	megpu_cs_init(&cs);
	megpu_cs_copy(&cs, bo->va, bo->va + 64, 4);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &cons, 2, &cs, &bo, 1, 0));
	megpu_cs_fini(&cs);
	/* copy0 is in the ring, waiting on the semaphore */
	usleep(200 * 1000);
	ASSERT_TRUE(mt_pending(&self->t.gpu, cons.sync, 0));

	s.obj = calloc(64, sizeof(*s.obj));
	ASSERT_NE(NULL, s.obj);
	ASSERT_EQ(0, megpu_debug_semaphores(&self->t.gpu, &s, 64));
	EXPECT_LT(busy0, s.busy);
	for (i = 0; i < s.count; i++)
		if (s.obj[i].tag.engine == 0)
			tagged = true;
	EXPECT_TRUE(tagged) TH_LOG("no semaphore tagged with gfx0's job");
	txt = mt_debugfs(&self->t, "semaphores");
	ASSERT_NE(NULL, txt);
	EXPECT_NE(NULL, strstr(txt, " waiters copy0@")) TH_LOG("%s", txt);
	free(txt);

	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&prod, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_finish(&cons, mt_job_ns(&self->t)));
	EXPECT_EQ(0x5e3a, mt_u32(bo)[16]);
	txt = mt_debugfs(&self->t, "semaphores");
	ASSERT_NE(NULL, txt);
	EXPECT_EQ(NULL, strstr(txt, " waiters copy0@")) TH_LOG("%s", txt);
	free(txt);
	free(s.obj);
	megpu_bo_free(bo);
	megpu_bo_free(gate);
}

TEST_HARNESS_MAIN
