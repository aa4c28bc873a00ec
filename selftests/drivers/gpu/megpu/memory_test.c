// SPDX-License-Identifier: GPL-2.0
/*
 * GPU memory and the rest of the guest:
 *
 * - no GPU write reaches a page after it left a GPU address space. A job
 *   keeps filling a BO it did not list while its client closes the BO (or
 *   the whole file); pages another client allocates right after must not
 *   receive a single one of those writes, in either write mode;
 * - pinned memory is limited: an unprivileged client creating BOs in a
 *   loop ends with a clean -ENOSPC, and the guest keeps working; what the
 *   driver pins for each open file is charged too, and all the files of
 *   one user together are limited, so that other users still get theirs.
 */

#include <signal.h>
#include <sys/stat.h>
#include <xf86drm.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define PATTERN 0xfa11ed00u
#define X_BYTES (256 << 10)
#define FILLS 400		/* each fills all of X: ~100 MiB of writes */
#define FILL_DELAY_US 200	/* and waits first: the job runs >= 80 ms */
#define FRESH_BOS 64		/* the other client's: 16 MiB */
#define ROUNDS 3

FIXTURE(freed) {
	struct mt t;
	char old_mode[16];
};

FIXTURE_VARIANT(freed) {
	const char *mode;	/* debugfs write_mode */
	bool close_fd;		/* close the file instead of the BO */
};

FIXTURE_VARIANT_ADD(freed, relaxed_gem_close) { .mode = "relaxed" };
FIXTURE_VARIANT_ADD(freed, relaxed_close_fd) { "relaxed", true };
FIXTURE_VARIANT_ADD(freed, strict_gem_close) { .mode = "strict" };
FIXTURE_VARIANT_ADD(freed, strict_close_fd) { "strict", true };

static int set_write_mode(struct mt *t, const char *mode)
{
	char path[256];
	int ret = megpu_debugfs_path(&t->gpu, "write_mode", path,
				     sizeof(path));

	return ret ?: mt_write_file(path, mode);
}

FIXTURE_SETUP(freed)
{
	char *old;

	ASSERT_EQ(0, mt_open(&self->t));
	if (mt_engine_for(&self->t, MEGPU_PKT_FILL, -1) < 0)
		SKIP(return, "no engine accepts FILL");
	old = mt_debugfs(&self->t, "write_mode");
	ASSERT_NE(NULL, old);
	snprintf(self->old_mode, sizeof(self->old_mode), "%s", old);
	free(old);
	ASSERT_EQ(0, set_write_mode(&self->t, variant->mode));
}

FIXTURE_TEARDOWN(freed)
{
	if (self->old_mode[0])
		set_write_mode(&self->t, self->old_mode);
	mt_close(&self->t);
}

/* Words equal to PATTERN in the pages of @bos. */
static unsigned long count_pattern(struct megpu_bo **bos, unsigned int n)
{
	unsigned long hits = 0;
	unsigned int i;
	size_t w;

	for (i = 0; i < n; i++)
		for (w = 0; w < bos[i]->size / 4; w++)
			hits += mt_u32(bos[i])[w] == PATTERN;
	return hits;
}

TEST_F(freed, gpu_writes_never_reach_freed_pages)
{
	int e = mt_engine_for(&self->t, MEGPU_PKT_FILL, -1);
	struct megpu_bo *fresh[FRESH_BOS], *probe;
	unsigned long hits = 0;
	unsigned int round, i;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &probe));
	for (round = 0; round < ROUNDS; round++) {
		struct megpu_bo *x;
		struct megpu_cs cs;
		struct mt_job j;
		struct mt a;
		bool running;

		/* A: a job filling X, which the job does not list */
		ASSERT_EQ(0, mt_open_client(&self->t, &a));
		ASSERT_EQ(0, megpu_bo_new(&a.gpu, X_BYTES, 0, &x));
		megpu_cs_init(&cs);
		for (i = 0; i < FILLS; i++)
			ASSERT_EQ(0, megpu_cs_fill(&cs, x->va, X_BYTES, PATTERN));
		ASSERT_EQ(0, mt_delay_us(&self->t, e, FILL_DELAY_US));
		ASSERT_EQ(0, mt_submit(&a.gpu, &j, e, &cs, NULL, 0,
				       DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		megpu_cs_fini(&cs);
		usleep(15000);
		running = mt_pending(&a.gpu, j.sync, 0);
		ASSERT_EQ(0, mt_delay_us(&self->t, e, 0));

		/* X leaves A's address space while the job writes it */
		mt_job_free(&j);
		megpu_bo_free(x);
		if (variant->close_fd)
			mt_close(&a);

		/* B: fresh pages, which may be X's pages */
		for (i = 0; i < FRESH_BOS; i++) {
			ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, X_BYTES, 0,
						  &fresh[i]));
			ASSERT_EQ(0, megpu_bo_map(fresh[i]));
		}
		/* A's job is done once a later job on its engine is */
		EXPECT_EQ(0, mt_probe_engine(&self->t, e, probe, 0, round));
		EXPECT_EQ(0, megpu_flush(&self->t.gpu, NULL));
		hits += count_pattern(fresh, FRESH_BOS);
		for (i = 0; i < FRESH_BOS; i++)
			megpu_bo_free(fresh[i]);
		if (!variant->close_fd)
			mt_close(&a);
		/* the premise: X was closed under a running job */
		EXPECT_TRUE(running)
			TH_LOG("round %u: the job ended within 15 ms", round);
	}
	megpu_bo_free(probe);
	EXPECT_EQ(0, hits)
		TH_LOG("%lu words of a freed BO's GPU writes in fresh pages",
		       hits);
}

MT_FIXTURE(pin)

#define PIN_BO (32 << 20)
#define PIN_MAX_BOS 256		/* 8 GiB: more than any guest has */

/*
 * As uid 65534 on the render node: GEM_CREATE 32 MiB until it fails. It
 * must fail with -ENOSPC (the pinning limit), not run the guest out of
 * memory; then the guest still allocates memory, and the GPU still runs.
 * The child reports how far it got through a pipe.
 */
TEST_F(pin, unprivileged_loop_ends_at_the_limit)
{
	struct megpu_bo *bo;
	long got[2] = { 0, 0 };
	int pfd[2], status;
	pid_t pid;
	char *mem;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct megpu_bo *bos[PIN_MAX_BOS];
		long n = 0, err = 0;
		struct mt c;

		close(pfd[0]);
		if (mt_open_client(&self->t, &c) || setgid(65534) ||
		    setuid(65534))
			_exit(2);
		while (n < PIN_MAX_BOS) {
			err = megpu_bo_new(&c.gpu, PIN_BO, 0, &bos[n]);
			if (err)
				break;
			n++;
		}
		got[0] = n;
		got[1] = err;
		if (write(pfd[1], got, sizeof(got)) != sizeof(got))
			_exit(3);
		/* hold them while the parent checks the guest */
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ((ssize_t)sizeof(got), read(pfd[0], got, sizeof(got)));
	close(pfd[0]);
	TH_LOG("%ld BOs of 32 MiB, then %ld", got[0], got[1]);
	EXPECT_EQ(-ENOSPC, got[1]);
	EXPECT_LT(0, got[0]);

	/* with the child's BOs still pinned, the guest works */
	mem = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	EXPECT_NE(MAP_FAILED, mem);
	if (mem != MAP_FAILED) {
		memset(mem, 1, 64 << 20);
		munmap(mem, 64 << 20);
	}
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	EXPECT_EQ(0, mt_probe_engine(&self->t, 0, bo, 0, 0x600d));
	megpu_bo_free(bo);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* the child's charge went with its BOs */
	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, PIN_BO, 0, &bo));
	megpu_bo_free(bo);
}

/* A limit below one BO's size: that create fails, smaller ones work. */
TEST_F(pin, client_limit_is_a_module_parameter)
{
	struct megpu_bo *a, *b;
	char *old;

	old = mt_slurp(MT_PARAM_DIR "client_pinned_mb");
	ASSERT_NE(NULL, old);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "client_pinned_mb", "3"));
	EXPECT_EQ(0, megpu_bo_new(&self->t.gpu, 2 << 20, 0, &a));
	EXPECT_EQ(-ENOSPC, megpu_bo_new(&self->t.gpu, 2 << 20, 0, &b));
	megpu_bo_free(a);
	/* freeing gave the charge back */
	EXPECT_EQ(0, megpu_bo_new(&self->t.gpu, 2 << 20, 0, &b));
	megpu_bo_free(b);
	mt_write_file(MT_PARAM_DIR "client_pinned_mb", old);
	free(old);
}

#define PIN_OPEN_MAX 512

static uint64_t pinned_bytes(struct mt *t)
{
	long long v = mt_counter(&t->gpu, "pinned_bytes");

	return v < 0 ? 0 : v;
}

/*
 * Opening files is no way past pinned_mb: each open file's mailbox and
 * page tables are charged, so with the limit just above what is pinned
 * now, opening more files soon fails with -ENOMEM; closing them gives
 * the charge back.
 */
TEST_F(pin, open_files_are_charged)
{
	uint64_t base = pinned_bytes(&self->t), one;
	struct mt *cl = calloc(PIN_OPEN_MAX, sizeof(*cl));
	char *old, lim[32];
	int n, err = 0;

	ASSERT_NE(NULL, cl);
	ASSERT_EQ(0, mt_open_client(&self->t, &cl[0]));
	one = pinned_bytes(&self->t);
	EXPECT_LT(base, one)
		TH_LOG("an open file is charged nothing");
	old = mt_slurp(MT_PARAM_DIR "pinned_mb");
	ASSERT_NE(NULL, old);
	snprintf(lim, sizeof(lim), "%llu", (unsigned long long)(one >> 20) + 1);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "pinned_mb", lim));
	for (n = 1; n < PIN_OPEN_MAX; n++) {
		err = mt_open_client(&self->t, &cl[n]);
		if (err)
			break;
	}
	mt_write_file(MT_PARAM_DIR "pinned_mb", old);
	free(old);
	EXPECT_EQ(-ENOMEM, err)
		TH_LOG("%d files opened with pinned_mb %s", n, lim);
	while (n--)
		mt_close(&cl[n]);
	free(cl);
	EXPECT_EQ(base, pinned_bytes(&self->t));
}

#define IMPORT_BO (64 << 20)

/* What importing @fd into a new file of @t's device adds to pinned_bytes. */
static int import_charge(struct mt *t, int fd, uint64_t *charge)
{
	struct megpu_bo *imp;
	uint64_t before;
	struct mt c;
	int ret;

	ret = mt_open_client(t, &c);
	if (ret)
		return ret;
	before = pinned_bytes(t);
	ret = megpu_bo_import(&c.gpu, fd, &imp);
	if (!ret) {
		*charge = pinned_bytes(t) - before;
		megpu_bo_free(imp);
	}
	mt_close(&c);
	return ret;
}

/*
 * An import holds kernel memory of its own (its scatterlist, up to a
 * 32-byte entry a page, and its DMA mapping) for as long as the
 * importing file keeps it: that file is charged for it, or one BO
 * imported into many files would take the guest's memory for a
 * page-table charge each. A read-only export makes every import an
 * object of its own; a writable one gives back the same object, which
 * costs the importing file only its page tables (the same ones for two
 * BOs of one size, each the first of a new file, at the same address). The old driver charged both the
 * same; now the import is charged more, and all of it goes with it.
 */
TEST_F(pin, an_import_is_charged_its_scatterlist)
{
	uint64_t base, same = 0, alias = 0;
	struct megpu_bo *a, *b;
	int rw, ro;

	/* two BOs: a BO's first export decides every later export's mode */
	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, IMPORT_BO, 0, &a));
	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, IMPORT_BO, 0, &b));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->t.gpu.fd, a->handle,
					DRM_CLOEXEC | DRM_RDWR, &rw));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->t.gpu.fd, b->handle,
					DRM_CLOEXEC, &ro));
	base = pinned_bytes(&self->t);
	ASSERT_EQ(0, import_charge(&self->t, rw, &same));
	ASSERT_EQ(0, import_charge(&self->t, ro, &alias));
	TH_LOG("%d MiB: the same object %llu KiB, an import %llu KiB",
	       IMPORT_BO >> 20, (unsigned long long)same >> 10,
	       (unsigned long long)alias >> 10);
	EXPECT_LT(same, alias);
	/* and not its pages: those are the exporter's */
	EXPECT_GT(same + IMPORT_BO / 4, alias);
	EXPECT_EQ(base, pinned_bytes(&self->t));
	close(ro);
	close(rw);
	megpu_bo_free(b);
	megpu_bo_free(a);
}

#define USER_MB 40		/* user_pinned_mb for the test */
#define USER_BO (8 << 20)
#define USER_FILES 3
#define USER_BOS_MAX 16		/* a file: 128 MiB, above USER_MB */

/*
 * As @uid, open @files files of the render node and create USER_BO BOs
 * on each in turn until one fails: reports how many were made and the
 * last error through @fd, then holds them until killed (@hold).
 */
static void user_pin_child(const struct mt *t, uid_t uid, int files,
			   bool hold, int fd)
{
	static struct megpu_bo *bos[USER_FILES * USER_BOS_MAX];
	struct megpu gpu[USER_FILES];
	long got[2] = { 0, 0 };
	int f, n;

	if (setgid(uid) || setuid(uid))
		_exit(2);
	for (f = 0; f < files; f++) {
		got[1] = megpu_reopen(&t->gpu, &gpu[f]);
		if (got[1]) {
			got[0] = -1 - f;	/* the open failed */
			goto report;
		}
	}
	for (n = 0; n < USER_BOS_MAX; n++) {
		for (f = 0; f < files; f++) {
			got[1] = megpu_bo_new(&gpu[f], USER_BO, 0,
					      &bos[got[0]]);
			if (got[1])
				goto report;
			got[0]++;
		}
	}
report:
	if (write(fd, got, sizeof(got)) != sizeof(got))
		_exit(3);
	while (hold)
		pause();
	_exit(0);
}

static pid_t user_pin_run(const struct mt *t, uid_t uid, int files,
			  bool hold, long got[2])
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (!pid) {
		close(pfd[0]);
		user_pin_child(t, uid, files, hold, pfd[1]);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], got, 2 * sizeof(long)) != 2 * sizeof(long))
		got[1] = -EPIPE;
	close(pfd[0]);
	return pid;
}

/*
 * Files are cheap: one unprivileged user with several files must not pin
 * more than user_pinned_mb in all (the per-file limit alone let each file
 * take a quarter of RAM), and once that user is at the limit, another
 * user still creates BOs. The charge goes when the user's files go.
 */
TEST_F(pin, one_user_cannot_take_the_others_share)
{
	struct stat st;
	char *old, lim[16];
	long a[2] = { 0, 0 }, b[2] = { 0, 0 }, c[2] = { 0, 0 };
	int status;
	pid_t pid;

	old = mt_slurp(MT_PARAM_DIR "user_pinned_mb");
	ASSERT_NE(NULL, old)
		TH_LOG("no module parameter user_pinned_mb");
	ASSERT_EQ(0, stat(self->t.gpu.node, &st));
	snprintf(lim, sizeof(lim), "%d", USER_MB);
	ASSERT_EQ(0, mt_write_file(MT_PARAM_DIR "user_pinned_mb", lim));
	/* as a distribution's udev rule makes render nodes */
	ASSERT_EQ(0, chmod(self->t.gpu.node, 0666));

	pid = user_pin_run(&self->t, 65534, USER_FILES, true, a);
	ASSERT_LT(0, pid);
	TH_LOG("user 65534, %d files of %s: %ld BOs of 8 MiB, then %ld",
	       USER_FILES, self->t.gpu.node, a[0], a[1]);
	EXPECT_EQ(-ENOSPC, a[1]);
	EXPECT_GE(USER_MB, a[0] * (USER_BO >> 20));
	EXPECT_LT(0, a[0]);

	/* another user, while the first one holds its BOs */
	ASSERT_LT(0, user_pin_run(&self->t, 65533, 1, false, b));
	wait(NULL);
	EXPECT_LT(0, b[0])
		TH_LOG("user 65533 got no BO (%ld)", b[1]);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* the first user's charge went with its files */
	ASSERT_LT(0, user_pin_run(&self->t, 65534, 1, false, c));
	wait(NULL);
	EXPECT_LE(a[0], c[0])
		TH_LOG("after the kill, user 65534 got %ld BOs (%ld)",
		       c[0], c[1]);

	chmod(self->t.gpu.node, st.st_mode & 07777);
	mt_write_file(MT_PARAM_DIR "user_pinned_mb", old);
	free(old);
}

TEST_HARNESS_MAIN
