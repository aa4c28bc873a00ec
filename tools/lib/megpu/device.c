// SPDX-License-Identifier: MIT
/* Finding and opening megpu render nodes, device parameters. */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "megpu_hw_regs.h"
#include "libmegpu.h"

#define MAX_DRM_DEVICES 64

static bool is_megpu(int fd)
{
	drmVersionPtr ver = drmGetVersion(fd);
	bool match;

	if (!ver)
		return false;
	match = ver->name && !strcmp(ver->name, MEGPU_DRIVER_NAME);
	drmFreeVersion(ver);
	return match;
}

/*
 * Walk the DRM devices in drmGetDevices2() order and open the index-th
 * megpu render node; with gpu == NULL only count them.
 */
static int megpu_find(struct megpu *gpu, unsigned int index)
{
	drmDevicePtr devs[MAX_DRM_DEVICES];
	unsigned int found = 0;
	int n, i, ret = -ENODEV;

	n = drmGetDevices2(0, devs, MAX_DRM_DEVICES);
	if (n < 0)
		return n;

	for (i = 0; i < n; i++) {
		const char *node;
		int fd;

		if (!(devs[i]->available_nodes & (1 << DRM_NODE_RENDER)))
			continue;
		node = devs[i]->nodes[DRM_NODE_RENDER];
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!is_megpu(fd)) {
			close(fd);
			continue;
		}
		if (gpu && found == index) {
			gpu->fd = fd;
			snprintf(gpu->node, sizeof(gpu->node), "%s", node);
			ret = 0;
			break;
		}
		close(fd);
		found++;
	}
	drmFreeDevices(devs, n);
	if (!gpu)
		return found;
	return ret;
}

int megpu_open(struct megpu *gpu, unsigned int index)
{
	gpu->fd = -1;
	gpu->node[0] = '\0';
	return megpu_find(gpu, index);
}

int megpu_count_devices(void)
{
	return megpu_find(NULL, 0);
}

void megpu_close(struct megpu *gpu)
{
	if (gpu->fd >= 0)
		close(gpu->fd);
	gpu->fd = -1;
}

int megpu_get_param(struct megpu *gpu, uint32_t param, uint64_t *value)
{
	struct drm_megpu_get_param args = { .param = param };

	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

int megpu_flush(struct megpu *gpu, uint64_t *seqno)
{
	struct drm_megpu_flush args = { 0 };

	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_FLUSH, &args))
		return -errno;
	if (seqno)
		*seqno = args.seqno;
	return 0;
}

int megpu_reopen(const struct megpu *gpu, struct megpu *other)
{
	other->fd = open(gpu->node, O_RDWR | O_CLOEXEC);
	if (other->fd < 0)
		return -errno;
	snprintf(other->node, sizeof(other->node), "%s", gpu->node);
	return 0;
}

int megpu_engines(struct megpu *gpu, unsigned int *count, uint64_t *types)
{
	uint64_t n = 0, t = 0;
	int ret;

	ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_ENGINE_COUNT, &n);
	ret = ret ?: megpu_get_param(gpu, DRM_MEGPU_PARAM_ENGINE_TYPES, &t);
	if (ret)
		return ret;
	if (n > MEGPU_MAX_ENGINES)
		return -EIO;
	if (count)
		*count = (unsigned int)n;
	if (types)
		*types = t;
	return 0;
}

int megpu_find_engine(struct megpu *gpu, unsigned int type)
{
	unsigned int n = 0, i;
	uint64_t types = 0;
	int ret;

	ret = megpu_engines(gpu, &n, &types);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (MEGPU_ENGINE_TYPE(types, i) == type)
			return (int)i;
	return -ENODEV;
}

int64_t megpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
