// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Task queues (seed 002)
 *
 * What the kernel checks of a queue, and the release notifications of
 * the EVENT exclusion mode.
 *
 * The queues themselves live in client BOs and are shared by CPU threads
 * (libmegpu) and engines running DEQUEUE from the client's IBs, all
 * through the client's own mappings: the GPU MMU confines DEQUEUE to the
 * client's memory and a malformed queue only faults the client's job.
 * What the kernel must trust before it uses a queue itself (a kernel
 * dequeuing module, the seed's discrete variant) is checked here: the
 * BO belongs to the caller, the GPU may write it, the queue fits in it,
 * its size and alignment are what the device accepts.
 *
 * EVENT mode (the seed's event-notification exclusion) must wake the
 * other side's sleepers on every release. Engines sleep in the device:
 * a CPU's release wakes them with TASKQ_NOTIFY. CPU threads sleep here,
 * in TASKQ_SLEEP, on a count of releases (an event count: read it, look
 * at the lock, sleep until the count moves), so no wake-up between the
 * look and the sleep is lost. The count moves on an engine's release
 * (MISC_IRQ_TASKQ_RELEASE, raised only when the queue's CPU_WAITERS says
 * a thread sleeps), on TASKQ_NOTIFY (another thread's release) and on
 * the driver's own dequeuer's. One count per device: a queue is memory
 * the device names by GPU address only, and a spurious wake costs a
 * look. Every sleep is bounded by its caller (libmegpu: the hardware's
 * safety poll, MEGPU_TQ_EVENT_POLL_MS), never by a fence. A file has at
 * most MEGPU_TASKQ_SLEEPERS_MAX threads asleep at once (-EBUSY beyond:
 * libmegpu then sleeps on the lock word's futex), so that no release walks
 * an unbounded list of sleepers with interrupts off.
 */

#include <linux/log2.h>
#include <linux/wait.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_utils.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"
#include "megpu_hw_taskq.h"

/*
 * Validate a queue of @slots slots at @offset of @obj. Pure arithmetic
 * on values the caller gives, so nothing here can overflow: the offset
 * is checked against the BO size before the sum.
 */
int megpu_taskq_validate(struct megpu_bo *bo, u64 offset, u32 slots)
{
	u64 size = bo->base.base.size;

	if (!slots || slots > MEGPU_TQ_MAX_SLOTS || !is_power_of_2(slots))
		return -EINVAL;
	if (offset & (MEGPU_TQ_ALIGN - 1))
		return -EINVAL;
	if (bo->read_only)
		return -EACCES;
	if (offset > size || size - offset < MEGPU_TQ_BYTES((u64)slots))
		return -ERANGE;
	return 0;
}

int megpu_ioctl_taskq_check(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct drm_megpu_taskq_check *args = data;
	struct megpu_mapping *mapping;
	struct drm_gem_object *obj;
	int ret;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags || args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	mapping = megpu_gem_mapping_get(to_megpu_bo(obj), mfile->vm);
	if (!mapping) {
		ret = -ENOENT;
		goto out;
	}
	ret = megpu_taskq_validate(to_megpu_bo(obj), args->offset,
				   args->slots);
	if (!ret)
		args->va = megpu_mapping_va(mapping) + args->offset;
	megpu_gem_mapping_put(mapping);
out:
	drm_gem_object_put(obj);
	return ret;
}

int megpu_ioctl_taskq_notify(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_taskq_notify *args = data;
	int idx;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags || args->pad)
		return -EINVAL;
	/* the registers only while the device is there */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	megpu_write(mdev, MEGPU_REG_TASKQ_NOTIFY, 1);
	drm_dev_exit(idx);
	megpu_taskq_released(mdev);
	megpu_dequeue_notify(file->driver_priv);
	return 0;
}

/*
 * A queue in EVENT mode was released with sleepers: wake TASKQ_SLEEP's
 * callers. Any context, the hard interrupt handler included, so the
 * wake-ups are a work item's: each file's sleepers, a list of at most
 * MEGPU_TASKQ_SLEEPERS_MAX, walked with interrupts off one file at a time,
 * never all the sleepers one user parks.
 */
void megpu_taskq_released(struct megpu_device *mdev)
{
	atomic_inc(&mdev->taskq_releases);
	queue_work(system_highpri_wq, &mdev->taskq_wake);
}

static void megpu_taskq_wake_work(struct work_struct *work)
{
	struct megpu_device *mdev = container_of(work, struct megpu_device,
						 taskq_wake);
	struct megpu_file *mfile;

	mutex_lock(&mdev->taskq_lock);
	list_for_each_entry(mfile, &mdev->taskq_files, tq.sleep_node)
		wake_up_all(&mfile->tq.sleep_wq);
	mutex_unlock(&mdev->taskq_lock);
}

static bool megpu_taskq_moved(struct megpu_device *mdev, u32 seen)
{
	return (u32)atomic_read(&mdev->taskq_releases) != seen;
}

/* One more sleeper of @mfile, or -EBUSY when it has the most already. */
static int megpu_taskq_sleeper_add(struct megpu_device *mdev,
				   struct megpu_file *mfile)
{
	int ret = 0;

	mutex_lock(&mdev->taskq_lock);
	if (mfile->tq.sleepers == MEGPU_TASKQ_SLEEPERS_MAX)
		ret = -EBUSY;
	else if (!mfile->tq.sleepers++)
		list_add_tail(&mfile->tq.sleep_node, &mdev->taskq_files);
	mutex_unlock(&mdev->taskq_lock);
	return ret;
}

static void megpu_taskq_sleeper_del(struct megpu_device *mdev,
				    struct megpu_file *mfile)
{
	mutex_lock(&mdev->taskq_lock);
	if (!--mfile->tq.sleepers)
		list_del_init(&mfile->tq.sleep_node);
	mutex_unlock(&mdev->taskq_lock);
}

int megpu_ioctl_taskq_sleep(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct drm_megpu_taskq_sleep *args = data;
	unsigned long timeout;
	long ret;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags & ~DRM_MEGPU_TASKQ_SLEEP_READ)
		return -EINVAL;
	if (!(args->flags & DRM_MEGPU_TASKQ_SLEEP_READ)) {
		timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
		ret = megpu_taskq_sleeper_add(mdev, mfile);
		if (ret)
			return ret;
		/* listed first: a wake-up from now on finds this sleeper */
		ret = wait_event_interruptible_timeout(mfile->tq.sleep_wq,
						       megpu_taskq_moved(mdev,
									 args->seq),
						       timeout);
		megpu_taskq_sleeper_del(mdev, mfile);
		if (ret < 0)
			return ret;
		if (!ret && !megpu_taskq_moved(mdev, args->seq))
			return -ETIME;
	}
	args->seq = atomic_read(&mdev->taskq_releases);
	return 0;
}

static void megpu_taskq_fini(struct drm_device *drm, void *data)
{
	cancel_work_sync(&to_megpu(drm)->taskq_wake);
}

int megpu_taskq_init(struct megpu_device *mdev)
{
	atomic_set(&mdev->taskq_releases, 0);
	INIT_LIST_HEAD(&mdev->taskq_files);
	INIT_WORK(&mdev->taskq_wake, megpu_taskq_wake_work);
	/* after the last file is gone, so no release queues it again */
	return drmm_mutex_init(&mdev->drm, &mdev->taskq_lock) ?:
	       drmm_add_action_or_reset(&mdev->drm, megpu_taskq_fini, NULL);
}
