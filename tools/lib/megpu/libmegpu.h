/* SPDX-License-Identifier: MIT */
/*
 * libmegpu: userspace access to megpu GPUs on top of libdrm.
 *
 * Functions return 0 or a negative errno; they never print.
 */
#ifndef LIBMEGPU_H
#define LIBMEGPU_H

#include <stdint.h>

#define MEGPU_DRIVER_NAME "megpu"

/**
 * struct megpu - an open megpu render node
 * @fd: render node file descriptor
 * @node: its path, e.g. /dev/dri/renderD128
 */
struct megpu {
	int fd;
	char node[64];
};

/*
 * Open the index-th megpu render node found by drmGetDevices2().
 * Returns -ENODEV when there are not that many megpu devices.
 */
int megpu_open(struct megpu *gpu, unsigned int index);
void megpu_close(struct megpu *gpu);

/* Count the megpu render nodes present. */
int megpu_count_devices(void);

int megpu_get_param(struct megpu *gpu, uint32_t param, uint64_t *value);

/* "gfx", "compute", "copy", "video", or "?" for an unknown type. */
const char *megpu_engine_type_name(unsigned int type);

#endif
