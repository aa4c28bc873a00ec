// SPDX-License-Identifier: GPL-2.0
/*
 * The megpu device is present, bound to the driver, and GET_PARAM reports
 * what the device was configured with.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "megpu_drm.h"
#include "megpu_hw_regs.h"
#include "libmegpu.h"
#include "megpu_test.h"

FIXTURE(gpu) {
	struct megpu gpu;
};

FIXTURE_SETUP(gpu)
{
	ASSERT_EQ(0, megpu_open(&self->gpu, 0));
}

FIXTURE_TEARDOWN(gpu)
{
	megpu_close(&self->gpu);
}

TEST(bound_to_driver)
{
	char path[PATH_MAX];
	struct dirent *de;
	int bound = 0;
	DIR *d;

	d = opendir("/sys/bus/pci/drivers/megpu");
	ASSERT_NE(NULL, d) TH_LOG("megpu PCI driver not registered");
	while ((de = readdir(d))) {
		long vendor, device;

		if (!strchr(de->d_name, ':'))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/drivers/megpu/%s/vendor", de->d_name);
		vendor = megpu_sysfs_read(path);
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/drivers/megpu/%s/device", de->d_name);
		device = megpu_sysfs_read(path);
		EXPECT_EQ(MEGPU_PCI_VENDOR_ID, vendor);
		EXPECT_EQ(MEGPU_PCI_DEVICE_ID, device);
		bound++;
	}
	closedir(d);
	ASSERT_EQ(megpu_test_cmdline("gpus", 1), bound);
	EXPECT_EQ(bound, megpu_count_devices());
}

TEST_F(gpu, driver_version)
{
	drmVersionPtr ver = drmGetVersion(self->gpu.fd);

	ASSERT_NE(NULL, ver);
	EXPECT_STREQ("megpu", ver->name);
	drmFreeVersion(ver);
}

/* The render node's PCI function is the megpu. */
TEST_F(gpu, device_id_matches_sysfs)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t v;

	ASSERT_EQ(0, fstat(self->gpu.fd, &st));
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/device",
		 major(st.st_rdev), minor(st.st_rdev));
	ASSERT_EQ(0, megpu_get_param(&self->gpu, DRM_MEGPU_PARAM_DEVICE_ID,
				     &v));
	EXPECT_EQ(megpu_sysfs_read(path), (long)v);
	EXPECT_EQ(MEGPU_PCI_DEVICE_ID, v);
}

TEST_F(gpu, hw_version)
{
	uint64_t v;

	ASSERT_EQ(0, megpu_get_param(&self->gpu, DRM_MEGPU_PARAM_HW_VERSION,
				     &v));
	EXPECT_EQ(MEGPU_HW_VERSION(MEGPU_HW_VERSION_MAJOR,
				   MEGPU_HW_VERSION_MINOR), v);
}

/* The harness boots the device with an engine count it also tells us. */
TEST_F(gpu, engine_count_and_types)
{
	long expect = megpu_test_cmdline("engines", -1);
	uint64_t count, types;
	unsigned int n;

	ASSERT_EQ(0, megpu_get_param(&self->gpu, DRM_MEGPU_PARAM_ENGINE_COUNT,
				     &count));
	ASSERT_EQ(0, megpu_get_param(&self->gpu,
				     DRM_MEGPU_PARAM_ENGINE_TYPES, &types));
	if (expect < 0)
		SKIP(return, "no megpu_test.engines= on the command line");
	EXPECT_EQ(expect, (long)count);
	for (n = 0; n < count; n++)
		EXPECT_EQ(n % MEGPU_ENGINE_NUM_TYPES,
			  MEGPU_ENGINE_TYPE(types, n));
}

TEST_F(gpu, features)
{
	uint64_t v;

	ASSERT_EQ(0, megpu_get_param(&self->gpu, DRM_MEGPU_PARAM_FEATURES,
				     &v));
	EXPECT_NE(0, v & MEGPU_CAP_IRQ_TEST);
}

TEST_F(gpu, unknown_param_is_einval)
{
	struct drm_megpu_get_param args = { .param = 0xdead };
	uint64_t v;

	EXPECT_EQ(-1, drmIoctl(self->gpu.fd, DRM_IOCTL_MEGPU_GET_PARAM,
			       &args));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, megpu_get_param(&self->gpu, UINT32_MAX, &v));
}

TEST_F(gpu, nonzero_pad_is_einval)
{
	struct drm_megpu_get_param args = {
		.param = DRM_MEGPU_PARAM_ENGINE_COUNT,
		.pad = 1,
	};

	EXPECT_EQ(-1, drmIoctl(self->gpu.fd, DRM_IOCTL_MEGPU_GET_PARAM,
			       &args));
	EXPECT_EQ(EINVAL, errno);
}

/* An ioctl number past the driver's table is rejected by DRM core. */
TEST_F(gpu, unknown_ioctl)
{
	struct drm_megpu_get_param args = { 0 };
	unsigned long nr = DRM_IOWR(DRM_COMMAND_BASE + 0x3f,
				    struct drm_megpu_get_param);

	EXPECT_EQ(-1, ioctl(self->gpu.fd, nr, &args));
	EXPECT_EQ(EINVAL, errno);
}

TEST(open_close_many)
{
	struct megpu gpu;
	uint64_t v;
	int fds[64];
	int i, j;

	ASSERT_EQ(0, megpu_open(&gpu, 0));
	for (i = 0; i < 200; i++) {
		for (j = 0; j < 64; j++) {
			fds[j] = open(gpu.node, O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, fds[j]);
		}
		for (j = 0; j < 64; j++)
			ASSERT_EQ(0, close(fds[j]));
	}
	ASSERT_EQ(0, megpu_get_param(&gpu, DRM_MEGPU_PARAM_ENGINE_COUNT, &v));
	megpu_close(&gpu);
}

/* The primary node of the megpu, as generic DRM tools open it. */
static int open_primary(struct megpu *gpu)
{
	drmDevicePtr dev;
	int fd = -1;

	if (drmGetDevice2(gpu->fd, 0, &dev))
		return -1;
	if (dev->available_nodes & (1 << DRM_NODE_PRIMARY))
		fd = open(dev->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC);
	drmFreeDevice(&dev);
	return fd;
}

/* Drop CAP_SYS_ADMIN, with which DRM treats every client as authenticated. */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * On the primary node queries work for everyone; submitting needs an
 * authenticated client (the first opener, the master, is one), as for
 * every DRM driver's command submission.
 */
TEST_F(gpu, primary_node)
{
	struct drm_megpu_get_param p = {
		.param = DRM_MEGPU_PARAM_ENGINE_COUNT,
	};
	struct drm_megpu_submit submit = { 0 };
	int master, other;

	master = open_primary(&self->gpu);
	ASSERT_LE(0, master);
	other = open(self->gpu.node, O_RDWR);
	ASSERT_LE(0, other);
	close(other);
	/* this test runs in its own process: dropping a capability is local */
	ASSERT_EQ(0, drop_sys_admin());
	other = open_primary(&self->gpu);
	ASSERT_LE(0, other);

	EXPECT_EQ(0, drmIoctl(master, DRM_IOCTL_MEGPU_GET_PARAM, &p));
	EXPECT_EQ(0, drmIoctl(other, DRM_IOCTL_MEGPU_GET_PARAM, &p));
	/* authenticated: the arguments are checked (and refused) */
	EXPECT_EQ(-1, drmIoctl(master, DRM_IOCTL_MEGPU_SUBMIT, &submit));
	EXPECT_EQ(EINVAL, errno);
	/* not authenticated: refused before the arguments are looked at */
	EXPECT_EQ(-1, drmIoctl(other, DRM_IOCTL_MEGPU_SUBMIT, &submit));
	EXPECT_EQ(EACCES, errno);
	close(other);
	close(master);
}

TEST_HARNESS_MAIN
