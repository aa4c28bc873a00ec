// SPDX-License-Identifier: MIT
/*
 * The smallest libmegpu program: fill a buffer on the GPU's first engine
 * and check it on the CPU. Build it against an installed libmegpu:
 *
 *	cc -o fill fill.c $(pkg-config --cflags --libs megpu)
 *
 * Exits 0 when the buffer holds the pattern, 1 on an error, 77 (a skip,
 * as automake and kselftest count it) when there is no megpu device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libmegpu.h>

#define BYTES	65536
#define PATTERN	0x4d454750u	/* "MEGP" */

int main(void)
{
	struct megpu_bo *bo = NULL;
	struct megpu_job job;
	struct megpu_cs cs;
	struct megpu gpu;
	uint32_t sync = 0;
	int ret, bad = 0;

	ret = megpu_open(&gpu, 0);
	if (ret) {
		fprintf(stderr, "fill: no megpu device: %s\n", strerror(-ret));
		return 77;
	}
	megpu_cs_init(&cs);
	megpu_job_init(&job, 0);
	ret = megpu_bo_new(&gpu, BYTES, 0, &bo);
	ret = ret ?: megpu_cs_fill(&cs, bo->va, BYTES, PATTERN);
	ret = ret ?: megpu_job_add_bo(&job, bo, DRM_MEGPU_BO_WRITE);
	ret = ret ?: megpu_syncobj_new(&gpu, false, &sync);
	if (!ret)
		megpu_job_signal_sync(&job, sync, 0);
	ret = ret ?: megpu_job_run(&gpu, &job, &cs);
	ret = ret ?: megpu_syncobj_wait(&gpu, sync, 0, 10000000000ll);
	ret = ret ?: megpu_fence_status(gpu.fd, sync, 0);
	ret = ret ?: megpu_bo_map(bo);
	if (!ret) {
		const uint32_t *w = bo->map;

		for (unsigned int i = 0; i < BYTES / 4; i++)
			bad += w[i] != PATTERN;
		printf("fill: %u bytes filled on the GPU, %d wrong words\n",
		       BYTES, bad);
	} else {
		fprintf(stderr, "fill: %s\n", strerror(-ret));
	}
	if (sync)
		megpu_syncobj_free(&gpu, sync);
	megpu_job_fini(&job);
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
	megpu_close(&gpu);
	return ret || bad ? 1 : 0;
}
