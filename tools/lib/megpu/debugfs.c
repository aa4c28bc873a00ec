// SPDX-License-Identifier: MIT
/* The driver's debugfs files for a render node. */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libmegpu.h"

#define DEBUGFS_DRI "/sys/kernel/debug/dri"

/*
 * DRM names a device's debugfs directory after its primary (card) minor;
 * the render node's sysfs device lists the DRM minors of the device.
 */
static int card_index(struct megpu *gpu, int *index)
{
	char dir[128];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = -ENOENT;

	if (fstat(gpu->fd, &st))
		return -errno;
	snprintf(dir, sizeof(dir), "/sys/dev/char/%u:%u/device/drm",
		 major(st.st_rdev), minor(st.st_rdev));
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "card", 4))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (end == de->d_name + 4 || *end)
			continue;
		*index = (int)n;
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

int megpu_debugfs_path(struct megpu *gpu, const char *name, char *buf,
		       size_t len)
{
	struct stat st;
	int index, ret, n;

	ret = card_index(gpu, &index);
	if (ret)
		return ret;
	n = snprintf(buf, len, DEBUGFS_DRI "/%d/%s", index, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (stat(buf, &st))
		return -errno;
	return 0;
}

int megpu_debugfs_counter(struct megpu *gpu, const char *key,
			  uint64_t *value)
{
	char path[256], line[256], k[128];
	int ret = -ENOENT;
	uint64_t v;
	FILE *f;

	ret = megpu_debugfs_path(gpu, "counters", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %" SCNu64, k, &v) == 2 &&
		    !strcmp(k, key)) {
			*value = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}
