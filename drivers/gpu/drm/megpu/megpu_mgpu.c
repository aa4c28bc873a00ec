// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-GPU coordination (seed 000): agent numbering and the summed
 * semaphore query.
 *
 * Every bound megpu device with the MGPU feature is an agent. The driver
 * numbers them 0, 1, ... in PCI address order and writes the id and the
 * count into each device (MGPU_AGENT_ID/COUNT); when a device comes or
 * goes all are renumbered. Nothing else is central: the devices' engines
 * coordinate through MSEM and ARB packets on a BO that one device exports
 * and the others import with PRIME (megpu_gem_prime_import_sg_table maps
 * the same pages into each importer's GPU address space).
 */

#include <linux/iosys-map.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>

#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"

static DEFINE_MUTEX(megpu_agents_lock);
static LIST_HEAD(megpu_agents);		/* in PCI address order */

static u32 megpu_pci_key(struct pci_dev *pdev)
{
	return (u32)pci_domain_nr(pdev->bus) << 16 | pci_dev_id(pdev);
}

static void megpu_mgpu_renumber_locked(void)
{
	struct megpu_device *mdev;
	u32 n = 0, count = 0;

	list_for_each_entry(mdev, &megpu_agents, agent_link)
		count++;
	count = min_t(u32, count, MEGPU_MGPU_MAX_AGENTS);
	list_for_each_entry(mdev, &megpu_agents, agent_link) {
		mdev->agent_id = n < count ? n : ~0u;
		mdev->agent_count = count;
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_COUNT, count);
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_ID, mdev->agent_id);
		n++;
	}
}

/**
 * megpu_mgpu_register - make a probed device an agent
 * @mdev: the device, after its reset
 */
void megpu_mgpu_register(struct megpu_device *mdev)
{
	struct megpu_device *pos;

	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return;
	mutex_lock(&megpu_agents_lock);
	list_for_each_entry(pos, &megpu_agents, agent_link)
		if (megpu_pci_key(pos->pdev) > megpu_pci_key(mdev->pdev))
			break;
	list_add_tail(&mdev->agent_link, &pos->agent_link);
	mdev->agent_registered = true;
	megpu_mgpu_renumber_locked();
	mutex_unlock(&megpu_agents_lock);
	drm_info(&mdev->drm, "multi-GPU agent %u of %u\n", mdev->agent_id,
		 mdev->agent_count);
}

/**
 * megpu_mgpu_unregister - the device goes away; renumber the others
 * @mdev: the device
 */
void megpu_mgpu_unregister(struct megpu_device *mdev)
{
	if (!mdev->agent_registered)
		return;
	mutex_lock(&megpu_agents_lock);
	list_del(&mdev->agent_link);
	mdev->agent_registered = false;
	megpu_mgpu_renumber_locked();
	mutex_unlock(&megpu_agents_lock);
}

int megpu_mgpu_param(struct megpu_device *mdev, u32 param, u64 *value)
{
	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return -EOPNOTSUPP;
	mutex_lock(&megpu_agents_lock);
	*value = param == DRM_MEGPU_PARAM_MGPU_AGENT_ID ? mdev->agent_id :
		 mdev->agent_count;
	mutex_unlock(&megpu_agents_lock);
	return 0;
}

int megpu_ioctl_msem_query(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_msem_query *args = data;
	struct drm_gem_object *obj;
	struct iosys_map map;
	u32 count, sum = 0;
	int ret;

	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return -EOPNOTSUPP;
	mutex_lock(&megpu_agents_lock);
	count = mdev->agent_count;
	mutex_unlock(&megpu_agents_lock);
	if (args->pad || (args->offset & 3) || !args->mask ||
	    (args->mask & ~GENMASK(count - 1, 0)))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (args->offset > obj->size || obj->size - args->offset < 4 * count) {
		ret = -EINVAL;
		goto out;
	}
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (ret)
		goto out;
	memset(args->slots, 0, sizeof(args->slots));
	for (u32 a = 0; a < count; a++) {
		u32 v = iosys_map_rd(&map, args->offset + 4 * a, u32);

		args->slots[a] = v;
		if (args->mask & BIT(a))
			sum += v;	/* 32-bit: wraps as the device's adder */
	}
	args->value = sum;
	drm_gem_vunmap_unlocked(obj, &map);
out:
	drm_gem_object_put(obj);
	return ret;
}
