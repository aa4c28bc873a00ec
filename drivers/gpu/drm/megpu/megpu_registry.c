// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: BO registry
 *
 * Every BO of the device, numbered in creation order, for debugfs
 * "resources" (the resource objects of seed 001). A BO joins only once
 * its creation has succeeded (issue 15, item 1) and leaves when it is
 * freed. Lock order: &megpu_device.bos_lock before
 * &megpu_device.sem_lock.
 */

#include "megpu_drv.h"

void megpu_bo_registry_init(struct megpu_device *mdev)
{
	mutex_init(&mdev->bos_lock);
	INIT_LIST_HEAD(&mdev->bos);
}

void megpu_bo_registry_add(struct megpu_device *mdev, struct megpu_bo *bo)
{
	mutex_lock(&mdev->bos_lock);
	bo->id = ++mdev->next_bo_id;
	list_add_tail(&bo->dev_node, &mdev->bos);
	mutex_unlock(&mdev->bos_lock);
}

void megpu_bo_registry_del(struct megpu_device *mdev, struct megpu_bo *bo)
{
	mutex_lock(&mdev->bos_lock);
	list_del(&bo->dev_node);
	mutex_unlock(&mdev->bos_lock);
}
