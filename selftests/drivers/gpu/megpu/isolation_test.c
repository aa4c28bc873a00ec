// SPDX-License-Identifier: GPL-2.0
/*
 * Clients are isolated: client B's jobs cannot read or write client A's
 * buffer through A's GPU address, which is not mapped in B's address
 * space. B's jobs fault (-EFAULT) and A's data stays intact.
 *
 * And for every mechanism, B (another open of the render node) can
 * neither wait on, signal, read nor write what A owns: syncobjs,
 * semaphores (A's own and the driver's pool), BOs and their resource
 * tracking (handles, mmap offsets, flink names), task queues, multi-GPU
 * summed semaphores and parked waves. Each case asserts the errno, and
 * a control shows that A itself can do what B cannot.
 */

#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define SECRET 0x5ec2e7u
#define PAD_BYTES (8 << 20)	/* pushes A's secret past B's few BOs */

FIXTURE(two) {
	struct mt a, b;
	struct megpu_bo *pad, *secret;	/* A's */
	struct megpu_bo *mine;		/* B's */
};

FIXTURE_SETUP(two)
{
	unsigned int i;

	ASSERT_EQ(0, mt_open(&self->a));
	ASSERT_EQ(0, mt_open_client(&self->a, &self->b));
	ASSERT_EQ(0, megpu_bo_new(&self->a.gpu, PAD_BYTES, 0, &self->pad));
	ASSERT_EQ(0, mt_bo(&self->a.gpu, 4096, 0, &self->secret));
	for (i = 0; i < 1024; i++)
		mt_u32(self->secret)[i] = SECRET + i;
	ASSERT_EQ(0, mt_bo(&self->b.gpu, 4096, 0, &self->mine));
	/* The premise: A's secret address is nothing of B's. */
	ASSERT_TRUE(self->mine->va + self->mine->size <= self->secret->va ||
		    self->secret->va + self->secret->size <= self->mine->va);
}

FIXTURE_TEARDOWN(two)
{
	megpu_bo_free(self->mine);
	megpu_bo_free(self->secret);
	megpu_bo_free(self->pad);
	mt_close(&self->b);
	mt_close(&self->a);
}

static void expect_intact(struct __test_metadata *_metadata,
			  struct megpu_bo *secret)
{
	unsigned int i, bad = 0;

	for (i = 0; i < 1024; i++)
		bad += mt_u32(secret)[i] != SECRET + i;
	EXPECT_EQ(0, bad);
}

TEST_F(two, write_through_guessed_address_faults)
{
	struct megpu_cs cs;
	unsigned int e;

	megpu_cs_init(&cs);
	for (e = 0; e < self->b.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, self->secret->va + 16, 0xbad);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->b, e));
	}
	if (mt_engine_for(&self->b, MEGPU_PKT_FILL, -1) >= 0) {
		megpu_cs_reset(&cs);
		megpu_cs_fill(&cs, self->secret->va, 4096, 0xbad);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, mt_engine_for(&self->b,
					  MEGPU_PKT_FILL, -1), &cs,
					  &self->mine, 1));
	}
	megpu_cs_fini(&cs);
	expect_intact(_metadata, self->secret);
}

TEST_F(two, read_through_guessed_address_faults)
{
	int e = mt_engine_for(&self->b, MEGPU_PKT_COPY, -1);
	struct megpu_cs cs;
	unsigned int i, leaked = 0;

	if (e < 0)
		SKIP(return, "no engine accepts COPY");
	megpu_cs_init(&cs);
	megpu_cs_copy(&cs, self->secret->va, self->mine->va, 4096);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
	megpu_cs_fini(&cs);
	for (i = 0; i < 1024; i++)
		leaked += mt_u32(self->mine)[i] == SECRET + i;
	EXPECT_EQ(0, leaked);
	expect_intact(_metadata, self->secret);
}

/* A's handle numbers mean nothing in B's file. */
TEST_F(two, handles_are_per_client)
{
	uint64_t size;

	if (self->secret->handle == self->mine->handle)
		SKIP(return, "B happens to own the same handle number");
	EXPECT_EQ(-ENOENT, megpu_bo_info(&self->b.gpu, self->secret->handle,
					 &size, NULL));
}

/* After B's faults, A's own jobs still reach its buffer. */
TEST_F(two, owner_still_works)
{
	struct megpu_cs cs;

	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, self->secret->va + 16, 0xbad);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, 0, &cs, &self->mine, 1));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_probe_engine(&self->a, 0, self->secret, 4092, 77));
}

/* B owns no handle numbered @handle (so it names nothing of B's). */
static bool b_lacks(struct mt *b, uint32_t handle)
{
	uint64_t size;

	return megpu_bo_info(&b->gpu, handle, &size, NULL) == -ENOENT;
}

/*
 * A new BO of A's whose handle number B does not own, so that B naming
 * it names nothing of its own; the ones B does own go to @spare (up to
 * 8, freed by the caller). NULL if none came up.
 */
static struct megpu_bo *a_foreign_bo(struct mt *a, struct mt *b,
				     uint64_t size, struct megpu_bo **spare)
{
	struct megpu_bo *bo;
	unsigned int i;

	for (i = 0; i < 8; i++) {
		if (mt_bo(&a->gpu, size, 0, &bo))
			return NULL;
		if (b_lacks(b, bo->handle))
			return bo;
		spare[i] = bo;
	}
	return NULL;
}

static void free_spares(struct megpu_bo **spare)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		megpu_bo_free(spare[i]);
}

/* Submit @cs on B's engine @e with B's BO, in-syncs and out-sync given. */
static int b_submit(struct mt *b, unsigned int e, struct megpu_bo *mine,
		    const struct megpu_cs *cs, uint32_t in, uint32_t out)
{
	struct megpu_job job;
	int ret;

	megpu_job_init(&job, e);
	ret = megpu_job_add_bo(&job, mine, DRM_MEGPU_BO_READ |
			       DRM_MEGPU_BO_WRITE);
	if (!ret && in)
		ret = megpu_job_wait_sync(&job, in, 0);
	if (!ret && out)
		megpu_job_signal_sync(&job, out, 0);
	ret = ret ?: megpu_job_run(&b->gpu, &job, cs);
	megpu_job_fini(&job);
	return ret;
}

/*
 * Syncobjs: B can neither wait on A's syncobj (in-sync, SYNCOBJ_WAIT)
 * nor signal it (out-sync, SYNCOBJ_SIGNAL, export/import): handles are
 * per file. A's syncobj stays unsignalled until A signals it.
 */
TEST_F(two, syncobjs_of_another_client)
{
	uint32_t theirs, mine_sync, h;
	struct drm_syncobj_handle args;
	struct megpu_cs cs;
	int64_t now = megpu_now_ns();

	uint32_t spare = 0;

	/* B's own syncobj first; A's is one whose number B does not own */
	ASSERT_EQ(0, megpu_syncobj_new(&self->b.gpu, false, &mine_sync));
	ASSERT_EQ(0, megpu_syncobj_new(&self->a.gpu, false, &theirs));
	if (theirs == mine_sync) {
		spare = theirs;
		ASSERT_EQ(0, megpu_syncobj_new(&self->a.gpu, false, &theirs));
	}
	ASSERT_NE(theirs, mine_sync);
	h = theirs;
	/* waiting */
	EXPECT_EQ(-ENOENT, drmSyncobjWait(self->b.gpu.fd, &h, 1, now, 0,
					  NULL));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, self->mine->va, 1);
	EXPECT_EQ(-ENOENT, b_submit(&self->b, 0, self->mine, &cs, theirs, 0));
	/* signalling */
	EXPECT_EQ(-ENOENT, b_submit(&self->b, 0, self->mine, &cs, 0, theirs));
	EXPECT_EQ(-1, drmSyncobjSignal(self->b.gpu.fd, &h, 1));
	EXPECT_EQ(ENOENT, errno);
	memset(&args, 0, sizeof(args));
	args.handle = theirs;
	/* (the DRM core says -EINVAL for an unknown handle here) */
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd,
			       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args));
	EXPECT_EQ(EINVAL, errno);
	/* the control: B's own syncobj works in both roles */
	EXPECT_EQ(0, b_submit(&self->b, 0, self->mine, &cs, 0, mine_sync));
	EXPECT_EQ(0, megpu_syncobj_wait(&self->b.gpu, mine_sync, 0,
					mt_job_ns(&self->b)));
	megpu_cs_fini(&cs);
	/* A's is untouched, and A can still signal it */
	EXPECT_TRUE(mt_pending(&self->a.gpu, theirs, 0));
	EXPECT_EQ(0, drmSyncobjSignal(self->a.gpu.fd, &theirs, 1));
	EXPECT_FALSE(mt_pending(&self->a.gpu, theirs, 0));
	megpu_syncobj_free(&self->b.gpu, mine_sync);
	megpu_syncobj_free(&self->a.gpu, theirs);
	if (spare)
		megpu_syncobj_free(&self->a.gpu, spare);
}

/*
 * Semaphores: B's jobs can neither SIGNAL nor WAIT on A's semaphore
 * (in A's BO) nor on the driver's semaphore pool (the bus address a
 * frame SIGNALs): both fault, A's waiting job stays blocked until A
 * releases it, and the semaphore keeps A's value.
 */
TEST_F(two, semaphores_of_another_client)
{
	uint64_t *sem = (uint64_t *)self->secret->map + 64;
	uint64_t sem_va = self->secret->va + 64 * 8;
	uint64_t pool = 0;
	struct megpu_cs cs;
	struct mt_job j;
	char *rings, *p;
	unsigned int e;
	/* B's jobs run beside A's blocked one */
	MT_NEED_ENGINES(&self->a, 2);
	*sem = 0;
	/* A's job waits for its semaphore to reach 1 */
	megpu_cs_init(&cs);
	megpu_cs_wait(&cs, sem_va, 1);
	megpu_cs_write32(&cs, self->secret->va + 65 * 8, 0x600d);
	ASSERT_EQ(0, mt_submit(&self->a.gpu, &j, 0, &cs, &self->secret, 1,
			       0));
	e = (unsigned int)mt_other_engine(&self->b, 0);
	/* B signals it: faults, A stays blocked */
	megpu_cs_reset(&cs);
	megpu_cs_signal(&cs, sem_va, 1);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
	EXPECT_EQ(0, *sem);
	EXPECT_TRUE(mt_pending(&self->a.gpu, j.sync, 0));
	/* B waits on it for a value it already has: faults too (no read) */
	megpu_cs_reset(&cs);
	megpu_cs_wait(&cs, sem_va, 0);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
	/* the driver's pool, from a frame of A's job on the rings */
	rings = mt_debugfs(&self->a, "rings");
	p = rings ? strstr(rings, "SIGNAL addr=") : NULL;
	if (p)
		pool = strtoull(p + strlen("SIGNAL addr="), NULL, 0);
	free(rings);
	if (pool && (pool + 8 <= self->mine->va ||
		     pool >= self->mine->va + self->mine->size)) {
		megpu_cs_reset(&cs);
		megpu_cs_signal(&cs, pool, ~0ull >> 1);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
		megpu_cs_reset(&cs);
		megpu_cs_wait(&cs, pool, 0);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
	} else {
		TH_LOG("no pool address outside B's BO: pool cases not run");
	}
	EXPECT_TRUE(mt_pending(&self->a.gpu, j.sync, 0));
	/* A releases its own job */
	__atomic_store_n(sem, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->a)));
	EXPECT_EQ(0x600d, mt_u32(self->secret)[130]);
	megpu_cs_fini(&cs);
	mt_u32(self->secret)[128] = SECRET + 128;
	mt_u32(self->secret)[129] = SECRET + 129;
	mt_u32(self->secret)[130] = SECRET + 130;
	expect_intact(_metadata, self->secret);
}

/*
 * BOs and their resource tracking: B cannot name A's BO in a job (so
 * it cannot join its readers or writers), wait on it, map it through
 * A's mmap offset, or reach it by a flink name (render nodes have none).
 */
TEST_F(two, resources_of_another_client)
{
	struct drm_megpu_gem_mmap_offset off = { 0 };
	struct drm_megpu_gem_wait w = { 0 };
	struct drm_gem_flink flink = { 0 };
	struct drm_gem_open open_args = { 0 };
	struct megpu_bo *spare[8] = { 0 }, *theirs, fake;
	struct megpu_job job;
	struct megpu_cs cs;
	void *map;

	/* B's job, its IB uploaded (a BO of B's) */
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, self->mine->va, 1);
	megpu_job_init(&job, 0);
	ASSERT_EQ(0, megpu_job_upload(&self->b.gpu, &job, &cs));
	theirs = a_foreign_bo(&self->a, &self->b, 4096, spare);
	ASSERT_NE(NULL, theirs);
	mt_u32(theirs)[0] = SECRET;
	/* B's job lists A's handle */
	fake = *theirs;
	fake.gpu = &self->b.gpu;
	ASSERT_EQ(0, megpu_job_add_bo(&job, &fake, DRM_MEGPU_BO_WRITE));
	EXPECT_EQ(-ENOENT, megpu_job_submit(&self->b.gpu, &job));
	megpu_job_fini(&job);
	megpu_cs_fini(&cs);
	/* waiting on it, mapping it */
	w.handle = theirs->handle;
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd, DRM_IOCTL_MEGPU_GEM_WAIT, &w));
	EXPECT_EQ(ENOENT, errno);
	off.handle = theirs->handle;
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET,
			       &off));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, drmIoctl(self->a.gpu.fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET,
			      &off));
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->b.gpu.fd, off.offset);
	EXPECT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EACCES, errno);
	if (map != MAP_FAILED)
		munmap(map, 4096);
	/* flink names: not on a render node, neither to give nor to take */
	flink.handle = theirs->handle;
	EXPECT_EQ(-1, drmIoctl(self->a.gpu.fd, DRM_IOCTL_GEM_FLINK, &flink));
	EXPECT_EQ(EACCES, errno);
	open_args.name = 1;
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd, DRM_IOCTL_GEM_OPEN,
			       &open_args));
	EXPECT_EQ(EACCES, errno);
	/* the control: A's own job with the BO runs */
	EXPECT_EQ(SECRET, mt_u32(theirs)[0]);
	EXPECT_EQ(0, mt_probe_engine(&self->a, 0, theirs, 4092, 77));
	megpu_bo_free(theirs);
	free_spares(spare);
}

/*
 * Task queues: B cannot have A's queue checked (TASKQ_CHECK names a
 * BO by handle), and B's DEQUEUE at A's queue address faults where A's
 * own identical DEQUEUE runs. TASKQ_NOTIFY names no queue: B's only
 * wakes engines, and A's queue is unchanged by it.
 */
TEST_F(two, task_queues_of_another_client)
{
	const uint32_t slots = 16;
	struct megpu_bo *qbo, *alist, *blist, *bos[2], *spare[8] = { 0 };
	struct drm_megpu_taskq_check chk = { 0 };
	struct megpu_taskq q;
	uint64_t feat = 0, va = 0;
	struct megpu_cs cs;
	unsigned char *snap;
	int e;

	ASSERT_EQ(0, megpu_get_param(&self->a.gpu, DRM_MEGPU_PARAM_FEATURES,
				     &feat));
	e = mt_wave_engine(&self->a, -1);
	if (!(feat & MEGPU_CAP_TASKQ) || e < 0)
		SKIP(return, "no task queues or no engine running DEQUEUE");
	ASSERT_EQ(0, mt_bo(&self->a.gpu, 4096, 0, &alist));
	ASSERT_EQ(0, mt_bo(&self->b.gpu, 4096, 0, &blist));
	qbo = a_foreign_bo(&self->a, &self->b, 65536, spare);
	ASSERT_NE(NULL, qbo);
	ASSERT_EQ(0, megpu_taskq_check(&self->a.gpu, qbo, 0, slots, &va));
	ASSERT_EQ(0, megpu_taskq_init(&q, qbo->map, va, slots, 0, 0, 0));
	((uint64_t *)alist->map)[0] = va;
	((uint64_t *)blist->map)[0] = va;

	/* TASKQ_CHECK of A's handle from B */
	chk.handle = qbo->handle;
	chk.slots = slots;
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd, DRM_IOCTL_MEGPU_TASKQ_CHECK,
			       &chk));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, chk.va);
	snap = malloc(MEGPU_TQ_BYTES(slots));
	ASSERT_NE(NULL, snap);
	memcpy(snap, qbo->map, MEGPU_TQ_BYTES(slots));

	/* B's DEQUEUE at A's queue address */
	megpu_cs_init(&cs);
	megpu_cs_dequeue(&cs, blist->va, 1, 0, MEGPU_DEQ_ONCE);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &blist, 1));
	/* B's NOTIFY */
	EXPECT_EQ(0, megpu_taskq_wake(&self->b.gpu));
	EXPECT_EQ(0, memcmp(snap, qbo->map, MEGPU_TQ_BYTES(slots)));
	/* the control: A's own DEQUEUE of its empty queue ends cleanly */
	megpu_cs_reset(&cs);
	megpu_cs_dequeue(&cs, alist->va, 1, 0, MEGPU_DEQ_ONCE);
	bos[0] = qbo;
	bos[1] = alist;
	EXPECT_EQ(0, mt_run(&self->a, e, &cs, bos, 2));
	megpu_cs_fini(&cs);
	free(snap);
	megpu_bo_free(blist);
	megpu_bo_free(alist);
	megpu_bo_free(qbo);
	free_spares(spare);
}

/*
 * Multi-GPU summed semaphores (seed 000): B cannot query A's (MSEM_QUERY
 * names the BO by handle), and B's MSEM_SIGNAL / MSEM_WAIT at A's
 * address fault; A's slots keep their values.
 */
TEST_F(two, msems_of_another_client)
{
	struct megpu_bo *sbo, *spare[8] = { 0 };
	struct drm_megpu_msem_query mq = { 0 };
	uint32_t *slots;
	uint64_t va;
	uint64_t feat = 0;
	struct megpu_cs cs;
	uint32_t value;
	unsigned int i;

	ASSERT_EQ(0, megpu_get_param(&self->a.gpu, DRM_MEGPU_PARAM_FEATURES,
				     &feat));
	if (!(feat & MEGPU_CAP_MGPU))
		SKIP(return, "no multi-GPU packets");
	sbo = a_foreign_bo(&self->a, &self->b, 4096, spare);
	ASSERT_NE(NULL, sbo);
	slots = mt_u32(sbo) + 256;
	va = sbo->va + 256 * 4;
	slots[0] = 3;
	/* the control: A reads its own */
	ASSERT_EQ(0, megpu_msem_query(sbo, 256 * 4, 1, &value));
	ASSERT_EQ(3, value);
	mq.handle = sbo->handle;
	mq.mask = 1;
	mq.offset = 256 * 4;
	EXPECT_EQ(-1, drmIoctl(self->b.gpu.fd, DRM_IOCTL_MEGPU_MSEM_QUERY,
			       &mq));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, mq.value);
	megpu_cs_init(&cs);
	megpu_cs_msem_signal(&cs, va);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, 0, &cs, &self->mine, 1));
	megpu_cs_reset(&cs);
	megpu_cs_msem_wait(&cs, va, 1);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, 0, &cs, &self->mine, 1));
	megpu_cs_fini(&cs);
	EXPECT_EQ(3, slots[0]);
	for (i = 1; i < 8; i++)
		EXPECT_EQ(0, slots[i]);
	megpu_bo_free(sbo);
	free_spares(spare);
}

/* Calls op 0x142 once and stores the answer at user[0]. */
static const char one_user_call[] =
	"li r1, 5\n"
	"syscall r3, 0x142, r1, r0, r0\n"
	"ldarg r4, 0\n"
	"st64 [r4], r3\n"
	"end\n";

/*
 * Waves: with A's wave parked on a call for A's service, B sees no call
 * (SYSCALL_WAIT), cannot answer it and so restart the wave
 * (SYSCALL_RETURN: -ENOENT, whatever slot and caller it names), cannot
 * point an engine at a mailbox (SET_MAILBOX is a ring packet: in an IB
 * it faults), and the debugfs view of parked calls is read-only. A's
 * call is still there for A to answer.
 */
TEST_F(two, waves_of_another_client)
{
	struct drm_megpu_syscall c, cb;
	struct megpu_bo *out, *bos[3];
	char path[256], buf[8] = "1 1 1\n";
	uint64_t feat = 0, user[1];
	uint32_t nslots, s;
	struct megpu_cs cs;
	struct mt_prog p;
	struct stat st;
	struct mt_job j;
	int e, fd;

	ASSERT_EQ(0, megpu_get_param(&self->a.gpu, DRM_MEGPU_PARAM_FEATURES,
				     &feat));
	e = mt_wave_engine(&self->a, -1);
	if (!(feat & MEGPU_CAP_WAVES) || e < 0)
		SKIP(return, "the device runs no wave programs");
	ASSERT_EQ(0, megpu_mailbox_slots(&self->a.gpu, &nslots));
	ASSERT_EQ(0, mt_prog_load(&self->a.gpu, one_user_call, &p));
	ASSERT_EQ(0, mt_bo(&self->a.gpu, 4096, 0, &out));
	user[0] = out->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 1, 1, 64));
	ASSERT_EQ(0, mt_submit(&self->a.gpu, &j, e, &cs, bos,
			       mt_prog_bos(&p, bos, &out, 1),
			       DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	/* B waits in vain while A's call comes in */
	EXPECT_EQ(-ETIME, megpu_syscall_wait(&self->b.gpu, &cb, 1,
					     300000000));
	ASSERT_EQ(1, megpu_syscall_wait(&self->a.gpu, &c, 1,
					mt_job_ns(&self->a)));
	ASSERT_EQ(0x142, c.op);
	ASSERT_EQ(5, c.args[0]);
	/* B answers it: by its slot and caller, and by every slot */
	EXPECT_EQ(-ENOENT, megpu_syscall_return(&self->b.gpu, c.slot,
						c.caller, 666));
	for (s = 0; s < nslots; s++)
		EXPECT_EQ(-ENOENT, megpu_syscall_return(&self->b.gpu, s,
							c.caller, 666));
	EXPECT_EQ(-ETIME, megpu_syscall_wait(&self->b.gpu, &cb, 1, 0));
	/*
	 * B's IB points an engine at a mailbox: ring only, it faults (on
	 * another engine: A's parked wave holds this one)
	 */
	if (mt_other_engine(&self->b, e) >= 0) {
		megpu_cs_reset(&cs);
		megpu_cs_set_mailbox(&cs, self->mine->va, 1);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, mt_other_engine(&self->b,
								    e),
					  &cs, &self->mine, 1));
	}
	/* the debugfs view of the calls is not writable */
	if (!megpu_debugfs_path(&self->a.gpu, "syscalls", path,
				sizeof(path))) {
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0, st.st_mode & 0222);
		fd = open(path, O_WRONLY);
		if (fd >= 0) {	/* root may open it; writing still fails */
			EXPECT_GT(0, write(fd, buf, strlen(buf)));
			close(fd);
		}
	}
	EXPECT_TRUE(mt_pending(&self->a.gpu, j.sync, 0));
	/* A answers its own call */
	EXPECT_EQ(0, megpu_syscall_return(&self->a.gpu, c.slot, c.caller,
					  777));
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->a)));
	EXPECT_EQ(777, ((uint64_t *)out->map)[0]);
	megpu_cs_fini(&cs);
	megpu_bo_free(out);
	mt_prog_free(&p);
}

TEST_HARNESS_MAIN
