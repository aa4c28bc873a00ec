// SPDX-License-Identifier: MIT
/* Buffer objects: create, map, wait, PRIME export and import, free. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "libmegpu.h"

int megpu_bo_new(struct megpu *gpu, uint64_t size, uint32_t flags,
		 struct megpu_bo **out)
{
	struct drm_megpu_gem_create args = { .size = size, .flags = flags };
	struct megpu_bo *bo;

	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_GEM_CREATE, &args)) {
		int ret = -errno;

		free(bo);
		return ret;
	}
	bo->gpu = gpu;
	bo->handle = args.handle;
	bo->flags = flags;
	bo->size = size;
	bo->va = args.va;
	/* The driver rounds up; GEM_INFO has the real size. */
	megpu_bo_info(gpu, bo->handle, &bo->size, NULL);
	*out = bo;
	return 0;
}

static int megpu_gem_info(struct megpu *gpu, uint32_t handle,
			  struct drm_megpu_gem_info *args)
{
	*args = (struct drm_megpu_gem_info){ .handle = handle };
	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_GEM_INFO, args) ? -errno : 0;
}

int megpu_bo_info(struct megpu *gpu, uint32_t handle, uint64_t *size,
		  uint64_t *va)
{
	struct drm_megpu_gem_info args;
	int ret = megpu_gem_info(gpu, handle, &args);

	if (ret)
		return ret;
	if (size)
		*size = args.size;
	if (va)
		*va = args.va;
	return 0;
}

int megpu_bo_flags(struct megpu *gpu, uint32_t handle, uint32_t *flags)
{
	struct drm_megpu_gem_info args;
	int ret = megpu_gem_info(gpu, handle, &args);

	if (!ret)
		*flags = args.flags;
	return ret;
}

int megpu_bo_map(struct megpu_bo *bo)
{
	struct drm_megpu_gem_mmap_offset args = { .handle = bo->handle };
	void *p;

	if (bo->map)
		return 0;
	if (drmIoctl(bo->gpu->fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &args))
		return -errno;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bo->gpu->fd, (off_t)args.offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

void megpu_bo_free(struct megpu_bo *bo)
{
	struct drm_gem_close args;

	if (!bo)
		return;
	if (bo->map)
		munmap(bo->map, bo->size);
	args = (struct drm_gem_close){ .handle = bo->handle };
	drmIoctl(bo->gpu->fd, DRM_IOCTL_GEM_CLOSE, &args);
	free(bo);
}

/* A relative timeout as the absolute CLOCK_MONOTONIC time the uAPI wants. */
static int64_t abs_timeout(int64_t rel)
{
	int64_t now = megpu_now_ns();

	if (rel <= 0)
		return 0;
	return rel > INT64_MAX - now ? INT64_MAX : now + rel;
}

int megpu_bo_wait(struct megpu_bo *bo, int64_t timeout_ns)
{
	struct drm_megpu_gem_wait args = {
		.handle = bo->handle,
		.timeout_ns = abs_timeout(timeout_ns),
	};

	/* drmIoctl restarts on EINTR; an absolute deadline stays right. */
	if (drmIoctl(bo->gpu->fd, DRM_IOCTL_MEGPU_GEM_WAIT, &args))
		return -errno;
	return 0;
}

int megpu_bo_export(struct megpu_bo *bo, int *dmabuf_fd)
{
	int ret = drmPrimeHandleToFD(bo->gpu->fd, bo->handle,
				     DRM_CLOEXEC | DRM_RDWR, dmabuf_fd);

	return ret ? -errno : 0;
}

int megpu_bo_import(struct megpu *gpu, int dmabuf_fd, struct megpu_bo **out)
{
	struct drm_megpu_gem_info info;
	struct megpu_bo *bo;
	int ret;

	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->gpu = gpu;
	if (drmPrimeFDToHandle(gpu->fd, dmabuf_fd, &bo->handle)) {
		ret = -errno;
		free(bo);
		return ret;
	}
	ret = megpu_gem_info(gpu, bo->handle, &info);
	if (ret) {
		bo->map = NULL;
		megpu_bo_free(bo);
		return ret;
	}
	bo->size = info.size;
	bo->va = info.va;
	bo->flags = info.flags;
	*out = bo;
	return 0;
}

int megpu_taskq_check(struct megpu *gpu, struct megpu_bo *bo,
		      uint64_t offset, uint32_t slots, uint64_t *va)
{
	struct drm_megpu_taskq_check args = {
		.handle = bo->handle, .slots = slots, .offset = offset,
	};

	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_CHECK, &args))
		return -errno;
	if (va)
		*va = args.va;
	return 0;
}

int megpu_taskq_wake(struct megpu *gpu)
{
	struct drm_megpu_taskq_notify args = { 0 };

	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_NOTIFY, &args) ?
	       -errno : 0;
}

void megpu_taskq_wake_cb(void *priv)
{
	megpu_taskq_wake(priv);
}

int megpu_taskq_sleep(struct megpu *gpu, uint32_t *seq, uint64_t timeout_ns)
{
	struct drm_megpu_taskq_sleep args = {
		.seq = *seq,
		.flags = timeout_ns ? 0 : DRM_MEGPU_TASKQ_SLEEP_READ,
		.timeout_ns = abs_timeout(timeout_ns > INT64_MAX ? INT64_MAX :
					  (int64_t)timeout_ns),
	};

	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_SLEEP, &args))
		return -errno;
	*seq = args.seq;
	return 0;
}

int megpu_taskq_sleep_cb(void *priv, uint32_t *seq, uint64_t timeout_ns)
{
	return megpu_taskq_sleep(priv, seq, timeout_ns);
}

int megpu_taskq_attach(struct megpu *gpu, const struct drm_megpu_taskq_queue *qs,
		       unsigned int count, uint32_t engines)
{
	struct drm_megpu_taskq_attach args = {
		.queues = (uintptr_t)qs, .count = count, .engines = engines,
	};

	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_ATTACH, &args) ?
	       -errno : 0;
}

int megpu_taskq_wait(struct megpu *gpu, int64_t timeout_ns)
{
	struct drm_megpu_taskq_wait args = {
		.timeout_ns = abs_timeout(timeout_ns),
	};

	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_WAIT, &args))
		return -errno;
	return args.status;
}

int megpu_taskq_detach(struct megpu *gpu)
{
	struct drm_megpu_taskq_detach args = { 0 };

	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_TASKQ_DETACH, &args) ?
	       -errno : 0;
}
