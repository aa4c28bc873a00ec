// SPDX-License-Identifier: GPL-2.0
/*
 * Probe failures: the host boots this test with three faulty devices, one
 * reporting an unsupported hardware version, one whose interrupts never
 * arrive and one without semaphores or an MMU (x-caps=0x3)
 * (megpu_test.faulty=3). None may bind, each must be explained in the
 * kernel log, and the module must still unload cleanly.
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_hw_regs.h"
#include "libmegpu.h"
#include "megpu_test.h"

#define SYSLOG_ACTION_READ_ALL	3
#define SYSLOG_ACTION_SIZE_BUFFER	10

static int count_megpu_functions(int *bound)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/sys/bus/pci/devices");

	*bound = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 de->d_name);
		if (megpu_sysfs_read(path) != MEGPU_PCI_VENDOR_ID)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 de->d_name);
		if (megpu_sysfs_read(path) != MEGPU_PCI_DEVICE_ID)
			continue;
		n++;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver",
			 de->d_name);
		if (!access(path, F_OK))
			(*bound)++;
	}
	closedir(d);
	return n;
}

static char *kernel_log(void)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
	char *buf;
	int n;

	if (size <= 0)
		return NULL;
	buf = calloc(1, size + 1);
	n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

TEST(faulty_devices_do_not_bind)
{
	int bound, n;
	char *log;

	if (megpu_test_cmdline("faulty", 0) != 3)
		SKIP(return, "needs faulty devices (megpu_test.faulty=3)");

	n = count_megpu_functions(&bound);
	ASSERT_EQ(3, n);
	EXPECT_EQ(0, bound);
	EXPECT_EQ(0, megpu_count_devices());

	log = kernel_log();
	ASSERT_NE(NULL, log);
	EXPECT_NE(NULL, strstr(log, "hardware version 2.0, driver supports 1.x"));
	EXPECT_NE(NULL, strstr(log, "interrupt self-test: no interrupt on vector"));
	EXPECT_NE(NULL, strstr(log, "device lacks features 0xc"));
	free(log);

	ASSERT_EQ(0, system("rmmod megpu"));
	ASSERT_EQ(0, system("insmod /lib/modules/megpu.ko"));
	EXPECT_EQ(3, count_megpu_functions(&bound));
	EXPECT_EQ(0, bound);
}

TEST_HARNESS_MAIN
