// SPDX-License-Identifier: MIT
/* Syncobjs on libdrm, sync_files and the error a fence completed with. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "libmegpu.h"

/* libdrm's syncobj calls return -1 or -errno; errno is set either way. */
static int drm_ret(int ret)
{
	return ret ? -errno : 0;
}

static int64_t abs_timeout(int64_t rel)
{
	int64_t now = megpu_now_ns();

	if (rel <= 0)
		return now;
	return rel > INT64_MAX - now ? INT64_MAX : now + rel;
}

int megpu_syncobj_new(struct megpu *gpu, bool signaled, uint32_t *handle)
{
	return drm_ret(drmSyncobjCreate(gpu->fd, signaled ?
					DRM_SYNCOBJ_CREATE_SIGNALED : 0,
					handle));
}

void megpu_syncobj_free(struct megpu *gpu, uint32_t handle)
{
	if (handle)
		drmSyncobjDestroy(gpu->fd, handle);
}

int megpu_syncobj_wait(struct megpu *gpu, uint32_t handle, uint64_t point,
		       int64_t timeout_ns)
{
	uint32_t flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;

	if (!point)
		return drm_ret(drmSyncobjWait(gpu->fd, &handle, 1,
					      abs_timeout(timeout_ns),
					      flags, NULL));
	return drm_ret(drmSyncobjTimelineWait(gpu->fd, &handle, &point, 1,
					      abs_timeout(timeout_ns),
					      flags, NULL));
}

int megpu_syncobj_wait_many(struct megpu *gpu, uint32_t *handles,
			    unsigned int n, bool all, int64_t timeout_ns)
{
	uint32_t flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;

	if (all)
		flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	return drm_ret(drmSyncobjWait(gpu->fd, handles, n,
				      abs_timeout(timeout_ns), flags, NULL));
}

int megpu_syncobj_transfer(struct megpu *gpu, uint32_t dst,
			   uint64_t dst_point, uint32_t src,
			   uint64_t src_point)
{
	return drm_ret(drmSyncobjTransfer(gpu->fd, dst, dst_point, src,
					  src_point, 0));
}

/* A sync_file of any fd (not only a struct megpu's). */
static int export_fd(int fd, uint32_t handle, uint64_t point, int *sync_file)
{
	uint32_t tmp;
	int ret;

	if (!point)
		return drm_ret(drmSyncobjExportSyncFile(fd, handle, sync_file));
	/* Export takes a binary syncobj's fence: move the point to one. */
	ret = drm_ret(drmSyncobjCreate(fd, 0, &tmp));
	if (ret)
		return ret;
	ret = drm_ret(drmSyncobjTransfer(fd, tmp, 0, handle, point, 0));
	ret = ret ?: drm_ret(drmSyncobjExportSyncFile(fd, tmp, sync_file));
	drmSyncobjDestroy(fd, tmp);
	return ret;
}

int megpu_syncobj_export(struct megpu *gpu, uint32_t handle, uint64_t point,
			 int *sync_file)
{
	return export_fd(gpu->fd, handle, point, sync_file);
}

int megpu_syncobj_import(struct megpu *gpu, uint32_t handle, int sync_file)
{
	return drm_ret(drmSyncobjImportSyncFile(gpu->fd, handle, sync_file));
}

/*
 * The worst of the sync_file's fences: a chain or array reports only its
 * own state, the error sits on the fence inside.
 */
int megpu_sync_file_status(int sync_file)
{
	struct sync_file_info info;
	struct sync_fence_info *fences;
	int status, i;

	memset(&info, 0, sizeof(info));
	if (ioctl(sync_file, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	status = info.status;
	if (info.num_fences) {
		fences = calloc(info.num_fences, sizeof(*fences));
		if (!fences)
			return -ENOMEM;
		info.sync_fence_info = (uintptr_t)fences;
		if (ioctl(sync_file, SYNC_IOC_FILE_INFO, &info)) {
			free(fences);
			return -errno;
		}
		status = 1;
		for (i = 0; i < (int)info.num_fences; i++) {
			if (fences[i].status < 0) {
				status = fences[i].status;
				break;
			}
			if (!fences[i].status)
				status = 0;
		}
		if (status > 0 && info.status < 0)
			status = info.status;
		free(fences);
	}
	if (status < 0)
		return status;
	return status ? 0 : 1;
}

int megpu_fence_status(int fd, uint32_t syncobj, uint64_t point)
{
	int sync_file, ret;

	ret = export_fd(fd, syncobj, point, &sync_file);
	if (ret)
		return ret;
	ret = megpu_sync_file_status(sync_file);
	close(sync_file);
	return ret == 1 ? -EINPROGRESS : ret;
}
