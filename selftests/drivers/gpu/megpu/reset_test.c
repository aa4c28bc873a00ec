// SPDX-License-Identifier: GPL-2.0
/*
 * Function level reset: megpu is a PCI Express endpoint with FLR, and
 * `echo 1 > /sys/bus/pci/devices/<addr>/reset` resets it while files are
 * open and jobs run. The job on the GPU fails with -EIO, the file is not
 * banned (it did nothing wrong), BOs keep their contents, and new jobs
 * run afterwards, also after several resets in a row. The debug lane
 * (kmemleak, KASAN, lockdep) checks that nothing leaks or races.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_drm.h"
#include "libmegpu.h"
#include "megpu_test.h"

/* echo 1 > .../reset for the client's device: 0 or -errno */
static int flr(struct megpu *gpu)
{
	char addr[64], path[128];
	int fd, ret = 0;

	ret = mt_pci_address(gpu, addr, sizeof(addr));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", addr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* A job on @engine writing @value at @off of @bo; its fence status. */
static int write_job(struct mt *t, unsigned int engine, struct megpu_bo *bo,
		     uint32_t off, uint32_t value)
{
	struct mt_job j;
	int ret;

	ret = mt_write_job(t, &j, engine, bo, off, value, NULL, NULL, 0, 0);
	return ret ?: mt_job_finish(&j, mt_job_ns(t));
}

FIXTURE(flr) {
	struct mt t;
};

FIXTURE_SETUP(flr)
{
	char addr[64], path[128];

	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_EQ(0, mt_pci_address(&self->t.gpu, addr, sizeof(addr)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", addr);
	if (access(path, W_OK))
		SKIP(return, "%s: no function reset (not a PCIe FLR device?)",
		     path);
}

FIXTURE_TEARDOWN(flr)
{
	mt_close(&self->t);
}

/* An idle device: reset, and it works as before. */
TEST_F(flr, idle)
{
	struct megpu_bo *bo;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, write_job(&self->t, 0, bo, 0, 1));
	ASSERT_EQ(0, flr(&self->t.gpu));
	for (unsigned int e = 0; e < self->t.engines; e++) {
		EXPECT_EQ(0, write_job(&self->t, e, bo, 4 * e, 10 + e));
		EXPECT_EQ(10 + e, mt_u32(bo)[e]);
	}
	megpu_bo_free(bo);
}

/*
 * A job held on the GPU when the reset comes fails with -EIO; the BO it
 * and the CPU wrote keeps what was there; the same file submits again
 * (not banned: -EIO is not its fault) and the job runs.
 */
TEST_F(flr, job_in_flight_fails_with_eio)
{
	struct megpu_bo *gate, *bo;
	struct megpu_cs cs;
	struct mt_job held;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	for (unsigned int i = 0; i < 1024; i++)
		mt_u32(bo)[i] = 0x5a000000 | i;
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, gate);
	megpu_cs_write32(&cs, gate->va + 64, 1);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &held, 0, &cs, &gate, 1, 0));
	megpu_cs_fini(&cs);
	usleep(100 * 1000);
	ASSERT_TRUE(mt_pending(&self->t.gpu, held.sync, 0));

	ASSERT_EQ(0, flr(&self->t.gpu));
	EXPECT_EQ(-EIO, mt_job_finish(&held, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_u32(gate)[16]);		/* it never got past the gate */
	for (unsigned int i = 0; i < 1024; i++)
		ASSERT_EQ(0x5a000000 | i, mt_u32(bo)[i]);

	EXPECT_EQ(0, write_job(&self->t, 0, bo, 0, 7));
	EXPECT_EQ(7, mt_u32(bo)[0]);
	megpu_bo_free(bo);
	megpu_bo_free(gate);
}

/* Jobs on every engine, a reset, again and again: each time they run. */
TEST_F(flr, repeated)
{
	struct megpu_bo *bo;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	for (unsigned int round = 0; round < 3; round++) {
		for (unsigned int e = 0; e < self->t.engines; e++)
			ASSERT_EQ(0, write_job(&self->t, e, bo, 4 * e,
					       round * 100 + e));
		ASSERT_EQ(0, flr(&self->t.gpu));
	}
	for (unsigned int e = 0; e < self->t.engines; e++) {
		EXPECT_EQ(0, write_job(&self->t, e, bo, 4 * e, 1000 + e));
		EXPECT_EQ(1000 + e, mt_u32(bo)[e]);
	}
	megpu_bo_free(bo);
}

TEST_HARNESS_MAIN
