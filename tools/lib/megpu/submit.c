// SPDX-License-Identifier: MIT
/* Jobs: an IB uploaded into a BO and DRM_IOCTL_MEGPU_SUBMIT. */

#include <errno.h>
#include <string.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "megpu_hw_packets.h"
#include "libmegpu.h"

/* Allocated IBs are at least this big, so small jobs reuse theirs. */
#define IB_MIN_SIZE 4096

void megpu_job_init(struct megpu_job *job, unsigned int engine)
{
	memset(job, 0, sizeof(*job));
	job->engine = engine;
}

void megpu_job_fini(struct megpu_job *job)
{
	if (job->own_ib)
		megpu_bo_free(job->ib);
	job->ib = NULL;
	job->own_ib = false;
}

int megpu_job_add_bo(struct megpu_job *job, struct megpu_bo *bo,
		     uint32_t flags)
{
	unsigned int i;

	for (i = 0; i < job->bo_count; i++)
		if (job->bos[i].handle == bo->handle) {
			job->bos[i].flags |= flags;
			return 0;
		}
	if (job->bo_count == MEGPU_JOB_MAX_BOS)
		return -E2BIG;
	job->bos[job->bo_count++] = (struct drm_megpu_bo_ref){
		.handle = bo->handle,
		.flags = flags,
	};
	return 0;
}

int megpu_job_wait_sync(struct megpu_job *job, uint32_t syncobj,
			uint64_t point)
{
	if (job->in_count == MEGPU_JOB_MAX_SYNCS)
		return -E2BIG;
	job->in[job->in_count++] = (struct drm_megpu_sync){
		.handle = syncobj,
		.point = point,
	};
	return 0;
}

void megpu_job_signal_sync(struct megpu_job *job, uint32_t syncobj,
			   uint64_t point)
{
	job->out = (struct drm_megpu_sync){ .handle = syncobj, .point = point };
}

int megpu_job_add_signal_sync(struct megpu_job *job, uint32_t syncobj,
			      uint64_t point)
{
	if (job->more_out_count == MEGPU_JOB_MAX_OUTS)
		return -E2BIG;
	job->more_out[job->more_out_count++] = (struct drm_megpu_sync){
		.handle = syncobj,
		.point = point,
	};
	return 0;
}

void megpu_job_set_ib(struct megpu_job *job, struct megpu_bo *bo,
		      uint64_t offset)
{
	megpu_job_fini(job);
	job->ib = bo;
	job->ib_offset = offset;
}

int megpu_job_upload(struct megpu *gpu, struct megpu_job *job,
		     const struct megpu_cs *cs)
{
	uint64_t bytes = megpu_cs_bytes(cs);
	int ret;

	if (cs->error)
		return cs->error;
	if (!cs->len || cs->len > MEGPU_IB_MAX_DWORDS)
		return -EINVAL;
	if (job->own_ib && job->ib->size < bytes)
		megpu_job_fini(job);
	if (!job->ib) {
		ret = megpu_bo_new(gpu, bytes > IB_MIN_SIZE ? bytes :
				   IB_MIN_SIZE, 0, &job->ib);
		if (ret)
			return ret;
		job->own_ib = true;
		job->ib_offset = 0;
	} else if (job->own_ib) {
		/* An earlier submit of this job may still be executing it. */
		ret = megpu_bo_wait(job->ib, MEGPU_FOREVER);
		if (ret)
			return ret;
	} else if (job->ib_offset > job->ib->size ||
		   job->ib->size - job->ib_offset < bytes ||
		   job->ib_offset % 4) {
		return -ENOSPC;
	}
	ret = megpu_bo_map(job->ib);
	if (ret)
		return ret;
	memcpy((uint8_t *)job->ib->map + job->ib_offset, cs->dw, bytes);
	job->ib_dwords = cs->len;
	return 0;
}

int megpu_job_submit(struct megpu *gpu, struct megpu_job *job)
{
	return megpu_job_submit_ext(gpu, job, 0);
}

int megpu_job_submit_ext(struct megpu *gpu, struct megpu_job *job,
			 uint64_t extensions)
{
	struct drm_megpu_ext_out_syncs outs = {
		.base.id = DRM_MEGPU_EXT_ID_OUT_SYNCS,
		.base.next = extensions,
		.syncs = (uintptr_t)job->more_out,
		.count = job->more_out_count,
	};
	struct drm_megpu_submit args;
	int ret;

	if (!job->ib || !job->ib_dwords)
		return -EINVAL;
	ret = megpu_job_add_bo(job, job->ib, DRM_MEGPU_BO_READ);
	if (ret)
		return ret;
	args = (struct drm_megpu_submit){
		.engine = job->engine,
		.flags = job->flags,
		.ib_va = job->ib->va + job->ib_offset,
		.ib_size = job->ib_dwords * 4,
		.bo_count = job->bo_count,
		.bos = (uintptr_t)job->bos,
		.in_syncs = (uintptr_t)job->in,
		.in_sync_count = job->in_count,
		.out_sync = job->out,
		.extensions = job->more_out_count ? (uintptr_t)&outs :
			      extensions,
	};
	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SUBMIT, &args))
		return -errno;
	return 0;
}

int megpu_job_run(struct megpu *gpu, struct megpu_job *job,
		  const struct megpu_cs *cs)
{
	return megpu_job_upload(gpu, job, cs) ?: megpu_job_submit(gpu, job);
}
