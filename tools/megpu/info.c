// SPDX-License-Identifier: MIT
/* megpu info: the devices present and their parameters. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "megpu_hw_regs.h"
#include "libmegpu.h"
#include "megpu.h"

static int print_device(unsigned int index)
{
	uint64_t dev_id, hw, engines, features, types;
	struct megpu gpu;
	drmVersionPtr ver;
	unsigned int n;
	int ret;

	ret = megpu_open(&gpu, index);
	if (ret)
		return ret;
	ver = drmGetVersion(gpu.fd);
	if (!ver) {
		ret = -errno;
		goto out;
	}
	ret = megpu_get_param(&gpu, DRM_MEGPU_PARAM_DEVICE_ID, &dev_id);
	ret = ret ?: megpu_get_param(&gpu, DRM_MEGPU_PARAM_HW_VERSION, &hw);
	ret = ret ?: megpu_get_param(&gpu, DRM_MEGPU_PARAM_ENGINE_COUNT,
				     &engines);
	ret = ret ?: megpu_get_param(&gpu, DRM_MEGPU_PARAM_FEATURES, &features);
	ret = ret ?: megpu_get_param(&gpu, DRM_MEGPU_PARAM_ENGINE_TYPES,
				     &types);
	if (ret)
		goto out_ver;

	printf("megpu%u: %s\n", index, gpu.node);
	printf("  driver:     %s %d.%d.%d (%s)\n", ver->name,
	       ver->version_major, ver->version_minor,
	       ver->version_patchlevel, ver->desc);
	printf("  device id:  0x%04llx\n", (unsigned long long)dev_id);
	printf("  hardware:   %u.%u\n",
	       (unsigned int)MEGPU_HW_VERSION_GET_MAJOR(hw),
	       (unsigned int)MEGPU_HW_VERSION_GET_MINOR(hw));
	printf("  features:   0x%llx\n", (unsigned long long)features);
	printf("  engines:    %llu\n", (unsigned long long)engines);
	for (n = 0; n < engines; n++)
		printf("    engine %u: %s\n", n,
		       megpu_engine_type_name(MEGPU_ENGINE_TYPE(types, n)));
out_ver:
	drmFreeVersion(ver);
out:
	megpu_close(&gpu);
	return ret;
}

int cmd_info(int argc, char **argv)
{
	int count, i, ret;

	if (argc > 1) {
		int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");

		fprintf(help ? stdout : stderr,
			"usage: megpu info\n\n"
			"Prints every megpu device found through libdrm: its render\n"
			"node, driver version and parameters.\n");
		return help ? 0 : 2;
	}

	count = megpu_count_devices();
	if (count <= 0) {
		fprintf(stderr,
			"megpu: no megpu device found (is megpu.ko loaded?)\n");
		return 1;
	}
	for (i = 0; i < count; i++) {
		ret = print_device(i);
		if (ret) {
			fprintf(stderr, "megpu: device %d: %s\n", i,
				strerror(-ret));
			return 1;
		}
	}
	return 0;
}
