/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/**
 * DOC: drm_sched compatibility
 *
 * Debian's 6.12 kernels are not API-stable for drm_sched: 6.12.95 takes
 * drm_sched_init() arguments one by one and a four-argument
 * drm_sched_job_init(); later builds take struct drm_sched_init_args and a
 * client id. Kbuild defines MEGPU_SCHED_INIT_ARGS from the headers.
 */
#ifndef MEGPU_COMPAT_H
#define MEGPU_COMPAT_H

#include <drm/drm_file.h>
#include <drm/gpu_scheduler.h>

static inline int
megpu_compat_sched_init(struct drm_gpu_scheduler *sched,
			const struct drm_sched_backend_ops *ops,
			struct workqueue_struct *submit_wq,
			u32 credit_limit, long timeout, const char *name,
			struct device *dev)
{
#ifdef MEGPU_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
		.submit_wq = submit_wq,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = credit_limit,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, ops, submit_wq, DRM_SCHED_PRIORITY_COUNT,
			      credit_limit, 0, timeout, NULL, NULL, name, dev);
#endif
}

static inline int megpu_compat_sched_job_init(struct drm_sched_job *job,
					      struct drm_sched_entity *entity,
					      void *owner,
					      struct drm_file *file)
{
#ifdef MEGPU_SCHED_INIT_ARGS
	return drm_sched_job_init(job, entity, 1, owner, file->client_id);
#else
	return drm_sched_job_init(job, entity, 1, owner);
#endif
}

#endif /* MEGPU_COMPAT_H */
