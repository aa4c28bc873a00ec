// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Buffer objects
 *
 * Shmem-backed GEM objects, mapped into the GPU address space of every
 * file holding a handle to them (as panfrost does). A mapping is shared
 * by the handle and by the jobs using it, so closing a handle while a job
 * runs keeps the pages mapped until the job is done.
 *
 * A BO's pages are pinned from its creation to its end, since the GPU
 * may reach them through the page tables at any time. Pinned memory
 * cannot be reclaimed, so it is charged: to the file that created the BO
 * (client_pinned_mb) and to all megpu devices together (pinned_mb). A
 * create beyond either limit fails with -ENOSPC, and the guest keeps the
 * memory it needs to stay healthy. Imported BOs' pages are the exporter's
 * charge; the importer's is the import's scatterlist.
 * What the driver pins for a file is charged the same way, so that many
 * open files cannot get past the limits either: its mailbox and the
 * task-queue dequeuer's IBs to the file, its user and the driver, its
 * page tables (which may outlive the file) to its user and the driver.
 *
 * Files are cheap to open, so the per-file limit alone would let one
 * user take all of pinned_mb from the others with a few files. Every
 * charge of a file, page tables included, is therefore also the charge
 * of the user who opened it (user_pinned_mb, by real uid, as
 * RLIMIT_MEMLOCK counts locked memory per user), except for openers with
 * CAP_IPC_LOCK, who may pin memory anyway.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-resv.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"

/* Largest BO; keeps a single client from exhausting guest memory. */
#define MEGPU_BO_MAX_SIZE	SZ_1G

static unsigned int megpu_pinned_mb;
module_param_named(pinned_mb, megpu_pinned_mb, uint, 0644);
MODULE_PARM_DESC(pinned_mb,
		 "memory all megpu BOs together may pin, MiB (default 0: half of RAM)");

static unsigned int megpu_client_pinned_mb;
module_param_named(client_pinned_mb, megpu_client_pinned_mb, uint, 0644);
MODULE_PARM_DESC(client_pinned_mb,
		 "memory the BOs one file creates may pin, MiB (default 0: a quarter of RAM)");

static unsigned int megpu_user_pinned_mb;
module_param_named(user_pinned_mb, megpu_user_pinned_mb, uint, 0644);
MODULE_PARM_DESC(user_pinned_mb,
		 "memory the files one user opens may pin together, MiB (default 0: a quarter of RAM; CAP_IPC_LOCK: no limit)");

static atomic64_t megpu_pinned_bytes = ATOMIC64_INIT(0);

/*
 * The users with an open file or an address space: a handful, hashed by
 * uid, each referenced by its files and address spaces.
 */
static DEFINE_SPINLOCK(megpu_users_lock);
static DEFINE_HASHTABLE(megpu_users, 6);

/* megpu_gem_prime_import() attaches to dma-bufs itself */
MODULE_IMPORT_NS(DMA_BUF);

static u64 megpu_limit(unsigned int mb, unsigned int ram_shift)
{
	return mb ? (u64)mb << 20 : (totalram_pages() << PAGE_SHIFT) >> ram_shift;
}

/*
 * The charge of the calling task's user, referenced, or NULL with
 * CAP_IPC_LOCK (nothing to charge), or an ERR_PTR.
 */
struct megpu_user *megpu_user_get_current(void)
{
	kuid_t uid = current_uid();
	struct megpu_user *user, *fresh;

	/* without an audit record: most openers lack it, by design */
	if (ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK))
		return NULL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	spin_lock(&megpu_users_lock);
	hash_for_each_possible(megpu_users, user, node, __kuid_val(uid)) {
		if (uid_eq(user->uid, uid)) {
			refcount_inc(&user->refs);
			spin_unlock(&megpu_users_lock);
			kfree(fresh);
			return user;
		}
	}
	fresh->uid = uid;
	refcount_set(&fresh->refs, 1);
	hash_add(megpu_users, &fresh->node, __kuid_val(uid));
	spin_unlock(&megpu_users_lock);
	return fresh;
}

struct megpu_user *megpu_user_get(struct megpu_user *user)
{
	if (user)
		refcount_inc(&user->refs);
	return user;
}

/* Under the lock: a file's open finds a user in the table or none. */
void megpu_user_put(struct megpu_user *user)
{
	bool last;

	if (!user)
		return;
	spin_lock(&megpu_users_lock);
	last = refcount_dec_and_test(&user->refs);
	if (last)
		hash_del(&user->node);
	spin_unlock(&megpu_users_lock);
	if (last) {
		WARN_ON(atomic64_read(&user->pinned_bytes));
		kfree(user);
	}
}

/*
 * Add @size to @bytes unless that goes over @limit. Never over it, not
 * even for a moment: a request that fails must not fail another user's.
 */
static bool megpu_pin_add(atomic64_t *bytes, u64 size, u64 limit)
{
	s64 cur = atomic64_read(bytes);

	do {
		if (size > limit || cur > limit - size)
			return false;
	} while (!atomic64_try_cmpxchg(bytes, &cur, cur + size));
	return true;
}

/*
 * Charge @size pinned bytes to @mfile, to @user and to the driver (@mfile
 * and @user may be NULL: nothing to charge there), or -ENOSPC and nothing
 * charged. The narrowest limit first, so that a file or a user at its
 * limit does not take from the others' room on the way.
 */
int megpu_pin_charge_user(struct megpu_user *user, struct megpu_file *mfile,
			  u64 size)
{
	if (mfile &&
	    !megpu_pin_add(&mfile->pinned_bytes, size,
			   megpu_limit(READ_ONCE(megpu_client_pinned_mb), 2)))
		return -ENOSPC;
	if (user &&
	    !megpu_pin_add(&user->pinned_bytes, size,
			   megpu_limit(READ_ONCE(megpu_user_pinned_mb), 2)))
		goto err_file;
	if (!megpu_pin_add(&megpu_pinned_bytes, size,
			   megpu_limit(READ_ONCE(megpu_pinned_mb), 1)))
		goto err_user;
	return 0;

err_user:
	if (user)
		atomic64_sub(size, &user->pinned_bytes);
err_file:
	if (mfile)
		atomic64_sub(size, &mfile->pinned_bytes);
	return -ENOSPC;
}

void megpu_pin_uncharge_user(struct megpu_user *user,
			     struct megpu_file *mfile, u64 size)
{
	if (mfile)
		atomic64_sub(size, &mfile->pinned_bytes);
	if (user)
		atomic64_sub(size, &user->pinned_bytes);
	atomic64_sub(size, &megpu_pinned_bytes);
}

/* Charge @size to @mfile, its user and the driver (@mfile NULL: driver). */
int megpu_pin_charge(struct megpu_file *mfile, u64 size)
{
	return megpu_pin_charge_user(mfile ? mfile->user : NULL, mfile, size);
}

void megpu_pin_uncharge(struct megpu_file *mfile, u64 size)
{
	megpu_pin_uncharge_user(mfile ? mfile->user : NULL, mfile, size);
}

/* @bo's charge of @size, made to @mfile, goes back when @bo goes. */
void megpu_bo_charged_to(struct megpu_bo *bo, struct megpu_file *mfile,
			 u64 size)
{
	bo->charge = size;
	bo->owner = megpu_file_get(mfile);
}

/* Pinned bytes charged to all megpu BOs (debugfs). */
u64 megpu_gem_pinned_bytes(void)
{
	return atomic64_read(&megpu_pinned_bytes);
}

static void megpu_gem_free(struct drm_gem_object *obj)
{
	struct megpu_bo *bo = to_megpu_bo(obj);
	struct megpu_device *mdev = to_megpu(obj->dev);

	WARN_ON(!list_empty(&bo->mappings));
	if (bo->owner) {
		megpu_pin_uncharge(bo->owner, bo->charge);
		megpu_file_put(bo->owner);
	}
	megpu_bo_registry_del(mdev, bo);
	mutex_destroy(&bo->mappings_lock);
	drm_gem_shmem_free(&bo->base);
	atomic_dec(&mdev->live_bos);
}

static void __megpu_mapping_release(struct megpu_mapping *mapping,
				    bool patient)
{
	struct megpu_vm *vm = mapping->vm;
	struct megpu_device *mdev = vm->mdev;
	bool drained = !megpu_vm_unmap(mapping, patient);

	spin_lock(&vm->mm_lock);
	if (drm_mm_node_allocated(&mapping->mmnode))
		drm_mm_remove_node(&mapping->mmnode);
	spin_unlock(&vm->mm_lock);
	atomic_dec(&mdev->live_mappings);
	megpu_vm_put(vm);
	mapping->vm = NULL;
	if (drained) {
		drm_gem_object_put(&mapping->bo->base.base);
		kfree(mapping);
		return;
	}
	/*
	 * The device may still write these pages: better lose them than
	 * hand them to somebody else, until the device is gone.
	 */
	drm_err(&mdev->drm, "writes not drained: keeping a BO's %zu bytes\n",
		mapping->bo->base.base.size);
	megpu_bo_registry_keep(mdev, mapping);
}

static void megpu_mapping_release(struct kref *kref)
{
	__megpu_mapping_release(container_of(kref, struct megpu_mapping,
					     refcount), false);
}

static void megpu_mapping_release_patient(struct kref *kref)
{
	__megpu_mapping_release(container_of(kref, struct megpu_mapping,
					     refcount), true);
}

void megpu_gem_mapping_put(struct megpu_mapping *mapping)
{
	if (mapping)
		kref_put(&mapping->refcount, megpu_mapping_release);
}

static const struct drm_gem_object_funcs megpu_gem_funcs;

/* The megpu BO a GEM export (drm_gem_prime_export) of @dmabuf is of. */
static struct drm_gem_object *megpu_gem_exporter(struct dma_buf *dmabuf)
{
	struct drm_gem_object *exp = dmabuf->priv;

	return dmabuf->ops->release == drm_gem_dmabuf_release && exp &&
	       exp->funcs == &megpu_gem_funcs ? exp : NULL;
}

/**
 * megpu_bo_peek - read a naturally aligned word of a megpu BO
 * @obj: the BO, or an import of a megpu BO of any device
 * @off: the word's offset, a multiple of @len
 * @len: 4 or 8
 * @v: where the word goes (CPU order)
 *
 * A megpu BO's pages are pinned for its life: only the word's page is
 * mapped, never the whole BO (up to 1 GiB of vmalloc space and its TLB
 * flushes for a few bytes). An import of one reads its exporter's pages
 * (the import's dma-buf keeps the exporter alive). One load, as the
 * device reads the word.
 *
 * Return: 0, or -ENOENT for an import of another driver's buffer or a
 * BO without pages.
 */
int megpu_bo_peek(struct drm_gem_object *obj, u64 off, unsigned int len,
		  u64 *v)
{
	struct drm_gem_shmem_object *shmem;
	void *page;

	if (obj->import_attach) {
		obj = megpu_gem_exporter(obj->import_attach->dmabuf);
		/* a megpu export is never of an import (re-export: the same) */
		if (!obj || obj->import_attach)
			return -ENOENT;
	}
	shmem = to_drm_gem_shmem_obj(obj);
	if (!shmem->pages || (off & (len - 1)) || off + len > obj->size)
		return -ENOENT;
	page = kmap_local_page(shmem->pages[off >> PAGE_SHIFT]);
	if (len == 8)
		*v = le64_to_cpu(READ_ONCE(*(__le64 *)(page +
							offset_in_page(off))));
	else
		*v = le32_to_cpu(READ_ONCE(*(__le32 *)(page +
							offset_in_page(off))));
	kunmap_local(page);
	return 0;
}

/*
 * The last reference of a job's mapping, in the cleanup worker: when the
 * pages wait for a host flush, wait until the device acknowledges it or
 * goes away, however long (the worker holds up no fence).
 */
void megpu_gem_mapping_put_patient(struct megpu_mapping *mapping)
{
	if (mapping)
		kref_put(&mapping->refcount, megpu_mapping_release_patient);
}

/* The BO's mapping in @vm, or NULL; mappings_lock held. */
static struct megpu_mapping *megpu_gem_find_mapping(struct megpu_bo *bo,
						    struct megpu_vm *vm)
{
	struct megpu_mapping *iter;

	lockdep_assert_held(&bo->mappings_lock);
	list_for_each_entry(iter, &bo->mappings, node)
		if (iter->vm == vm)
			return iter;
	return NULL;
}

/* The BO's mapping in @vm, referenced, or NULL. */
struct megpu_mapping *megpu_gem_mapping_get(struct megpu_bo *bo,
					    struct megpu_vm *vm)
{
	struct megpu_mapping *mapping;

	mutex_lock(&bo->mappings_lock);
	mapping = megpu_gem_find_mapping(bo, vm);
	if (mapping)
		kref_get(&mapping->refcount);
	mutex_unlock(&bo->mappings_lock);
	return mapping;
}

/**
 * megpu_vm_lookup_bo - the BO mapped at a GPU address range
 * @vm: the address space
 * @va: start of the range
 * @len: its length, not zero
 * @offset: out, where @va is in the BO
 *
 * For the driver's own reads of client memory it names by GPU address
 * (an event word of seed 002). A node in the address space holds its
 * BO (the mapping's reference goes only after the node), so the BO can
 * be referenced under the lock.
 *
 * Return: the BO's GEM object, referenced, or NULL when no one BO holds
 * all of [@va, @va + @len).
 */
struct drm_gem_object *megpu_vm_lookup_bo(struct megpu_vm *vm, u64 va,
					  u64 len, u64 *offset)
{
	struct drm_gem_object *obj = NULL;
	struct drm_mm_node *node;
	u64 first, last;

	if (!len || va + len < va)
		return NULL;
	first = va >> MEGPU_PAGE_SHIFT;
	last = (va + len - 1) >> MEGPU_PAGE_SHIFT;
	spin_lock(&vm->mm_lock);
	drm_mm_for_each_node_in_range(node, &vm->mm, first, first + 1) {
		struct megpu_mapping *m = container_of(node,
						       struct megpu_mapping,
						       mmnode);
		u64 start = megpu_mapping_va(m);
		struct drm_gem_object *bo = &m->bo->base.base;

		/* the node's last page is the unmapped guard */
		if (va < start || last >= node->start + node->size - 1 ||
		    va + len - start > bo->size)
			break;
		*offset = va - start;
		obj = bo;
		drm_gem_object_get(obj);
		break;
	}
	spin_unlock(&vm->mm_lock);
	return obj;
}

/*
 * An import's scatterlist (a 32-byte entry per page of shmem pages,
 * 8 MiB for a GiB) and its DMA mapping are kernel memory that each
 * importing file holds for as long as its object lives: they are charged
 * to the file that imported it (the first to open it: its prime cache
 * gives the object to no other file) as its pinned memory is, or every
 * file of one user could import the same large buffer for nothing.
 */
static int megpu_gem_charge_import(struct megpu_bo *bo,
				   struct megpu_file *mfile)
{
	struct sg_table *sgt = bo->base.sgt;
	u64 size;
	int ret;

	if (!bo->base.base.import_attach || !sgt || READ_ONCE(bo->owner))
		return 0;
	size = PAGE_ALIGN((u64)sgt->orig_nents * sizeof(struct scatterlist));
	ret = megpu_pin_charge(mfile, size);
	if (ret)
		return ret;
	bo->charge = size;
	if (cmpxchg(&bo->owner, NULL, megpu_file_get(mfile))) {
		/* another open charged it first */
		megpu_file_put(mfile);
		megpu_pin_uncharge(mfile, size);
	}
	return 0;
}

/*
 * A new handle in @file: map the BO into the file's address space. A
 * file may hold several handles to one BO (GEM_OPEN of a flink name):
 * they share one mapping, which goes with the last of them.
 */
static int megpu_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_bo *bo = to_megpu_bo(obj);
	struct megpu_mapping *mapping, *other;
	int ret;

	ret = megpu_gem_charge_import(bo, mfile);
	if (ret)
		return ret;
	mutex_lock(&bo->mappings_lock);
	mapping = megpu_gem_find_mapping(bo, mfile->vm);
	if (mapping)
		mapping->handles++;
	mutex_unlock(&bo->mappings_lock);
	if (mapping)
		return 0;

	mapping = kzalloc(sizeof(*mapping), GFP_KERNEL);
	if (!mapping)
		return -ENOMEM;
	INIT_LIST_HEAD(&mapping->node);
	kref_init(&mapping->refcount);
	atomic_inc(&mfile->mdev->live_mappings);
	drm_gem_object_get(obj);
	mapping->bo = bo;
	mapping->vm = megpu_vm_get(mfile->vm);
	mapping->handles = 1;

	/* one unmapped guard page after every BO */
	spin_lock(&mapping->vm->mm_lock);
	ret = drm_mm_insert_node_generic(&mapping->vm->mm, &mapping->mmnode,
					 (obj->size >> MEGPU_PAGE_SHIFT) + 1,
					 0, 0, 0);
	spin_unlock(&mapping->vm->mm_lock);
	/* drm_mm says -ENOSPC; the uAPI's -ENOSPC is the pinning limits */
	if (ret == -ENOSPC)
		ret = -ENOMEM;
	if (ret)
		goto err;

	ret = megpu_vm_map(mapping);
	if (ret)
		goto err;

	mutex_lock(&bo->mappings_lock);
	/* another handle of the same file came first: share its mapping */
	other = megpu_gem_find_mapping(bo, mfile->vm);
	if (other)
		other->handles++;
	else
		list_add_tail(&mapping->node, &bo->mappings);
	mutex_unlock(&bo->mappings_lock);
	if (other)
		megpu_gem_mapping_put(mapping);
	return 0;

err:
	megpu_gem_mapping_put(mapping);
	return ret;
}

static void megpu_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_bo *bo = to_megpu_bo(obj);
	struct megpu_mapping *mapping;

	mutex_lock(&bo->mappings_lock);
	mapping = megpu_gem_find_mapping(bo, mfile->vm);
	if (mapping && --mapping->handles)
		mapping = NULL;		/* another handle still uses it */
	else if (mapping)
		list_del_init(&mapping->node);
	mutex_unlock(&bo->mappings_lock);
	megpu_gem_mapping_put(mapping);
}

/**
 * megpu_gem_map_private - map a BO of the driver's into a file's space
 * @bo: the BO, never given a handle
 * @file: the file whose address space it goes into
 *
 * What a handle's open and close do, without the handle: the client
 * never sees the BO, so no other thread of it can take the handle's
 * number meanwhile for GEM_MMAP_OFFSET (a CPU mapping of a BO the
 * driver writes and the GPU only reads) or GEM_CLOSE.
 *
 * Return: the mapping, referenced, or an ERR_PTR().
 */
struct megpu_mapping *megpu_gem_map_private(struct megpu_bo *bo,
					    struct drm_file *file)
{
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_mapping *mapping;
	int ret;

	ret = megpu_gem_open(&bo->base.base, file);
	if (ret)
		return ERR_PTR(ret);
	mapping = megpu_gem_mapping_get(bo, mfile->vm);
	megpu_gem_close(&bo->base.base, file);
	return mapping ?: ERR_PTR(-ENOMEM);
}

/*
 * An import is mapped for the CPU through its dma-buf, as drm_gem_shmem
 * does, but through the attachment's: obj->dma_buf goes with the last
 * handle, which another thread may close while this mmap runs. And
 * dma_buf_mmap() does not look at the dma-buf file's mode: through this
 * device too, a handle must not write what its export only lets it read.
 */
static int megpu_gem_mmap(struct drm_gem_object *obj,
			  struct vm_area_struct *vma)
{
	struct dma_buf_attachment *attach = obj->import_attach;
	int ret;

	if (!attach)
		return drm_gem_shmem_object_mmap(obj, vma);
	if (!(attach->dmabuf->file->f_mode & FMODE_WRITE)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	vma->vm_private_data = NULL;
	vma->vm_ops = NULL;
	ret = dma_buf_mmap(attach->dmabuf, vma, 0);
	/* the exporter's mapping holds the buffer: not drm_gem_mmap()'s ref */
	if (!ret)
		drm_gem_object_put(obj);
	return ret;
}

/* fdinfo's drm-resident-memory: a BO's pages are pinned while it lives */
static enum drm_gem_object_status megpu_gem_status(struct drm_gem_object *obj)
{
	struct megpu_bo *bo = to_megpu_bo(obj);

	return obj->import_attach || bo->base.pages ?
	       DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs megpu_gem_funcs = {
	.free = megpu_gem_free,
	.open = megpu_gem_open,
	.close = megpu_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = megpu_gem_mmap,
	.status = megpu_gem_status,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *megpu_gem_create_object(struct drm_device *drm,
					       size_t size)
{
	struct megpu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	mutex_init(&bo->mappings_lock);
	INIT_LIST_HEAD(&bo->mappings);
	bo->base.base.funcs = &megpu_gem_funcs;
	bo->base.map_wc = false;
	return &bo->base.base;
}

/*
 * A BO is known to the device (resource objects, counters) only once its
 * creation succeeded: a failing drm_gem_shmem_create() frees the object
 * with kfree(), without calling megpu_gem_free().
 */
void megpu_gem_register(struct megpu_device *mdev, struct megpu_bo *bo)
{
	megpu_bo_registry_add(mdev, bo);
	atomic_inc(&mdev->live_bos);
}

/*
 * An import never grants more than the export: a dma-buf whose file was
 * exported without write access (PRIME without DRM_RDWR), or one that
 * is a READ_ONLY megpu BO of another device, is mapped read-only on this
 * device's GPU too. Another driver's buffer is judged by its file alone.
 */
static bool megpu_gem_dmabuf_read_only(struct dma_buf *dmabuf)
{
	struct drm_gem_object *exp = megpu_gem_exporter(dmabuf);

	if (!(dmabuf->file->f_mode & FMODE_WRITE))
		return true;
	return exp && to_megpu_bo(exp)->read_only;
}

struct drm_gem_object *
megpu_gem_prime_import_sg_table(struct drm_device *drm,
				struct dma_buf_attachment *attach,
				struct sg_table *sgt)
{
	struct drm_gem_object *obj;

	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, sgt);
	if (IS_ERR(obj))
		return obj;
	/* set before any mapping exists: the page tables follow it */
	to_megpu_bo(obj)->read_only = megpu_gem_dmabuf_read_only(attach->dmabuf);
	/*
	 * Every file that imports a foreign dma-buf gets an object of its
	 * own over the one dma_resv: another file's import may be used by
	 * this device's jobs too, unseen by this object's resource object.
	 */
	to_megpu_bo(obj)->aliased = true;
	megpu_gem_register(to_megpu(drm), to_megpu_bo(obj));
	return obj;
}

/*
 * PRIME import. This device's own BO comes back as the same object
 * (drm_gem_prime_import()), unless its dma-buf was exported without
 * write access. Then the import is an object of its own over the same
 * pages, attached as another device's buffer would be, read-only on the
 * GPU (megpu_gem_dmabuf_read_only()) and mapped for the CPU only through
 * the dma-buf: the handle must not write what its export only lets it
 * read. That holds for a READ_ONLY BO too, which its own device maps
 * writable for the CPU (its creator fills it). Both objects keep implicit
 * synchronization through the shared dma_resv (struct megpu_bo.aliased).
 */
struct drm_gem_object *megpu_gem_prime_import(struct drm_device *drm,
					      struct dma_buf *dmabuf)
{
	struct drm_gem_object *obj = dmabuf->priv;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	int ret;

	if (dmabuf->ops->release != drm_gem_dmabuf_release || !obj ||
	    obj->dev != drm || (dmabuf->file->f_mode & FMODE_WRITE))
		return drm_gem_prime_import(drm, dmabuf);

	/* as drm_gem_prime_import_dev() does for another device's buffer */
	attach = dma_buf_attach(dmabuf, drm->dev);
	if (IS_ERR(attach))
		return ERR_CAST(attach);
	get_dma_buf(dmabuf);
	sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto fail_detach;
	}
	obj = megpu_gem_prime_import_sg_table(drm, attach, sgt);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto fail_unmap;
	}
	obj->import_attach = attach;
	obj->resv = dmabuf->resv;
	/*
	 * One dma_resv, two resource objects: both sides' implicit
	 * dependencies on this device's jobs become explicit ones (GPU
	 * waits on their semaphores), before the alias can add a fence.
	 */
	to_megpu_bo(obj)->aliased = true;
	WRITE_ONCE(to_megpu_bo(dmabuf->priv)->aliased, true);
	return obj;

fail_unmap:
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
fail_detach:
	dma_buf_detach(dmabuf, attach);
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* Look up @handle and its mapping in the file's address space. */
static int megpu_lookup(struct drm_file *file, u32 handle,
			struct drm_gem_object **objp,
			struct megpu_mapping **mappingp)
{
	struct megpu_file *mfile = file->driver_priv;
	struct drm_gem_object *obj;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	*mappingp = megpu_gem_mapping_get(to_megpu_bo(obj), mfile->vm);
	if (!*mappingp) {
		drm_gem_object_put(obj);
		return -ENOENT;
	}
	*objp = obj;
	return 0;
}

int megpu_ioctl_gem_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct drm_megpu_gem_create *args = data;
	struct megpu_file *mfile = file->driver_priv;
	struct drm_gem_shmem_object *shmem;
	struct megpu_mapping *mapping;
	struct megpu_bo *bo;
	int ret;

	if (!args->size || args->size > MEGPU_BO_MAX_SIZE || args->pad ||
	    (args->flags & ~DRM_MEGPU_GEM_CREATE_FLAGS))
		return -EINVAL;

	ret = megpu_pin_charge(mfile, PAGE_ALIGN(args->size));
	if (ret)
		return ret;
	shmem = drm_gem_shmem_create(drm, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem)) {
		megpu_pin_uncharge(mfile, PAGE_ALIGN(args->size));
		return PTR_ERR(shmem);
	}
	bo = to_megpu_bo(&shmem->base);
	bo->read_only = args->flags & DRM_MEGPU_GEM_CREATE_READ_ONLY;
	/* the charge goes with the BO, which may outlive the file */
	megpu_bo_charged_to(bo, mfile, PAGE_ALIGN(args->size));
	megpu_gem_register(to_megpu(drm), bo);

	/* maps the BO into the file's address space, see megpu_gem_open() */
	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	/*
	 * The VA from the object, not from the handle: another thread of the
	 * file may have closed the handle by now, and its number may already
	 * name another BO (as panfrost_ioctl_create_bo() does).
	 */
	mapping = ret ? NULL : megpu_gem_mapping_get(bo, mfile->vm);
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	if (!mapping)
		return -EINVAL;	/* that thread guessed and closed the handle */
	args->va = megpu_mapping_va(mapping);
	megpu_gem_mapping_put(mapping);
	return 0;
}

int megpu_ioctl_gem_mmap_offset(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct drm_megpu_gem_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	/* imports too, as panfrost and v3d: megpu_gem_mmap() forwards them */
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

int megpu_ioctl_gem_info(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_megpu_gem_info *args = data;
	struct megpu_mapping *mapping;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad || args->pad2)
		return -EINVAL;
	ret = megpu_lookup(file, args->handle, &obj, &mapping);
	if (ret)
		return ret;
	args->size = obj->size;
	args->va = megpu_mapping_va(mapping);
	args->flags = to_megpu_bo(obj)->read_only ?
		      DRM_MEGPU_GEM_CREATE_READ_ONLY : 0;
	megpu_gem_mapping_put(mapping);
	drm_gem_object_put(obj);
	return 0;
}

int megpu_ioctl_gem_wait(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_megpu_gem_wait *args = data;
	unsigned long timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	struct drm_gem_object *obj;
	long ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true,
				    timeout);
	drm_gem_object_put(obj);
	if (!ret)
		return -ETIME;
	return ret < 0 ? ret : 0;
}
