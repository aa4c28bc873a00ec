// SPDX-License-Identifier: GPL-2.0
/*
 * Unloading and reloading megpu.ko: the device unbinds, the render node
 * goes away, and after insmod it is back and answers. The guest's kernel
 * log is checked by the host for warnings the cycle may cause.
 */

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_drm.h"
#include "libmegpu.h"
#include "megpu_test.h"

static const char *module_path(void)
{
	const char *p = getenv("MEGPU_KO");

	return p ? p : "/lib/modules/megpu.ko";
}

static int run(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

TEST(unload_reload)
{
	struct stat st;
	struct megpu gpu;
	uint64_t v;
	int round;

	if (access(module_path(), R_OK))
		SKIP(return, "%s not found (set MEGPU_KO)", module_path());

	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, megpu_open(&gpu, 0));
		megpu_close(&gpu);

		ASSERT_EQ(0, run("rmmod megpu", NULL));
		EXPECT_NE(0, stat("/sys/bus/pci/drivers/megpu", &st));
		EXPECT_EQ(-ENODEV, megpu_open(&gpu, 0));

		ASSERT_EQ(0, run("insmod %s", module_path()));
		ASSERT_EQ(0, megpu_open(&gpu, 0));
		ASSERT_EQ(0, megpu_get_param(&gpu,
					     DRM_MEGPU_PARAM_ENGINE_COUNT, &v));
		EXPECT_LT(0, v);
		megpu_close(&gpu);
	}
}

/* An open file keeps the module busy; rmmod must refuse, not crash. */
TEST(unload_while_open_is_refused)
{
	struct megpu gpu;
	uint64_t v;

	ASSERT_EQ(0, megpu_open(&gpu, 0));
	EXPECT_NE(0, run("rmmod megpu 2>/dev/null", NULL));
	ASSERT_EQ(0, megpu_get_param(&gpu, DRM_MEGPU_PARAM_ENGINE_COUNT, &v));
	megpu_close(&gpu);
}

TEST_HARNESS_MAIN
