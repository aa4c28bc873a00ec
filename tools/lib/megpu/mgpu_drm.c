// SPDX-License-Identifier: MIT
/*
 * libmegpu: multi-GPU coordination (seed 000) on the device: packets for
 * the command-stream builder, the agent parameters and MSEM_QUERY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "libmegpu.h"
#include "megpu_hw_mgpu.h"

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

static int mgpu_schedule_write(struct megpu *gpu, const char *text,
			       size_t n)
{
	char path[256];
	ssize_t w;
	int ret, fd;

	ret = megpu_debugfs_path(gpu, "mgpu_schedule", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	w = write(fd, text, n);
	ret = w < 0 ? -errno : (size_t)w == n ? 0 : -EIO;
	close(fd);
	return ret;
}

int megpu_mgpu_schedule_set(struct megpu *gpu, const uint8_t *agent,
			    size_t len)
{
	size_t n = 0;
	char *text;
	int ret;

	text = malloc(4 * len + 8);
	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		n += sprintf(text + n, "%u ", agent[i]);
	if (!len)
		n = sprintf(text, "off");
	text[n++] = '\n';
	ret = mgpu_schedule_write(gpu, text, n);
	free(text);
	return ret;
}

int megpu_mgpu_schedule_seeded(struct megpu *gpu, uint64_t seed,
			       uint32_t agents_mask, size_t len)
{
	char text[96];
	int n = snprintf(text, sizeof(text), "seed 0x%llx mask 0x%x len %zu\n",
			 (unsigned long long)seed, agents_mask, len);

	return mgpu_schedule_write(gpu, text, n);
}

int megpu_mgpu_schedule_traced(struct megpu *gpu, uint64_t seed,
			       uint32_t agents_mask, size_t len)
{
	char text[112];
	int n = snprintf(text, sizeof(text),
			 "seed 0x%llx mask 0x%x len %zu trace\n",
			 (unsigned long long)seed, agents_mask, len);

	return mgpu_schedule_write(gpu, text, n);
}

int megpu_mgpu_schedule_done(struct megpu *gpu, unsigned int agent)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "done %u\n", agent);

	return mgpu_schedule_write(gpu, text, n);
}

int megpu_mgpu_trace_read(struct megpu *gpu, uint8_t *recs, uint32_t max,
			  uint32_t *count)
{
	unsigned int a, k, off, e, v, cap;
	char path[256], line[128];
	uint32_t n = 0;
	FILE *f;
	int ret;

	ret = megpu_debugfs_path(gpu, "mgpu_trace", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "count %u cap %u", count, &cap) != 2) {
		fclose(f);
		return -EIO;
	}
	while (n < max && fgets(line, sizeof(line), f) &&
	       sscanf(line, "%u %u %u %u %u", &a, &k, &off, &e, &v) == 5) {
		uint8_t *r = recs + (size_t)n++ * MEGPU_MGPU_REC_SIZE;

		r[MEGPU_MGPU_REC_AGENT] = a;
		r[MEGPU_MGPU_REC_KIND] = k;
		r[MEGPU_MGPU_REC_OFFSET] = off;
		r[MEGPU_MGPU_REC_ENGINE] = e;
		for (int i = 0; i < 4; i++)
			r[MEGPU_MGPU_REC_VALUE + i] = v >> (8 * i);
	}
	fclose(f);
	return n == (*count < max ? *count : max) ? 0 : -EIO;
}

int megpu_mgpu_status(struct megpu *gpu, struct megpu_mgpu_status *st)
{
	char path[256], line[256];
	unsigned int e, v[4];
	FILE *f;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = megpu_debugfs_path(gpu, "mgpu", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "agent %d", &st->agent) == 1 ||
		    sscanf(line, "count %u", &st->count) == 1 ||
		    sscanf(line, "schedule %u/%u", &st->sched_pos,
			   &st->sched_len) == 2 ||
		    sscanf(line, "steps %u", &st->steps) == 1)
			continue;
		if (sscanf(line, "engine %u msem_retries %u msem_false_blocks %u arb_spins %u arb_failed_waits %u",
			   &e, &v[0], &v[1], &v[2], &v[3]) == 5 &&
		    e < MEGPU_MGPU_ENGINES) {
			st->msem_retries[e] = v[0];
			st->msem_false_blocks[e] = v[1];
			st->arb_spins[e] = v[2];
			st->arb_failed_waits[e] = v[3];
			if (e + 1 > st->engines)
				st->engines = e + 1;
		}
	}
	fclose(f);
	return 0;
}
