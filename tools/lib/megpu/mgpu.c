// SPDX-License-Identifier: MIT
/*
 * libmegpu: the arithmetic of multi-GPU coordination (seed 000) as pure
 * functions, the same rules the device applies (megpu-mgpu.c), for
 * tools, tests and the exhaustive checks in tests/host/mgpu_test.c.
 * No libdrm here: the host unit tests link it alone.
 */
#include <errno.h>
#include <string.h>

#include "libmegpu.h"
#include "megpu_hw_mgpu.h"

uint32_t megpu_msem_sum(const uint32_t *slots, unsigned int agents,
			uint32_t mask)
{
	uint32_t sum = 0;

	for (unsigned int a = 0; a < agents; a++)
		if (mask & (1u << a))
			sum += slots[a];	/* 32-bit register: wraps */
	return sum;
}

bool megpu_msem_negative(uint32_t sum)
{
	return sum & 0x80000000u;
}

int megpu_msem_check_mask(unsigned int agent, unsigned int agents,
			  uint32_t mask)
{
	if (!agents || agents > MEGPU_MGPU_MAX_AGENTS || agent >= agents)
		return -EINVAL;
	if (!(mask & (1u << agent)) || (mask & ~((1u << agents) - 1)))
		return -EINVAL;
	return 0;
}

void megpu_msem_signal_model(uint32_t *slots, unsigned int agent)
{
	slots[agent] += 1;
}

int megpu_msem_wait_model(uint32_t *slots, unsigned int agents,
			  unsigned int agent, uint32_t mask, uint32_t *sum)
{
	uint32_t s;

	if (megpu_msem_check_mask(agent, agents, mask))
		return -EINVAL;
	slots[agent] -= 1;			/* pre-decrement */
	s = megpu_msem_sum(slots, agents, mask);
	if (sum)
		*sum = s;
	if (megpu_msem_negative(s)) {
		slots[agent] += 1;		/* compensate, then stall */
		return 0;
	}
	return 1;
}

/* Table 3: the 7-bit ID masks of GPUs 0..3, A6 first. */
static const uint8_t megpu_eq2_id[4] = { 0x3e, 0x3d, 0x6b, 0x5b };

uint8_t megpu_arb_eq2(uint32_t dw1, uint32_t dw2, unsigned int gpu)
{
	uint8_t cat;

	cat = ((dw2 >> 16) & 1) << 6 | ((dw2 >> 8) & 1) << 5 |
	      (dw2 & 1) << 4 | ((dw1 >> 24) & 1) << 3 |
	      ((dw1 >> 16) & 1) << 2 | ((dw1 >> 8) & 1) << 1 | (dw1 & 1);
	return cat & megpu_eq2_id[gpu & 3];
}

unsigned int megpu_arb_eq3(uint8_t a)
{
	unsigned int b = a;

	return ((b >> 6 & 1) + ((b >> 5 | b >> 4) & 1) + (b >> 3 & 1) +
		(b >> 2 & 1) + ((b >> 1 | b) & 1) + 1) & 1;
}

size_t megpu_mgpu_schedule(uint64_t seed, uint32_t agents_mask,
			   uint8_t *out, size_t len)
{
	agents_mask &= (1u << MEGPU_MGPU_MAX_AGENTS) - 1;
	if (!agents_mask)
		return 0;
	/* the devices' seed mode draws the same order from the same seed */
	for (size_t i = 0; i < len; i++)
		out[i] = megpu_mgpu_seed_agent(seed, agents_mask, i);
	return len;
}
