/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the megpu selftests. */
#ifndef MEGPU_TEST_H
#define MEGPU_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The host harness boots the guest with "megpu_test.<key>=<value>" on the
 * kernel command line to tell the tests how it configured the device.
 * Returns the value, or def when the key is absent.
 */
static inline long megpu_test_cmdline(const char *key, long def)
{
	char buf[4096], pat[64], *p;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return def;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	snprintf(pat, sizeof(pat), "megpu_test.%s=", key);
	p = strstr(buf, pat);
	return p ? strtol(p + strlen(pat), NULL, 0) : def;
}

/* Read a number from a sysfs file; -1 on error. */
static inline long megpu_sysfs_read(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%li", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

#endif
