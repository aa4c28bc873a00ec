// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's side of GPU-to-CPU calls (seed 003): every work-item of a
 * wave program calls the CPU through the file's mailbox. Calls the kernel
 * runs itself come back right; a client that closes with waves parked on
 * its service gets them answered -EPIPE; a job whose calls are never
 * answered times out, and its slots are free again. syscall.hi calls
 * are served before the others when they compete for few slots. Idle
 * files' mailboxes are not scanned, nor those of files whose jobs wait in
 * a ring.
 */

#include <poll.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

/* out[i] = syscall(N, i, arg1, arg2) for i < n; user[0] out, user[1] n. */
static const char caller_src[] =
	"	s2r	r1, global_id\n"
	"	ldarg32	r2, 8\n"
	"	cmpltu	r3, r1, r2\n"
	"	if	r3\n"
	"	li	r5, %u\n"
	"	li	r6, %u\n"
	"	syscall	r4, %u, r1, r5, r6\n"
	"	ldarg	r7, 0\n"
	"	shl	r8, r1, 3\n"
	"	add	r7, r7, r8\n"
	"	st64	[r7], r4\n"
	"	endif\n"
	"	end\n";

struct caller {
	struct megpu_bo *code, *out;
	struct mt_job j;
};

/* An engine that runs wave programs (gfx, compute), or -1. */
static int mb_engine(struct mt *t)
{
	uint64_t feat = 0;
	unsigned int e;

	if (megpu_get_param(&t->gpu, DRM_MEGPU_PARAM_FEATURES, &feat) ||
	    !(feat & MEGPU_CAP_WAVES))
		return -1;
	for (e = 0; e < t->engines; e++)
		if (mt_type(t, e) == MEGPU_ENGINE_GFX ||
		    mt_type(t, e) == MEGPU_ENGINE_COMPUTE)
			return e;
	return -1;
}

/* Start @n work-items each calling op @op with (i, a1, a2). */
static int caller_start(struct mt *t, struct caller *c, unsigned int engine,
			unsigned int n, uint32_t op, uint32_t a1, uint32_t a2)
{
	struct megpu_pargs pa = { 0 };
	struct megpu_prog prog;
	struct megpu_bo *bos[2];
	char src[1024], err[128];
	struct megpu_cs cs;
	uint64_t pva;
	int ret;

	snprintf(src, sizeof(src), caller_src, a1, a2, op);
	ret = megpu_asm(src, &prog, err, sizeof(err));
	if (ret)
		return ret;
	ret = mt_bo(&t->gpu, 4096 + prog.len * 8, 0, &c->code);
	if (ret)
		goto out;
	ret = mt_bo(&t->gpu, n * 8, 0, &c->out);
	if (ret)
		goto out;
	memset(c->out->map, 0xee, n * 8);
	megpu_prog_store(&prog, (uint8_t *)c->code->map + 4096);
	pa.program = c->code->va + 4096;
	pa.len = prog.len;
	pa.user[0] = c->out->va;
	pa.user[1] = n;
	ret = megpu_pargs_write(c->code, 0, &pa, &pva);
	if (ret)
		goto out;
	megpu_cs_init(&cs);
	megpu_cs_dispatch_program(&cs, pva, n, 1, 64, 1);
	bos[0] = c->code;
	bos[1] = c->out;
	ret = mt_submit(&t->gpu, &c->j, engine, &cs, bos, 2, 0);
	megpu_cs_fini(&cs);
out:
	megpu_prog_fini(&prog);
	return ret;
}

static void caller_free(struct caller *c)
{
	megpu_bo_free(c->out);
	megpu_bo_free(c->code);
}

/* A number from debugfs "syscalls" ("key value" lines), or -1. */
static long long sc_counter(struct mt *t, const char *key)
{
	char *text = mt_debugfs(t, "syscalls"), *p;
	size_t klen = strlen(key);
	long long v = -1;

	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			v = strtoll(p + klen + 1, NULL, 0);
			break;
		}
	free(text);
	return v;
}

MT_FIXTURE(mb)

#define CALLERS 200

/* More callers than slots: ECHO and ADD, answered by the kernel. */
TEST_F(mb, kernel_ops_many_callers)
{
	struct mt *t = &self->t;
	uint64_t slots = 0, *out;
	int e = mb_engine(t);
	struct caller c;
	unsigned int i, bad = 0;
	long long irqs0, irqs;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(0, megpu_get_param(&t->gpu, DRM_MEGPU_PARAM_MAILBOX_SLOTS,
				     &slots));
	ASSERT_LT(0, slots);
	ASSERT_GT(CALLERS, slots);
	irqs0 = sc_counter(t, "irqs");

	ASSERT_EQ(0, caller_start(t, &c, e, CALLERS, DRM_MEGPU_SYSCALL_ECHO,
				  0xabcdef01, 0));
	ASSERT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	out = c.out->map;
	for (i = 0; i < CALLERS; i++)
		bad += out[i] != (i | 0xabcdef01ull << 32);
	EXPECT_EQ(0, bad) TH_LOG("out[0] = 0x%llx", (unsigned long long)out[0]);
	caller_free(&c);

	ASSERT_EQ(0, caller_start(t, &c, e, CALLERS, DRM_MEGPU_SYSCALL_ADD,
				  0xffffffff, 7));
	ASSERT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	out = c.out->map;
	for (i = 0, bad = 0; i < CALLERS; i++)
		bad += out[i] != i + 0xffffffffull + 7;
	EXPECT_EQ(0, bad);
	caller_free(&c);

	/* an unknown kernel op answers -EOPNOTSUPP */
	ASSERT_EQ(0, caller_start(t, &c, e, 3, 0x42, 0, 0));
	ASSERT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	EXPECT_EQ((uint64_t)-EOPNOTSUPP, ((uint64_t *)c.out->map)[2]);
	caller_free(&c);

	/*
	 * The batching the design promises: a wave publishes every slot it
	 * claimed with one interrupt, and the handler answers every ACTIVE
	 * slot, so an interrupt serves up to a mailbox of calls, and a wave
	 * interrupts once per batch of claims (51 for 403 calls in 27 waves
	 * and 8 slots, measured). Allow twice one per wave and one per
	 * mailbox-full, never one per call.
	 */
	irqs = sc_counter(t, "irqs");
	ASSERT_LE(0, irqs0);
	ASSERT_LE(0, irqs);
	TH_LOG("%lld interrupts for %d calls, %llu slots", irqs - irqs0,
	       2 * CALLERS + 3, (unsigned long long)slots);
	EXPECT_GE(2 * (2 * ((CALLERS + 15) / 16) + 1 +
		       (2 * CALLERS + 3 + slots - 1) / slots),
		  (uint64_t)(irqs - irqs0));
	EXPECT_GT(2 * CALLERS + 3, irqs - irqs0);
}

/* The mailboxes debugfs "syscalls" lists: those a scan looks at. */
static int listed_mailboxes(struct mt *t)
{
	char *text = mt_debugfs(t, "syscalls"), *p;
	int n = 0;

	if (!text)
		return -1;
	for (p = text; (p = strstr(p, "mailbox ctx")); p++)
		n++;
	free(text);
	return n;
}

#define IDLE_CLIENTS 256

/*
 * A new file's mailbox: every slot FREE (the device takes only FREE
 * slots), as debugfs shows it while a job of the file is in a ring.
 */
TEST_F(mb, slots_start_free)
{
	struct mt *t = &self->t, c;
	char *text, *line, want[64];
	struct megpu_bo *bo, *gate;
	unsigned int n = 0, bad = 0, i;
	uint64_t slots = 0;
	struct mt_job j;
	char *p, *end;

	if (mb_engine(t) < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(0, mt_open_client(t, &c));
	ASSERT_EQ(0, megpu_get_param(&c.gpu, DRM_MEGPU_PARAM_MAILBOX_SLOTS,
				     &slots));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(&c, &j, 0, bo, 0, 1, gate, NULL, 0, 0));
	snprintf(want, sizeof(want), "mailbox ctx %u slots %llu:", c.ctx,
		 (unsigned long long)slots);
	/* listed once the scheduler put the job in its ring */
	for (i = 0, text = NULL, line = NULL; !line && i < 200; i++) {
		free(text);
		usleep(i ? 10000 : 0);
		text = mt_debugfs(t, "syscalls");
		ASSERT_NE(NULL, text);
		line = strstr(text, want);
	}
	EXPECT_NE(NULL, line) TH_LOG("no \"%s\" in debugfs syscalls", want);
	if (line) {
		p = line + strlen(want);
		for (end = strchr(p, '\n'); p && *p == ' ' && p < end; n++)
			bad += strtoul(p, &p, 10) != 0;
		EXPECT_EQ(slots, n);
		EXPECT_EQ(0, bad) TH_LOG("%.*s", (int)(end - line), line);
	}
	free(text);
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(t)));
	megpu_bo_free(gate);
	megpu_bo_free(bo);
	mt_close(&c);
}

/*
 * CALLERS work-items on engine @e ECHO through the kernel; every answer
 * right, and the SYSCALL interrupts meanwhile read at most two mailboxes
 * each (the caller's and one other engine's job's).
 */
static void echo_scans_few(struct __test_metadata *_metadata, struct mt *t,
			   int e)
{
	long long irqs0, scanned0, irqs, scanned;
	unsigned int i, bad = 0;
	struct caller c;
	uint64_t *out;

	irqs0 = sc_counter(t, "irqs");
	scanned0 = sc_counter(t, "mailboxes_scanned");
	ASSERT_LE(0, scanned0)
		TH_LOG("no mailboxes_scanned in debugfs syscalls");
	ASSERT_EQ(0, caller_start(t, &c, e, CALLERS, DRM_MEGPU_SYSCALL_ECHO,
				  0x5ca7, 0));
	ASSERT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	out = c.out->map;
	for (i = 0; i < CALLERS; i++)
		bad += out[i] != (i | 0x5ca7ull << 32);
	EXPECT_EQ(0, bad);
	caller_free(&c);
	irqs = sc_counter(t, "irqs");
	scanned = sc_counter(t, "mailboxes_scanned");
	EXPECT_LT(irqs0, irqs);
	EXPECT_GE(2 * (irqs - irqs0), scanned - scanned0)
		TH_LOG("%lld scans looked at %lld mailboxes", irqs - irqs0,
		       scanned - scanned0);
}

/*
 * A SYSCALL interrupt scans the mailboxes of files with a job in a ring
 * only (seed 003 with many users): the idle files one user opens, each
 * with its mailbox, cost another user's calls nothing. Idle, no mailbox
 * is listed; the scans of a caller's job looked at one or two each.
 */
TEST_F(mb, idle_files_are_not_scanned)
{
	struct mt *t = &self->t, *idle;
	int e = mb_engine(t), listed;
	unsigned int i;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	idle = calloc(IDLE_CLIENTS, sizeof(*idle));
	ASSERT_NE(NULL, idle);
	for (i = 0; i < IDLE_CLIENTS; i++)
		ASSERT_EQ(0, mt_open_client(t, &idle[i]));
	listed = listed_mailboxes(t);
	EXPECT_GT(2, listed)
		TH_LOG("%d mailboxes listed with %d idle files open", listed,
		       IDLE_CLIENTS + 1);
	echo_scans_few(_metadata, t, e);

	for (i = 0; i < IDLE_CLIENTS; i++)
		mt_close(&idle[i]);
	free(idle);
}

#define QUEUED_CLIENTS 16

/*
 * Files whose jobs wait in a ring behind a gated job cannot have called:
 * a SYSCALL interrupt reads the mailbox of the job each engine runs, not
 * of every file with a job in a ring, so however many files one user
 * keeps queued, a scan (IRQs off) reads at most one mailbox per engine.
 */
TEST_F(mb, queued_files_are_not_scanned)
{
	struct mt *t = &self->t, *queued;
	int e = mb_engine(t), other;
	struct megpu_bo **bo, *gate;
	struct mt_job *j;
	unsigned int i;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	other = mt_engine_for(t, MEGPU_PKT_WRITE_DATA, e);
	if (other < 0)
		SKIP(return, "needs a second engine taking WRITE_DATA");
	queued = calloc(QUEUED_CLIENTS, sizeof(*queued));
	j = calloc(QUEUED_CLIENTS, sizeof(*j));
	bo = calloc(QUEUED_CLIENTS, sizeof(*bo));
	ASSERT_NE(NULL, queued);
	ASSERT_NE(NULL, j);
	ASSERT_NE(NULL, bo);
	/* the first holds the other engine; the rest wait in its ring */
	for (i = 0; i < QUEUED_CLIENTS; i++) {
		ASSERT_EQ(0, mt_open_client(t, &queued[i]));
		if (!i)
			ASSERT_EQ(0, mt_bo(&queued[0].gpu, 4096, 0, &gate));
		ASSERT_EQ(0, mt_bo(&queued[i].gpu, 4096, 0, &bo[i]));
		ASSERT_EQ(0, mt_write_job(&queued[i], &j[i], other, bo[i], 0,
					  i + 1, i ? NULL : gate, NULL, 0,
					  DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	}
	for (i = 0; listed_mailboxes(t) < QUEUED_CLIENTS && i < 200; i++)
		usleep(10000);
	EXPECT_LE(QUEUED_CLIENTS, listed_mailboxes(t));
	/* the caller's and the gated job's, not the queued files' */
	echo_scans_few(_metadata, t, e);

	mt_gate_open(gate);
	for (i = 0; i < QUEUED_CLIENTS; i++) {
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(t)));
		EXPECT_EQ(i + 1, mt_u32(bo[i])[0]);
		megpu_bo_free(bo[i]);
	}
	megpu_bo_free(gate);
	for (i = 0; i < QUEUED_CLIENTS; i++)
		mt_close(&queued[i]);
	free(bo);
	free(j);
	free(queued);
}

/*
 * Waves parked on a user op nobody serves; the client closes: its calls
 * are answered -EPIPE and its job ends; another client works.
 */
TEST_F(mb, close_answers_parked_waves)
{
	struct mt *t = &self->t;
	int e = mb_engine(t);
	struct megpu_bo *probe;
	struct caller c;
	struct mt a;
	int sync_file;
	long long orphans0;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	orphans0 = sc_counter(t, "orphans");
	ASSERT_EQ(0, mt_open_client(t, &a));
	ASSERT_EQ(0, caller_start(&a, &c, e, 40, DRM_MEGPU_SYSCALL_USER, 1, 2));
	ASSERT_EQ(0, megpu_syncobj_export(&a.gpu, c.j.sync, 0, &sync_file));
	usleep(100000);
	EXPECT_TRUE(mt_pending(&a.gpu, c.j.sync, 0));
	mt_job_free(&c.j);
	caller_free(&c);	/* the job keeps its BOs */
	mt_close(&a);
	/* the job ends well before a timeout would stop it */
	EXPECT_EQ(0, mt_sync_file_wait(sync_file, t->timeout_ms / 2));
	EXPECT_EQ(0, megpu_sync_file_status(sync_file));
	close(sync_file);
	EXPECT_LE(orphans0 + 40, sc_counter(t, "orphans"));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &probe));
	EXPECT_EQ(0, mt_probe_engine(t, e, probe, 0, 0x600d));
	megpu_bo_free(probe);
}

/* Calls nobody answers: the job times out, its slots are FREE again. */
TEST_F_TIMEOUT(mb, unanswered_calls_time_out, 60)
{
	struct mt *t = &self->t;
	int e = mb_engine(t);
	struct caller c;
	struct mt a;
	long long reclaimed0;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	reclaimed0 = sc_counter(t, "reclaimed");
	ASSERT_EQ(0, mt_open_client(t, &a));
	ASSERT_EQ(0, caller_start(&a, &c, e, 40, DRM_MEGPU_SYSCALL_USER, 1, 2));
	EXPECT_EQ(-ETIMEDOUT, mt_job_finish(&c.j, mt_job_ns(t)));
	EXPECT_LT(reclaimed0, sc_counter(t, "reclaimed"));
	caller_free(&c);
	mt_close(&a);
	/* the engine and the mailboxes work for the next client */
	ASSERT_EQ(0, caller_start(t, &c, e, 40, DRM_MEGPU_SYSCALL_ECHO, 5, 0));
	EXPECT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	EXPECT_EQ(39 | 5ull << 32, ((uint64_t *)c.out->map)[39]);
	caller_free(&c);
}

/* A second engine that runs wave programs, other than @not, or -1. */
static int mb_other_engine(struct mt *t, int not)
{
	unsigned int e;

	for (e = 0; e < t->engines; e++)
		if ((int)e != not && (mt_type(t, e) == MEGPU_ENGINE_GFX ||
				      mt_type(t, e) == MEGPU_ENGINE_COMPUTE))
			return e;
	return -1;
}

#define SHARED_CALLERS 256
#define SHARED_ROUNDS 6
/*
 * The negative control stops at the first round that shows the race; in
 * some boots the two engines overlap in few rounds (6 rounds missed it in
 * one boot of five), so it may take many more.
 */
#define SHARED_ROUNDS_NONATOMIC 60

/*
 * Two engines' waves race for the same file's few slots (a real
 * compare-and-swap on each): every call is served once, to its caller.
 * Booted with the device's x-wave-nonatomic (megpu_test.nonatomic=1), the
 * slot claim is a plain read and write: the same test must see a call
 * lost or answered to the wrong caller (within SHARED_ROUNDS_NONATOMIC).
 */
TEST_F_TIMEOUT(mb, two_engines_share_the_slots, 120)
{
	bool nonatomic = megpu_test_cmdline("nonatomic", 0);
	unsigned int rounds = nonatomic ? SHARED_ROUNDS_NONATOMIC :
					  SHARED_ROUNDS;
	struct mt *t = &self->t;
	int e1 = mb_engine(t), e2 = mb_other_engine(t, e1);
	unsigned int round, i, k, bad = 0, failed = 0;
	struct caller c[2];

	if (e1 < 0 || e2 < 0)
		SKIP(return, "needs two engines that run wave programs");
	for (round = 0; round < rounds; round++) {
		for (k = 0; k < 2; k++)
			ASSERT_EQ(0, caller_start(t, &c[k], k ? e2 : e1,
						  SHARED_CALLERS,
						  DRM_MEGPU_SYSCALL_ECHO, k + 1,
						  0));
		for (k = 0; k < 2; k++) {
			uint64_t *out = c[k].out->map;

			failed += mt_job_finish(&c[k].j, mt_job_ns(t)) != 0;
			for (i = 0; i < SHARED_CALLERS; i++)
				bad += out[i] != (i | (uint64_t)(k + 1) << 32);
			caller_free(&c[k]);
		}
		if (nonatomic && (bad || failed))
			break;
	}
	TH_LOG("%u rounds: %u wrong results, %u failed jobs%s", round,
	       bad, failed, nonatomic ? " (non-atomic slot claims)" : "");
	if (nonatomic) {
		EXPECT_LT(0, bad + failed);
	} else {
		EXPECT_EQ(0, bad);
		EXPECT_EQ(0, failed);
	}
}

/*
 * The seed's far fewer mailboxes than work-items: a file opened with 4
 * slots (module parameter mailbox_slots), 64 callers, each answer right
 * and its own (ECHO of the caller's id), and callers had to retry.
 */
TEST_F(mb, sixty_four_callers_on_four_slots)
{
	struct mt *t = &self->t;
	int e = mb_engine(t);
	long long retries0;
	uint64_t slots = 0, *out;
	unsigned int i, bad = 0;
	struct caller c;
	char *old;
	struct mt a;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	old = mt_slurp(MT_PARAM_DIR "mailbox_slots");
	ASSERT_NE(NULL, old);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "mailbox_slots", "4"));
	ASSERT_EQ(0, mt_open_client(t, &a));
	mt_write_file(MT_PARAM_DIR "mailbox_slots", old);
	free(old);
	ASSERT_EQ(0, megpu_get_param(&a.gpu, DRM_MEGPU_PARAM_MAILBOX_SLOTS,
				     &slots));
	ASSERT_EQ(4, slots);
	retries0 = sc_counter(t, "retry_spins");
	ASSERT_EQ(0, caller_start(&a, &c, e, 64, DRM_MEGPU_SYSCALL_ECHO, 64,
				  0));
	ASSERT_EQ(0, mt_job_finish(&c.j, mt_job_ns(t)));
	out = c.out->map;
	for (i = 0; i < 64; i++)
		bad += out[i] != (i | 64ull << 32);
	EXPECT_EQ(0, bad);
	EXPECT_LT(retries0, sc_counter(t, "retry_spins"));
	caller_free(&c);
	mt_close(&a);
}

/*
 * Acquisition priority (notes-003 row 7): 16 waves of 4 work-items on a
 * 4-slot file; the waves of groups 0, 3, 4, 7, 8, ... (bit 0 of g ^ g >> 1
 * clear: as many early as late ones) call with syscall.hi when @hi is
 * "hi". After its call each work-item takes a ticket (an atomic add), so
 * the tickets give the order in which calls were served; ECHO returns
 * (global id, hi flag). out[2i] = result, out[2i + 1] = ticket; user[0]
 * out, user[1] the ticket counter.
 */
static const char prio_src[] =
	"	s2r	r1, group_id_x\n"
	"	shr	r2, r1, 1\n"
	"	xor	r2, r2, r1\n"
	"	and	r2, r2, 1\n"
	"	xor	r3, r2, 1\n"
	"	s2r	r5, global_id\n"
	"	li	r6, 0\n"
	"	if	r3\n"
	"	syscall%s	r4, %u, r5, r3, r6\n"
	"	else\n"
	"	syscall	r4, %u, r5, r3, r6\n"
	"	endif\n"
	"	ldarg	r7, 8\n"
	"	li	r10, 1\n"
	"	atomadd32	r9, [r7], r10\n"
	"	ldarg	r7, 0\n"
	"	shl	r8, r5, 4\n"
	"	add	r7, r7, r8\n"
	"	st64	[r7], r4\n"
	"	st64	[r7+8], r9\n"
	"	end\n";

#define PRIO_CALLERS 64

/* One run; the average tickets of hi and other calls; 0 or -errno. */
static int prio_run(struct mt *t, struct mt *a, int engine, bool hi,
		    double *hi_wait, double *lo_wait)
{
	struct megpu_pargs pa = { 0 };
	struct megpu_bo *code = NULL, *out = NULL, *bos[2];
	unsigned int i, sum[2] = { 0, 0 }, seen[2] = { 0, 0 };
	uint64_t pva, tickets = 0, *o;
	struct megpu_prog prog;
	char src[1024], err[128];
	struct megpu_cs cs;
	struct mt_job j;
	int ret;

	snprintf(src, sizeof(src), prio_src, hi ? ".hi" : "",
		 DRM_MEGPU_SYSCALL_ECHO, DRM_MEGPU_SYSCALL_ECHO);
	ret = megpu_asm(src, &prog, err, sizeof(err));
	if (ret)
		return ret;
	ret = mt_bo(&a->gpu, 4096 + prog.len * 8, 0, &code) ?:
	      mt_bo(&a->gpu, 4096, 0, &out);
	if (ret)
		goto out;
	memset(out->map, 0xee, PRIO_CALLERS * 16);
	memset((uint8_t *)out->map + 2048, 0, 8);
	megpu_prog_store(&prog, (uint8_t *)code->map + 4096);
	pa.program = code->va + 4096;
	pa.len = prog.len;
	pa.user[0] = out->va;
	pa.user[1] = out->va + 2048;
	ret = megpu_pargs_write(code, 0, &pa, &pva);
	if (ret)
		goto out;
	megpu_cs_init(&cs);
	megpu_cs_dispatch_program(&cs, pva, PRIO_CALLERS, 1, 4, 1);
	bos[0] = code;
	bos[1] = out;
	ret = mt_submit(&a->gpu, &j, engine, &cs, bos, 2, 0);
	megpu_cs_fini(&cs);
	if (ret)
		goto out;
	ret = mt_job_finish(&j, mt_job_ns(t));
	if (ret)
		goto out;
	o = out->map;
	for (i = 0; i < PRIO_CALLERS; i++) {
		unsigned int h = !((i / 4 ^ i / 8) & 1);

		if (o[2 * i] != (i | (uint64_t)h << 32) ||
		    o[2 * i + 1] >= PRIO_CALLERS ||
		    (tickets & 1ull << o[2 * i + 1])) {
			ret = -EBADMSG;
			goto out;
		}
		tickets |= 1ull << o[2 * i + 1];
		sum[h] += o[2 * i + 1];
		seen[h]++;
	}
	*hi_wait = (double)sum[1] / seen[1];
	*lo_wait = (double)sum[0] / seen[0];
out:
	megpu_bo_free(out);
	megpu_bo_free(code);
	megpu_prog_fini(&prog);
	return ret;
}

/*
 * 64 callers on 4 slots, answered by the kernel as they come: with
 * syscall.hi the hi half is served first (average ticket about 16 vs
 * 48); without it both halves are served alike (round-robin).
 */
TEST_F(mb, priority_calls_are_served_first)
{
	struct mt *t = &self->t;
	int e = mb_engine(t);
	double hi, lo;
	char *old;
	struct mt a;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	old = mt_slurp(MT_PARAM_DIR "mailbox_slots");
	ASSERT_NE(NULL, old);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "mailbox_slots", "4"));
	ASSERT_EQ(0, mt_open_client(t, &a));
	mt_write_file(MT_PARAM_DIR "mailbox_slots", old);
	free(old);

	ASSERT_EQ(0, prio_run(t, &a, e, false, &hi, &lo));
	TH_LOG("control: average ticket of hi calls %.1f, others %.1f", hi, lo);
	EXPECT_GT(16.0, hi - lo);
	EXPECT_GT(16.0, lo - hi);
	ASSERT_EQ(0, prio_run(t, &a, e, true, &hi, &lo));
	TH_LOG("priority: average ticket of hi calls %.1f, others %.1f", hi,
	       lo);
	EXPECT_LE(hi + 16.0, lo);
	mt_close(&a);
}

TEST_HARNESS_MAIN
