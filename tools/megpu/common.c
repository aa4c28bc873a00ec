// SPDX-License-Identifier: MIT
/* Helpers shared by the megpu subcommands. */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_regs.h"
#include "megpu.h"

int tool_open(struct megpu *gpu, unsigned int index)
{
	int ret = megpu_open(gpu, index);

	if (ret)
		fprintf(stderr, "megpu: cannot open megpu device %u: %s%s\n",
			index, strerror(-ret), ret == -ENODEV ||
			ret == -ENOENT ? " (is megpu.ko loaded?)" : "");
	return ret;
}

bool tool_help(int argc, char **argv, const char *usage)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return true;
		}
	return false;
}

int tool_pick_engine(struct megpu *gpu, int prefer, unsigned int op,
		     int kernel)
{
	unsigned int n = 0, e, pass;
	uint64_t types = 0;

	if (megpu_engines(gpu, &n, &types))
		return -1;
	for (pass = 0; pass < 2; pass++)
		for (e = 0; e < n; e++) {
			unsigned int t = MEGPU_ENGINE_TYPE(types, e);

			if (!pass && (int)t != prefer)
				continue;
			if (!(megpu_engine_packets(t) & MEGPU_BIT(op)))
				continue;
			if (kernel >= 0 &&
			    !(megpu_engine_kernels(t) & MEGPU_BIT(kernel)))
				continue;
			return (int)e;
		}
	return -1;
}

const char *tool_engine_name(struct megpu *gpu, unsigned int e)
{
	uint64_t types = 0;

	megpu_engines(gpu, NULL, &types);
	return megpu_engine_type_name(MEGPU_ENGINE_TYPE(types, e));
}

bool tool_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

bool tool_parse_size(const char *s, uint64_t *v)
{
	uint64_t mul = 1;
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno)
		return false;
	if (*end == 'K' || *end == 'k')
		mul = 1024;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		mul = 1024 * 1024 * 1024;
	if (mul > 1)
		end++;
	if (*end || *v > UINT64_MAX / mul)
		return false;
	*v *= mul;
	return true;
}

const char *tool_status(int status)
{
	static char buf[64];

	switch (status) {
	case 0:
		return "ok";
	case -EFAULT:
		return "faulted (-EFAULT)";
	case -ETIMEDOUT:
		return "hung, engine reset (-ETIMEDOUT)";
	case -ECANCELED:
		return "cancelled: a dependency failed (-ECANCELED)";
	case -ETIME:
		return "not done in time";
	}
	snprintf(buf, sizeof(buf), "error %d (%s)", status, strerror(-status));
	return buf;
}

/* Jobs put in rings so far, all engines (debugfs "timestamps"). */
int64_t tool_emitted_jobs(struct megpu *gpu)
{
	char path[256], name[32];
	unsigned long long cur, next;
	int64_t sum = 0;
	FILE *f;

	if (megpu_debugfs_path(gpu, "timestamps", path, sizeof(path)))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%31s current %llu next %llu", name, &cur,
		      &next) == 3)
		sum += next - 1;
	fclose(f);
	return sum;
}

/*
 * Before opening a gate: let the schedulers put @want jobs more than
 * @base in the rings (what they can: with CPU waits only the jobs with
 * nothing to wait for), at most 0.8 s, within the gate's hold.
 */
void tool_gate_settle(struct megpu *gpu, int64_t base, int64_t want)
{
	int64_t t0 = megpu_now_ns(), n;

	if (base < 0)
		return;
	while (megpu_now_ns() - t0 < 800000000ll) {
		n = tool_emitted_jobs(gpu);
		if (n < 0 || n - base >= want)
			return;
		usleep(1000);
	}
}
