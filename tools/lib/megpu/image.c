// SPDX-License-Identifier: MIT
/*
 * The seed's FIG. 5 chain: BLUR3X3 on one engine, then SEPIA on another
 * engine that reads the blurred image. The dependency is an in-sync only,
 * so how the blur's writes reach memory before the sepia reads them is up
 * to the blur's submit flags: the host-driven handshake (HOST_FLUSH), the
 * engine's own flush (default), or nothing (NO_FLUSH: stale reads).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "libmegpu.h"

/* Argument blocks: blur at 0, sepia at 64. */
#define ARGS_SEPIA 64

static bool engine_runs(struct megpu *gpu, unsigned int engine,
			unsigned int kernel)
{
	unsigned int n = 0;
	uint64_t types = 0;

	if (megpu_engines(gpu, &n, &types) || engine >= n)
		return false;
	return megpu_engine_kernels(MEGPU_ENGINE_TYPE(types, engine)) &
	       MEGPU_BIT(kernel);
}

static int chain_job(struct megpu_chain *c, struct megpu_job *job,
		     unsigned int engine, unsigned int kernel,
		     struct megpu_bo *in, struct megpu_bo *out,
		     uint64_t args_off)
{
	struct megpu_kargs k = {
		.ptr = { in->va, out->va },
		.param = { c->width, c->height, c->width },
	};
	struct megpu_cs cs;
	uint64_t args;
	int ret;

	megpu_job_init(job, engine);
	ret = megpu_job_add_bo(job, in, DRM_MEGPU_BO_READ) ?:
	      megpu_job_add_bo(job, out, DRM_MEGPU_BO_WRITE) ?:
	      megpu_job_add_bo(job, c->args, DRM_MEGPU_BO_READ) ?:
	      megpu_kargs_write(c->args, args_off, &k, &args);
	if (ret)
		return ret;
	megpu_cs_init(&cs);
	megpu_cs_dispatch_image(&cs, kernel, args, c->width, c->height);
	ret = megpu_job_upload(c->gpu, job, &cs);
	megpu_cs_fini(&cs);
	return ret;
}

int megpu_chain_init(struct megpu_chain *c, struct megpu *gpu,
		     unsigned int blur_engine, unsigned int sepia_engine,
		     uint32_t width, uint32_t height)
{
	uint64_t bytes = (uint64_t)width * height * 4;
	struct megpu_bo **bos[3];
	unsigned int i;
	int ret;

	memset(c, 0, sizeof(*c));
	c->gpu = gpu;
	c->blur_engine = blur_engine;
	c->sepia_engine = sepia_engine;
	c->width = width;
	c->height = height;
	megpu_job_init(&c->blur, blur_engine);
	megpu_job_init(&c->sepia, sepia_engine);
	if (!width || !height || bytes > (256ull << 20))
		return -EINVAL;
	if (!engine_runs(gpu, blur_engine, MEGPU_KERNEL_BLUR3X3) ||
	    !engine_runs(gpu, sepia_engine, MEGPU_KERNEL_SEPIA))
		return -EINVAL;

	bos[0] = &c->src;
	bos[1] = &c->tmp;
	bos[2] = &c->dst;
	for (i = 0; i < 3; i++) {
		ret = megpu_bo_new(gpu, bytes, 0, bos[i]);
		ret = ret ?: megpu_bo_map(*bos[i]);
		if (ret)
			goto fail;
		memset((*bos[i])->map, 0, (*bos[i])->size);
	}
	ret = megpu_bo_new(gpu, 4096, 0, &c->args);
	ret = ret ?: megpu_bo_map(c->args);
	ret = ret ?: megpu_syncobj_new(gpu, false, &c->blur_sync);
	ret = ret ?: megpu_syncobj_new(gpu, false, &c->sepia_sync);
	ret = ret ?: chain_job(c, &c->blur, blur_engine, MEGPU_KERNEL_BLUR3X3,
			       c->src, c->tmp, 0);
	ret = ret ?: chain_job(c, &c->sepia, sepia_engine, MEGPU_KERNEL_SEPIA,
			       c->tmp, c->dst, ARGS_SEPIA);
	if (ret)
		goto fail;
	/* Only the in-sync orders the sepia after the blur. */
	c->blur.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	c->sepia.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	megpu_job_signal_sync(&c->blur, c->blur_sync, 0);
	megpu_job_signal_sync(&c->sepia, c->sepia_sync, 0);
	ret = megpu_job_wait_sync(&c->sepia, c->blur_sync, 0);
	if (ret)
		goto fail;
	return 0;
fail:
	megpu_chain_fini(c);
	return ret;
}

void megpu_chain_fini(struct megpu_chain *c)
{
	megpu_job_fini(&c->blur);
	megpu_job_fini(&c->sepia);
	if (c->blur_sync)
		megpu_syncobj_free(c->gpu, c->blur_sync);
	if (c->sepia_sync)
		megpu_syncobj_free(c->gpu, c->sepia_sync);
	megpu_bo_free(c->src);
	megpu_bo_free(c->tmp);
	megpu_bo_free(c->dst);
	megpu_bo_free(c->args);
	c->src = c->tmp = c->dst = c->args = NULL;
	c->blur_sync = c->sepia_sync = 0;
}

static int chain_wait(struct megpu_chain *c, uint32_t sync, int64_t timeout)
{
	int ret = megpu_syncobj_wait(c->gpu, sync, 0, timeout);

	return ret ?: megpu_fence_status(c->gpu->fd, sync, 0);
}

int megpu_chain_run(struct megpu_chain *c, uint32_t blur_flags,
		    int64_t timeout_ns, struct megpu_chain_times *t)
{
	struct megpu_chain_times times;
	int ret, ret2;

	c->blur.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT | blur_flags;
	times.start = megpu_now_ns();
	ret = megpu_job_submit(c->gpu, &c->blur);
	if (ret)
		return ret;
	ret = megpu_job_submit(c->gpu, &c->sepia);
	/* the blur was submitted: wait for it whatever happened since */
	ret2 = chain_wait(c, c->blur_sync, timeout_ns);
	times.blur_done = megpu_now_ns();
	if (ret)
		return ret;
	ret = chain_wait(c, c->sepia_sync, timeout_ns);
	times.sepia_done = megpu_now_ns();
	if (t)
		*t = times;
	return ret2 ?: ret;
}

int megpu_chain_reference(const struct megpu_chain *c, uint32_t *expect)
{
	uint32_t *tmp = malloc((size_t)c->width * c->height * 4);

	if (!tmp)
		return -ENOMEM;
	megpu_ref_blur3x3(c->src->map, tmp, c->width, c->height, c->width);
	megpu_ref_sepia(tmp, expect, c->width, c->height, c->width);
	free(tmp);
	return 0;
}

uint64_t megpu_chain_mismatches(const struct megpu_chain *c,
				const uint32_t *expect)
{
	const uint32_t *dst = c->dst->map;
	uint64_t i, n = (uint64_t)c->width * c->height, bad = 0;

	for (i = 0; i < n; i++)
		bad += dst[i] != expect[i];
	return bad;
}
