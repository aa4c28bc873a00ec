// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: creation and sizes, READ_ONLY, CPU mappings, GEM_INFO,
 * GEM_WAIT against a running job, PRIME between two clients, close,
 * GEM_CREATE racing a GEM_CLOSE of its handle on the same file.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

MT_FIXTURE(gpu)

TEST_F(gpu, create_sizes)
{
	static const uint64_t sizes[] = {
		1, 4096, 4097, 65536, 1 << 20, 16 << 20,
	};
	struct megpu_bo *bo[6];
	uint64_t va_size, size, va;
	unsigned int i, k;

	ASSERT_EQ(0, megpu_get_param(&self->t.gpu, DRM_MEGPU_PARAM_VA_SIZE,
				     &va_size));
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, sizes[i], 0, &bo[i]));
		ASSERT_EQ(0, megpu_bo_info(&self->t.gpu, bo[i]->handle, &size,
					   &va));
		/* Rounded up to pages; the va creation returned. */
		EXPECT_EQ((sizes[i] + 4095) & ~4095ull, size);
		EXPECT_EQ(bo[i]->va, va);
		EXPECT_EQ(0, va % MEGPU_PAGE_SIZE);
		EXPECT_LE(va + size, va_size);
		EXPECT_NE(0, bo[i]->handle);
	}
	/* No two BOs share GPU addresses. */
	for (i = 0; i < 6; i++)
		for (k = i + 1; k < 6; k++)
			EXPECT_TRUE(bo[i]->va + bo[i]->size <= bo[k]->va ||
				    bo[k]->va + bo[k]->size <= bo[i]->va);
	for (i = 0; i < 6; i++)
		megpu_bo_free(bo[i]);
}

struct create_race {
	int fd;
	volatile int stop;
	unsigned int made, refused, wrong;
	int wrong_errno;
};

/* Close the small handle numbers, which the creators keep reusing. */
static void *create_race_closer(void *arg)
{
	struct create_race *r = arg;

	while (!r->stop)
		for (uint32_t h = 1; h <= 8; h++) {
			struct drm_gem_close c = { .handle = h };

			ioctl(r->fd, DRM_IOCTL_GEM_CLOSE, &c);
		}
	return NULL;
}

static void *create_race_creator(void *arg)
{
	struct create_race *r = arg;

	for (unsigned int i = 0; i < 20000; i++) {
		struct drm_megpu_gem_create c = { .size = 4096 };

		if (!ioctl(r->fd, DRM_IOCTL_MEGPU_GEM_CREATE, &c)) {
			__atomic_add_fetch(&r->made, 1, __ATOMIC_RELAXED);
			if (!c.va || c.va % MEGPU_PAGE_SIZE)
				__atomic_add_fetch(&r->wrong, 1,
						   __ATOMIC_RELAXED);
		} else if (errno == EINVAL) {
			/* the closer guessed the handle first (as panfrost) */
			__atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
		} else {
			r->wrong_errno = errno;
			__atomic_add_fetch(&r->wrong, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/*
 * Another thread of the same file closes the handle GEM_CREATE just made
 * (guessed: handles are small numbers, reused at once). GEM_CREATE must
 * take the VA from its own object, not by looking the handle up again,
 * which found no BO (-ENOENT, seen by fuzz_ioctl_test) or, had the number
 * been reused by then, another BO's address (not told apart here).
 */
TEST_F_TIMEOUT(gpu, create_while_another_thread_closes, 120)
{
	struct create_race r = { .fd = self->t.gpu.fd };
	pthread_t closer, creator[2];

	ASSERT_EQ(0, pthread_create(&closer, NULL, create_race_closer, &r));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&creator[i], NULL,
					    create_race_creator, &r));
	for (int i = 0; i < 2; i++)
		pthread_join(creator[i], NULL);
	r.stop = 1;
	pthread_join(closer, NULL);
	TH_LOG("%u made, %u closed before GEM_CREATE returned, %u wrong "
	       "(errno %d)", r.made, r.refused, r.wrong, r.wrong_errno);
	EXPECT_EQ(0, r.wrong);
	EXPECT_LT(0, r.made);
}

TEST_F(gpu, mmap_read_write)
{
	struct megpu_bo *bo;
	uint32_t *p, i, bad = 0;
	void *again;
	struct drm_megpu_gem_mmap_offset mo;

	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, 1 << 20, 0, &bo));
	ASSERT_EQ(0, megpu_bo_map(bo));
	p = bo->map;
	/* New BOs are zeroed: no data from earlier users. */
	for (i = 0; i < (1 << 18); i++)
		bad += p[i] != 0;
	EXPECT_EQ(0, bad);
	for (i = 0; i < (1 << 18); i++)
		p[i] = i ^ 0x5a5a5a5a;
	/* A second mapping sees the same pages. */
	mo = (struct drm_megpu_gem_mmap_offset){ .handle = bo->handle };
	ASSERT_EQ(0, drmIoctl(self->t.gpu.fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET,
			      &mo));
	again = mmap(NULL, bo->size, PROT_READ, MAP_SHARED, self->t.gpu.fd,
		     mo.offset);
	ASSERT_NE(MAP_FAILED, again);
	EXPECT_EQ(0, memcmp(again, p, bo->size));
	munmap(again, bo->size);
	megpu_bo_free(bo);
}

/* GPU writes are visible through mmap, CPU writes to the GPU. */
TEST_F(gpu, gpu_and_cpu_see_each_other)
{
	struct megpu_bo *bos[2];
	struct megpu_cs cs;
	int e = mt_engine_for(&self->t, MEGPU_PKT_COPY, -1);

	if (e < 0)
		SKIP(return, "no engine accepts COPY");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &bos[0]));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &bos[1]));
	memset(bos[0]->map, 0x3c, 8192);
	megpu_cs_init(&cs);
	megpu_cs_copy(&cs, bos[0]->va, bos[1]->va, 8192);
	ASSERT_EQ(0, mt_run(&self->t, e, &cs, bos, 2));
	EXPECT_EQ(0, memcmp(bos[0]->map, bos[1]->map, 8192));
	megpu_cs_fini(&cs);
	megpu_bo_free(bos[0]);
	megpu_bo_free(bos[1]);
}

/*
 * READ_ONLY: GPU reads work, a GPU write faults and changes nothing, and
 * no job may list it as written (SUBMIT -EACCES): a job that may only
 * read it must not become its writer, whom implicit sync waits for.
 */
TEST_F(gpu, read_only)
{
	struct megpu_bo *ro, *rw;
	struct megpu_cs cs;
	int e = mt_engine_for(&self->t, MEGPU_PKT_COPY, -1);
	struct mt_job w;
	uint32_t flags;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, DRM_MEGPU_GEM_CREATE_READ_ONLY,
			   &ro));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &rw));
	mt_u32(ro)[0] = 0x1234;		/* the CPU may write it */
	/* GEM_INFO tells which one a job may list as written */
	ASSERT_EQ(0, megpu_bo_flags(&self->t.gpu, ro->handle, &flags));
	EXPECT_EQ(DRM_MEGPU_GEM_CREATE_READ_ONLY, flags);
	ASSERT_EQ(0, megpu_bo_flags(&self->t.gpu, rw->handle, &flags));
	EXPECT_EQ(0, flags);
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, ro->va, 0xbad);
	/* mt_run() lists it READ | WRITE */
	EXPECT_EQ(-EACCES, mt_run(&self->t, 0, &cs, &ro, 1));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &w, 0, NULL, 0, 0));
	ASSERT_EQ(0, megpu_job_add_bo(&w.job, ro, DRM_MEGPU_BO_WRITE));
	EXPECT_EQ(-EACCES, mt_job_start(&w, &cs));
	mt_job_free(&w);
	/* listed as read, its write faults */
	EXPECT_EQ(-EFAULT, mt_run_reading(&self->t, 0, &cs, ro));
	EXPECT_EQ(0x1234, mt_u32(ro)[0]);
	if (e >= 0) {
		struct mt_job j;

		/* Reading it works; no implicit wait on the failed writer. */
		megpu_cs_reset(&cs);
		megpu_cs_copy(&cs, ro->va, rw->va, 4);
		ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, e, &rw, 1,
					    DRM_MEGPU_SUBMIT_NO_IMPLICIT));
		ASSERT_EQ(0, megpu_job_add_bo(&j.job, ro, DRM_MEGPU_BO_READ));
		ASSERT_EQ(0, mt_job_start(&j, &cs));
		EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
		EXPECT_EQ(0x1234, mt_u32(rw)[0]);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(ro);
	megpu_bo_free(rw);
}

TEST_F(gpu, gem_info)
{
	struct megpu_bo *bo;
	uint64_t size, va;

	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, 12345, 0, &bo));
	ASSERT_EQ(0, megpu_bo_info(&self->t.gpu, bo->handle, &size, &va));
	EXPECT_EQ(16384, size);
	EXPECT_EQ(bo->va, va);
	megpu_bo_free(bo);
}

/* GEM_WAIT times out while a job writing the BO is held, then succeeds. */
TEST_F(gpu, gem_wait)
{
	struct megpu_bo *bo, *gate;
	struct mt_job j;
	int64_t t0;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	EXPECT_EQ(0, megpu_bo_wait(bo, 0));	/* idle */
	ASSERT_EQ(0, mt_write_job(&self->t, &j, 0, bo, 0, 3, gate, NULL, 0,
				  0));
	EXPECT_EQ(-ETIME, megpu_bo_wait(bo, 0));
	t0 = megpu_now_ns();
	EXPECT_EQ(-ETIME, megpu_bo_wait(bo, 50000000));
	EXPECT_LE(45000000, megpu_now_ns() - t0);
	EXPECT_EQ(0, mt_u32(bo)[0]);
	mt_gate_open(gate);
	EXPECT_EQ(0, megpu_bo_wait(bo, mt_job_ns(&self->t)));
	EXPECT_EQ(3, mt_u32(bo)[0]);
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/*
 * PRIME: a second client imports the BO, finds its own GPU address with
 * GEM_INFO, and its GPU writes show up in the exporter's mapping.
 */
TEST_F(gpu, prime_export_import)
{
	struct megpu_bo *bo, *imp, *again;
	struct mt other;
	struct megpu_cs cs;
	uint32_t handle;
	int fd;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 8192, 0, &bo));
	mt_u32(bo)[1] = 0xabcd;
	ASSERT_EQ(0, megpu_bo_export(bo, &fd));
	/* Importing into the exporter gives back the same handle. */
	ASSERT_EQ(0, drmPrimeFDToHandle(self->t.gpu.fd, fd, &handle));
	EXPECT_EQ(bo->handle, handle);

	ASSERT_EQ(0, mt_open_client(&self->t, &other));
	ASSERT_EQ(0, megpu_bo_import(&other.gpu, fd, &imp));
	close(fd);
	EXPECT_EQ(bo->size, imp->size);
	EXPECT_NE(0, imp->va);
	ASSERT_EQ(0, megpu_bo_map(imp));
	EXPECT_EQ(0xabcd, mt_u32(imp)[1]);

	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, imp->va + 4096, 0x1e1e);
	ASSERT_EQ(0, mt_run(&other, other.engines - 1, &cs, &imp, 1));
	EXPECT_EQ(0x1e1e, mt_u32(bo)[1024]);
	/* And the exporter's GPU writes reach the importer. */
	megpu_cs_reset(&cs);
	megpu_cs_write32(&cs, bo->va + 8, 0x2f2f);
	ASSERT_EQ(0, mt_run(&self->t, 0, &cs, &bo, 1));
	EXPECT_EQ(0x2f2f, mt_u32(imp)[2]);
	megpu_cs_fini(&cs);

	/* Importing twice in one client gives one handle. */
	ASSERT_EQ(0, megpu_bo_export(bo, &fd));
	ASSERT_EQ(0, megpu_bo_import(&other.gpu, fd, &again));
	close(fd);
	EXPECT_EQ(imp->handle, again->handle);
	EXPECT_EQ(imp->va, again->va);
	free(again);	/* same handle: close it once, below */
	megpu_bo_free(imp);
	mt_close(&other);
	megpu_bo_free(bo);
}

/*
 * An import is mapped for the CPU through the importer's device as through
 * its dma-buf: readable always (it holds @want), writable only when the
 * export is. An early driver refused imports any CPU mapping through the
 * device (GEM_MMAP_OFFSET -EINVAL, as drm_gem_dumb_map_offset()).
 */
static void expect_import_cpu_map(struct __test_metadata *_metadata,
				  struct megpu *gpu, uint32_t handle,
				  bool writable, uint32_t want)
{
	struct drm_megpu_gem_mmap_offset mo = { .handle = handle };
	volatile uint32_t *p;

	ASSERT_EQ(0, drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET, &mo))
		TH_LOG("no CPU mapping of an import: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, gpu->fd,
		 mo.offset);
	if (writable) {
		EXPECT_NE(MAP_FAILED, (void *)p);
	} else {
		EXPECT_EQ(MAP_FAILED, (void *)p);
		EXPECT_EQ(EACCES, errno);
	}
	if (p != MAP_FAILED)
		munmap((void *)p, 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, gpu->fd, mo.offset);
	ASSERT_NE(MAP_FAILED, (void *)p);
	EXPECT_EQ(want, p[0]);
	/* nor may it become writable later */
	if (!writable)
		EXPECT_EQ(-1, mprotect((void *)p, 4096, PROT_READ | PROT_WRITE));
	munmap((void *)p, 4096);
}

/*
 * A foreign (vgem) buffer exported without DRM_RDWR is read-only on the
 * GPU: a write job faults and changes nothing; one exported with
 * DRM_RDWR is written (the control). Before, every import was writable.
 */
TEST_F(gpu, foreign_read_only_import)
{
	int vgem = mt_vgem_open();

	if (vgem < 0)
		SKIP(return, "no vgem");
	for (unsigned int rdwr = 0; rdwr < 2; rdwr++) {
		struct drm_mode_create_dumb dumb = {
			.width = 1024, .height = 1, .bpp = 32,
		};
		struct drm_mode_map_dumb md = { 0 };
		struct megpu_bo *imp;
		struct megpu_cs cs;
		uint32_t *cpu;
		int fd;

		ASSERT_EQ(0, drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
		md.handle = dumb.handle;
		ASSERT_EQ(0, drmIoctl(vgem, DRM_IOCTL_MODE_MAP_DUMB, &md));
		cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, vgem,
			   md.offset);
		ASSERT_NE(MAP_FAILED, cpu);
		cpu[0] = 0x1234;
		ASSERT_EQ(0, drmPrimeHandleToFD(vgem, dumb.handle, DRM_CLOEXEC |
						(rdwr ? DRM_RDWR : 0), &fd));
		ASSERT_EQ(0, megpu_bo_import(&self->t.gpu, fd, &imp));
		close(fd);
		expect_import_cpu_map(_metadata, &self->t.gpu, imp->handle,
				      rdwr, 0x1234);
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, imp->va, 0xbad);
		EXPECT_EQ(rdwr ? 0 : DRM_MEGPU_GEM_CREATE_READ_ONLY, imp->flags);
		EXPECT_EQ(rdwr ? 0 : -EACCES, mt_run(&self->t, 0, &cs, &imp, 1));
		EXPECT_EQ(rdwr ? 0 : -EFAULT, mt_run_reading(&self->t, 0, &cs,
							     imp));
		EXPECT_EQ(rdwr ? 0xbad : 0x1234, cpu[0]);
		megpu_cs_fini(&cs);
		megpu_bo_free(imp);
		munmap(cpu, 4096);
	}
	close(vgem);
}

/*
 * The same for another client of the same device: a writable BO exported
 * without DRM_RDWR is read-only through the import (a write job faults,
 * nothing changes); with DRM_RDWR it is written (the control). Before,
 * the import was the very same object, writable. A READ_ONLY BO (the GPU
 * may not write it, its creator's CPU may) exported without DRM_RDWR gets
 * the importer no writable CPU mapping through the device either:
 * before, the import was the same object, which the device maps writable.
 */
TEST_F(gpu, same_device_read_only_import)
{
	struct mt other;

	ASSERT_EQ(0, mt_open_client(&self->t, &other));
	for (unsigned int k = 0; k < 4; k++) {
		unsigned int rdwr = k & 1, ro = k >> 1;
		bool writes = rdwr && !ro;
		struct megpu_bo *src, *imp;
		struct megpu_cs cs;
		int fd;

		ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096,
				   ro ? DRM_MEGPU_GEM_CREATE_READ_ONLY : 0,
				   &src));
		mt_u32(src)[0] = 0x1234;
		ASSERT_EQ(0, drmPrimeHandleToFD(self->t.gpu.fd, src->handle,
						DRM_CLOEXEC |
						(rdwr ? DRM_RDWR : 0), &fd));
		ASSERT_EQ(0, megpu_bo_import(&other.gpu, fd, &imp));
		/*
		 * Nor does the CPU get a writable mapping without DRM_RDWR:
		 * not through the importer's device, nor through the
		 * read-only dma-buf.
		 */
		expect_import_cpu_map(_metadata, &other.gpu, imp->handle,
				      rdwr, 0x1234);
		if (!rdwr) {
			EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096,
						   PROT_READ | PROT_WRITE,
						   MAP_SHARED, fd, 0));
			EXPECT_EQ(EACCES, errno);
		}
		close(fd);
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, imp->va, 0xbad);
		EXPECT_EQ(writes ? 0 : DRM_MEGPU_GEM_CREATE_READ_ONLY,
			  imp->flags);
		EXPECT_EQ(writes ? 0 : -EACCES, mt_run(&other, 0, &cs, &imp, 1))
			TH_LOG("%s BO exported %s DRM_RDWR",
			       ro ? "READ_ONLY" : "writable",
			       rdwr ? "with" : "without");
		EXPECT_EQ(writes ? 0 : -EFAULT, mt_run_reading(&other, 0, &cs,
							       imp));
		EXPECT_EQ(writes ? 0xbad : 0x1234, mt_u32(src)[0]);
		/* the exporter still writes its BO, unless it is READ_ONLY */
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, src->va, 0x600d);
		EXPECT_EQ(ro ? -EACCES : 0, mt_run(&self->t, 0, &cs, &src, 1));
		EXPECT_EQ(ro ? -EFAULT : 0, mt_run_reading(&self->t, 0, &cs,
							   src));
		EXPECT_EQ(ro ? 0x1234 : 0x600d, mt_u32(src)[0]);
		megpu_cs_fini(&cs);
		megpu_bo_free(imp);
		megpu_bo_free(src);
	}
	mt_close(&other);
}

TEST_F(gpu, close)
{
	struct drm_gem_close cl;
	struct megpu_bo *bo;
	uint64_t size;
	uint32_t handle;

	ASSERT_EQ(0, megpu_bo_new(&self->t.gpu, 4096, 0, &bo));
	handle = bo->handle;
	megpu_bo_free(bo);
	EXPECT_EQ(-ENOENT, megpu_bo_info(&self->t.gpu, handle, &size, NULL));
	cl = (struct drm_gem_close){ .handle = handle };
	EXPECT_EQ(-1, drmIoctl(self->t.gpu.fd, DRM_IOCTL_GEM_CLOSE, &cl));
	EXPECT_EQ(EINVAL, errno);
}

/* A mapping outlives the handle; the pages stay until munmap. */
TEST_F(gpu, mapping_outlives_handle)
{
	struct drm_gem_close cl;
	struct megpu_bo *bo;
	uint32_t *p;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	p = bo->map;
	p[5] = 55;
	cl = (struct drm_gem_close){ .handle = bo->handle };
	ASSERT_EQ(0, drmIoctl(self->t.gpu.fd, DRM_IOCTL_GEM_CLOSE, &cl));
	EXPECT_EQ(55, p[5]);
	munmap(bo->map, bo->size);
	free(bo);
}

/*
 * Two handles of one file to one BO (GEM_OPEN of its flink name, on the
 * primary node) share one GPU mapping: closing the first leaves the BO
 * mapped for the second, and the last close unmaps it.
 */
TEST_F(gpu, second_handle_keeps_mapping)
{
	struct drm_gem_flink flink = { 0 };
	struct drm_gem_open gopen = { 0 };
	struct megpu_bo *first, second;
	struct megpu prim = self->t.gpu;
	uint64_t size = 0, va = 0;
	struct mt m = self->t;
	drmDevicePtr dev;
	int fd = -1;

	ASSERT_EQ(0, drmGetDevice2(self->t.gpu.fd, 0, &dev));
	if (dev->available_nodes & (1 << DRM_NODE_PRIMARY))
		fd = open(dev->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC);
	drmFreeDevice(&dev);
	if (fd < 0)
		SKIP(return, "no primary node");
	prim.fd = fd;
	m.gpu = prim;

	ASSERT_EQ(0, megpu_bo_new(&m.gpu, 4096, 0, &first));
	flink.handle = first->handle;
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_GEM_FLINK, &flink));
	gopen.name = flink.name;
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_GEM_OPEN, &gopen));
	ASSERT_NE(first->handle, gopen.handle);
	ASSERT_EQ(0, megpu_bo_info(&m.gpu, gopen.handle, &size, &va));
	EXPECT_EQ(first->va, va);

	second = (struct megpu_bo){
		.gpu = &m.gpu, .handle = gopen.handle, .size = size, .va = va,
	};
	megpu_bo_free(first);
	/* still mapped at the same address: a job writes it */
	ASSERT_EQ(0, megpu_bo_map(&second));
	EXPECT_EQ(0, mt_probe_engine(&m, 0, &second, 16, 0x5ec0));
	munmap(second.map, second.size);
	drmCloseBufferHandle(fd, second.handle);
	close(fd);
}

TEST_HARNESS_MAIN
