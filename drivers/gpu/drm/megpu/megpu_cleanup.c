// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Deferred job release
 *
 * Our choice (issue 15): drm_sched's free_job must not block, yet a
 * job's release may drop the last reference of a BO's mapping, whose
 * pages may be freed only once the device's queued writes to them have
 * landed: a host flush and its acknowledgment (megpu_flush_unmapped()).
 * In 6.12 free_job and run_job share the scheduler's ordered workqueue,
 * so a flush wait in free_job would keep every later job of the engine
 * out of its ring.
 *
 * free_job therefore hands the job to a worker on a module-wide
 * workqueue. Every job holds a reference on the DRM device from submit
 * on: the job's file may be closed and the device unplugged while it is
 * in a ring, and the device's release (megpu_release(), drm_sched_fini())
 * must not come before the job is gone. The job's put may thus be the
 * device's last, which must not happen in the scheduler's own work (its
 * release finalizes that scheduler): another reason for the worker. The
 * workqueue is the module's, not the device's, so that the release may
 * run inside the work. Module exit, after the PCI driver is gone (which
 * fails every job in flight), waits until no job of any device is left,
 * then drains the workqueue. In the worker a mapping waits
 * for its flush as long as the device is there (an unplug wakes it),
 * instead of giving up after a second and keeping the pages.
 */

#include <linux/atomic.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>

#include "megpu_drv.h"

static struct workqueue_struct *megpu_cleanup_wq;
static atomic_t megpu_jobs_alive = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(megpu_jobs_gone);

/* A job is created: it keeps its device, and the module. */
void megpu_job_hold_device(struct megpu_device *mdev)
{
	drm_dev_get(&mdev->drm);
	atomic_inc(&megpu_jobs_alive);
}

/* The job is freed: maybe the device's last reference, then the module's. */
void megpu_job_release_device(struct megpu_device *mdev)
{
	drm_dev_put(&mdev->drm);
	if (atomic_dec_and_test(&megpu_jobs_alive))
		wake_up_all(&megpu_jobs_gone);
}

static void megpu_job_free_work(struct work_struct *work)
{
	struct megpu_job *job = container_of(work, struct megpu_job,
					     free_work);

	/* may drop the device's last reference */
	__megpu_job_put(job, true);
}

void megpu_job_put_deferred(struct megpu_job *job)
{
	INIT_WORK(&job->free_work, megpu_job_free_work);
	queue_work(megpu_cleanup_wq, &job->free_work);
}

int megpu_cleanup_module_init(void)
{
	megpu_cleanup_wq = alloc_workqueue("megpu-cleanup", WQ_UNBOUND, 0);
	return megpu_cleanup_wq ? 0 : -ENOMEM;
}

/* After the PCI driver is unregistered: the last releases run now. */
void megpu_cleanup_module_exit(void)
{
	wait_event(megpu_jobs_gone, !atomic_read(&megpu_jobs_alive));
	destroy_workqueue(megpu_cleanup_wq);
}
