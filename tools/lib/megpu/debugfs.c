// SPDX-License-Identifier: MIT
/* The driver's debugfs files for a render node. */

#include <dirent.h>
#include <fcntl.h>
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

/* One engine line: "NAME queue Q stalled_writes S flushes F ..." */
static int flush_engine_line(const char *line, struct megpu_flush_stats *st)
{
	char name[16];
	unsigned int q, s, f, i, j;

	if (sscanf(line, "%15s queue %u stalled_writes %u flushes %u "
		   "idle_signals %u idle_irqs %u", name, &q, &s, &f, &i,
		   &j) != 6)
		return -EBADMSG;
	if (st->engines == MEGPU_STATS_ENGINES)
		return -E2BIG;
	snprintf(st->eng[st->engines].name, sizeof(st->eng[0].name), "%s",
		 name);
	st->eng[st->engines].queue = q;
	st->eng[st->engines].stalled_writes = s;
	st->eng[st->engines].flushes = f;
	st->eng[st->engines].idle_signals = i;
	st->eng[st->engines].idle_irqs = j;
	st->engines++;
	return 0;
}

int megpu_flush_stats(struct megpu *gpu, struct megpu_flush_stats *st)
{
	char path[256], line[256], mode[16];
	unsigned int seen = 0;
	unsigned long long v;
	int ret = 0;
	FILE *f;

	ret = megpu_debugfs_path(gpu, "flush", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	while (!ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "write_mode %15s", mode) == 1) {
			st->relaxed = !strcmp(mode, "relaxed");
			seen |= 1;
		} else if (sscanf(line, "host_flushes_started %llu", &v) == 1) {
			st->host_started = v;
			seen |= 2;
		} else if (sscanf(line, "host_flushes_done %llu", &v) == 1) {
			st->host_done = v;
			seen |= 4;
		} else if (sscanf(line, "mc_queue %llu", &v) == 1) {
			st->mc_queue = (uint32_t)v;
			seen |= 8;
		} else {
			ret = flush_engine_line(line, st);
		}
	}
	fclose(f);
	if (!ret && seen != 15)
		ret = -EBADMSG;
	return ret;
}

int megpu_write_mode_get(struct megpu *gpu, bool *strict)
{
	char path[256], buf[32] = "";
	FILE *f;
	int ret;

	ret = megpu_debugfs_path(gpu, "write_mode", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!strncmp(buf, "strict", 6))
		*strict = true;
	else if (!strncmp(buf, "relaxed", 7))
		*strict = false;
	else
		return -EBADMSG;
	return 0;
}

int megpu_write_mode_set(struct megpu *gpu, bool strict)
{
	const char *text = strict ? "strict" : "relaxed";
	char path[256];
	ssize_t n;
	int fd, ret;

	ret = megpu_debugfs_path(gpu, "write_mode", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	ret = n < 0 ? -errno : (size_t)n == strlen(text) ? 0 : -EIO;
	close(fd);
	return ret;
}
