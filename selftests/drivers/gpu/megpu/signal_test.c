// SPDX-License-Identifier: GPL-2.0
/*
 * A signal interrupts every ioctl that sleeps: GEM_WAIT on a busy BO,
 * SYSCALL_WAIT on an empty mailbox, TASKQ_WAIT on an attachment that is
 * not done, TASKQ_SLEEP on a release count that does not move. Each is
 * called with a deadline far away and a timer signal whose handler does
 * not ask for SA_RESTART (libdrm's drmIoctl() would restart it): the
 * call must come back with EINTR, not sleep until its deadline, and
 * leave nothing behind (the same wait then works).
 */

#include <errno.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "megpu_hw_regs.h"
#include "megpu_drm.h"
#include "libmegpu.h"
#include "megpu_test.h"

#define FAR_AWAY_NS	(120ll * 1000000000ll)

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired++;
}

/* ioctl() itself, with a 50 ms timer signal that does not restart it. */
static int interrupted_ioctl(int fd, unsigned long req, void *arg)
{
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	struct itimerval off = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm };
	int ret;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	fired = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	ret = ioctl(fd, req, arg) ? -errno : 0;
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	return ret;
}

static int64_t deadline(void)
{
	return megpu_now_ns() + FAR_AWAY_NS;
}

MT_FIXTURE(sig);

TEST_F(sig, gem_wait)
{
	struct megpu_bo *gate;
	struct drm_megpu_gem_wait w = { 0 };
	struct megpu_cs cs;
	struct mt_job j;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, gate);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &j, 0, &cs, &gate, 1, 0));
	megpu_cs_fini(&cs);
	w.handle = gate->handle;
	w.timeout_ns = deadline();
	EXPECT_EQ(-EINTR, interrupted_ioctl(self->t.gpu.fd,
					    DRM_IOCTL_MEGPU_GEM_WAIT, &w));
	EXPECT_EQ(1, fired);
	/* the job is still there, and the wait then works */
	EXPECT_TRUE(mt_pending(&self->t.gpu, j.sync, 0));
	mt_gate_open(gate);
	w.timeout_ns = deadline();
	EXPECT_EQ(0, drmIoctl(self->t.gpu.fd, DRM_IOCTL_MEGPU_GEM_WAIT, &w));
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	megpu_bo_free(gate);
}

TEST_F(sig, syscall_wait)
{
	struct drm_megpu_syscall calls[4];
	struct drm_megpu_syscall_wait w = {
		.calls = (uintptr_t)calls, .count = 4,
	};
	uint32_t slots = 0;

	if (megpu_mailbox_slots(&self->t.gpu, &slots) || !slots)
		SKIP(return, "no mailbox");
	w.timeout_ns = deadline();
	EXPECT_EQ(-EINTR, interrupted_ioctl(self->t.gpu.fd,
					    DRM_IOCTL_MEGPU_SYSCALL_WAIT, &w));
	EXPECT_EQ(1, fired);
	EXPECT_EQ(-ETIME, megpu_syscall_wait(&self->t.gpu, calls, 4, 0));
}

TEST_F(sig, taskq_wait_and_sleep)
{
	struct drm_megpu_taskq_queue ref = { .slots = 64 };
	struct drm_megpu_taskq_wait w = { 0 };
	struct drm_megpu_taskq_sleep s = { 0 };
	struct megpu_taskq q;
	struct megpu_bo *qbo;
	uint32_t seq = 0;

	if (!mt_has_cap(&self->t, MEGPU_CAP_TASKQ))
		SKIP(return, "no task queues");
	/* an attachment that cannot be done: its queue is open */
	ASSERT_EQ(0, mt_taskq_bo(&self->t, 64, &q, &qbo));
	ref.handle = qbo->handle;
	ASSERT_EQ(0, megpu_taskq_attach(&self->t.gpu, &ref, 1, 1u << 0));
	w.timeout_ns = deadline();
	EXPECT_EQ(-EINTR, interrupted_ioctl(self->t.gpu.fd,
					    DRM_IOCTL_MEGPU_TASKQ_WAIT, &w));
	EXPECT_EQ(1, fired);
	/* still attached: closed, it completes */
	megpu_taskq_close(&q);
	EXPECT_EQ(0, megpu_taskq_wait(&self->t.gpu, mt_job_ns(&self->t)));
	EXPECT_EQ(0, megpu_taskq_detach(&self->t.gpu));

	/* nobody releases anything: the count stays */
	ASSERT_EQ(0, megpu_taskq_sleep(&self->t.gpu, &seq, 0));
	s.seq = seq;
	s.timeout_ns = deadline();
	EXPECT_EQ(-EINTR, interrupted_ioctl(self->t.gpu.fd,
					    DRM_IOCTL_MEGPU_TASKQ_SLEEP, &s));
	EXPECT_EQ(1, fired);
	megpu_bo_free(qbo);
}

TEST_HARNESS_MAIN
