// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Task queues (seed 002)
 *
 * What the kernel checks of a queue, and the
 * CPU's release notification of the EVENT exclusion mode.
 *
 * The queues themselves live in client BOs and are shared by CPU threads
 * (libmegpu) and engines running DEQUEUE from the client's IBs, all
 * through the client's own mappings: the GPU MMU confines DEQUEUE to the
 * client's memory and a malformed queue only faults the client's job.
 * What the kernel must trust before it uses a queue itself (a kernel
 * dequeuing module, the seed's discrete variant) is checked here: the
 * BO belongs to the caller, the GPU may write it, the queue fits in it,
 * its size and alignment are what the device accepts.
 */

#include <linux/log2.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"

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

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags || args->pad)
		return -EINVAL;
	megpu_write(mdev, MEGPU_REG_TASKQ_NOTIFY, 1);
	megpu_dequeue_notify(file->driver_priv);
	return 0;
}
