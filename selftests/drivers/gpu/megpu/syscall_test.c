// SPDX-License-Identifier: GPL-2.0
/*
 * GPU-to-CPU system calls (seed 003, notes-003.md §3) as userspace sees
 * them: the uAPI layout, the file's mailbox, calls answered in the
 * kernel (ECHO, ADD) and by a service thread (libmegpu's service and its
 * printf/fileio), more callers than slots, interrupt batching, other
 * engines running while a wave waits, bad answers, a client that goes
 * away with waves parked, isolation between clients and a 100k-call
 * stress. No timing assertions: jobs are waited for with generous
 * timeouts and answers are given well inside the job timeout.
 */

#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_programs.h"
#include "megpu_test.h"

/* One ECHO with a 64-bit answer stored at user[0]. */
static const char echo_one[] =
	"li r1, 0xcafef00d\n"
	"li r2, 0xdeadbeef\n"
	"syscall r3, 1, r1, r2, r0\n"	/* DRM_MEGPU_SYSCALL_ECHO */
	"ldarg r4, 0\n"
	"st64 [r4], r3\n"
	"end\n";

/*
 * Work-item i < n (user[1]) of a grid starting at user[2] calls op N
 * with (base + i, ~(base + i), 7) and stores the answer at out[base + i]
 * (user[0]). N is patched in by op_prog().
 */
static const char op_calls[] =
	"s2r r1, global_id\n"
	"ldarg32 r2, 8\n"
	"cmpltu r3, r1, r2\n"
	"if r3\n"
	"ldarg r5, 16\n"
	"add r1, r1, r5\n"
	"xor r6, r1, -1\n"
	"li r7, 7\n"
	"syscall r4, %u, r1, r6, r7\n"
	"ldarg r8, 0\n"
	"shl r9, r1, 3\n"
	"add r8, r8, r9\n"
	"st64 [r8], r4\n"
	"endif\n"
	"end\n";

#define USER_OP (DRM_MEGPU_SYSCALL_USER + 0x42)

static int op_prog(struct megpu *gpu, unsigned int op, struct mt_prog *p)
{
	char src[sizeof(op_calls) + 16];

	snprintf(src, sizeof(src), op_calls, op);
	return mt_prog_load(gpu, src, p);
}

static uint64_t echo_of(uint32_t i)
{
	return i | (uint64_t)~i << 32;
}

static uint64_t add_of(uint32_t i)
{
	return (uint64_t)i + ~i + 7;
}

/* The user op the tests' services answer. */
static uint64_t user_of(uint32_t i)
{
	return (uint64_t)i * 3 + 0x100000000ull;
}

static uint64_t user_op(struct megpu_service *svc,
			const struct drm_megpu_syscall *c, void *priv)
{
	(void)svc;
	(void)priv;
	return c->args[2] == 7 ? user_of(c->args[0]) : 0;
}

FIXTURE(syscall) {
	struct mt t;
	int engine;
	uint32_t slots;
};

FIXTURE_SETUP(syscall)
{
	uint64_t feat = 0;

	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_EQ(0, megpu_get_param(&self->t.gpu, DRM_MEGPU_PARAM_FEATURES,
				     &feat));
	self->engine = mt_wave_engine(&self->t, -1);
	if (!(feat & MEGPU_CAP_WAVES) || self->engine < 0)
		SKIP(return, "the device runs no wave programs");
	ASSERT_EQ(0, megpu_mailbox_slots(&self->t.gpu, &self->slots));
}

FIXTURE_TEARDOWN(syscall)
{
	mt_close(&self->t);
}

/* Start @p over @n items (from @base) writing into @out. */
static int start_calls(struct mt *t, struct mt_job *j, unsigned int engine,
		       struct mt_prog *p, unsigned int block,
		       struct megpu_bo *out, uint32_t base, uint32_t n)
{
	uint64_t user[3] = { out->va, n, base };
	struct megpu_bo *bos[3];
	struct megpu_cs cs;
	int ret;

	megpu_cs_init(&cs);
	ret = mt_prog_dispatch(&cs, p, block, user, 3, n, 64);
	ret = ret ?: mt_submit(&t->gpu, j, engine, &cs, bos,
			       mt_prog_bos(p, bos, &out, 1),
			       DRM_MEGPU_SUBMIT_NO_IMPLICIT);
	megpu_cs_fini(&cs);
	return ret;
}

/* Wait for one call handed to @gpu's service; 0 or -errno. */
static int take_call(struct mt *t, struct megpu *gpu,
		     struct drm_megpu_syscall *c)
{
	int n = megpu_syscall_wait(gpu, c, 1, mt_job_ns(t));

	return n == 1 ? 0 : n < 0 ? n : -EIO;
}

TEST(uapi_layout)
{
	ASSERT_EQ(24, sizeof(struct drm_megpu_syscall));
	ASSERT_EQ(0, offsetof(struct drm_megpu_syscall, slot));
	ASSERT_EQ(4, offsetof(struct drm_megpu_syscall, op));
	ASSERT_EQ(8, offsetof(struct drm_megpu_syscall, args));
	ASSERT_EQ(20, offsetof(struct drm_megpu_syscall, caller));
	ASSERT_EQ(24, sizeof(struct drm_megpu_syscall_wait));
	ASSERT_EQ(0, offsetof(struct drm_megpu_syscall_wait, calls));
	ASSERT_EQ(8, offsetof(struct drm_megpu_syscall_wait, timeout_ns));
	ASSERT_EQ(16, offsetof(struct drm_megpu_syscall_wait, count));
	ASSERT_EQ(20, offsetof(struct drm_megpu_syscall_wait, flags));
	ASSERT_EQ(40, sizeof(struct drm_megpu_syscall_return));
	ASSERT_EQ(0, offsetof(struct drm_megpu_syscall_return, ret));
	ASSERT_EQ(8, offsetof(struct drm_megpu_syscall_return, slot));
	ASSERT_EQ(12, offsetof(struct drm_megpu_syscall_return, caller));
	ASSERT_EQ(16, offsetof(struct drm_megpu_syscall_return, flags));
	ASSERT_EQ(20, offsetof(struct drm_megpu_syscall_return, pad));
	ASSERT_EQ(24, offsetof(struct drm_megpu_syscall_return, answers));
	ASSERT_EQ(32, offsetof(struct drm_megpu_syscall_return, count));
	ASSERT_EQ(36, offsetof(struct drm_megpu_syscall_return, pad2));
	ASSERT_EQ(16, sizeof(struct drm_megpu_syscall_answer));
	ASSERT_EQ(0, offsetof(struct drm_megpu_syscall_answer, ret));
	ASSERT_EQ(8, offsetof(struct drm_megpu_syscall_answer, slot));
	ASSERT_EQ(12, offsetof(struct drm_megpu_syscall_answer, caller));
	/* The mailbox slot of the hardware contract (notes-003 §3.1) */
	ASSERT_EQ(32, MEGPU_MBOX_SLOT_SIZE);
	ASSERT_EQ(0, MEGPU_MBOX_STATE);
	ASSERT_EQ(4, MEGPU_MBOX_OP);
	ASSERT_EQ(8, MEGPU_MBOX_ARG(0));
	ASSERT_EQ(16, MEGPU_MBOX_ARG(2));
	ASSERT_EQ(20, MEGPU_MBOX_CALLER);
	ASSERT_EQ(24, MEGPU_MBOX_RET);
	ASSERT_EQ(0, MEGPU_MBOX_FREE);
	ASSERT_EQ(1, MEGPU_MBOX_FILLING);
	ASSERT_EQ(2, MEGPU_MBOX_ACTIVE);
	ASSERT_EQ(3, MEGPU_MBOX_RETURNING);
	ASSERT_LE(DRM_MEGPU_SYSCALL_ADD, DRM_MEGPU_SYSCALL_USER);
}

TEST_F(syscall, mailbox_has_slots)
{
	ASSERT_LT(0, self->slots);
	ASSERT_GE(MEGPU_MBOX_MAX_SLOTS, self->slots);
}

TEST_F(syscall, echo_one_call_64bit_result)
{
	struct megpu_bo *out, *bos[3];
	struct megpu_cs cs;
	struct mt_prog p;
	uint64_t user[1];

	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, echo_one, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	user[0] = out->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 1, 1, 1));
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&p, bos, &out, 1)));
	ASSERT_EQ(0xdeadbeefcafef00dull, *(uint64_t *)out->map);
	megpu_cs_fini(&cs);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* The example program: out[i] = ECHO(i, lane) = i | lane << 32. */
TEST_F(syscall, example_program_echo)
{
	struct megpu_bo *out, *bos[3];
	uint64_t user[2], *r;
	struct megpu_cs cs;
	struct mt_prog p;
	uint32_t i, n = 50;

	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, megpu_program("syscall"),
				  &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	user[0] = out->va;
	user[1] = n;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 2, n, 32));
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&p, bos, &out, 1)));
	r = out->map;
	for (i = 0; i < n; i++)
		ASSERT_EQ(i | (uint64_t)(i % 16) << 32, r[i]) TH_LOG("i %u", i);
	megpu_cs_fini(&cs);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* More callers than slots: ECHO and ADD, every answer its own. */
TEST_F(syscall, many_callers_few_slots)
{
	static const unsigned int ops[2] = {
		DRM_MEGPU_SYSCALL_ECHO, DRM_MEGPU_SYSCALL_ADD,
	};
	uint32_t i, n = 2 * self->slots + 5, o;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	uint64_t *r;

	if (self->slots > 512)
		SKIP(return, "a mailbox this large takes too many callers");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, n * 8, 0, &out));
	r = out->map;
	for (o = 0; o < 2; o++) {
		ASSERT_EQ(0, op_prog(&self->t.gpu, ops[o], &p));
		memset(r, 0, n * 8);
		ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0,
					 out, 0, n));
		ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
		for (i = 0; i < n; i++)
			ASSERT_EQ(o ? add_of(i) : echo_of(i), r[i])
				TH_LOG("op %u caller %u", ops[o], i);
		mt_prog_free(&p);
	}
	megpu_bo_free(out);
}

/*
 * debugfs "syscalls" (megpu_syscall.c): "key value" lines; the driver's
 * "calls" (slots served) and "irqs" (syscall interrupts handled) and the
 * device's "retry_spins" (SYSCALLs that found no FREE slot).
 */
struct sc_counters {
	uint64_t calls, retries, irqs, restarts, deferred;
	bool has_calls, has_retries, has_irqs, has_deferred;
};

static void sc_add(struct sc_counters *c, const char *key, uint64_t v)
{
	if (!strcmp(key, "restarts")) {
		c->restarts = v;
	} else if (!strcmp(key, "deferred_restarts")) {
		c->deferred = v;
		c->has_deferred = true;
	} else if (!strcmp(key, "retry_spins")) {
		c->retries = v;
		c->has_retries = true;
	} else if (!strcmp(key, "irqs")) {
		c->irqs = v;
		c->has_irqs = true;
	} else if (!strcmp(key, "calls")) {
		c->calls = v;
		c->has_calls = true;
	}
}

static int sc_read(struct mt *t, struct sc_counters *c, char **text)
{
	unsigned long long v;
	char key[64], *line;

	memset(c, 0, sizeof(*c));
	*text = mt_debugfs(t, "syscalls");
	if (!*text)
		return -ENOENT;
	for (line = *text; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (sscanf(line, "%63s %llu", key, &v) == 2)
			sc_add(c, key, v);
	}
	return c->has_calls && c->has_retries && c->has_irqs ? 0 : -EBADMSG;
}

/* notes-003 §3 rows 6 and 9: retries under contention, batched IRQs. */
TEST_F(syscall, counters_show_retries_and_batching)
{
	struct sc_counters before, after;
	char *t0 = NULL, *t1 = NULL;
	uint32_t i, n = 256;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	int ret;

	/* contention: more lanes resident on the engine than slots */
	if (self->slots >= MEGPU_WAVE_SLOTS * MEGPU_WAVE_LANES)
		SKIP(return, "as many slots as resident lanes: no retries");
	ret = sc_read(&self->t, &before, &t0);
	if (ret == -ENOENT)
		SKIP(return, "no debugfs syscalls file");
	ASSERT_EQ(0, ret) TH_LOG("debugfs syscalls:\n%s", t0);
	ASSERT_EQ(0, op_prog(&self->t.gpu, DRM_MEGPU_SYSCALL_ECHO, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, n * 8, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 n));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	for (i = 0; i < n; i++)
		ASSERT_EQ(echo_of(i), ((uint64_t *)out->map)[i]);
	ASSERT_EQ(0, sc_read(&self->t, &after, &t1));
	TH_LOG("syscalls %llu retries %llu irqs %llu",
	       (unsigned long long)(after.calls - before.calls),
	       (unsigned long long)(after.retries - before.retries),
	       (unsigned long long)(after.irqs - before.irqs));
	ASSERT_LE(before.calls + n, after.calls) TH_LOG("%s", t1);
	ASSERT_LT(before.retries, after.retries) TH_LOG("%s", t1);
	ASSERT_LT(after.irqs - before.irqs, after.calls - before.calls)
		TH_LOG("%s", t1);
	free(t0);
	free(t1);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/*
 * A wave whose calls all went to the service cannot go on before the
 * last of them is answered: the driver restarts it once, with that last
 * answer, not once per answer (debugfs "restarts", "deferred_restarts").
 * Answered in reverse order; every lane gets its own answer.
 */
TEST_F(syscall, wave_restarted_once_per_batch_of_answers)
{
	struct sc_counters before, after;
	struct drm_megpu_syscall c[4];
	struct megpu *gpu = &self->t.gpu;
	char *t0 = NULL, *t1 = NULL;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	int i, n = 0, got, ret;

	if (self->slots < 4)
		SKIP(return, "fewer than 4 mailbox slots");
	ret = sc_read(&self->t, &before, &t0);
	if (ret == -ENOENT || (!ret && !before.has_deferred))
		SKIP(return, "no debugfs syscalls file with deferred_restarts");
	ASSERT_EQ(0, ret) TH_LOG("debugfs syscalls:\n%s", t0);
	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	/* four lanes of one wave: four slots, one interrupt */
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 4));
	while (n < 4) {
		got = megpu_syscall_wait(gpu, c + n, 4 - n,
					 mt_job_ns(&self->t));
		ASSERT_LT(0, got);
		n += got;
	}
	for (i = 3; i >= 0; i--) {
		ASSERT_EQ(0, megpu_syscall_return(gpu, c[i].slot, c[i].caller,
						  user_of(c[i].args[0])));
		if (i)	/* still waiting for its other answers */
			ASSERT_EQ(-ETIME, mt_job_done(&j, 0));
	}
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(user_of(i), ((uint64_t *)out->map)[i]);
	ASSERT_EQ(0, sc_read(&self->t, &after, &t1));
	EXPECT_EQ(before.restarts + 1, after.restarts) TH_LOG("%s", t1);
	EXPECT_EQ(before.deferred + 3, after.deferred) TH_LOG("%s", t1);
	free(t0);
	free(t1);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* Take @n calls of a job started with start_calls(). */
static void take_calls(struct __test_metadata *_metadata, struct mt *t,
		       struct drm_megpu_syscall *c, int n)
{
	int got, have = 0;

	while (have < n) {
		got = megpu_syscall_wait(&t->gpu, c + have, n - have,
					 mt_job_ns(t));
		ASSERT_LT(0, got);
		have += got;
	}
}

static void answers_of(const struct drm_megpu_syscall *c, int n,
		       struct drm_megpu_syscall_answer *a)
{
	for (int i = 0; i < n; i++)
		a[i] = (struct drm_megpu_syscall_answer) {
			.ret = user_of(c[i].args[0]), .slot = c[i].slot,
			.caller = c[i].caller,
		};
}

/*
 * SYSCALL_RETURN_BATCH: the four calls of one wave answered by one
 * ioctl; the wave is restarted once, with no deferred restart (answered
 * one by one, three are deferred: wave_restarted_once_per_batch_...).
 */
TEST_F(syscall, batch_return_answers_all_at_once)
{
	struct drm_megpu_syscall_answer a[4];
	struct sc_counters before, after;
	struct drm_megpu_syscall c[4];
	struct megpu *gpu = &self->t.gpu;
	char *t0 = NULL, *t1 = NULL;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	int ret;

	if (self->slots < 4)
		SKIP(return, "fewer than 4 mailbox slots");
	ret = sc_read(&self->t, &before, &t0);
	if (ret == -ENOENT || (!ret && !before.has_deferred))
		SKIP(return, "no debugfs syscalls file with deferred_restarts");
	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 4));
	take_calls(_metadata, &self->t, c, 4);
	answers_of(c, 4, a);
	ASSERT_EQ(0, megpu_syscall_return_batch(gpu, a, 4));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(user_of(i), ((uint64_t *)out->map)[i]);
	ASSERT_EQ(0, sc_read(&self->t, &after, &t1));
	EXPECT_EQ(before.restarts + 1, after.restarts) TH_LOG("%s", t1);
	EXPECT_EQ(before.deferred, after.deferred) TH_LOG("%s", t1);
	free(t0);
	free(t1);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/*
 * A bad batch is refused whole: nothing of it is answered (the job still
 * waits), and the right batch then works.
 */
TEST_F(syscall, bad_batches_are_refused_whole)
{
	struct drm_megpu_syscall_answer a[3], *unreadable;
	struct drm_megpu_syscall_return r;
	struct drm_megpu_syscall c[2];
	struct megpu *gpu = &self->t.gpu;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;

	if (self->slots < 2)
		SKIP(return, "fewer than 2 mailbox slots");
	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 2));
	take_calls(_metadata, &self->t, c, 2);
	answers_of(c, 2, a);

	/* one answer twice, one of another caller, one of no call */
	a[2] = a[0];
	EXPECT_EQ(-ENOENT, megpu_syscall_return_batch(gpu, a, 3));
	a[2] = a[1];
	a[2].caller ^= 0x100;
	EXPECT_EQ(-ENOENT, megpu_syscall_return_batch(gpu, a, 3));
	a[2].slot = (a[0].slot + a[1].slot + 1) % self->slots;
	if (a[2].slot != a[0].slot && a[2].slot != a[1].slot) {
		a[2].caller = a[0].caller;
		EXPECT_EQ(-ENOENT, megpu_syscall_return_batch(gpu, a, 3));
	}
	a[2].slot = self->slots;
	EXPECT_EQ(-EINVAL, megpu_syscall_return_batch(gpu, a, 3));
	EXPECT_EQ(-EINVAL, megpu_syscall_return_batch(gpu, a, 0));
	EXPECT_EQ(-EINVAL, megpu_syscall_return_batch(gpu, a,
						      self->slots + 1));
	/* the ioctl's own checks */
	r = (struct drm_megpu_syscall_return) {
		.flags = DRM_MEGPU_SYSCALL_RETURN_BATCH,
		.answers = (uintptr_t)a, .count = 2, .ret = 1,
	};
	EXPECT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	EXPECT_EQ(EINVAL, errno);
	r.ret = 0;
	r.pad2 = 1;
	EXPECT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	EXPECT_EQ(EINVAL, errno);
	r.pad2 = 0;
	r.flags = DRM_MEGPU_SYSCALL_RETURN_BATCH << 1;
	EXPECT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	EXPECT_EQ(EINVAL, errno);
	/* answers without the flag */
	r = (struct drm_megpu_syscall_return) {
		.ret = a[0].ret, .slot = a[0].slot, .caller = a[0].caller,
		.answers = (uintptr_t)a,
	};
	EXPECT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	EXPECT_EQ(EINVAL, errno);
	unreadable = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	ASSERT_NE(MAP_FAILED, unreadable);
	EXPECT_EQ(-EFAULT, megpu_syscall_return_batch(gpu, unreadable, 2));
	munmap(unreadable, 4096);

	/* nothing was answered */
	EXPECT_EQ(-ETIME, mt_job_done(&j, 0));
	answers_of(c, 2, a);
	ASSERT_EQ(0, megpu_syscall_return_batch(gpu, a, 2));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	for (int i = 0; i < 2; i++)
		EXPECT_EQ(user_of(i), ((uint64_t *)out->map)[i]);
	/* answered: again is -ENOENT */
	EXPECT_EQ(-ENOENT, megpu_syscall_return_batch(gpu, a, 2));
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* A user op answered by libmegpu's service threads. */
TEST_F(syscall, user_op_answered_by_service)
{
	struct megpu_service svc;
	uint32_t i, n = 100;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;

	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(-EINVAL, megpu_service_handle(&svc, DRM_MEGPU_SYSCALL_ECHO,
						user_op, NULL));
	ASSERT_EQ(0, megpu_service_handle(&svc, USER_OP, user_op, NULL));
	ASSERT_EQ(0, megpu_service_start(&svc, 2));
	ASSERT_EQ(0, op_prog(&self->t.gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, n * 8, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 n));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	megpu_service_stop(&svc);
	ASSERT_EQ(0, svc.wait_error);
	ASSERT_EQ(n, svc.calls);
	ASSERT_EQ(0, svc.errors);
	for (i = 0; i < n; i++)
		ASSERT_EQ(user_of(i), ((uint64_t *)out->map)[i])
			TH_LOG("caller %u", i);
	megpu_service_fini(&svc);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* An op nobody handles: -EOPNOTSUPP, from the kernel or the service. */
TEST_F(syscall, unknown_ops_answer_eopnotsupp)
{
	struct megpu_service svc;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	ASSERT_EQ(0, op_prog(&self->t.gpu, 0x77, &p));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(MEGPU_SYS_ERR(-EOPNOTSUPP), ((uint64_t *)out->map)[0]);
	mt_prog_free(&p);

	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(0, megpu_service_start(&svc, 1));
	ASSERT_EQ(0, op_prog(&self->t.gpu, USER_OP, &p));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(MEGPU_SYS_ERR(-EOPNOTSUPP), ((uint64_t *)out->map)[0]);
	megpu_service_fini(&svc);
	mt_prog_free(&p);
	megpu_bo_free(out);
}

/*
 * notes-003 §3.8: 1 MiB through a buffer. 16 callers each FILEIO a
 * 64 KiB chunk of a BO the GPU wrote, at its file offset; then one call
 * writes the whole MiB again into a second file.
 */
static const char fileio_prog[] =
	"s2r r1, global_id\n"
	"ldarg r2, 0\n"			/* data */
	"ldarg32 r3, 8\n"		/* chunk bytes */
	"mul r4, r1, r3\n"		/* file offset */
	"add r5, r2, r4\n"		/* chunk address */
	/* the GPU writes its chunk first: dword k = offset/4 + k */
	"shr r6, r4, 2\n"
	"li r7, 0\n"
	"fill: st32 [r5], r6\n"
	"add r5, r5, 4\n"
	"add r6, r6, 1\n"
	"add r7, r7, 4\n"
	"cmpltu r8, r7, r3\n"
	"brany r8, fill\n"
	"add r5, r2, r4\n"
	"syscall r9, 0x103, r5, r3, r4\n"	/* MEGPU_SYS_FILEIO */
	"ldarg r10, 16\n"
	"shl r11, r1, 3\n"
	"add r10, r10, r11\n"
	"st64 [r10], r9\n"
	"end\n";

static int memfile(void)
{
	return memfd_create("megpu-fileio", MFD_CLOEXEC);
}

static bool file_is(int fd, const void *want, size_t len)
{
	uint8_t *got = malloc(len);
	bool same = got && pread(fd, got, len, 0) == (ssize_t)len &&
		    !memcmp(got, want, len);

	free(got);
	return same;
}

TEST_F(syscall, fileio_1mib_payload)
{
	const uint32_t chunk = 64 * 1024, callers = 16;
	struct megpu_bo *data, *res, *bos[4];
	struct megpu_service svc;
	uint64_t user[3];
	struct megpu_cs cs;
	struct mt_prog p;
	uint32_t i;
	int fd = memfile(), fd2 = memfile();
	uint32_t *want;
	bool strict = false;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(MEGPU_SYS_FILEIO, 0x103);
	/*
	 * The program fills the MiB one 32-bit store per lane at a time:
	 * in relaxed mode that is 256k posted writes, which on a busy host
	 * can outlast the job timeout. The payload is the point here.
	 */
	if (!megpu_write_mode_get(&self->t.gpu, &strict) && !strict)
		ASSERT_EQ(0, megpu_write_mode_set(&self->t.gpu, true));
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, fileio_prog, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, chunk * callers, 0, &data));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &res));
	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(0, megpu_service_add_bo(&svc, data));
	ASSERT_EQ(0, megpu_service_fileio(&svc, fd));
	ASSERT_EQ(0, megpu_service_start(&svc, 2));

	user[0] = data->va;
	user[1] = chunk;
	user[2] = res->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 3, callers, 16));
	bos[2] = data;
	bos[3] = res;
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&p, bos, bos + 2, 2)));
	for (i = 0; i < callers; i++)
		ASSERT_EQ(chunk, ((uint64_t *)res->map)[i]) TH_LOG("caller %u",
								   i);
	want = malloc(chunk * callers);
	ASSERT_NE(NULL, want);
	for (i = 0; i < chunk * callers / 4; i++)
		want[i] = i;
	ASSERT_TRUE(file_is(fd, want, chunk * callers));
	ASSERT_TRUE(!memcmp(data->map, want, chunk * callers));

	/* The whole MiB in one call, into another file */
	megpu_service_stop(&svc);
	ASSERT_EQ(0, megpu_service_fileio(&svc, fd2));
	ASSERT_EQ(0, megpu_service_start(&svc, 1));
	user[1] = chunk * callers;
	megpu_cs_reset(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 1, user, 3, 1, 1));
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&p, bos, bos + 2, 2)));
	ASSERT_EQ(chunk * callers, ((uint64_t *)res->map)[0]);
	ASSERT_TRUE(file_is(fd2, want, chunk * callers));
	megpu_service_fini(&svc);
	if (!strict)
		megpu_write_mode_set(&self->t.gpu, false);
	free(want);
	megpu_cs_fini(&cs);
	close(fd);
	close(fd2);
	megpu_bo_free(res);
	megpu_bo_free(data);
	mt_prog_free(&p);
}

/* Bad addresses answer -EFAULT; the service lives on. */
TEST_F(syscall, fileio_bad_address_is_efault)
{
	struct megpu_bo *data, *res, *bos[4];
	struct megpu_service svc;
	uint64_t user[3];
	struct megpu_cs cs;
	struct mt_prog p;
	int fd = memfile();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, fileio_prog, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &data));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &res));
	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	/* data is not given to the service: its address is unknown */
	ASSERT_EQ(0, megpu_service_fileio(&svc, fd));
	ASSERT_EQ(0, megpu_service_start(&svc, 1));
	user[0] = data->va;
	user[1] = 64;
	user[2] = res->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 3, 2, 16));
	bos[2] = data;
	bos[3] = res;
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&p, bos, bos + 2, 2)));
	ASSERT_EQ(MEGPU_SYS_ERR(-EFAULT), ((uint64_t *)res->map)[0]);
	ASSERT_EQ(MEGPU_SYS_ERR(-EFAULT), ((uint64_t *)res->map)[1]);
	ASSERT_EQ(0, svc.wait_error);
	megpu_service_fini(&svc);
	megpu_cs_fini(&cs);
	close(fd);
	megpu_bo_free(res);
	megpu_bo_free(data);
	mt_prog_free(&p);
}

/*
 * PRINTF: work-item i prints "item %d of %u: %s\n" from its own record;
 * every line comes out whole, once.
 */
/* out[i] = MALLOC(64), then the block gets i; user[0] out, user[1] n. */
static const char malloc_prog[] =
	"s2r r1, global_id\n"
	"ldarg32 r2, 8\n"
	"cmpltu r3, r1, r2\n"
	"if r3\n"
	"li r5, 64\n"
	"syscall r4, 0x101, r5, r5, r5\n"	/* MEGPU_SYS_MALLOC */
	"st32 [r4], r1\n"
	"ldarg r7, 0\n"
	"shl r8, r1, 3\n"
	"add r7, r7, r8\n"
	"st64 [r7], r4\n"
	"endif\n"
	"end\n";

/* out[i] = FREE(out[i]). */
static const char free_prog[] =
	"s2r r1, global_id\n"
	"ldarg32 r2, 8\n"
	"cmpltu r3, r1, r2\n"
	"if r3\n"
	"ldarg r7, 0\n"
	"shl r8, r1, 3\n"
	"add r7, r7, r8\n"
	"ld64 r4, [r7]\n"
	"syscall r5, 0x102, r4, r4, r4\n"	/* MEGPU_SYS_FREE */
	"st64 [r7], r5\n"
	"endif\n"
	"end\n";

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The seed's malloc/free from a pool BO: 100 work-items each get a
 * distinct 16-byte aligned 64-byte block inside the pool (and write it),
 * then free it; a free of anything else is -EINVAL.
 */
TEST_F(syscall, malloc_and_free_from_a_pool)
{
	struct megpu_bo *pool, *out, *bos[4];
	const uint32_t n = 100;
	struct megpu_service svc;
	struct mt_prog pm, pf;
	uint64_t user[2], *a;
	struct megpu_cs cs;
	uint32_t i;

	ASSERT_EQ(MEGPU_SYS_MALLOC, 0x101);
	ASSERT_EQ(MEGPU_SYS_FREE, 0x102);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 64 * 1024, 0, &pool));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, n * 8, 0, &out));
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, malloc_prog, &pm));
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, free_prog, &pf));
	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(0, megpu_service_malloc(&svc, pool));
	ASSERT_EQ(0, megpu_service_start(&svc, 2));

	user[0] = out->va;
	user[1] = n;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &pm, 0, user, 2, n, 32));
	bos[2] = pool;
	bos[3] = out;
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&pm, bos, bos + 2, 2)));
	a = malloc(n * 8);
	ASSERT_NE(NULL, a);
	memcpy(a, out->map, n * 8);
	for (i = 0; i < n; i++) {
		ASSERT_LE(pool->va, a[i]) TH_LOG("caller %u", i);
		ASSERT_GE(pool->va + pool->size - 64, a[i]);
		EXPECT_EQ(0, a[i] % 16);
		EXPECT_EQ(i, mt_u32(pool)[(a[i] - pool->va) / 4]);
	}
	qsort(a, n, 8, cmp_u64);
	for (i = 1; i < n; i++)
		EXPECT_LE(a[i - 1] + 64, a[i]) TH_LOG("blocks overlap");
	free(a);

	megpu_cs_reset(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &pf, 0, user, 2, n, 32));
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&pf, bos, bos + 2, 2)));
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, ((uint64_t *)out->map)[i]) TH_LOG("free %u", i);
	/* the blocks were freed: freeing them again is an error */
	memset(out->map, 0, n * 8);
	((uint64_t *)out->map)[0] = pool->va + 8;
	megpu_cs_reset(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &pf, 0, user, 2, 1, 1));
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&pf, bos, bos + 2, 2)));
	EXPECT_EQ(MEGPU_SYS_ERR(-EINVAL), ((uint64_t *)out->map)[0]);

	megpu_service_fini(&svc);
	megpu_cs_fini(&cs);
	mt_prog_free(&pf);
	mt_prog_free(&pm);
	megpu_bo_free(out);
	megpu_bo_free(pool);
}

static const char printf_prog[] =
	"s2r r1, global_id\n"
	"ldarg r2, 0\n"			/* records, 32 bytes each */
	"shl r3, r1, 5\n"
	"add r2, r2, r3\n"
	"ldarg32 r4, 8\n"		/* format address */
	"st32 [r2], r4\n"
	"li r5, 3\n"
	"st32 [r2+4], r5\n"
	"st32 [r2+8], r1\n"
	"s2r r6, grid_x\n"
	"st32 [r2+12], r6\n"
	"ldarg32 r7, 12\n"		/* string address */
	"st32 [r2+16], r7\n"
	"syscall r8, 0x100, r2, r0, r0\n"
	"ldarg r9, 16\n"
	"shl r10, r1, 3\n"
	"add r9, r9, r10\n"
	"st64 [r9], r8\n"
	"end\n";

TEST_F(syscall, printf_lines_whole)
{
	const uint32_t n = 40;
	struct megpu_bo *rec, *res, *bos[4];
	struct megpu_service svc;
	char line[64], *text, *p;
	uint64_t user[3];
	struct megpu_cs cs;
	struct mt_prog prog;
	uint32_t i;
	int fd = memfile();
	off_t len;

	ASSERT_LE(0, fd);
	ASSERT_EQ(MEGPU_SYS_PRINTF, 0x100);
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, printf_prog, &prog));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &rec));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &res));
	strcpy((char *)rec->map + 4096, "item %03d of %u: %s\n");
	strcpy((char *)rec->map + 4096 + 64, "hello");
	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(0, megpu_service_add_bo(&svc, rec));
	ASSERT_EQ(0, megpu_service_printf(&svc, fd));
	ASSERT_EQ(0, megpu_service_start(&svc, 3));
	user[0] = rec->va;
	user[1] = (rec->va + 4096) | (rec->va + 4096 + 64) << 32;
	user[2] = res->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &prog, 0, user, 3, n, 16));
	bos[2] = rec;
	bos[3] = res;
	ASSERT_EQ(0, mt_run(&self->t, self->engine, &cs, bos,
			    mt_prog_bos(&prog, bos, bos + 2, 2)));
	megpu_service_stop(&svc);
	len = lseek(fd, 0, SEEK_END);
	text = calloc(1, len + 1);
	ASSERT_EQ(len, pread(fd, text, len, 0));
	for (i = 0; i < n; i++) {
		int w = snprintf(line, sizeof(line),
				 "item %03u of %u: hello\n", i, n);

		ASSERT_EQ(w, ((uint64_t *)res->map)[i]) TH_LOG("item %u", i);
		p = strstr(text, line);
		ASSERT_NE(NULL, p) TH_LOG("no line '%s' in:\n%s", line, text);
		ASSERT_TRUE(p == text || p[-1] == '\n');
		ASSERT_EQ(NULL, strstr(p + 1, line));
	}
	ASSERT_EQ(n * strlen(line), (size_t)len);
	free(text);
	megpu_service_fini(&svc);
	megpu_cs_fini(&cs);
	close(fd);
	megpu_bo_free(res);
	megpu_bo_free(rec);
	mt_prog_free(&prog);
}

/* notes-003 §3.11: another engine's jobs run while a wave waits. */
TEST_F(syscall, other_engines_run_while_parked)
{
	struct drm_megpu_syscall c;
	struct megpu_bo *out, *probe;
	struct mt_prog p;
	struct mt_job j;
	int o = mt_other_engine(&self->t, self->engine);

	if (o < 0)
		SKIP(return, "needs 2 engines");
	ASSERT_EQ(0, op_prog(&self->t.gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &probe));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	/* The wave is parked on our call until we answer it */
	ASSERT_EQ(0, take_call(&self->t, &self->t.gpu, &c));
	ASSERT_EQ(USER_OP, c.op);
	ASSERT_EQ(0, c.args[0]);
	ASSERT_EQ(~0u, c.args[1]);
	ASSERT_EQ(7, c.args[2]);
	ASSERT_EQ(self->engine, MEGPU_WAVE_ID_ENGINE(c.caller));
	ASSERT_EQ(0, mt_probe_engine(&self->t, o, probe, 0, 0x1234));
	ASSERT_TRUE(mt_pending(&self->t.gpu, j.sync, 0));
	ASSERT_EQ(0, megpu_syscall_return(&self->t.gpu, c.slot, c.caller,
					  0x0123456789abcdefull));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(0x0123456789abcdefull, ((uint64_t *)out->map)[0]);
	megpu_bo_free(probe);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* notes-003 §3.10: bad answers are refused and nothing hangs. */
/* SYSCALL_RETURN as binaries built before the batch fields call it. */
struct syscall_return_24 {
	__u64 ret;
	__u32 slot, caller, flags, pad;
};

static int return_24_bytes(struct megpu *gpu, uint32_t slot, uint32_t caller,
			   uint64_t ret)
{
	struct syscall_return_24 old = {
		.ret = ret, .slot = slot, .caller = caller,
	};

	return drmIoctl(gpu->fd, DRM_IOW(DRM_COMMAND_BASE +
					 DRM_MEGPU_SYSCALL_RETURN,
					 struct syscall_return_24), &old) ?
	       -errno : 0;
}

TEST_F(syscall, bad_returns_are_refused)
{
	struct drm_megpu_syscall_wait w = { 0 };
	struct drm_megpu_syscall_return r;
	struct drm_megpu_syscall c;
	struct megpu *gpu = &self->t.gpu;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;

	/* SYSCALL_WAIT's own checks, and a poll with nothing to serve */
	w.calls = (uintptr_t)&c;
	ASSERT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_WAIT, &w));
	ASSERT_EQ(EINVAL, errno);
	w.count = 1;
	w.flags = 1;
	ASSERT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_WAIT, &w));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-ETIME, megpu_syscall_wait(gpu, &c, 1, 0));
	/* nothing was handed out */
	ASSERT_EQ(-EINVAL, megpu_syscall_return(gpu, self->slots, 0, 0));
	ASSERT_EQ(-EINVAL, megpu_syscall_return(gpu, ~0u, 0, 0));
	ASSERT_EQ(-ENOENT, megpu_syscall_return(gpu, 0, 0x12345, 0));

	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, take_call(&self->t, gpu, &c));
	ASSERT_EQ(-ENOENT, megpu_syscall_return(gpu, c.slot, c.caller ^ 1,
						1));
	ASSERT_EQ(-ENOENT, megpu_syscall_return(gpu,
						(c.slot + 1) % self->slots,
						c.caller, 2));
	/* a right answer with non-zero flags or pad is refused, not taken */
	r = (struct drm_megpu_syscall_return){
		.ret = 3, .slot = c.slot, .caller = c.caller, .flags = 1,
	};
	ASSERT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	ASSERT_EQ(EINVAL, errno);
	r.flags = 0;
	r.pad = 1;
	ASSERT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &r));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, megpu_syscall_return(gpu, c.slot, c.caller, 42));
	/* twice: the call is gone */
	ASSERT_EQ(-ENOENT, megpu_syscall_return(gpu, c.slot, c.caller, 43));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(42, ((uint64_t *)out->map)[0]);
	/*
	 * and the mailbox still works, answered through the 24-byte
	 * SYSCALL_RETURN of binaries built before the batch fields (the DRM
	 * core zero-fills what they do not pass)
	 */
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, take_call(&self->t, gpu, &c));
	ASSERT_EQ(0, return_24_bytes(gpu, c.slot, c.caller, 44));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(44, ((uint64_t *)out->map)[0]);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/*
 * SYSCALL_WAIT hands calls out under a lock and copies them to userspace
 * after it: a call whose copy fails is not lost but handed out again.
 * Two calls of one wave are pending together; the buffer ends after
 * the first entry (the next page is inaccessible), so one call comes
 * out and the other stays; a buffer that is all bad gives -EFAULT and
 * keeps it.
 */
TEST_F(syscall, failed_copy_out_keeps_the_call)
{
	long page = sysconf(_SC_PAGESIZE);
	struct drm_megpu_syscall c[2], *edge;
	struct megpu *gpu = &self->t.gpu;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	char *map;
	int i;

	if (self->slots < 2)
		SKIP(return, "one mailbox slot");
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* kept mapped, so that nothing else can land there */
	ASSERT_EQ(0, mprotect(map + page, page, PROT_NONE));
	edge = (struct drm_megpu_syscall *)(map + page) - 1;

	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 2));
	/* one wave: both calls are published before its one interrupt */
	ASSERT_EQ(1, megpu_syscall_wait(gpu, edge, 2, mt_job_ns(&self->t)));
	c[0] = *edge;
	ASSERT_EQ(-EFAULT, megpu_syscall_wait(gpu, (void *)(map + page), 2,
					      mt_job_ns(&self->t)));
	ASSERT_EQ(0, take_call(&self->t, gpu, &c[1]));
	ASSERT_NE(c[0].slot, c[1].slot);
	/* nothing else is pending */
	ASSERT_EQ(-ETIME, megpu_syscall_wait(gpu, edge, 1, 0));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(USER_OP, c[i].op);
		ASSERT_EQ(7, c[i].args[2]);
		ASSERT_EQ(0, megpu_syscall_return(gpu, c[i].slot, c[i].caller,
						  user_of(c[i].args[0])));
	}
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(user_of(i), ((uint64_t *)out->map)[i]);
	munmap(map, 2 * page);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/*
 * SYSCALL_WAIT into memory the kernel cannot write: -EFAULT, and the call
 * is not lost: the next wait hands it out, and its answer lands.
 */
TEST_F(syscall, unwritable_wait_buffer_keeps_the_call)
{
	struct drm_megpu_syscall_wait w = { 0 };
	struct megpu *gpu = &self->t.gpu;
	struct drm_megpu_syscall c;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	void *ro;

	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	/* the call is there once a wait with a good buffer could see it */
	w.calls = (uintptr_t)ro;
	w.count = 1;
	w.timeout_ns = megpu_now_ns() + mt_job_ns(&self->t);
	ASSERT_EQ(-1, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_WAIT, &w));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(0, take_call(&self->t, gpu, &c));
	ASSERT_EQ(USER_OP, c.op);
	ASSERT_EQ(0, megpu_syscall_return(gpu, c.slot, c.caller, 55));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(55, ((uint64_t *)out->map)[0]);
	megpu_bo_free(out);
	mt_prog_free(&p);
	munmap(ro, 4096);
}

/* Wait for a sync_file to signal: its status (0 or the fence error). */
static int sync_file_wait(int fd, int timeout_ms)
{
	return mt_sync_file_wait(fd, timeout_ms) ?: megpu_sync_file_status(fd);
}

/*
 * notes-003 §3.14: a client goes away with a wave parked on its call
 * and no service: the call is answered -EPIPE, its job ends, and the
 * next client works.
 */
TEST_F(syscall, client_exit_with_parked_waves)
{
	struct megpu_bo *out, *shared, *probe;
	struct drm_megpu_syscall c;
	struct mt_prog p;
	struct mt_job j;
	int64_t t0, closed_ms;
	struct mt b;
	int dmabuf, sf, status;

	ASSERT_EQ(0, mt_open_client(&self->t, &b));
	ASSERT_EQ(0, op_prog(&b.gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(&b.gpu, 4096, 0, &out));
	/* the result outlives the client through PRIME */
	ASSERT_EQ(0, megpu_bo_export(out, &dmabuf));
	ASSERT_EQ(0, megpu_bo_import(&self->t.gpu, dmabuf, &shared));
	close(dmabuf);
	ASSERT_EQ(0, megpu_bo_map(shared));
	t0 = megpu_now_ns();
	ASSERT_EQ(0, start_calls(&b, &j, self->engine, &p, 0, out, 0, 1));
	ASSERT_EQ(0, megpu_syncobj_export(&b.gpu, j.sync, 0, &sf));
	ASSERT_EQ(0, take_call(&self->t, &b.gpu, &c));
	/* the client dies without answering */
	megpu_job_fini(&j.job);
	mt_prog_free(&p);
	megpu_bo_free(out);
	mt_close(&b);
	closed_ms = (megpu_now_ns() - t0) / 1000000;

	status = sync_file_wait(sf, (int)(mt_job_ns(&self->t) / 1000000));
	close(sf);
	ASSERT_NE(-ETIME, status) TH_LOG("the closed client's job hangs");
	/*
	 * Answered -EPIPE. Only a machine so slow that the client closed
	 * after a job timeout may see the timeout stop the job instead.
	 */
	if (status) {
		ASSERT_EQ(-ETIMEDOUT, status);
		ASSERT_LE((int64_t)self->t.timeout_ms, closed_ms)
			TH_LOG("the job timed out, though its client closed "
			       "%lld ms after the submit: no -EPIPE answer",
			       (long long)closed_ms);
	} else {
		ASSERT_EQ(MEGPU_SYS_ERR(-EPIPE),
			  ((uint64_t *)shared->map)[0]);
	}
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &probe));
	ASSERT_EQ(0, mt_probe_engine(&self->t, self->engine, probe, 0, 7));
	megpu_bo_free(probe);
	megpu_bo_free(shared);
}

/*
 * A function level reset with a wave parked on a call: its job fails
 * with -EIO, the call is gone (an answer to it is refused, nothing is
 * written), and the mailbox serves the next call after the reset.
 */
TEST_F(syscall, parked_wave_through_reset)
{
	struct megpu *gpu = &self->t.gpu;
	struct drm_megpu_syscall c;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	int ret;

	ASSERT_EQ(0, op_prog(gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, take_call(&self->t, gpu, &c));
	ret = mt_flr(gpu);
	if (ret == -ENOENT || ret == -EACCES) {
		ASSERT_EQ(0, megpu_syscall_return(gpu, c.slot, c.caller, 0));
		ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
		megpu_bo_free(out);
		mt_prog_free(&p);
		SKIP(return, "no function level reset (not a PCIe FLR device?)");
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(-EIO, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(-ENOENT, megpu_syscall_return(gpu, c.slot, c.caller, 5));
	ASSERT_EQ(0, ((uint64_t *)out->map)[0]);

	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	ASSERT_EQ(0, take_call(&self->t, gpu, &c));
	ASSERT_EQ(0, megpu_syscall_return(gpu, c.slot, c.caller, 6));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(6, ((uint64_t *)out->map)[0]);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

/* Client B never sees A's calls and cannot answer them. */
TEST_F(syscall, clients_are_isolated)
{
	struct drm_megpu_syscall c, cb;
	struct megpu_bo *out;
	struct mt_prog p;
	struct mt_job j;
	struct mt b;

	ASSERT_EQ(0, mt_open_client(&self->t, &b));
	ASSERT_EQ(0, op_prog(&self->t.gpu, USER_OP, &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	ASSERT_EQ(0, start_calls(&self->t, &j, self->engine, &p, 0, out, 0,
				 1));
	/* A's call is pending (or about to be): B waits in vain */
	ASSERT_EQ(-ETIME, megpu_syscall_wait(&b.gpu, &cb, 1, 300000000));
	ASSERT_EQ(0, take_call(&self->t, &self->t.gpu, &c));
	ASSERT_NE(0, megpu_syscall_return(&b.gpu, c.slot, c.caller, 666));
	ASSERT_EQ(-ETIME, megpu_syscall_wait(&b.gpu, &cb, 1, 0));
	ASSERT_EQ(0, megpu_syscall_return(&self->t.gpu, c.slot, c.caller,
					  777));
	ASSERT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	ASSERT_EQ(777, ((uint64_t *)out->map)[0]);
	megpu_bo_free(out);
	mt_prog_free(&p);
	mt_close(&b);
}

/*
 * notes-003 §3.12: 100,000 calls, every answer right. Jobs of 2,000
 * calls each keep every job well inside the job timeout; half the jobs
 * call ECHO in the kernel, half a user op of the service.
 */
#define STRESS_CALLS 100000
#define STRESS_PER_JOB 2000
#define STRESS_JOBS (STRESS_CALLS / STRESS_PER_JOB)

TEST_F(syscall, stress_100k_calls)
{
	struct mt_prog echo, user;
	struct megpu_service svc;
	struct megpu_bo *out;
	struct mt_job *jobs;
	uint32_t i, k, bad = 0;
	uint64_t *r;

	jobs = calloc(STRESS_JOBS, sizeof(*jobs));
	ASSERT_NE(NULL, jobs);
	ASSERT_EQ(0, op_prog(&self->t.gpu, DRM_MEGPU_SYSCALL_ECHO, &echo));
	ASSERT_EQ(0, op_prog(&self->t.gpu, USER_OP, &user));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, STRESS_CALLS * 8, 0, &out));
	ASSERT_EQ(0, megpu_service_init(&svc, &self->t.gpu));
	ASSERT_EQ(0, megpu_service_handle(&svc, USER_OP, user_op, NULL));
	ASSERT_EQ(0, megpu_service_start(&svc, 2));
	r = out->map;
	/* a few jobs in flight at a time, so none waits in the queue long */
	for (k = 0; k < STRESS_JOBS; k++) {
		if (k >= 4)
			ASSERT_EQ(0, mt_job_finish(&jobs[k - 4],
						   mt_job_ns(&self->t)));
		ASSERT_EQ(0, start_calls(&self->t, &jobs[k], self->engine,
					 k % 2 ? &user : &echo, k, out,
					 k * STRESS_PER_JOB,
					 STRESS_PER_JOB));
	}
	for (k = STRESS_JOBS - 4; k < STRESS_JOBS; k++)
		ASSERT_EQ(0, mt_job_finish(&jobs[k], mt_job_ns(&self->t)));
	megpu_service_stop(&svc);
	ASSERT_EQ(0, svc.wait_error);
	ASSERT_EQ(STRESS_CALLS / 2, svc.calls);
	for (i = 0; i < STRESS_CALLS; i++) {
		bool odd = (i / STRESS_PER_JOB) % 2;

		if (r[i] != (odd ? user_of(i) : echo_of(i)) && bad++ < 5)
			TH_LOG("call %u: 0x%llx", i, (unsigned long long)r[i]);
	}
	ASSERT_EQ(0, bad);
	megpu_service_fini(&svc);
	megpu_bo_free(out);
	mt_prog_free(&user);
	mt_prog_free(&echo);
	free(jobs);
}

TEST_HARNESS_MAIN
