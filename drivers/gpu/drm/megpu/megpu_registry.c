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
 *
 * It also keeps the mappings whose unmap gave up waiting for a host
 * flush (a held or hung device): the device may still write their BOs'
 * pages, so they are lost rather than handed to somebody else, but only
 * until megpu_remove() has reset the device (its queued writes are
 * dropped): the BOs are freed then, with their mmap offsets and
 * pinned-memory charge, and at the device's release those kept after.
 */

#include "megpu_drv.h"

void megpu_bo_registry_init(struct megpu_device *mdev)
{
	mutex_init(&mdev->bos_lock);
	INIT_LIST_HEAD(&mdev->bos);
	INIT_LIST_HEAD(&mdev->kept);
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

static void megpu_bo_registry_free_kept(struct megpu_mapping *mapping)
{
	drm_gem_object_put(&mapping->bo->base.base);
	kfree(mapping);
}

/* @mapping, unmapped, holds its BO until megpu_remove()'s reset */
void megpu_bo_registry_keep(struct megpu_device *mdev,
			    struct megpu_mapping *mapping)
{
	bool closed;

	mutex_lock(&mdev->bos_lock);
	closed = mdev->kept_closed;
	if (!closed)
		list_add_tail(&mapping->node, &mdev->kept);
	mutex_unlock(&mdev->bos_lock);
	/* its flush gave up just as the device was reset: nothing is left */
	if (closed)
		megpu_bo_registry_free_kept(mapping);
}

unsigned int megpu_bo_registry_kept(struct megpu_device *mdev)
{
	struct megpu_mapping *mapping;
	unsigned int n = 0;

	mutex_lock(&mdev->bos_lock);
	list_for_each_entry(mapping, &mdev->kept, node)
		n++;
	mutex_unlock(&mdev->bos_lock);
	return n;
}

/*
 * After megpu_remove()'s reset (@close: and no more are kept from now
 * on), or at the release: nothing of the device writes them.
 */
void megpu_bo_registry_release_kept(struct megpu_device *mdev, bool close)
{
	struct megpu_mapping *mapping, *next;
	LIST_HEAD(kept);

	mutex_lock(&mdev->bos_lock);
	if (close)
		mdev->kept_closed = true;
	list_splice_init(&mdev->kept, &kept);
	mutex_unlock(&mdev->bos_lock);
	list_for_each_entry_safe(mapping, next, &kept, node) {
		list_del(&mapping->node);
		megpu_bo_registry_free_kept(mapping);
	}
}
