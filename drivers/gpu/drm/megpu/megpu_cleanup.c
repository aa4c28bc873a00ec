// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/*
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
 * workqueue. The work holds a reference on the DRM device: the job's
 * file may be closed and the device unplugged meanwhile, and the
 * worker's put may be the device's last, whose release (megpu_release())
 * tears down what the job points to. The workqueue is the module's, not
 * the device's, so that release may run inside the work; module exit
 * drains it after the PCI driver is gone. In the worker a mapping waits
 * for its flush as long as the device is there (an unplug wakes it),
 * instead of giving up after a second and keeping the pages.
 */

#include <linux/workqueue.h>
#include <drm/drm_drv.h>

#include "megpu_drv.h"

static struct workqueue_struct *megpu_cleanup_wq;

static void megpu_job_free_work(struct work_struct *work)
{
	struct megpu_job *job = container_of(work, struct megpu_job,
					     free_work);
	struct drm_device *drm = &job->file->mdev->drm;

	__megpu_job_put(job, true);
	drm_dev_put(drm);
}

void megpu_job_put_deferred(struct megpu_job *job)
{
	drm_dev_get(&job->file->mdev->drm);
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
	destroy_workqueue(megpu_cleanup_wq);
}
