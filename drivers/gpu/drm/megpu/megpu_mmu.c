// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: GPU address spaces
 *
 * GPU address spaces: one per open file, a two-level page table in the
 * format of megpu_hw.h. Page 0 is never mapped so that a NULL GPU pointer
 * faults, and every BO is followed by an unmapped guard page so that an
 * overrun faults instead of reaching the next BO.
 */

#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"

/* Page-table pages of every megpu address space (debugfs counters). */
static atomic64_t megpu_pt_bytes = ATOMIC64_INIT(0);

/*
 * A page-table page is pinned: charged to the driver and to the user of
 * the file the address space was made for (megpu_gem.c).
 */
static int megpu_pt_charge(struct megpu_user *user)
{
	int ret = megpu_pin_charge_user(user, NULL, MEGPU_PT_SIZE);

	if (!ret)
		atomic64_add(MEGPU_PT_SIZE, &megpu_pt_bytes);
	return ret;
}

static void megpu_pt_uncharge(struct megpu_user *user)
{
	atomic64_sub(MEGPU_PT_SIZE, &megpu_pt_bytes);
	megpu_pin_uncharge_user(user, NULL, MEGPU_PT_SIZE);
}

u64 megpu_mmu_pt_bytes(void)
{
	return atomic64_read(&megpu_pt_bytes);
}

struct megpu_vm *megpu_vm_create(struct megpu_device *mdev,
				 struct megpu_user *user)
{
	struct device *dev = mdev->drm.dev;
	struct megpu_vm *vm;
	int id = -1;
	u32 ctx;

	if (megpu_pt_charge(user))
		return ERR_PTR(-ENOMEM);
	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm) {
		megpu_pt_uncharge(user);
		return ERR_PTR(-ENOMEM);
	}

	vm->pt = kvcalloc(MEGPU_PT_ENTRIES, sizeof(*vm->pt), GFP_KERNEL);
	vm->pt_dma = kvcalloc(MEGPU_PT_ENTRIES, sizeof(*vm->pt_dma),
			      GFP_KERNEL);
	vm->pd = dma_alloc_coherent(dev, MEGPU_PT_SIZE, &vm->pd_dma,
				    GFP_KERNEL);
	if (!vm->pt || !vm->pt_dma || !vm->pd)
		goto err;
	if (xa_alloc_cyclic(&mdev->ctxs, &ctx, vm, XA_LIMIT(1, INT_MAX),
			    &mdev->ctx_next, GFP_KERNEL) < 0)
		goto err;
	id = ctx;

	kref_init(&vm->refcount);
	vm->mdev = mdev;
	vm->user = megpu_user_get(user);
	vm->ctx_id = id;
	mutex_init(&vm->lock);
	spin_lock_init(&vm->mm_lock);
	/* page 0 stays unmapped */
	drm_mm_init(&vm->mm, 1, (MEGPU_VA_SIZE >> MEGPU_PAGE_SHIFT) - 1);
	atomic_inc(&mdev->live_vms);
	return vm;

err:
	if (id >= 0)
		xa_erase(&mdev->ctxs, id);
	if (vm->pd)
		dma_free_coherent(dev, MEGPU_PT_SIZE, vm->pd, vm->pd_dma);
	kvfree(vm->pt_dma);
	kvfree(vm->pt);
	kfree(vm);
	megpu_pt_uncharge(user);
	return ERR_PTR(-ENOMEM);
}

struct megpu_vm *megpu_vm_get(struct megpu_vm *vm)
{
	kref_get(&vm->refcount);
	return vm;
}

static void megpu_vm_release(struct kref *kref)
{
	struct megpu_vm *vm = container_of(kref, struct megpu_vm, refcount);
	struct megpu_device *mdev = vm->mdev;
	struct device *dev = mdev->drm.dev;
	unsigned int i;

	for (i = 0; i < MEGPU_PT_ENTRIES; i++)
		if (vm->pt[i]) {
			dma_free_coherent(dev, MEGPU_PT_SIZE, vm->pt[i],
					  vm->pt_dma[i]);
			megpu_pt_uncharge(vm->user);
		}
	dma_free_coherent(dev, MEGPU_PT_SIZE, vm->pd, vm->pd_dma);
	megpu_pt_uncharge(vm->user);
	megpu_user_put(vm->user);
	drm_mm_takedown(&vm->mm);
	xa_erase(&mdev->ctxs, vm->ctx_id);
	mutex_destroy(&vm->lock);
	kvfree(vm->pt_dma);
	kvfree(vm->pt);
	kfree(vm);
	atomic_dec(&mdev->live_vms);
}

void megpu_vm_put(struct megpu_vm *vm)
{
	if (vm)
		kref_put(&vm->refcount, megpu_vm_release);
}

/*
 * Wait until no engine still uses a translation read before the page
 * tables changed; the device completes the write only then.
 */
void megpu_mmu_invalidate(struct megpu_device *mdev)
{
	int idx;

	/* an unplugged device runs nothing any more */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return;
	mutex_lock(&mdev->mmu_lock);
	megpu_write(mdev, MEGPU_REG_MMU_INVALIDATE, 1);
	megpu_read(mdev, MEGPU_REG_MMU_INVALIDATE);
	mutex_unlock(&mdev->mmu_lock);
	drm_dev_exit(idx);
}

static u64 *megpu_vm_pte(struct megpu_vm *vm, u64 va, bool alloc)
{
	unsigned int pdi = MEGPU_PDE_INDEX(va);

	if (!vm->pt[pdi]) {
		if (!alloc || megpu_pt_charge(vm->user))
			return NULL;
		vm->pt[pdi] = dma_alloc_coherent(vm->mdev->drm.dev,
						 MEGPU_PT_SIZE,
						 &vm->pt_dma[pdi], GFP_KERNEL);
		if (!vm->pt[pdi]) {
			megpu_pt_uncharge(vm->user);
			return NULL;
		}
		/* the table must be complete before the device can see it */
		dma_wmb();
		WRITE_ONCE(vm->pd[pdi], vm->pt_dma[pdi] | MEGPU_PTE_VALID);
	}
	return &vm->pt[pdi][MEGPU_PTE_INDEX(va)];
}

static void megpu_vm_clear(struct megpu_vm *vm, u64 va, u64 size)
{
	u64 end = va + size;
	u64 *pte;

	for (; va < end; va += MEGPU_PAGE_SIZE) {
		pte = megpu_vm_pte(vm, va, false);
		if (pte)
			WRITE_ONCE(*pte, 0);
	}
}

u64 megpu_mapping_va(struct megpu_mapping *mapping)
{
	return mapping->mmnode.start << MEGPU_PAGE_SHIFT;
}

/*
 * Write the page table entries of a BO's pages at its virtual range. On
 * failure after some entries were written, a job of this VM may already
 * have queued writes through them: the mapping counts as mapped, and its
 * release (megpu_vm_unmap()) clears the entries, invalidates and drains
 * the device's queued writes before the pages can go.
 */
int megpu_vm_map(struct megpu_mapping *mapping)
{
	struct megpu_bo *bo = mapping->bo;
	struct megpu_vm *vm = mapping->vm;
	u64 size = bo->base.base.size;
	u64 flags = MEGPU_PTE_VALID;
	u64 va = megpu_mapping_va(mapping);
	u64 start = va;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;
	int ret = 0;

	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	if (!bo->read_only)
		flags |= MEGPU_PTE_WRITE;

	mutex_lock(&vm->lock);
	for_each_sgtable_dma_sg(sgt, sg, i) {
		dma_addr_t addr = sg_dma_address(sg);
		unsigned int len = sg_dma_len(sg);
		u64 *pte;

		/* an exporter's table: whole pages, and no more than the BO */
		if (addr & (MEGPU_PAGE_SIZE - 1)) {
			ret = -EINVAL;
			break;
		}
		for (; len >= MEGPU_PAGE_SIZE && va - start < size;
		     len -= MEGPU_PAGE_SIZE) {
			pte = megpu_vm_pte(vm, va, true);
			if (!pte) {
				ret = -ENOMEM;
				break;
			}
			WRITE_ONCE(*pte, (addr & MEGPU_PTE_ADDR_MASK) | flags);
			addr += MEGPU_PAGE_SIZE;
			va += MEGPU_PAGE_SIZE;
		}
		if (ret)
			break;
	}
	mapping->mapped = va != start;
	mutex_unlock(&vm->lock);
	return ret;
}

/*
 * Take a BO's pages out of the address space. The pages may be freed
 * only when this returns 0: entries cleared, TLB invalidated, and every
 * write the device had queued for them landed (megpu_flush_unmapped()).
 */
int megpu_vm_unmap(struct megpu_mapping *mapping, bool patient)
{
	struct megpu_vm *vm = mapping->vm;

	if (!mapping->mapped)
		return 0;
	mutex_lock(&vm->lock);
	megpu_vm_clear(vm, megpu_mapping_va(mapping),
		       mapping->bo->base.base.size);
	mapping->mapped = false;
	mutex_unlock(&vm->lock);
	megpu_mmu_invalidate(vm->mdev);
	return megpu_flush_unmapped(vm, patient);
}
