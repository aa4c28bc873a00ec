// SPDX-License-Identifier: MIT
/* Engine types and what each accepts, from the hardware contract. */

#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "megpu_hw_packets.h"
#include "libmegpu.h"

static const char *const type_names[MEGPU_ENGINE_NUM_TYPES] = {
	[MEGPU_ENGINE_GFX] = "gfx",
	[MEGPU_ENGINE_COMPUTE] = "compute",
	[MEGPU_ENGINE_COPY] = "copy",
	[MEGPU_ENGINE_VIDEO] = "video",
};

const char *megpu_engine_type_name(unsigned int type)
{
	return type < MEGPU_ENGINE_NUM_TYPES ? type_names[type] : "?";
}

int megpu_engine_type_by_name(const char *name)
{
	unsigned int t;

	for (t = 0; t < MEGPU_ENGINE_NUM_TYPES; t++)
		if (!strcasecmp(name, type_names[t]))
			return (int)t;
	return -EINVAL;
}

uint32_t megpu_engine_packets(unsigned int type)
{
	switch (type) {
	case MEGPU_ENGINE_GFX:
		return MEGPU_PKTS_GFX;
	case MEGPU_ENGINE_COMPUTE:
		return MEGPU_PKTS_COMPUTE;
	case MEGPU_ENGINE_COPY:
		return MEGPU_PKTS_COPY;
	case MEGPU_ENGINE_VIDEO:
		return MEGPU_PKTS_VIDEO;
	}
	return 0;
}

uint32_t megpu_engine_kernels(unsigned int type)
{
	if (!(megpu_engine_packets(type) & MEGPU_BIT(MEGPU_PKT_DISPATCH)))
		return 0;
	return type == MEGPU_ENGINE_VIDEO ? MEGPU_KERNELS_VIDEO :
					    MEGPU_KERNELS_ALL;
}

/* The driver's name for engine @index: its type and instance, "copy0". */
void megpu_engine_name(uint64_t types, unsigned int index, char *buf,
		       size_t len)
{
	unsigned int type = MEGPU_ENGINE_TYPE(types, index), n = 0, i;

	for (i = 0; i < index; i++)
		if (MEGPU_ENGINE_TYPE(types, i) == type)
			n++;
	snprintf(buf, len, "%s%u", megpu_engine_type_name(type), n);
}
