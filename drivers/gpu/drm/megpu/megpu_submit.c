// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: The SUBMIT ioctl
 *
 * The SUBMIT ioctl: validate every field, collect the job's dependencies
 * (in-syncobjs and, unless told otherwise, the BOs' earlier fences), push
 * the job to its engine's scheduler and publish its fence in the BOs and
 * the out-syncobjs (out_sync and the DRM_MEGPU_EXT_ID_OUT_SYNCS extension).
 *
 * A dependency on a job of another engine of this GPU is waited for on
 * the GPU (seed 001): the scheduler only waits until the producer is in
 * its ring, and the consumer's frame WAITs on the producer's semaphore,
 * found through the BOs' resource objects or, for in-syncs, the
 * producer's hardware fence (megpu_prepare_job). Other fences are waited
 * for by the scheduler.
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"
#include "megpu_hw_packets.h"
#include "megpu_compat.h"
#include "megpu_trace.h"

/*
 * The job's dependencies on other megpu jobs, for the timeline: finished
 * fences are waited for on the CPU, scheduled ones become WAITs.
 */
static void megpu_trace_deps(struct megpu_job *job)
{
	struct drm_sched_fence *dep;
	struct dma_fence *fence;
	unsigned long index;

	xa_for_each(&job->base.dependencies, index, fence) {
		dep = to_drm_sched_fence(fence);
		if (!dep)
			continue;
		trace_megpu_job_dep(job->done_fence->context,
				    job->done_fence->seqno,
				    dep->finished.context, dep->finished.seqno,
				    fence == &dep->scheduled);
	}
}

static int megpu_submit_check_args(struct megpu_device *mdev,
				   const struct drm_megpu_submit *args)
{
	if (args->pad || args->out_sync.pad ||
	    (args->flags & ~DRM_MEGPU_SUBMIT_FLAGS))
		return -EINVAL;
	/* a point for no syncobj: a mistake, not a request to ignore */
	if (!args->out_sync.handle && args->out_sync.point)
		return -EINVAL;
	if (args->engine >= mdev->num_engines)
		return -EINVAL;
	if ((args->flags & DRM_MEGPU_SUBMIT_NO_FLUSH) &&
	    (args->flags & DRM_MEGPU_SUBMIT_HOST_FLUSH))
		return -EINVAL;
	if (!args->ib_size || args->ib_size % 4 || args->ib_va % 4 ||
	    args->ib_size / 4 > MEGPU_IB_MAX_DWORDS)
		return -EINVAL;
	if (!args->bo_count || args->bo_count > DRM_MEGPU_MAX_BOS ||
	    args->in_sync_count > DRM_MEGPU_MAX_SYNCS)
		return -EINVAL;
	return 0;
}

/* Look up the BOs and their mappings in the file's address space. */
static int megpu_submit_lookup_bos(struct drm_file *file,
				   const struct drm_megpu_submit *args,
				   struct megpu_job *job,
				   struct drm_gem_object **objs,
				   const struct drm_megpu_bo_ref *refs)
{
	bool ib_found = false;
	unsigned int i, j;

	for (i = 0; i < args->bo_count; i++) {
		struct megpu_mapping *mapping;
		u64 va;

		if (!refs[i].flags ||
		    (refs[i].flags & ~(DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE)))
			return -EINVAL;
		objs[i] = drm_gem_object_lookup(file, refs[i].handle);
		if (!objs[i])
			return -ENOENT;
		for (j = 0; j < i; j++)
			if (objs[j] == objs[i])
				return -EINVAL;

		/* no job is recorded as the writer of what it may only read */
		if ((refs[i].flags & DRM_MEGPU_BO_WRITE) &&
		    to_megpu_bo(objs[i])->read_only)
			return -EACCES;
		mapping = megpu_gem_mapping_get(to_megpu_bo(objs[i]), job->vm);
		if (!mapping)
			return -ENOENT;
		job->bo_flags[job->bo_count] = refs[i].flags;
		job->mappings[job->bo_count++] = mapping;

		/* no "ib_va + ib_size": it can wrap */
		va = megpu_mapping_va(mapping);
		if (args->ib_va >= va && args->ib_size <= objs[i]->size &&
		    args->ib_va - va <= objs[i]->size - args->ib_size)
			ib_found = true;
	}
	return ib_found ? 0 : -EINVAL;
}

/*
 * Add one dependency (takes the reference). With GPU semaphores, a
 * finished fence of another engine becomes its scheduled fence; an
 * explicit one is also remembered so that its semaphore is waited for.
 */
static int megpu_job_add_dep(struct megpu_job *job, struct dma_fence *fence,
			     bool explicit)
{
	struct megpu_device *mdev = job->engine->mdev;
	struct drm_gpu_scheduler *sched;
	struct drm_sched_fence *s_fence;
	u32 id;
	int ret;

	/* a host-flushed producer is done only when its fence says so */
	if (megpu_gpu_semaphores && !dma_fence_is_signaled(fence) &&
	    !test_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &fence->flags) &&
	    megpu_sched_fence_is_ours(mdev, fence, &sched) &&
	    sched != &job->engine->sched) {
		s_fence = to_drm_sched_fence(fence);
		if (fence == &s_fence->finished) {
			if (explicit) {
				ret = xa_alloc(&job->sem_deps, &id, fence,
					       xa_limit_32b, GFP_KERNEL);
				if (ret) {
					dma_fence_put(fence);
					return ret;
				}
				dma_fence_get(fence);
			}
			dma_fence_get(&s_fence->scheduled);
			dma_fence_put(fence);
			fence = &s_fence->scheduled;
		}
	}
	return drm_sched_job_add_dependency(&job->base, fence);
}

/* The BO's earlier users this job must follow (the resv is locked). */
static int megpu_job_add_implicit(struct megpu_job *job,
				  struct drm_gem_object *obj, bool write)
{
	struct dma_resv_iter cursor;
	/* set before the alias could add a fence to the shared resv */
	bool aliased = READ_ONCE(to_megpu_bo(obj)->aliased);
	struct dma_fence *fence;
	int ret;

	dma_resv_for_each_fence(&cursor, obj->resv, dma_resv_usage_rw(write),
				fence) {
		ret = megpu_job_add_dep(job, dma_fence_get(fence), aliased);
		if (ret)
			return ret;
	}
	return 0;
}

/* The index of @f's fence context in @job's in-fences, or -1. */
static int megpu_in_fence_find(struct megpu_job *job, struct dma_fence *f)
{
	unsigned int i;

	for (i = 0; i < job->in_fence_count; i++)
		if (job->in_fences[i]->context == f->context)
			return i;
	return -1;
}

/*
 * Remember an in-sync's pending fences, one per fence context, the later
 * of two (as drm_sched_job_add_dependency() keeps dependencies): a
 * timeline chain of N points or a merged sync_file costs one entry per
 * producer, what one SUBMIT attaches is bounded, and the walks of
 * megpu_job_inherits_failure() (run_job, megpu_cancel_consumers) are
 * short. A fence that already failed is inherited now; one that already
 * succeeded is forgotten.
 */
static int megpu_job_add_in_fence(struct megpu_job *job, struct dma_fence *in)
{
	struct megpu_device *mdev = job->engine->mdev;
	struct dma_fence_unwrap iter;
	struct dma_fence *f;
	int i;

	dma_fence_unwrap_for_each(f, &iter, in) {
		if (dma_fence_is_signaled(f)) {
			if (f->error)
				job->in_failed = true;
			continue;
		}
		i = megpu_in_fence_find(job, f);
		if (i >= 0) {
			if (dma_fence_is_later(f, job->in_fences[i])) {
				dma_fence_put(job->in_fences[i]);
				job->in_fences[i] = dma_fence_get(f);
			}
			continue;
		}
		if (job->in_fence_count == ARRAY_SIZE(job->in_fences))
			return -EINVAL;
		job->in_fences[job->in_fence_count++] = dma_fence_get(f);
		atomic_inc(&mdev->live_in_fences);
	}
	return 0;
}

static int megpu_submit_in_syncs(struct drm_file *file,
				 const struct drm_megpu_submit *args,
				 struct megpu_job *job)
{
	struct drm_megpu_sync __user *user = u64_to_user_ptr(args->in_syncs);
	struct drm_megpu_sync sync;
	struct dma_fence *fence;
	unsigned int i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		if (copy_from_user(&sync, &user[i], sizeof(sync)))
			return -EFAULT;
		if (sync.pad)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, sync.handle, sync.point, 0,
					     &fence);
		/* a point nobody submitted yet is as missing as a handle */
		if (ret == -EINVAL)
			return -ENOENT;
		if (ret)
			return ret;
		ret = megpu_job_add_in_fence(job, fence);
		dma_fence_put(fence);
		if (ret)
			return ret;
	}
	/* the explicit dependencies: one per producer */
	for (i = 0; i < job->in_fence_count; i++) {
		ret = megpu_job_add_dep(job, dma_fence_get(job->in_fences[i]),
					true);
		if (ret)
			return ret;
	}
	return 0;
}

static struct megpu_job *megpu_job_alloc(struct megpu_file *mfile, u32 count)
{
	struct megpu_job *job;

	/* what a user's jobs hold is charged to its memory cgroup */
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return NULL;
	job->mappings = kvcalloc(count, sizeof(*job->mappings),
				 GFP_KERNEL_ACCOUNT);
	job->bo_flags = kvcalloc(count, sizeof(*job->bo_flags),
				 GFP_KERNEL_ACCOUNT);
	if (!job->mappings || !job->bo_flags || megpu_job_alloc_fence(job)) {
		kfree(job->fence_mem);
		kvfree(job->mappings);
		kvfree(job->bo_flags);
		kfree(job);
		return NULL;
	}
	INIT_LIST_HEAD(&job->active_node);
	xa_init_flags(&job->sem_deps, XA_FLAGS_ALLOC);
	job->file = megpu_file_get(mfile);
	job->vm = megpu_vm_get(mfile->vm);
	/*
	 * The job keeps the device: the file that submitted it may be
	 * closed and the device unbound while it is in a ring, and the
	 * device's release must not come before the job's (megpu_cleanup.c).
	 */
	megpu_job_hold_device(mfile->mdev);
	atomic_inc(&mfile->mdev->live_jobs);
	return job;
}

/*
 * A job the driver builds itself (seed 002's kernel dequeuer): an IB in
 * the file's address space, no dependencies, not published in the BOs
 * (the tasks synchronise through their queue). Made before the dequeuer
 * takes tasks, pushed after: tasks taken from a queue must reach the
 * engine, so nothing that can fail comes between the take and the push.
 */
struct megpu_job *megpu_kernel_job_new(struct megpu_file *mfile,
				       struct drm_file *file, u32 engine,
				       struct megpu_mapping **maps,
				       const u32 *flags, u32 count)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_job *job;
	unsigned int i;
	int ret;

	if (READ_ONCE(mfile->banned))
		return ERR_PTR(-EIO);
	job = megpu_job_alloc(mfile, count);
	if (!job)
		return ERR_PTR(-ENOMEM);
	/* the file's as its SUBMIT jobs; TASKQ_ATTACH checks job_limit */
	atomic_inc(&mfile->jobs);
	job->counted = true;
	job->engine = &mdev->engines[engine];
	job->flush = mdev->caps & MEGPU_CAP_FLUSH;
	for (i = 0; i < count; i++) {
		kref_get(&maps[i]->refcount);
		job->bo_flags[job->bo_count] = flags[i];
		job->mappings[job->bo_count++] = maps[i];
	}
	ret = megpu_compat_sched_job_init(&job->base, &mfile->entity[engine],
					  mfile, file);
	if (ret) {
		megpu_job_put(job);
		return ERR_PTR(ret);
	}
	return job;
}

/* A kernel job that took nothing: it never reaches the scheduler. */
void megpu_kernel_job_drop(struct megpu_job *job)
{
	drm_sched_job_cleanup(&job->base);
	megpu_job_put(job);
}

/* The kernel job's IB is written: it goes to its engine's entity. */
struct dma_fence *megpu_kernel_job_push(struct megpu_job *job, u64 ib_va,
					u32 ib_dwords)
{
	struct megpu_device *mdev = job->file->mdev;
	struct dma_fence *done;

	job->ib_va = ib_va;
	job->ib_dwords = ib_dwords;
	mutex_lock(&mdev->submit_lock);
	drm_sched_job_arm(&job->base);
	job->done_fence = dma_fence_get(&job->base.s_fence->finished);
	done = dma_fence_get(job->done_fence);
	trace_megpu_job_submit(job->engine->index, job->vm->ctx_id,
			       job->bo_count, 0, job->done_fence->context,
			       job->done_fence->seqno);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&mdev->submit_lock);
	return done;
}

/* A syncobj that receives the job's fence (with a chain node: a point). */
struct megpu_out_sync {
	struct drm_syncobj *obj;
	struct dma_fence_chain *chain;
	u64 point;
};

/* out_sync and DRM_MEGPU_EXT_ID_OUT_SYNCS's: at most one per sync */
#define MEGPU_MAX_OUT_SYNCS	(1 + DRM_MEGPU_MAX_SYNCS)

static int megpu_out_sync_get(struct drm_file *file, struct megpu_out_sync *o,
			      unsigned int *n, const struct drm_megpu_sync *s)
{
	struct megpu_out_sync *d = &o[*n];

	if (s->pad)
		return -EINVAL;
	d->obj = drm_syncobj_find(file, s->handle);
	if (!d->obj)
		return -ENOENT;
	(*n)++;
	d->point = s->point;
	if (s->point) {
		d->chain = dma_fence_chain_alloc();
		if (!d->chain)
			return -ENOMEM;
	}
	return 0;
}

static int megpu_ext_out_syncs(struct drm_file *file, u64 ext,
			       struct megpu_out_sync *o, unsigned int *n)
{
	struct drm_megpu_ext_out_syncs x;
	struct drm_megpu_sync s;
	unsigned int i;
	int ret;

	if (copy_from_user(&x, u64_to_user_ptr(ext), sizeof(x)))
		return -EFAULT;
	if (x.pad || !x.count || x.count > DRM_MEGPU_MAX_SYNCS)
		return -EINVAL;
	for (i = 0; i < x.count; i++) {
		if (copy_from_user(&s, u64_to_user_ptr(x.syncs + i * sizeof(s)),
				   sizeof(s)))
			return -EFAULT;
		ret = megpu_out_sync_get(file, o, n, &s);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The extension chain (v3d's pattern): bounded, each id once, every
 * unknown id or flag refused so that a later id cannot be ignored by an
 * older kernel.
 */
static int megpu_submit_extensions(struct drm_file *file, u64 ext,
				   struct megpu_out_sync *o, unsigned int *n)
{
	struct drm_megpu_extension h;
	unsigned int i;
	u32 seen = 0;
	int ret;

	for (i = 0; ext; i++, ext = h.next) {
		if (i == DRM_MEGPU_MAX_EXTENSIONS)
			return -EINVAL;
		if (copy_from_user(&h, u64_to_user_ptr(ext), sizeof(h)))
			return -EFAULT;
		if (h.flags || h.id >= 32 || (seen & BIT(h.id)))
			return -EINVAL;
		seen |= BIT(h.id);
		switch (h.id) {
		case DRM_MEGPU_EXT_ID_OUT_SYNCS:
			ret = megpu_ext_out_syncs(file, ext, o, n);
			break;
		default:
			ret = -EINVAL;
		}
		if (ret)
			return ret;
	}
	return 0;
}

int megpu_ioctl_submit(struct drm_device *drm, void *data,
		       struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct drm_megpu_submit *args = data;
	struct megpu_out_sync *outs = NULL;
	unsigned int n_outs = 0;
	struct drm_megpu_bo_ref *refs = NULL;
	struct drm_gem_object **objs = NULL;
	struct dma_fence *done = NULL;
	struct ww_acquire_ctx acquire;
	struct megpu_job *job;
	bool armed = false;
	unsigned int i;
	int ret;

	ret = megpu_submit_check_args(mdev, args);
	if (ret)
		return ret;
	/* a job of this file hung: it must open the device again */
	if (READ_ONCE(mfile->banned))
		return -EIO;

	/*
	 * Jobs queue in the entity without bound behind a fence that never
	 * comes (a user's vgem fence, a gated job): each file may have
	 * megpu_job_limit of them; beyond, SUBMIT fails until some are done.
	 */
	if (atomic_inc_return(&mfile->jobs) > READ_ONCE(megpu_job_limit)) {
		atomic_dec(&mfile->jobs);
		return -EBUSY;
	}
	refs = kvmalloc_array(args->bo_count, sizeof(*refs), GFP_KERNEL);
	objs = kvcalloc(args->bo_count, sizeof(*objs), GFP_KERNEL);
	job = megpu_job_alloc(mfile, args->bo_count);
	if (job)
		job->counted = true;	/* until freed, also on errors */
	else
		atomic_dec(&mfile->jobs);
	if (!refs || !objs || !job) {
		ret = -ENOMEM;
		goto out_free;
	}
	job->engine = &mdev->engines[args->engine];
	job->implicit = !(args->flags & DRM_MEGPU_SUBMIT_NO_IMPLICIT);
	/* a device without posted writes (no CAP_FLUSH) needs no flush */
	if (mdev->caps & MEGPU_CAP_FLUSH) {
		job->host_flush = args->flags & DRM_MEGPU_SUBMIT_HOST_FLUSH;
		job->flush = !(args->flags & (DRM_MEGPU_SUBMIT_NO_FLUSH |
					      DRM_MEGPU_SUBMIT_HOST_FLUSH));
	}
	job->ib_va = args->ib_va;
	job->ib_dwords = args->ib_size / 4;

	if (copy_from_user(refs, u64_to_user_ptr(args->bos),
			   args->bo_count * sizeof(*refs))) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = megpu_submit_lookup_bos(file, args, job, objs, refs);
	if (ret)
		goto out_free;

	if (args->out_sync.handle || args->extensions) {
		outs = kvcalloc(MEGPU_MAX_OUT_SYNCS, sizeof(*outs), GFP_KERNEL);
		if (!outs) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	if (args->out_sync.handle) {
		ret = megpu_out_sync_get(file, outs, &n_outs, &args->out_sync);
		if (ret)
			goto out_free;
	}
	ret = megpu_submit_extensions(file, args->extensions, outs, &n_outs);
	if (ret)
		goto out_free;

	ret = megpu_compat_sched_job_init(&job->base,
					  &mfile->entity[args->engine],
					  mfile, file);
	if (ret)
		goto out_free;

	ret = megpu_submit_in_syncs(file, args, job);
	if (ret)
		goto out_cleanup;

	ret = drm_gem_lock_reservations(objs, args->bo_count, &acquire);
	if (ret)
		goto out_cleanup;
	for (i = 0; i < args->bo_count; i++) {
		bool write = refs[i].flags & DRM_MEGPU_BO_WRITE;

		ret = dma_resv_reserve_fences(objs[i]->resv, 1);
		if (!ret && job->implicit)
			ret = megpu_job_add_implicit(job, objs[i], write);
		if (ret)
			goto out_unlock;
	}

	mutex_lock(&mdev->submit_lock);
	drm_sched_job_arm(&job->base);
	armed = true;
	job->done_fence = dma_fence_get(&job->base.s_fence->finished);
	if (job->host_flush)
		set_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &job->done_fence->flags);
	for (i = 0; i < args->bo_count; i++)
		dma_resv_add_fence(objs[i]->resv, job->done_fence,
				   refs[i].flags & DRM_MEGPU_BO_WRITE ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	trace_megpu_job_submit(args->engine, job->vm->ctx_id, args->bo_count,
			       args->in_sync_count, job->done_fence->context,
			       job->done_fence->seqno);
	if (trace_megpu_job_dep_enabled())
		megpu_trace_deps(job);
	/*
	 * Once pushed, the job may run, complete and be freed (free_job)
	 * before this returns: what follows uses its own fence reference.
	 */
	done = dma_fence_get(job->done_fence);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&mdev->submit_lock);

	for (i = 0; i < n_outs; i++) {
		if (outs[i].chain) {
			drm_syncobj_add_point(outs[i].obj, outs[i].chain, done,
					      outs[i].point);
			outs[i].chain = NULL;
		} else {
			drm_syncobj_replace_fence(outs[i].obj, done);
		}
	}
	ret = 0;

out_unlock:
	drm_gem_unlock_reservations(objs, args->bo_count, &acquire);
out_cleanup:
	if (!armed)
		drm_sched_job_cleanup(&job->base);
out_free:
	if (job && !armed)
		megpu_job_put(job);
	dma_fence_put(done);
	for (i = 0; i < n_outs; i++) {
		dma_fence_chain_free(outs[i].chain);
		drm_syncobj_put(outs[i].obj);
	}
	kvfree(outs);
	if (objs)
		for (i = 0; i < args->bo_count; i++)
			if (objs[i])
				drm_gem_object_put(objs[i]);
	kvfree(objs);
	kvfree(refs);
	return ret;
}
