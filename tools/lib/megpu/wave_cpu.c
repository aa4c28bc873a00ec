// SPDX-License-Identifier: MIT
/*
 * Wave programs on the CPU (seed 002: one intermediate form, run by
 * engines and by CPU dequeuers alike). A task whose CPU_FN is
 * MEGPU_KERNEL_PROGRAM names a program-arguments block; a CPU dequeuer
 * runs its program here with the device's semantics (megpu_hw.h, "Wave
 * ISA"): the grid split into work-groups and waves of MEGPU_WAVE_LANES
 * lanes with an execution mask, IF/ELSE/ENDIF mask stack, branches on
 * any lane, loads and stores of active lanes in lane order, 32-bit
 * atomics as host atomics (so CPU and engines may share counters), and
 * the arithmetic of megpu_isa.h, the copy the device uses.
 *
 * Choices: waves run one after the other, each to its end (the device
 * interleaves them; programs may not rely on either order). Memory is
 * the agent's regions: an address outside them faults MMU. A wave has an
 * instruction budget (MEGPU_CPU_WAVE_BUDGET) so a runaway loop faults
 * BUDGET instead of holding the thread. SYSCALL, SLEEP and INTERRUPT ask
 * for the device (a mailbox, a restart, an interrupt): PRIVILEGED, as on
 * a device whose driver allows none of them. Any fault ends the task
 * with that code, as on an engine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmegpu.h"
#include "megpu_hw_wave.h"
#include "megpu_isa.h"

#define MEGPU_CPU_WAVE_BUDGET	(1ull << 26)

struct cpu_waves {
	const struct megpu_tq_agent *a;
	const uint64_t *prog;
	uint32_t len;
	uint8_t user[MEGPU_PARGS_USER_SIZE];
	uint64_t args;		/* GPU address of the user arguments */
	uint32_t grid_x, grid_y, group_x, group_y;
};

struct cpu_wave {
	uint32_t pc, exec, depth, first;
	uint32_t mask_stack[MEGPU_WAVE_MASK_DEPTH];
	uint64_t group_x, group_y, id;
	uint64_t r[MEGPU_WAVE_REGS][MEGPU_WAVE_LANES];
};

static uint64_t ld_le(const uint8_t *p, unsigned int size)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void st_le(uint8_t *p, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = v >> (8 * i);
}

#define FOR_EACH_LANE(w, l) \
	for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++) \
		if ((w)->exec & (1u << l))

static int cpu_ldst(const struct cpu_waves *W, struct cpu_wave *w,
		    uint32_t op, uint32_t dst, uint32_t base, uint32_t src,
		    uint32_t imm)
{
	unsigned int size = op == MEGPU_OP_LD64 || op == MEGPU_OP_ST64 ? 8 : 4;
	int write = op == MEGPU_OP_ST32 || op == MEGPU_OP_ST64;

	/* alignment of every active lane first, as the device checks */
	FOR_EACH_LANE(w, l)
		if ((w->r[base][l] + megpu_isa_sext(imm)) & (size - 1))
			return MEGPU_FAULT_MISALIGNED;
	FOR_EACH_LANE(w, l) {
		uint64_t addr = w->r[base][l] + megpu_isa_sext(imm);
		uint8_t *p = megpu_tq_xlate(W->a, addr, size);

		if (!p)
			return MEGPU_FAULT_MMU;
		if (write)
			st_le(p, w->r[src][l], size);
		else
			w->r[dst][l] = ld_le(p, size);
	}
	return 0;
}

static int cpu_atomic(const struct cpu_waves *W, struct cpu_wave *w,
		      uint32_t op, uint32_t dst, uint32_t base, uint32_t src,
		      uint32_t imm)
{
	FOR_EACH_LANE(w, l) {
		uint64_t addr = w->r[base][l] + megpu_isa_sext(imm);
		uint32_t *p, val = (uint32_t)w->r[src][l];
		uint32_t old = (uint32_t)w->r[dst][l];

		if (addr & 3)
			return MEGPU_FAULT_MISALIGNED;
		p = megpu_tq_xlate(W->a, addr, 4);
		if (!p)
			return MEGPU_FAULT_MMU;
		if (op == MEGPU_OP_ATOMADD32)
			old = __atomic_fetch_add(p, val, __ATOMIC_SEQ_CST);
		else if (op == MEGPU_OP_ATOMXCHG32)
			old = __atomic_exchange_n(p, val, __ATOMIC_SEQ_CST);
		else
			__atomic_compare_exchange_n(p, &old, val, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		w->r[dst][l] = old;
	}
	return 0;
}

/* Run one wave to its end: 0, or the MEGPU_FAULT_* that stopped it. */
static int cpu_wave_run(const struct cpu_waves *W, struct cpu_wave *w)
{
	for (uint64_t insns = 0;; insns++) {
		struct megpu_isa_wave pos;
		uint64_t insn;
		uint32_t op, dst, s0, s1, imm;
		int any, ret = 0;

		if (w->pc >= W->len)
			return MEGPU_FAULT_PC_RANGE;
		if (insns >= MEGPU_CPU_WAVE_BUDGET)
			return MEGPU_FAULT_BUDGET;
		insn = W->prog[w->pc];
		op = MEGPU_INSN_OP(insn);
		dst = MEGPU_INSN_DST(insn);
		s0 = MEGPU_INSN_SRC0(insn);
		s1 = MEGPU_INSN_SRC1(insn);
		imm = MEGPU_INSN_IMM(insn);
		/* no CPU answers a call or restarts a sleep in a task */
		if (op == MEGPU_OP_SYSCALL || op == MEGPU_OP_INTERRUPT ||
		    op == MEGPU_OP_SLEEP)
			return MEGPU_FAULT_PRIVILEGED;
		ret = megpu_isa_check(insn);
		if (ret)
			return ret;

		switch (op) {
		case MEGPU_OP_NOP:
			break;
		case MEGPU_OP_END:
			return 0;
		case MEGPU_OP_MOV:
			FOR_EACH_LANE(w, l)
				w->r[dst][l] = w->r[s0][l];
			break;
		case MEGPU_OP_LI:
		case MEGPU_OP_LIH:
			FOR_EACH_LANE(w, l)
				w->r[dst][l] = op == MEGPU_OP_LI ?
					(uint64_t)megpu_isa_sext(imm) :
					(uint64_t)imm << 32 |
					(uint32_t)w->r[dst][l];
			break;
		case MEGPU_OP_S2R:
			pos = (struct megpu_isa_wave) {
				.grid_x = W->grid_x, .grid_y = W->grid_y,
				.group_x = W->group_x, .group_y = W->group_y,
				.group_id_x = w->group_x,
				.group_id_y = w->group_y, .first = w->first,
				.wave_id = w->id, .args = W->args,
				.exec = w->exec,
			};
			megpu_isa_sreg_lanes(&pos, imm, w->r[dst]);
			break;
		case MEGPU_OP_LDARG:
		case MEGPU_OP_LDARG32: {
			unsigned int size = op == MEGPU_OP_LDARG ? 8 : 4;
			uint64_t v;

			v = ld_le(W->user + imm, size);
			FOR_EACH_LANE(w, l)
				w->r[dst][l] = v;
			break;
		}
		case MEGPU_OP_I2F:
		case MEGPU_OP_F2I:
			FOR_EACH_LANE(w, l)
				w->r[dst][l] = op == MEGPU_OP_I2F ?
					megpu_isa_i2f(w->r[s0][l]) :
					megpu_isa_f2i(w->r[s0][l]);
			break;
		case MEGPU_OP_IF:
			if (w->depth >= MEGPU_WAVE_MASK_DEPTH)
				return MEGPU_FAULT_MASK_STACK;
			w->mask_stack[w->depth++] = w->exec;
			FOR_EACH_LANE(w, l)
				if (!w->r[s0][l])
					w->exec &= ~(1u << l);
			break;
		case MEGPU_OP_ELSE:
		case MEGPU_OP_ENDIF:
			if (!w->depth)
				return MEGPU_FAULT_MASK_STACK;
			if (op == MEGPU_OP_ELSE)
				w->exec = w->mask_stack[w->depth - 1] & ~w->exec;
			else
				w->exec = w->mask_stack[--w->depth];
			break;
		case MEGPU_OP_JMP:
			if (imm >= W->len)
				return MEGPU_FAULT_PC_RANGE;
			w->pc = imm;
			continue;
		case MEGPU_OP_BRANY:
			any = 0;
			FOR_EACH_LANE(w, l)
				any |= w->r[s0][l] != 0;
			if (any) {
				if (imm >= W->len)
					return MEGPU_FAULT_PC_RANGE;
				w->pc = imm;
				continue;
			}
			break;
		case MEGPU_OP_LD32:
		case MEGPU_OP_LD64:
			ret = cpu_ldst(W, w, op, dst, s0, 0, imm);
			break;
		case MEGPU_OP_ST32:
		case MEGPU_OP_ST64:
			ret = cpu_ldst(W, w, op, 0, s0, s1, imm);
			break;
		case MEGPU_OP_ATOMADD32:
		case MEGPU_OP_ATOMCAS32:
		case MEGPU_OP_ATOMXCHG32:
			ret = cpu_atomic(W, w, op, dst, s0, s1, imm);
			break;
		default:
			/* the integer and float ALU (checked above) */
			FOR_EACH_LANE(w, l) {
				uint64_t b = s1 == MEGPU_ISA_IMM ?
					megpu_isa_imm_operand(op, imm) :
					w->r[s1][l];

				w->r[dst][l] = megpu_isa_is_falu(op) ?
					megpu_isa_falu(op, w->r[s0][l], b) :
					megpu_isa_alu(op, w->r[s0][l], b);
			}
			break;
		}
		if (ret)
			return ret;
		w->pc++;
	}
}

int megpu_program_run_cpu(const struct megpu_tq_agent *a, uint64_t pargs,
			  uint32_t grid_x, uint32_t grid_y, uint32_t group_x,
			  uint32_t group_y)
{
	uint64_t group = (uint64_t)group_x * group_y, groups_x, groups_y;
	struct cpu_waves W = {
		.a = a, .grid_x = grid_x, .grid_y = grid_y,
		.group_x = group_x, .group_y = group_y,
	};
	const uint8_t *raw;
	uint64_t prog_va, *prog;
	struct cpu_wave *w;
	uint64_t waves = 0;
	int ret = 0;

	if ((pargs & 7) || !group || group > MEGPU_MAX_GROUP_SIZE)
		return MEGPU_FAULT_BAD_ARG;
	raw = megpu_tq_xlate(a, pargs, MEGPU_PARGS_SIZE);
	if (!raw)
		return MEGPU_FAULT_MMU;
	W.args = pargs + MEGPU_PARGS_USER;
	prog_va = ld_le(raw + MEGPU_PARGS_PROGRAM, 8);
	W.len = ld_le(raw + MEGPU_PARGS_LENGTH, 4);
	memcpy(W.user, raw + MEGPU_PARGS_USER, MEGPU_PARGS_USER_SIZE);
	if ((prog_va & 7) || !W.len || W.len > MEGPU_PROGRAM_MAX_INSNS ||
	    ld_le(raw + MEGPU_PARGS_FLAGS, 4))
		return MEGPU_FAULT_BAD_ARG;
	/* loaded once, as the device's instruction-cache fill */
	raw = megpu_tq_xlate(a, prog_va, (uint64_t)W.len * 8);
	if (!raw)
		return MEGPU_FAULT_MMU;
	prog = malloc((size_t)W.len * 8);
	w = malloc(sizeof(*w));
	if (!prog || !w) {
		free(prog);
		free(w);
		return MEGPU_FAULT_BAD_ARG;
	}
	for (uint32_t i = 0; i < W.len; i++)
		prog[i] = ld_le(raw + 8 * i, 8);
	W.prog = prog;
	groups_x = (grid_x + (uint64_t)group_x - 1) / group_x;
	groups_y = (grid_y + (uint64_t)group_y - 1) / group_y;
	for (uint64_t gy = 0; gy < groups_y && !ret; gy++) {
		for (uint64_t gx = 0; gx < groups_x && !ret; gx++) {
			for (uint64_t first = 0; first < group && !ret;
			     first += MEGPU_WAVE_LANES) {
				memset(w, 0, sizeof(*w));
				w->group_x = gx;
				w->group_y = gy;
				w->first = first;
				w->id = waves++;
				w->exec = megpu_isa_wave_lanes(grid_x, grid_y,
							       group_x, group_y,
							       gx, gy, first);
				/* no work-item in the grid: never launched */
				if (w->exec)
					ret = cpu_wave_run(&W, w);
			}
		}
	}
	free(w);
	free(prog);
	return ret;
}
