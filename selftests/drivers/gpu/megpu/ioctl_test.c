// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to every megpu ioctl fails with the errno the uAPI header
 * documents, and never takes the device down: a good submit still works
 * after all of it.
 */

#include <stdint.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define BAD_PTR ((uint64_t)8)	/* never mapped */

/* errno of an ioctl, 0 on success. */
static int err(int fd, unsigned long nr, void *arg)
{
	return drmIoctl(fd, nr, arg) ? errno : 0;
}

FIXTURE(ioc) {
	struct mt t;
	struct megpu_bo *ib;
	struct megpu_bo *other;
	struct drm_megpu_bo_ref bos[DRM_MEGPU_MAX_BOS + 1];
	struct drm_megpu_sync syncs[DRM_MEGPU_MAX_SYNCS + 1];
	uint32_t syncobj;
	struct drm_megpu_submit s;	/* valid; tests break one field */
};

FIXTURE_SETUP(ioc)
{
	struct megpu_cs cs;

	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &self->ib));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &self->other));
	megpu_cs_init(&cs);
	megpu_cs_nop(&cs, 1);
	memcpy(self->ib->map, cs.dw, megpu_cs_bytes(&cs));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, true, &self->syncobj));
	self->bos[0] = (struct drm_megpu_bo_ref){
		.handle = self->ib->handle, .flags = DRM_MEGPU_BO_READ,
	};
	self->syncs[0] = (struct drm_megpu_sync){ .handle = self->syncobj };
	self->s = (struct drm_megpu_submit){
		.engine = 0,
		.ib_va = self->ib->va,
		.ib_size = 8,
		.bo_count = 1,
		.bos = (uintptr_t)self->bos,
		.in_syncs = (uintptr_t)self->syncs,
		.in_sync_count = 1,
		.out_sync = { .handle = self->syncobj },
	};
}

FIXTURE_TEARDOWN(ioc)
{
	megpu_bo_wait(self->ib, MEGPU_FOREVER);
	megpu_syncobj_free(&self->t.gpu, self->syncobj);
	megpu_bo_free(self->other);
	megpu_bo_free(self->ib);
	mt_close(&self->t);
}

#define SUBMIT(self) err((self)->t.gpu.fd, DRM_IOCTL_MEGPU_SUBMIT, &(self)->s)

/* The struct pointer itself, for every ioctl. */
TEST_F(ioc, bad_argument_pointer)
{
	static const unsigned long nrs[] = {
		DRM_IOCTL_MEGPU_GET_PARAM, DRM_IOCTL_MEGPU_GEM_CREATE,
		DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, DRM_IOCTL_MEGPU_GEM_INFO,
		DRM_IOCTL_MEGPU_GEM_WAIT, DRM_IOCTL_MEGPU_SUBMIT,
	};
	unsigned int i;

	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		EXPECT_EQ(-1, ioctl(self->t.gpu.fd, nrs[i], (void *)BAD_PTR));
		EXPECT_EQ(EFAULT, errno) TH_LOG("ioctl nr 0x%lx", nrs[i]);
	}
}

TEST_F(ioc, gem_create)
{
	struct drm_megpu_gem_create c;
	int fd = self->t.gpu.fd;

	c = (struct drm_megpu_gem_create){ .size = 0 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
	c = (struct drm_megpu_gem_create){ .size = (1ull << 30) + 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
	c = (struct drm_megpu_gem_create){ .size = UINT64_MAX };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
	c = (struct drm_megpu_gem_create){ .size = 4096, .flags = 0x2 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
	c = (struct drm_megpu_gem_create){ .size = 4096, .flags = ~0u };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
	c = (struct drm_megpu_gem_create){ .size = 4096, .pad = 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c));
}

TEST_F(ioc, gem_mmap_offset_info_wait)
{
	struct drm_megpu_gem_mmap_offset mo;
	struct drm_megpu_gem_info gi;
	struct drm_megpu_gem_wait gw;
	int fd = self->t.gpu.fd;
	uint32_t h = self->ib->handle;

	mo = (struct drm_megpu_gem_mmap_offset){ .handle = 0 };
	EXPECT_EQ(ENOENT, err(fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &mo));
	mo = (struct drm_megpu_gem_mmap_offset){ .handle = 0xfffff };
	EXPECT_EQ(ENOENT, err(fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &mo));
	mo = (struct drm_megpu_gem_mmap_offset){ .handle = h, .pad = 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &mo));

	gi = (struct drm_megpu_gem_info){ .handle = 0xfffff };
	EXPECT_EQ(ENOENT, err(fd, DRM_IOCTL_MEGPU_GEM_INFO, &gi));
	gi = (struct drm_megpu_gem_info){ .handle = h, .pad = 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_INFO, &gi));
	gi = (struct drm_megpu_gem_info){ .handle = h, .pad2 = 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_INFO, &gi));

	gw = (struct drm_megpu_gem_wait){ .handle = 0xfffff };
	EXPECT_EQ(ENOENT, err(fd, DRM_IOCTL_MEGPU_GEM_WAIT, &gw));
	gw = (struct drm_megpu_gem_wait){ .handle = h, .pad = 1 };
	EXPECT_EQ(EINVAL, err(fd, DRM_IOCTL_MEGPU_GEM_WAIT, &gw));
	gw = (struct drm_megpu_gem_wait){ .handle = h };
	EXPECT_EQ(0, err(fd, DRM_IOCTL_MEGPU_GEM_WAIT, &gw));
}

/* The fixture's submit is valid: the failures below are the field's. */
TEST_F(ioc, submit_baseline)
{
	EXPECT_EQ(0, SUBMIT(self));
	EXPECT_EQ(0, megpu_syncobj_wait(&self->t.gpu, self->syncobj, 0,
					mt_job_ns(&self->t)));
	EXPECT_EQ(0, megpu_fence_status(self->t.gpu.fd, self->syncobj, 0));
}

TEST_F(ioc, submit_engine)
{
	self->s.engine = self->t.engines;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.engine = MEGPU_MAX_ENGINES;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.engine = ~0u;
	EXPECT_EQ(EINVAL, SUBMIT(self));
}

TEST_F(ioc, submit_flags_and_pads)
{
	self->s.flags = 0x8;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	/* the two flush flags exclude each other */
	self->s.flags = DRM_MEGPU_SUBMIT_NO_FLUSH | DRM_MEGPU_SUBMIT_HOST_FLUSH;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.flags = 0x80000000;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.flags = 0;
	self->s.pad = 1;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.pad = 0;
	self->s.out_sync.pad = 1;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.out_sync.pad = 0;
	/* a timeline point without its syncobj (was silently ignored) */
	self->s.out_sync = (struct drm_megpu_sync){ .point = 1 };
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.out_sync = (struct drm_megpu_sync){ .handle = self->syncobj };
	self->syncs[0].pad = 1;
	EXPECT_EQ(EINVAL, SUBMIT(self));
}

TEST_F(ioc, submit_ib_shape)
{
	self->s.ib_size = 0;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_size = 6;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_size = (MEGPU_IB_MAX_DWORDS + 1) * 4;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_size = 8;
	self->s.ib_va = self->ib->va + 2;
	EXPECT_EQ(EINVAL, SUBMIT(self));
}

TEST_F(ioc, submit_ib_outside_listed_bos)
{
	/* Past the end, straddling the end, in an unlisted BO, no BOs. */
	self->s.ib_va = self->ib->va + self->ib->size;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_va = self->ib->va + self->ib->size - 4;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_va = self->other->va;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_va = self->ib->va;
	self->s.bo_count = 0;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.bo_count = 1;
	if (self->ib->va && self->other->va) {	/* nothing at 0 */
		self->s.ib_va = 0;
		EXPECT_EQ(EINVAL, SUBMIT(self));
	}
	/* ib_va + ib_size wraps to a small number: still outside */
	self->s.ib_va = 0xfffffffffffffffcull;
	self->s.ib_size = 8;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_va = 0xfffffffffffff000ull;
	self->s.ib_size = 0x2000;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.ib_va = ~0ull - self->ib->size + 4;
	self->s.ib_size = self->ib->size;
	EXPECT_EQ(EINVAL, SUBMIT(self));
}

TEST_F(ioc, submit_too_many)
{
	unsigned int i;

	for (i = 0; i <= DRM_MEGPU_MAX_BOS; i++)
		self->bos[i] = self->bos[0];
	self->s.bo_count = DRM_MEGPU_MAX_BOS + 1;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->s.bo_count = 1;
	for (i = 0; i <= DRM_MEGPU_MAX_SYNCS; i++)
		self->syncs[i] = self->syncs[0];
	self->s.in_sync_count = DRM_MEGPU_MAX_SYNCS + 1;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	/* The limit itself is fine (a syncobj may be waited on twice). */
	self->s.in_sync_count = DRM_MEGPU_MAX_SYNCS;
	EXPECT_EQ(0, SUBMIT(self));
}

TEST_F(ioc, submit_bo_list)
{
	self->bos[1] = self->bos[0];
	self->s.bo_count = 2;
	EXPECT_EQ(EINVAL, SUBMIT(self));	/* listed twice */
	self->bos[1] = (struct drm_megpu_bo_ref){
		.handle = self->other->handle, .flags = 0,
	};
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->bos[1].flags = 0x4;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->bos[1].flags = DRM_MEGPU_BO_READ | 0x100;
	EXPECT_EQ(EINVAL, SUBMIT(self));
	self->bos[1] = (struct drm_megpu_bo_ref){
		.handle = 0xfffff, .flags = DRM_MEGPU_BO_READ,
	};
	EXPECT_EQ(ENOENT, SUBMIT(self));
	self->bos[1].handle = 0;
	EXPECT_EQ(ENOENT, SUBMIT(self));
}

TEST_F(ioc, submit_syncobjs)
{
	uint32_t tl;

	self->syncs[0].handle = 0xfffff;
	EXPECT_EQ(ENOENT, SUBMIT(self));
	self->syncs[0].handle = self->syncobj;
	self->s.out_sync.handle = 0xfffff;
	EXPECT_EQ(ENOENT, SUBMIT(self));
	self->s.out_sync.handle = 0;
	/* A timeline point nobody submitted. */
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &tl));
	self->syncs[0] = (struct drm_megpu_sync){ .handle = tl, .point = 5 };
	EXPECT_EQ(ENOENT, SUBMIT(self));
	megpu_syncobj_free(&self->t.gpu, tl);
}

TEST_F(ioc, submit_bad_user_pointers)
{
	self->s.bos = BAD_PTR;
	EXPECT_EQ(EFAULT, SUBMIT(self));
	self->s.bos = (uintptr_t)self->bos;
	self->s.in_syncs = BAD_PTR;
	EXPECT_EQ(EFAULT, SUBMIT(self));
	/* A count of 0 never reads the pointer. */
	self->s.in_sync_count = 0;
	EXPECT_EQ(0, SUBMIT(self));
}

/* After all the above the device still runs jobs. */
TEST_F(ioc, still_works)
{
	struct megpu_bo *bo;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	for (e = 0; e < self->t.engines; e++)
		EXPECT_EQ(0, mt_probe_engine(&self->t, e, bo, 4 * e, e + 1));
	megpu_bo_free(bo);
}

TEST_HARNESS_MAIN
