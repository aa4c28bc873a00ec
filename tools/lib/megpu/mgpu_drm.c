// SPDX-License-Identifier: MIT
/*
 * libmegpu: multi-GPU coordination (seed 000) on the device: packets for
 * the command-stream builder, the agent parameters and MSEM_QUERY.
 */
#include <errno.h>
#include <string.h>
#include <xf86drm.h>

#include "libmegpu.h"
#include "megpu_hw.h"

int megpu_cs_msem_signal(struct megpu_cs *cs, uint64_t addr)
{
	uint32_t p[2] = { (uint32_t)addr, (uint32_t)(addr >> 32) };

	return megpu_cs_packet(cs, MEGPU_PKT_MSEM_SIGNAL, 0, p, 2);
}

int megpu_cs_msem_wait(struct megpu_cs *cs, uint64_t addr, uint32_t mask)
{
	uint32_t p[3] = { (uint32_t)addr, (uint32_t)(addr >> 32), mask };

	return megpu_cs_packet(cs, MEGPU_PKT_MSEM_WAIT, 0, p, 3);
}

int megpu_cs_arb(struct megpu_cs *cs, bool acquire, uint64_t addr,
		 uint32_t flags)
{
	uint32_t p[2] = { (uint32_t)addr, (uint32_t)(addr >> 32) };

	if (flags & ~MEGPU_ARB_FLAGS)
		return -EINVAL;
	return megpu_cs_packet(cs, acquire ? MEGPU_PKT_ARB_ACQUIRE :
			       MEGPU_PKT_ARB_RELEASE, flags, p, 2);
}

int megpu_mgpu_agent(struct megpu *gpu, unsigned int *id, unsigned int *count)
{
	uint64_t v;
	int ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_MGPU_AGENT_ID, &v);

	if (ret)
		return ret;
	*id = v;
	ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_MGPU_AGENT_COUNT, &v);
	if (ret)
		return ret;
	*count = v;
	return 0;
}

int megpu_msem_query(struct megpu_bo *bo, uint64_t offset, uint32_t mask,
		     uint32_t *value)
{
	struct drm_megpu_msem_query q;

	memset(&q, 0, sizeof(q));
	q.handle = bo->handle;
	q.offset = offset;
	q.mask = mask;
	if (drmIoctl(bo->gpu->fd, DRM_IOCTL_MEGPU_MSEM_QUERY, &q))
		return -errno;
	*value = q.value;
	return 0;
}
