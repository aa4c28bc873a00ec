// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI function goes away while a client has the device open and a job
 * in flight (sysfs unbind, as DRM's hot-unplug tests do): the job
 * completes with an error, the open file gets -ENODEV, closing it after
 * the unplug is clean, and binding the driver again gives a working GPU.
 * So with the driver's task-queue dequeuer attached and with waves parked
 * in calls to a service. The host harness checks the kernel log for
 * warnings and oopses.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_drm.h"
#include "libmegpu.h"
#include "megpu_test.h"

/* A client and a job on engine 0 that waits for the gate. */
static void held_job(struct __test_metadata *_metadata, struct mt *t,
		     struct megpu_bo **gate, struct mt_job *j)
{
	struct megpu_cs cs;

	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, gate));
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, *gate);
	megpu_cs_write32(&cs, (*gate)->va + 64, 1);
	ASSERT_EQ(0, mt_submit(&t->gpu, j, 0, &cs, gate, 1, 0));
	megpu_cs_fini(&cs);
	usleep(100 * 1000);
	ASSERT_TRUE(mt_pending(&t->gpu, j->sync, 0));
}

#define PCI_DEVICES "/sys/bus/pci/devices"

/* The test's device; bound again after each test, whatever happened. */
FIXTURE(unplug) {
	char addr[64];
};

FIXTURE_SETUP(unplug)
{
	struct mt t;

	ASSERT_EQ(0, mt_open(&t));
	ASSERT_EQ(0, mt_pci_address(&t.gpu, self->addr, sizeof(self->addr)));
	mt_close(&t);
}

FIXTURE_TEARDOWN(unplug)
{
	char path[PATH_MAX];

	/* removed from the bus: found again by a rescan, which binds it */
	snprintf(path, sizeof(path), PCI_DEVICES "/%s", self->addr);
	if (access(path, F_OK))
		mt_write_file("/sys/bus/pci/rescan", "1");
	snprintf(path, sizeof(path), MT_DRIVER_DIR "/%s", self->addr);
	if (access(path, F_OK))
		mt_write_file(MT_DRIVER_DIR "/bind", self->addr);
}

/* A new client of the device runs a job: the GPU works. */
static void probe_new_client(struct __test_metadata *_metadata)
{
	struct megpu_bo *bo;
	struct mt t;
	uint64_t v;

	ASSERT_EQ(0, mt_open(&t));
	ASSERT_EQ(0, megpu_get_param(&t.gpu, DRM_MEGPU_PARAM_ENGINE_COUNT, &v));
	ASSERT_LT(0, v);
	ASSERT_EQ(0, mt_bo(&t.gpu, 4096, 0, &bo));
	EXPECT_EQ(0, mt_probe_engine(&t, 0, bo, 0, 0x600d));
	megpu_bo_free(bo);
	mt_close(&t);
}

/* Bind again and run a job: the GPU works after the unplug. */
static void rebind_and_probe(struct __test_metadata *_metadata,
			     const char *addr)
{
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/bind", addr));
	ASSERT_EQ(1, megpu_count_devices());
	probe_new_client(_metadata);
}

/*
 * The device is gone: the job it will never finish completes with
 * -ENODEV (its fence exported as @sync_file, closed here), every DRM
 * ioctl of the open file fails so, and no device is found.
 */
static void expect_gone(struct __test_metadata *_metadata, struct mt *t,
			int sync_file)
{
	uint64_t v;

	ASSERT_EQ(0, mt_sync_file_wait(sync_file, 5000));
	EXPECT_EQ(-ENODEV, megpu_sync_file_status(sync_file));
	close(sync_file);
	EXPECT_EQ(-ENODEV, megpu_get_param(&t->gpu,
					   DRM_MEGPU_PARAM_ENGINE_COUNT, &v));
	EXPECT_EQ(0, megpu_count_devices());
}

TEST_F(unplug, with_open_file_and_job)
{
	struct megpu_bo *gate;
	struct mt_job j;
	int sync_file;
	struct mt t;

	ASSERT_EQ(0, mt_open(&t));
	held_job(_metadata, &t, &gate, &j);
	/* after the unplug every DRM ioctl fails: watch the fence this way */
	ASSERT_EQ(0, megpu_syncobj_export(&t.gpu, j.sync, 0, &sync_file));

	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));

	expect_gone(_metadata, &t, sync_file);

	/* the CPU mapping of a BO still works; closing everything is clean */
	mt_u32(gate)[0] = 1;
	mt_job_free(&j);
	megpu_bo_free(gate);
	mt_close(&t);

	rebind_and_probe(_metadata, self->addr);
}

/*
 * The unplug fails each job on the hardware and then leaves it alone:
 * with debugfs fail_hold_ms the driver waits after each one, so the
 * scheduler frees the job meanwhile. The driver used to write the job's
 * semaphore after its fence, a use after free that the debug kernel's
 * KASAN reports (make check-debug fails on it; caught once by chance in
 * with_open_file_and_job). Two jobs: the second is failed after the
 * first is freed.
 */
TEST_F(unplug, failed_jobs_freed_while_unplug_goes_on)
{
	struct megpu_bo *gate;
	struct mt_job j[2];
	struct megpu_cs cs;
	int sync_file[2];
	struct mt t;

	ASSERT_EQ(0, mt_open(&t));
	if (megpu_debugfs_write(&t.gpu, "fail_hold_ms", "300")) {
		mt_close(&t);
		SKIP(return, "no debugfs fail_hold_ms (not a test build)");
	}
	held_job(_metadata, &t, &gate, &j[0]);
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, gate->va + 128, 2);
	ASSERT_EQ(0, mt_submit(&t.gpu, &j[1], 0, &cs, &gate, 1, 0));
	megpu_cs_fini(&cs);
	usleep(100 * 1000);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, megpu_syncobj_export(&t.gpu, j[i].sync, 0,
						  &sync_file[i]));

	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, mt_sync_file_wait(sync_file[i], 5000));
		EXPECT_EQ(-ENODEV, megpu_sync_file_status(sync_file[i]));
		close(sync_file[i]);
		mt_job_free(&j[i]);
	}
	mt_u32(gate)[0] = 1;
	megpu_bo_free(gate);
	mt_close(&t);

	rebind_and_probe(_metadata, self->addr);
}

/* A thread issuing FLUSH ioctls until the device is gone. */
struct flusher {
	struct mt *t;
	pthread_t thread;
	int bad;		/* a result other than 0 and -ENODEV */
	int64_t max_ns;		/* the longest FLUSH */
	int calls;
};

static void *flush_loop(void *arg)
{
	struct flusher *f = arg;
	int64_t start, took;
	int ret;

	do {
		start = megpu_now_ns();
		ret = mt_flush_ioctl(f->t, 0, 0, NULL);
		took = megpu_now_ns() - start;
		if (took > f->max_ns)
			f->max_ns = took;
		f->calls++;
		if (ret && ret != -ENODEV)
			f->bad = ret;
	} while (!ret);
	return NULL;
}

/*
 * FLUSH ioctls in flight while the device is unbound end with -ENODEV at
 * once, not with a flush timeout (1 s) on a device that is gone.
 */
TEST_F(unplug, flushes_in_flight)
{
	struct megpu_bo *bo;
	struct flusher f[2];
	struct megpu_cs cs;
	struct mt_job j;
	struct mt t;
	int i, e;

	ASSERT_EQ(0, mt_open(&t));
	e = mt_engine_for(&t, MEGPU_PKT_FILL, -1);
	if (!mt_has_flush(&t) || e < 0)
		SKIP(return, "the device has no flush or no FILL");
	/* posted writes all along, so that each flush has work to wait for */
	ASSERT_EQ(0, megpu_bo_new(&t.gpu, 4 << 20, 0, &bo));
	megpu_cs_init(&cs);
	for (i = 0; i < 256; i++)
		megpu_cs_fill(&cs, bo->va, 4 << 20, i);
	ASSERT_EQ(0, mt_submit(&t.gpu, &j, e, &cs, &bo, 1,
			       DRM_MEGPU_SUBMIT_NO_FLUSH));
	megpu_cs_fini(&cs);
	for (i = 0; i < 2; i++) {
		f[i] = (struct flusher){ .t = &t };
		ASSERT_EQ(0, pthread_create(&f[i].thread, NULL, flush_loop,
					    &f[i]));
	}
	usleep(20000);
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
	for (i = 0; i < 2; i++) {
		pthread_join(f[i].thread, NULL);
		EXPECT_EQ(0, f[i].bad);
		EXPECT_LT(f[i].max_ns, 500000000ll)
			TH_LOG("flusher %d: a FLUSH took %lld ms (%d calls)",
			       i, (long long)(f[i].max_ns / 1000000),
			       f[i].calls);
	}
	mt_job_free(&j);
	megpu_bo_free(bo);
	mt_close(&t);
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/bind", self->addr));
}


struct tq_waiter {
	struct megpu *gpu;
	pthread_t thread;
	int ret;
	int64_t at;		/* when TASKQ_WAIT returned */
};

static void *tq_wait_thread(void *arg)
{
	struct tq_waiter *w = arg;

	w->ret = megpu_taskq_wait(w->gpu, 10000000000ll);
	w->at = megpu_now_ns();
	return NULL;
}

/*
 * The driver's dequeuer attached to a queue that never closes, a thread
 * blocked in TASKQ_WAIT: the unplug stops the attachment at once and the
 * waiter returns -ENODEV, well before the watchdog would end it (a job
 * timeout without progress); after it every ioctl says -ENODEV, and
 * closing frees the attachment, cleanly.
 */
TEST_F(unplug, with_live_attachment)
{
	struct drm_megpu_taskq_queue ref;
	struct tq_waiter w = { 0 };
	struct megpu_taskq q;
	struct megpu_bo *qbo;
	uint32_t engines = 0;
	int64_t t0, took;
	uint64_t feat = 0;
	unsigned int e;
	struct mt t;

	ASSERT_EQ(0, mt_open(&t));
	if (megpu_get_param(&t.gpu, DRM_MEGPU_PARAM_FEATURES, &feat) ||
	    !(feat & MEGPU_CAP_TASKQ)) {
		mt_close(&t);
		SKIP(return, "no task queues");
	}
	for (e = 0; e < t.engines; e++)
		if (mt_runs_waves(&t, e))
			engines |= 1u << e;
	ASSERT_NE(0, engines);
	ASSERT_EQ(0, mt_bo(&t.gpu, MEGPU_TQ_BYTES(16), 0, &qbo));
	ASSERT_EQ(0, megpu_taskq_init(&q, qbo->map, qbo->va, 16, 0, 0, 0));
	ref = (struct drm_megpu_taskq_queue){ .handle = qbo->handle,
					      .slots = 16 };
	ASSERT_EQ(0, megpu_taskq_attach(&t.gpu, &ref, 1, engines));
	EXPECT_EQ(-ETIME, megpu_taskq_wait(&t.gpu, 0));
	w.gpu = &t.gpu;
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, tq_wait_thread, &w));
	usleep(100000);

	t0 = megpu_now_ns();
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	took = w.at - t0;
	/*
	 * -ENODEV, not the watchdog's -ETIMEDOUT: the unplug ended it (no
	 * bound on the time, which a loaded debug kernel stretches).
	 */
	EXPECT_EQ(-ENODEV, w.ret);
	TH_LOG("the attachment ended %lld ms after the unplug (job timeout %llu ms)",
	       (long long)(took / 1000000), (unsigned long long)t.timeout_ms);
	EXPECT_EQ(-ENODEV, megpu_taskq_wait(&t.gpu, 0));
	EXPECT_EQ(-ENODEV, megpu_taskq_detach(&t.gpu));
	megpu_bo_free(qbo);
	mt_close(&t);
	rebind_and_probe(_metadata, self->addr);
}

/*
 * Waves parked in SYSCALL on a service nobody runs: the unplug fails
 * their job with -ENODEV, and closing the file after it is clean.
 */
TEST_F(unplug, with_parked_waves)
{
	static const char src[] =
		"	s2r	r1, global_id\n"
		"	syscall	r2, 0x100, r1, r1, r1\n"
		"	end\n";
	const uint64_t user[1] = { 0 };
	struct megpu_bo *bos[2];
	struct megpu_cs cs;
	struct mt_prog p;
	struct mt_job j;
	int e, sync_file;
	unsigned int n;
	struct mt t;

	ASSERT_EQ(0, mt_open(&t));
	e = mt_wave_engine(&t, -1);
	if (e < 0) {
		mt_close(&t);
		SKIP(return, "no engine runs wave programs");
	}
	ASSERT_EQ(0, mt_prog_load(&t.gpu, src, &p));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 1, 64, 16));
	n = mt_prog_bos(&p, bos, NULL, 0);
	ASSERT_EQ(0, mt_submit(&t.gpu, &j, e, &cs, bos, n, 0));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, megpu_syncobj_export(&t.gpu, j.sync, 0, &sync_file));
	/* the calls are made and wait for the service */
	usleep(200000);
	EXPECT_EQ(1, megpu_sync_file_status(sync_file));

	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
	ASSERT_EQ(0, mt_sync_file_wait(sync_file, 5000));
	EXPECT_EQ(-ENODEV, megpu_sync_file_status(sync_file));
	close(sync_file);
	mt_job_free(&j);
	mt_prog_free(&p);
	mt_close(&t);
	rebind_and_probe(_metadata, self->addr);
}

/*
 * The PCI function is removed from the bus (sysfs remove, as IGT's
 * core_hotunplug does) while a client has it open, a job in flight, a BO
 * mapped and a dma-buf of it exported. The job fails with -ENODEV, every
 * DRM ioctl too, the CPU mapping and the dma-buf stay usable; a rescan
 * finds the function again and the driver binds a working GPU while the
 * old file, mapping and dma-buf are still open ("late close"); closing
 * them afterwards is clean (the host harness checks the kernel log).
 */
TEST_F(unplug, remove_and_rescan_with_late_close)
{
	char path[PATH_MAX];
	struct megpu_bo *gate;
	int sync_file, dmabuf;
	struct mt_job j;
	struct mt t;
	uint32_t *cpu;

	ASSERT_EQ(0, mt_open(&t));
	held_job(_metadata, &t, &gate, &j);
	ASSERT_EQ(0, megpu_syncobj_export(&t.gpu, j.sync, 0, &sync_file));
	ASSERT_EQ(0, megpu_bo_export(gate, &dmabuf));
	cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, cpu);

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/remove", self->addr);
	ASSERT_EQ(0, mt_write_file(path, "1"));
	expect_gone(_metadata, &t, sync_file);
	/* what the CPU has of the BO stays its memory */
	mt_u32(gate)[1] = 0x1234;
	EXPECT_EQ(0x1234, cpu[1]);

	ASSERT_EQ(0, mt_write_file("/sys/bus/pci/rescan", "1"));
	for (int i = 0; i < 500 && megpu_count_devices() != 1; i++)
		usleep(10000);
	ASSERT_EQ(1, megpu_count_devices());
	probe_new_client(_metadata);

	/* the old device's objects go last */
	cpu[0] = 1;
	munmap(cpu, 4096);
	close(dmabuf);
	mt_job_free(&j);
	megpu_bo_free(gate);
	mt_close(&t);
}

/* Unbind and bind again with nothing open, a few times. */
TEST_F(unplug, bind_cycles)
{
	struct megpu_bo *bo;
	struct mt t;
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
		EXPECT_EQ(0, megpu_count_devices());
		ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/bind", self->addr));
		ASSERT_EQ(0, mt_open(&t));
		ASSERT_EQ(0, mt_bo(&t.gpu, 4096, 0, &bo));
		EXPECT_EQ(0, mt_probe_engine(&t, i % t.engines, bo, 0, i + 1));
		megpu_bo_free(bo);
		mt_close(&t);
	}
}

#define INJECT_PROBE "/sys/module/megpu/parameters/inject_probe_failure"

/*
 * The probe unwinds from each of its check points (inject_probe_failure,
 * as i915's; test builds only): bind fails with the injected -ENOMEM,
 * the device stays unbound and usable, and once N is past the last
 * point the bind works and so does the GPU. Under the debug kernel,
 * KASAN and kmemleak check that each unwinding frees what it set up.
 */
TEST_F(unplug, probe_unwinds_at_every_check_point)
{
	char path[PATH_MAX], n_txt[16];
	unsigned int n;
	int ret = -1;

	if (access(INJECT_PROBE, W_OK))
		SKIP(return, "no inject_probe_failure (a shipped build)");
	snprintf(path, sizeof(path), MT_DRIVER_DIR "/%s", self->addr);
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
	for (n = 1; n <= 32; n++) {
		snprintf(n_txt, sizeof(n_txt), "%u", n);
		ASSERT_EQ(0, mt_write_file(INJECT_PROBE, n_txt));
		ret = mt_write_file(MT_DRIVER_DIR "/bind", self->addr);
		if (!ret)
			break;
		EXPECT_EQ(-ENOMEM, ret) TH_LOG("check point %u", n);
		EXPECT_NE(0, access(path, F_OK)) TH_LOG("bound at %u", n);
		EXPECT_EQ(0, megpu_count_devices());
	}
	ASSERT_EQ(0, mt_write_file(INJECT_PROBE, "0"));
	ASSERT_EQ(0, ret) TH_LOG("the probe failed at every point up to 32");
	TH_LOG("the probe has %u check points", n - 1);
	EXPECT_LE(7, n - 1);
	/* bound by the last loop: a working GPU */
	ASSERT_EQ(0, mt_write_file(MT_DRIVER_DIR "/unbind", self->addr));
	rebind_and_probe(_metadata, self->addr);
}

TEST_HARNESS_MAIN
