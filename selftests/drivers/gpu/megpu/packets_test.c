// SPDX-License-Identifier: GPL-2.0
/*
 * Every packet on every engine that accepts it, results checked through
 * mmap; every packet an engine does not accept, and ring-only packets in
 * an IB, fault the job (-EFAULT) and leave the engine working.
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define DATA_BYTES (64 * 1024)

MT_FIXTURE(gpu)

TEST_F(gpu, write_data)
{
	uint32_t data[5] = { 0x11111111, 0x22222222, 0, 0xffffffff, 42 };
	struct megpu_bo *bo;
	struct megpu_cs cs;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		uint32_t off = 256 * e;

		data[2] = e;
		megpu_cs_reset(&cs);
		megpu_cs_write_data(&cs, bo->va + off, data, 5);
		megpu_cs_write32(&cs, bo->va + off + 64, ~e);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		EXPECT_EQ(0, memcmp(mt_u32(bo) + off / 4, data, sizeof(data)));
		EXPECT_EQ(~e, mt_u32(bo)[(off + 64) / 4]);
		EXPECT_EQ(0, mt_u32(bo)[(off + 20) / 4]);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

TEST_F(gpu, timestamp)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	uint64_t *q;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	q = bo->map;
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_timestamp(&cs, bo->va + 16 * e,
				   0x123456789abcdef0ull + e, false);
		megpu_cs_timestamp(&cs, bo->va + 16 * e + 8, 88 + e, true);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		EXPECT_EQ(0x123456789abcdef0ull + e, q[2 * e]);
		EXPECT_EQ(88 + e, q[2 * e + 1]);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

TEST_F(gpu, copy)
{
	struct megpu_bo *bos[2];
	struct megpu_cs cs;
	unsigned int e, i, tested = 0;
	uint32_t *src, *dst;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, DATA_BYTES, 0, &bos[0]));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, DATA_BYTES, 0, &bos[1]));
	src = mt_u32(bos[0]);
	dst = mt_u32(bos[1]);
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		if (!mt_accepts(&self->t, e, MEGPU_PKT_COPY))
			continue;
		for (i = 0; i < DATA_BYTES / 4; i++)
			src[i] = i * 2654435761u + e;
		memset(dst, 0, DATA_BYTES);
		megpu_cs_reset(&cs);
		/* All but the last page, and a small copy at an offset. */
		megpu_cs_copy(&cs, bos[0]->va, bos[1]->va, DATA_BYTES - 4096);
		megpu_cs_copy(&cs, bos[0]->va + 8, bos[1]->va + DATA_BYTES - 64,
			      16);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, bos, 2))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		EXPECT_EQ(0, memcmp(src, dst, DATA_BYTES - 4096));
		EXPECT_EQ(0, dst[(DATA_BYTES - 4096) / 4]);
		EXPECT_EQ(0, memcmp(src + 2, dst + (DATA_BYTES - 64) / 4, 16));
		EXPECT_EQ(0, dst[(DATA_BYTES - 48) / 4]);
		tested++;
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bos[0]);
	megpu_bo_free(bos[1]);
	if (!tested)
		SKIP(return, "no engine accepts COPY");
}

TEST_F(gpu, fill)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	unsigned int e, i, bad, tested = 0;
	uint32_t *p;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, DATA_BYTES, 0, &bo));
	p = mt_u32(bo);
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		if (!mt_accepts(&self->t, e, MEGPU_PKT_FILL))
			continue;
		memset(p, 0, DATA_BYTES);
		megpu_cs_reset(&cs);
		megpu_cs_fill(&cs, bo->va + 4, DATA_BYTES - 8, 0xa5a50000 + e);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		for (i = 1, bad = 0; i < DATA_BYTES / 4 - 1; i++)
			bad += p[i] != 0xa5a50000 + e;
		EXPECT_EQ(0, bad);
		EXPECT_EQ(0, p[0]);
		EXPECT_EQ(0, p[DATA_BYTES / 4 - 1]);
		tested++;
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
	if (!tested)
		SKIP(return, "no engine accepts FILL");
}

#define KN 1000		/* elements: not a multiple of the group */
#define KGROUP 64
/* Image kernels: odd sizes, pitch > width, (IMG_H - 1) * pitch + w <= KN */
#define IMG_W 30
#define IMG_H 25
#define IMG_PITCH 32

static bool is_image(unsigned int kernel)
{
	return kernel == MEGPU_KERNEL_BLUR3X3 || kernel == MEGPU_KERNEL_SEPIA;
}

/*
 * Run @kernel on @engine over KN elements (an IMG_W x IMG_H image with
 * rows IMG_PITCH apart, on a grid larger than the image, for the image
 * kernels) with inputs from the CPU and compare every output, padding
 * included, with megpu_kernel_ref(). 0, a fence error, or the count of
 * wrong elements as a positive number.
 */
static int check_kernel(struct mt *t, unsigned int engine,
			unsigned int kernel)
{
	struct megpu_kargs k = { .n = KN };
	struct megpu_bo *bos[4];
	uint32_t *ref[4], *ptr[4];
	struct megpu_cs cs;
	uint64_t args;
	int ret, i, j, bad = 0;

	memset(bos, 0, sizeof(bos));
	for (i = 0; i < 4; i++) {
		ret = mt_bo(&t->gpu, KN * 4, 0, &bos[i]);
		if (ret)
			goto out;
		ref[i] = calloc(KN, 4);
		ptr[i] = mt_u32(bos[i]);
		k.ptr[i] = bos[i]->va;
	}
	for (j = 0; j < KN; j++) {
		if (kernel == MEGPU_KERNEL_SAXPY) {
			/* Small integers: exact in float, no rounding. */
			ptr[0][j] = megpu_f32_bits((float)(j % 100));
			ptr[1][j] = megpu_f32_bits((float)j - 500);
		} else {
			ptr[0][j] = j * 2654435761u;
			ptr[1][j] = j == 0 ? 5 : ~j;
		}
		ptr[2][j] = 0xdeadbeef;
	}
	k.param[0] = kernel == MEGPU_KERNEL_SAXPY ? megpu_f32_bits(2.0f) :
						   0xc0ffee;
	if (is_image(kernel)) {
		k.param[0] = IMG_W;
		k.param[1] = IMG_H;
		k.param[2] = IMG_PITCH;
	}
	for (i = 0; i < 4; i++)
		memcpy(ref[i], ptr[i], KN * 4);
	ret = megpu_kernel_ref(kernel, ref, KN, k.param);
	ret = ret ?: megpu_kargs_write(bos[3], 0, &k, &args);
	if (ret)
		goto out;

	megpu_cs_init(&cs);
	if (is_image(kernel))
		/* items outside the image do nothing */
		megpu_cs_dispatch(&cs, kernel, args, IMG_W + 3, IMG_H + 2, 8,
				  4);
	else
		megpu_cs_dispatch(&cs, kernel, args, (KN + KGROUP - 1) /
				  KGROUP * KGROUP, 1, KGROUP, 1);
	ret = mt_run(t, engine, &cs, bos, 4);
	megpu_cs_fini(&cs);
	if (ret)
		goto out;
	/* bos[3] holds the arguments: compare only the data arrays. */
	for (i = 0; i < 3; i++)
		for (j = 0; j < KN; j++)
			bad += ptr[i][j] != ref[i][j];
	ret = bad;
out:
	for (i = 0; i < 4; i++) {
		if (bos[i])
			free(ref[i]);
		megpu_bo_free(bos[i]);
	}
	return ret;
}

TEST_F(gpu, dispatch_every_kernel)
{
	unsigned int e, kernel, tested = 0;
	uint32_t kernels;

	for (e = 0; e < self->t.engines; e++) {
		kernels = megpu_engine_kernels(mt_type(&self->t, e));
		for (kernel = 0; kernel < MEGPU_KERNEL_COUNT; kernel++) {
			if (!(kernels & MEGPU_BIT(kernel)))
				continue;
			EXPECT_EQ(0, check_kernel(&self->t, e, kernel))
				TH_LOG("engine %u (%s) kernel %s", e,
				       mt_name(&self->t, e),
				       megpu_kernel_name(kernel));
			tested++;
		}
	}
	if (!tested)
		SKIP(return, "no engine accepts DISPATCH");
}

/* SIGNAL then WAIT on the same semaphore in one IB does not hang. */
TEST_F(gpu, signal_then_wait)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	uint64_t *q;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	q = bo->map;
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_signal(&cs, bo->va + 16 * e, 0x100000007ull);
		megpu_cs_wait(&cs, bo->va + 16 * e, 0x100000007ull);
		/* Reached is enough: a smaller target passes too. */
		megpu_cs_wait(&cs, bo->va + 16 * e, 3);
		megpu_cs_write32(&cs, bo->va + 16 * e + 8, 0x600d + e);
		ASSERT_EQ(0, mt_run(&self->t, e, &cs, &bo, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		EXPECT_EQ(0x100000007ull, q[2 * e]);
		EXPECT_EQ(0x600d + e, mt_u32(bo)[4 * e + 2]);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

/*
 * Run one packet that must fault on @engine, then check the engine still
 * runs a job. The probe uses another BO: a job using the faulted job's
 * BOs would depend on it and be cancelled.
 */
static void expect_fault(struct __test_metadata *_metadata, struct mt *t,
			 unsigned int engine, struct megpu_cs *cs,
			 struct megpu_bo **bos, unsigned int n,
			 const char *what)
{
	struct megpu_bo *probe;

	EXPECT_EQ(-EFAULT, mt_run(t, engine, cs, bos, n))
		TH_LOG("engine %u (%s): %s", engine, mt_name(t, engine), what);
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &probe));
	EXPECT_EQ(0, mt_probe_engine(t, engine, probe, 0, 0x5a5a0000 + engine))
		TH_LOG("engine %u (%s) after %s", engine, mt_name(t, engine),
		       what);
	megpu_bo_free(probe);
}

TEST_F(gpu, unsupported_packets_fault)
{
	struct megpu_kargs k = { .n = 16 };
	struct megpu_bo *bos[2];
	unsigned int e, kernel, tested = 0;
	struct megpu_cs cs;
	uint64_t args;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &bos[0]));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bos[1]));
	/* Valid arguments: the engine type is the only thing wrong. */
	k.ptr[0] = bos[0]->va;
	k.ptr[1] = bos[0]->va + 4096;
	k.ptr[2] = bos[0]->va + 2048;
	ASSERT_EQ(0, megpu_kargs_write(bos[1], 0, &k, &args));
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		uint32_t kernels = megpu_engine_kernels(mt_type(&self->t, e));

		if (!mt_accepts(&self->t, e, MEGPU_PKT_COPY)) {
			megpu_cs_reset(&cs);
			megpu_cs_copy(&cs, bos[0]->va, bos[0]->va + 4096, 64);
			expect_fault(_metadata, &self->t, e, &cs, bos, 2,
				     "COPY");
			tested++;
		}
		if (!mt_accepts(&self->t, e, MEGPU_PKT_FILL)) {
			megpu_cs_reset(&cs);
			megpu_cs_fill(&cs, bos[0]->va, 64, 1);
			expect_fault(_metadata, &self->t, e, &cs, bos, 2,
				     "FILL");
			tested++;
		}
		for (kernel = 0; kernel < MEGPU_KERNEL_COUNT; kernel++) {
			if (kernels & MEGPU_BIT(kernel))
				continue;
			megpu_cs_reset(&cs);
			megpu_cs_dispatch(&cs, kernel, args, 16, 1, 16, 1);
			expect_fault(_metadata, &self->t, e, &cs, bos, 2,
				     megpu_kernel_name(kernel));
			tested++;
			/* One kernel is enough where DISPATCH is refused. */
			if (!kernels)
				break;
		}
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bos[0]);
	megpu_bo_free(bos[1]);
	if (!tested)
		SKIP(return, "every engine accepts every packet");
}

/* IB and SET_CONTEXT run only from the ring; in an IB they fault. */
TEST_F(gpu, ring_only_packets_fault_in_ib)
{
	struct megpu_bo *bo;
	struct megpu_cs cs, inner;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	megpu_cs_init(&inner);
	/* A valid nested IB, so only the nesting is wrong. */
	megpu_cs_write32(&inner, bo->va, 1);
	memcpy((uint8_t *)bo->map + 1024, inner.dw, megpu_cs_bytes(&inner));
	for (e = 0; e < self->t.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_ib(&cs, bo->va + 1024, inner.len);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1, "IB in IB");
		megpu_cs_reset(&cs);
		megpu_cs_set_context(&cs, 0, 0);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1,
			     "SET_CONTEXT in IB");
	}
	EXPECT_EQ(0, mt_u32(bo)[0]);
	megpu_cs_fini(&inner);
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

/* Unknown opcodes and impossible lengths fault on every engine. */
TEST_F(gpu, malformed_packets_fault)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 2);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1,
			     "unknown opcode");
		megpu_cs_reset(&cs);
		megpu_cs_packet(&cs, MEGPU_PKT_TIMESTAMP, 0,
				(uint32_t[]){ (uint32_t)bo->va, 0, 1 }, 3);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1,
			     "short TIMESTAMP");
		megpu_cs_reset(&cs);
		megpu_cs_packet(&cs, MEGPU_PKT_WRITE_DATA, 0,
				(uint32_t[]){ (uint32_t)bo->va, 0 }, 2);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1,
			     "WRITE_DATA without data");
		/* A packet that runs past the end of the IB. */
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, bo->va, 1);
		cs.dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_WRITE_DATA, 8, 0);
		expect_fault(_metadata, &self->t, e, &cs, &bo, 1,
			     "IB overrun");
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(bo);
}

TEST_HARNESS_MAIN
