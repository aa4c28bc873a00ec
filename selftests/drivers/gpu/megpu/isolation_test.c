// SPDX-License-Identifier: GPL-2.0
/*
 * Clients are isolated: client B's jobs cannot read or write client A's
 * buffer through A's GPU address, which is not mapped in B's address
 * space. B's jobs fault (-EFAULT) and A's data stays intact.
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define SECRET 0x5ec2e7u
#define PAD_BYTES (8 << 20)	/* pushes A's secret past B's few BOs */

FIXTURE(two) {
	struct mt a, b;
	struct megpu_bo *pad, *secret;	/* A's */
	struct megpu_bo *mine;		/* B's */
};

FIXTURE_SETUP(two)
{
	unsigned int i;

	ASSERT_EQ(0, mt_open(&self->a));
	ASSERT_EQ(0, mt_open_client(&self->a, &self->b));
	ASSERT_EQ(0, megpu_bo_new(&self->a.gpu, PAD_BYTES, 0, &self->pad));
	ASSERT_EQ(0, mt_bo(&self->a.gpu, 4096, 0, &self->secret));
	for (i = 0; i < 1024; i++)
		mt_u32(self->secret)[i] = SECRET + i;
	ASSERT_EQ(0, mt_bo(&self->b.gpu, 4096, 0, &self->mine));
	/* The premise: A's secret address is nothing of B's. */
	ASSERT_TRUE(self->mine->va + self->mine->size <= self->secret->va ||
		    self->secret->va + self->secret->size <= self->mine->va);
}

FIXTURE_TEARDOWN(two)
{
	megpu_bo_free(self->mine);
	megpu_bo_free(self->secret);
	megpu_bo_free(self->pad);
	mt_close(&self->b);
	mt_close(&self->a);
}

static void expect_intact(struct __test_metadata *_metadata,
			  struct megpu_bo *secret)
{
	unsigned int i, bad = 0;

	for (i = 0; i < 1024; i++)
		bad += mt_u32(secret)[i] != SECRET + i;
	EXPECT_EQ(0, bad);
}

TEST_F(two, write_through_guessed_address_faults)
{
	struct megpu_cs cs;
	unsigned int e;

	megpu_cs_init(&cs);
	for (e = 0; e < self->b.engines; e++) {
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, self->secret->va + 16, 0xbad);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->b, e));
	}
	if (mt_engine_for(&self->b, MEGPU_PKT_FILL, -1) >= 0) {
		megpu_cs_reset(&cs);
		megpu_cs_fill(&cs, self->secret->va, 4096, 0xbad);
		EXPECT_EQ(-EFAULT, mt_run(&self->b, mt_engine_for(&self->b,
					  MEGPU_PKT_FILL, -1), &cs,
					  &self->mine, 1));
	}
	megpu_cs_fini(&cs);
	expect_intact(_metadata, self->secret);
}

TEST_F(two, read_through_guessed_address_faults)
{
	int e = mt_engine_for(&self->b, MEGPU_PKT_COPY, -1);
	struct megpu_cs cs;
	unsigned int i, leaked = 0;

	if (e < 0)
		SKIP(return, "no engine accepts COPY");
	megpu_cs_init(&cs);
	megpu_cs_copy(&cs, self->secret->va, self->mine->va, 4096);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, e, &cs, &self->mine, 1));
	megpu_cs_fini(&cs);
	for (i = 0; i < 1024; i++)
		leaked += mt_u32(self->mine)[i] == SECRET + i;
	EXPECT_EQ(0, leaked);
	expect_intact(_metadata, self->secret);
}

/* A's handle numbers mean nothing in B's file. */
TEST_F(two, handles_are_per_client)
{
	uint64_t size;

	if (self->secret->handle == self->mine->handle)
		SKIP(return, "B happens to own the same handle number");
	EXPECT_EQ(-ENOENT, megpu_bo_info(&self->b.gpu, self->secret->handle,
					 &size, NULL));
}

/* After B's faults, A's own jobs still reach its buffer. */
TEST_F(two, owner_still_works)
{
	struct megpu_cs cs;

	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, self->secret->va + 16, 0xbad);
	EXPECT_EQ(-EFAULT, mt_run(&self->b, 0, &cs, &self->mine, 1));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_probe_engine(&self->a, 0, self->secret, 4092, 77));
}

TEST_HARNESS_MAIN
