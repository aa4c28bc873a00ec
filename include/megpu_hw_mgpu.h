/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: multi-GPU coordination
 * (seed 000): summed semaphores, the arbiter and its rules, schedules.
 *
 * Part of include/megpu_hw.h (which includes every part); included
 * by the device and the driver. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_MGPU_H
#define MEGPU_HW_MGPU_H

#include "megpu_hw_packets.h"

/*
 * Multi-GPU coordination without a single point of control (seed 000).
 *
 * Several megpu devices (agents) share guest memory. Each device has an
 * agent id and the agent count (MGPU_AGENT_ID, MGPU_AGENT_COUNT, which
 * the driver sets; their reset values come from the "mgpu-agent" and
 * "mgpu-agents" properties). All engines of a device act as its agent.
 * Every decision is made by the engines' own host-atomic reads and
 * writes of coordination words in memory; no device arbitrates.
 *
 * MGPU_SCHED: bus address of a schedule block (0: off). With it set,
 * each coordination step (one write, or the reads of one check) of an
 * engine waits until the block's agent[pos] is the device's agent id,
 * then advances pos; once pos >= len the steps run freely. Devices that
 * point at the same block take their steps in the order it lists, so a
 * race replays exactly (F17). Layout below (MEGPU_MGPU_SCHED_*).
 * MGPU_STEPS counts the coordination steps the device's engines took.
 */
#define MEGPU_REG_MGPU_AGENT_ID		0x00c0	/* RW: 0..AGENT_COUNT-1 */
#define MEGPU_REG_MGPU_AGENT_COUNT	0x00c4	/* RW: 1..MEGPU_MGPU_MAX_AGENTS */
#define MEGPU_REG_MGPU_SCHED_LO		0x00c8	/* RW: schedule block, 4-aligned */
#define MEGPU_REG_MGPU_SCHED_HI		0x00cc
#define MEGPU_REG_MGPU_STEPS		0x00d0	/* RO: coordination steps */

#define MEGPU_MGPU_MAX_AGENTS		8

/* Schedule block: u32 pos, u32 len, then len agent ids, one byte each. */
#define MEGPU_MGPU_SCHED_POS		0
#define MEGPU_MGPU_SCHED_LEN		4
#define MEGPU_MGPU_SCHED_AGENT(i)	(8 + (i))
#define MEGPU_MGPU_SCHED_MAX		65536

/*
 * A seeded schedule: LEN has MEGPU_MGPU_SCHED_SEEDED, no list follows but
 * a u64 seed and a u32 agent mask (not 0, agents < MEGPU_MGPU_MAX_AGENTS),
 * and agent[pos] is megpu_mgpu_seed_agent(seed, mask, pos): every device
 * computes the order itself from the seed alone.
 */
#define MEGPU_MGPU_SCHED_SEEDED		0x80000000u
#define MEGPU_MGPU_SCHED_SEED		8	/* u64 */
#define MEGPU_MGPU_SCHED_MASK		16	/* u32 */
#define MEGPU_MGPU_SCHED_SEEDED_BYTES	20

/*
 * A seeded schedule may cover a whole run (LEN up to MEGPU_MGPU_SCHED_MAX)
 * and record it: with MEGPU_MGPU_SCHED_TRACED in LEN too, the block goes
 * on to MEGPU_MGPU_SCHED_TRACED_BYTES. DONE(a) != 0 says agent a has no
 * step left (the CPU sets it when the agent's work completed): a turn
 * drawn for it is skipped (pos advanced by whoever waits on it), so the
 * order stays the seed's. Every step taken in its turn is written to
 * TRACE[TRACE_COUNT] while TRACE_COUNT < TRACE_CAP (a record below), and
 * TRACE_COUNT counts every step, so an overflow shows.
 */
#define MEGPU_MGPU_SCHED_TRACED		0x40000000u
#define MEGPU_MGPU_SCHED_DONE(a)	(24 + (a))	/* u8 each */
#define MEGPU_MGPU_SCHED_TRACE_COUNT	32	/* u32 */
#define MEGPU_MGPU_SCHED_TRACE_CAP	36	/* u32: records */
#define MEGPU_MGPU_SCHED_TRACE		40	/* u64: bus address, 8-aligned */
#define MEGPU_MGPU_SCHED_TRACED_BYTES	48

/*
 * A step record, 8 bytes: the agent, what the step was, the byte offset
 * of the word it touched from the packet's base (an MSEM slot: 4 * agent;
 * an ARB block's word), and the value: the new one of a write, the one
 * read by a read.
 */
#define MEGPU_MGPU_REC_AGENT		0	/* u8 */
#define MEGPU_MGPU_REC_KIND		1	/* u8: MEGPU_MGPU_STEP_* */
#define MEGPU_MGPU_REC_OFFSET		2	/* u8 */
#define MEGPU_MGPU_REC_ENGINE		3	/* u8 */
#define MEGPU_MGPU_REC_VALUE		4	/* u32 */
#define MEGPU_MGPU_REC_SIZE		8

#define MEGPU_MGPU_STEP_SIGNAL		1	/* MSEM_SIGNAL: own slot + 1 */
#define MEGPU_MGPU_STEP_WAIT_DEC	2	/* MSEM_WAIT: own slot - 1 */
#define MEGPU_MGPU_STEP_WAIT_UNDO	3	/* a failed check: + 1 back */
#define MEGPU_MGPU_STEP_READ		4	/* a slot read by a check */
#define MEGPU_MGPU_STEP_ARB_STORE	5	/* ARB: a byte stored */
#define MEGPU_MGPU_STEP_ARB_READ	6	/* ARB: a word read */
#define MEGPU_MGPU_STEP_ARB_ADD		7	/* ARB: the semaphore word */

/* splitmix64 of (seed, pos), then one of @mask's agents: pure. */
static inline unsigned int megpu_mgpu_seed_agent(unsigned long long seed,
						 unsigned int mask,
						 unsigned int pos)
{
	unsigned long long z = seed + (pos + 1ull) * 0x9e3779b97f4a7c15ull;
	unsigned int k;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	for (k = z % __builtin_popcount(mask); k; k--)
		mask &= mask - 1;
	return __builtin_ctz(mask);
}

/*
 * The arbitration rules (seed 000 §III), pure: the device decides with
 * them and the host checker (tests/host/mgpu_test.c) explores every
 * interleaving of small systems with the same code; libmegpu has no copy.
 */

/* Eq. 1, the 2-agent one-bit adder: 1 grants @id the node. */
static inline unsigned int megpu_arb_eq1(unsigned int req0, unsigned int req1,
					 unsigned int last, unsigned int id)
{
	return (!!req0 + !!req1 + (last & 1) + (id & 1)) & 1;
}

/* Eq. 1 on a node dword {Req0, Req1, Last} for @side. */
static inline unsigned int megpu_arb_node_ack(unsigned int dw,
					      unsigned int side)
{
	return megpu_arb_eq1(dw & 0xff, (dw >> 8) & 0xff, dw >> 16, side);
}

/* Tournament levels for @agents (1, 2, 4, 8), else -1. */
static inline int megpu_arb_levels(unsigned int agents)
{
	return agents == 8 ? 3 : agents == 4 ? 2 : agents == 2 ? 1 :
	       agents == 1 ? 0 : -1;
}

/* Dword index (in the ARB block) of @agent's node at @level; *@side. */
static inline unsigned int megpu_arb_node(unsigned int agents,
					  unsigned int agent,
					  unsigned int level,
					  unsigned int *side)
{
	unsigned int first = 0, l;

	for (l = 0; l < level; l++)
		first += agents >> (l + 1);
	*side = (agent >> level) & 1;
	return 1 + first + (agent >> (level + 1));
}

/* The seed's 4-GPU decision tree (Tables 2A/2B): non-zero means wait. */
static inline int megpu_arb_literal_wait(unsigned int dw1, unsigned int dw2,
					 unsigned int i)
{
	unsigned int pair = (i >> 1) & 1;
	unsigned int mine = pair ? dw2 : dw1, other = pair ? dw1 : dw2;
	unsigned int lastpair = dw1 >> 24;

	return (((mine >> (8 * !(i & 1))) & 0xff) &&
		((mine >> 16) & 0xff) == i) ||
	       ((other & 0xffff) && lastpair == pair);
}

/* Per-engine counters (relative to the engine block). */
#define MEGPU_ENG_MSEM_RETRIES		0xc0	/* RO: MSEM_WAIT attempts that blocked */
#define MEGPU_ENG_MSEM_FALSE_BLOCKS	0xc4	/* RO: of which a signal was there */
#define MEGPU_ENG_ARB_SPINS		0xc8	/* RO: checks that said "wait" */
#define MEGPU_ENG_ARB_FAILED_WAITS	0xcc	/* RO: semaphore found 0 (Failed Wait) */

/*
 * Multi-summed semaphore: an array of MGPU_AGENT_COUNT 32-bit signed
 * slots at @base (4-aligned), one per agent. An engine changes only its
 * own slot, with atomic read/modify/write.
 *
 * MSEM_SIGNAL: base(2). Slot[agent] += 1, then wakes every waiting
 * engine of every device.
 * MSEM_WAIT: base(2), mask(1). Slot[agent] -= 1 (pre-decrement), then
 * the slots of @mask (which must contain the own agent and no agent >=
 * AGENT_COUNT) are summed in 32 bits, wrapping. If bit 31 of the sum is
 * set, slot[agent] += 1 (compensation), the engine stalls until any
 * coordination write of any device (or 1 ms) and retries; else the wait
 * is done. Before a retry the device counts MSEM_RETRIES, and
 * MSEM_FALSE_BLOCKS if a sum re-read after the compensation is >= 1.
 */
#define MEGPU_PKT_MSEM_SIGNAL		0x10
#define MEGPU_PKT_MSEM_WAIT		0x11
#define MEGPU_PKT_MSEM_SIGNAL_COUNT	2
#define MEGPU_PKT_MSEM_WAIT_COUNT	3
#define MEGPU_MSEM_SLOT(agent)		((agent) * 4)
#define MEGPU_ARB_HELD_MAX		4

/*
 * Request/acknowledge arbitration: ARB_ACQUIRE base(2), ARB_RELEASE
 * base(2), flags in the header. The block at @base (4-aligned) is
 * MGPU_AGENT_COUNT dwords: DW0 a 32-bit semaphore (used only with
 * FLAG_SEM), then the arbitration dwords. Fields are bytes; an agent
 * writes only its own Req bytes and the Last bytes of its nodes.
 *
 * Tournament (default; 2, 4 or 8 agents): N - 1 nodes of the 2-agent
 * rule, level by level: level L has N >> (L + 1) nodes, node k of the
 * whole list is DW(1 + k) = {byte 0: Req side 0, byte 1: Req side 1,
 * byte 2: Last side}. Agent a at level L uses node (a >> (L + 1)) of
 * that level as side (a >> L) & 1: write Req[side] = 1, Last = side,
 * then check until ack = (Req0 + Req1 + Last + side) mod 2 is 1 (Eq. 1,
 * a one-bit adder); win every level up to the root. Release clears the
 * Req bytes from the root down. With 2 agents this is the seed's
 * Table 1: DW1 = {Req0, Req1, Last}.
 *
 * FLAG_LITERAL (4 agents only): the seed's Table 2 decision tree, kept
 * to show that it is NOT mutually exclusive: DW1 = {Req0, Req1, Last01,
 * LastPair}, DW2 = {Req2, Req3, Last23, 0} (Last01/Last23: agent id,
 * LastPair: pair 0 or 1). Agent i writes Req, Last of its pair, LastPair,
 * then waits while (Req[mate] && Last == i) ||
 * ((Req of the other pair) && LastPair == own pair).
 *
 * Engines of one GPU are one agent: a device-local stage in front of
 * the protocol lets one of them at a time hold a block (keyed by its
 * bus address); the others stall at ACQUIRE. An engine holds at most
 * MEGPU_ARB_HELD_MAX blocks; ACQUIRE of a block it holds, or one more,
 * and RELEASE of a block another engine of the GPU holds fault ARB_HELD.
 * A reset, a fault or a SET_CONTEXT to another context drops the holds.
 *
 * Pure mutex (no FLAG_SEM): ACQUIRE returns holding the lock, RELEASE
 * (same flags) gives it up. With FLAG_SEM the arbiter guards DW0:
 * ACQUIRE takes the lock, and if DW0 != 0 decrements it and unlocks;
 * if DW0 == 0 (Failed Wait) it unlocks (Req cleared, Last unchanged, so
 * the other agent goes next), stalls like MSEM_WAIT and retries.
 * RELEASE with FLAG_SEM locks, increments DW0 and unlocks. RELEASE first
 * waits until the engine's posted writes are in memory, so data written
 * inside the critical section is visible to the next owner.
 */
#define MEGPU_PKT_ARB_ACQUIRE		0x12
#define MEGPU_PKT_ARB_RELEASE		0x13
#define MEGPU_PKT_ARB_COUNT		2
#define MEGPU_ARB_FLAG_SEM		MEGPU_BIT(0)
#define MEGPU_ARB_FLAG_LITERAL		MEGPU_BIT(1)
#define MEGPU_ARB_FLAGS			(MEGPU_ARB_FLAG_SEM | MEGPU_ARB_FLAG_LITERAL)
#define MEGPU_ARB_SEM			0	/* DW0 byte offset */
#define MEGPU_ARB_DW(n)			((n) * 4)
#define MEGPU_ARB_REQ(side)		(side)	/* byte within a node dword */
#define MEGPU_ARB_LAST			2
#define MEGPU_ARB_LASTPAIR		3	/* literal tree, in DW1 */

/* Accepted by every engine type. */
#define MEGPU_PKTS_MGPU \
	(MEGPU_BIT(MEGPU_PKT_MSEM_SIGNAL) | MEGPU_BIT(MEGPU_PKT_MSEM_WAIT) | \
	 MEGPU_BIT(MEGPU_PKT_ARB_ACQUIRE) | MEGPU_BIT(MEGPU_PKT_ARB_RELEASE))

#endif /* MEGPU_HW_MGPU_H */
