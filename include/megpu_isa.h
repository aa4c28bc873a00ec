/* SPDX-License-Identifier: MIT */
/*
 * The wave ISA's arithmetic (megpu_hw.h, "Wave ISA"), one copy for the
 * device's interpreter (megpu-wave.c) and libmegpu's CPU interpreter
 * (wave_cpu.c), so that a program computes the same on an engine and on
 * a CPU (seed 002: one intermediate form both sides run). Pure C: no
 * state, no memory; megpu_isa_check() says which instructions fault
 * whatever the wave's state, for both interpreters.
 */
#ifndef MEGPU_ISA_H
#define MEGPU_ISA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "megpu_hw_regs.h"
#include "megpu_hw_wave.h"

/* A register's binary32 (bits 31:0) and back (bits 63:32 clear). */
static inline float megpu_isa_f32(uint64_t v)
{
	uint32_t u = (uint32_t)v;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint64_t megpu_isa_u32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline int64_t megpu_isa_sext(uint32_t imm)
{
	return (int32_t)imm;
}

static inline int megpu_isa_is_alu(uint32_t op)
{
	return (op >= MEGPU_OP_ADD && op <= MEGPU_OP_MAXU) ||
	       (op >= MEGPU_OP_CMPEQ && op <= MEGPU_OP_CMPLEU);
}

static inline int megpu_isa_is_falu(uint32_t op)
{
	return (op >= MEGPU_OP_FADD && op <= MEGPU_OP_FMAX) ||
	       (op >= MEGPU_OP_FCMPEQ && op <= MEGPU_OP_FCMPLE);
}

/* Integer ALU and integer compares (megpu_isa_is_alu(op)). */
static inline uint64_t megpu_isa_alu(uint32_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case MEGPU_OP_ADD:
		return a + b;
	case MEGPU_OP_SUB:
		return a - b;
	case MEGPU_OP_MUL:
		return a * b;
	case MEGPU_OP_AND:
		return a & b;
	case MEGPU_OP_OR:
		return a | b;
	case MEGPU_OP_XOR:
		return a ^ b;
	case MEGPU_OP_SHL:
		return a << (b & 63);
	case MEGPU_OP_SHR:
		return a >> (b & 63);
	case MEGPU_OP_SAR:
		return (uint64_t)((int64_t)a >> (b & 63));
	case MEGPU_OP_MIN:
		return (int64_t)a < (int64_t)b ? a : b;
	case MEGPU_OP_MAX:
		return (int64_t)a > (int64_t)b ? a : b;
	case MEGPU_OP_MINU:
		return a < b ? a : b;
	case MEGPU_OP_MAXU:
		return a > b ? a : b;
	case MEGPU_OP_CMPEQ:
		return a == b;
	case MEGPU_OP_CMPNE:
		return a != b;
	case MEGPU_OP_CMPLT:
		return (int64_t)a < (int64_t)b;
	case MEGPU_OP_CMPLE:
		return (int64_t)a <= (int64_t)b;
	case MEGPU_OP_CMPLTU:
		return a < b;
	case MEGPU_OP_CMPLEU:
		return a <= b;
	}
	return 0;
}

/* Float ALU on binary32 (megpu_isa_is_falu(op)); results clear 63:32. */
static inline uint64_t megpu_isa_falu(uint32_t op, uint64_t a, uint64_t b)
{
	float fa = megpu_isa_f32(a), fb = megpu_isa_f32(b);

	switch (op) {
	case MEGPU_OP_FADD:
		return megpu_isa_u32(fa + fb);
	case MEGPU_OP_FSUB:
		return megpu_isa_u32(fa - fb);
	case MEGPU_OP_FMUL:
		return megpu_isa_u32(fa * fb);
	case MEGPU_OP_FMIN:
		return megpu_isa_u32(fminf(fa, fb));
	case MEGPU_OP_FMAX:
		return megpu_isa_u32(fmaxf(fa, fb));
	case MEGPU_OP_FCMPEQ:
		return fa == fb;
	case MEGPU_OP_FCMPLT:
		return fa < fb;
	case MEGPU_OP_FCMPLE:
		return fa <= fb;
	}
	return 0;
}

/* I2F: (float)(int64_t)a. */
static inline uint64_t megpu_isa_i2f(uint64_t a)
{
	return megpu_isa_u32((float)(int64_t)a);
}

/* F2I: truncate, saturate to int32, NaN gives 0; sign-extended. */
static inline uint64_t megpu_isa_f2i(uint64_t a)
{
	float f = megpu_isa_f32(a);

	if (isnan(f))
		return 0;
	if (f >= 2147483648.0f)
		return INT32_MAX;
	if (f < -2147483648.0f)
		return (uint64_t)(int64_t)INT32_MIN;
	return (uint64_t)(int64_t)(int32_t)f;
}

/* Where a wave is in its dispatch: what its special registers read. */
struct megpu_isa_wave {
	uint32_t grid_x, grid_y, group_x, group_y;
	uint64_t group_id_x, group_id_y;
	uint64_t first;		/* local linear id of lane 0 */
	uint64_t wave_id;
	uint64_t args;		/* GPU address of the user arguments */
	uint32_t exec;
};

/* Special register @sr (< MEGPU_SR_COUNT) of lane @l. */
static inline uint64_t megpu_isa_sreg(const struct megpu_isa_wave *w,
				      uint32_t sr, unsigned int l)
{
	uint64_t local = w->first + l;
	/* in the group's first row (every 1-D group): no division */
	bool first_row = local < w->group_x;
	uint64_t lx = first_row ? local : local % w->group_x;
	uint64_t ly = first_row ? 0 : local / w->group_x;
	uint64_t gx = w->group_id_x * w->group_x + lx;
	uint64_t gy = w->group_id_y * w->group_y + ly;

	switch (sr) {
	case MEGPU_SR_GLOBAL_ID:
		return gy * w->grid_x + gx;
	case MEGPU_SR_GLOBAL_ID_X:
		return gx;
	case MEGPU_SR_GLOBAL_ID_Y:
		return gy;
	case MEGPU_SR_LOCAL_ID:
		return local;
	case MEGPU_SR_LOCAL_ID_X:
		return lx;
	case MEGPU_SR_LOCAL_ID_Y:
		return ly;
	case MEGPU_SR_GROUP_ID_X:
		return w->group_id_x;
	case MEGPU_SR_GROUP_ID_Y:
		return w->group_id_y;
	case MEGPU_SR_GRID_X:
		return w->grid_x;
	case MEGPU_SR_GRID_Y:
		return w->grid_y;
	case MEGPU_SR_GROUP_SIZE_X:
		return w->group_x;
	case MEGPU_SR_GROUP_SIZE_Y:
		return w->group_y;
	case MEGPU_SR_WAVE_ID:
		return w->wave_id;
	case MEGPU_SR_LANE_ID:
		return l;
	case MEGPU_SR_EXEC:
		return w->exec;
	case MEGPU_SR_ARGS:
		return w->args;
	}
	return 0;
}

/*
 * S2R along a row: whether every lane of @w is on and its lanes lie in
 * one row of its work-group (the usual case); then special register @sr
 * of lane l is *@v0 + l * *@step, the ids that count x going up by one
 * per lane and the rest staying. No division per lane (issue 25: they
 * were most of a program's S2R).
 */
static inline bool megpu_isa_sreg_row(const struct megpu_isa_wave *w,
				      uint32_t sr, uint64_t *v0,
				      uint64_t *step)
{
	uint64_t lx0 = w->first < w->group_x ? w->first :
		       w->first % w->group_x;

	if (lx0 + MEGPU_WAVE_LANES > w->group_x ||
	    w->exec != (1u << MEGPU_WAVE_LANES) - 1)
		return false;
	*step = sr == MEGPU_SR_GLOBAL_ID || sr == MEGPU_SR_GLOBAL_ID_X ||
		sr == MEGPU_SR_LOCAL_ID || sr == MEGPU_SR_LOCAL_ID_X ||
		sr == MEGPU_SR_LANE_ID;
	*v0 = megpu_isa_sreg(w, sr, 0);
	return true;
}

/*
 * S2R: special register @sr (< MEGPU_SR_COUNT) into @r[l] for the lanes
 * of @w->exec (the others keep theirs), along a row where it can
 * (megpu_isa_sreg_row()).
 */
static inline void megpu_isa_sreg_lanes(const struct megpu_isa_wave *w,
					uint32_t sr, uint64_t *r)
{
	uint64_t v0, step;

	if (megpu_isa_sreg_row(w, sr, &v0, &step)) {
		/* loops that vectorise, on SSE2 too (no 64-bit multiply) */
		if (step) {
			for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++)
				r[l] = v0 + l;
		} else {
			for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++)
				r[l] = v0;
		}
		return;
	}
	for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++) {
		if ((w->exec >> l) & 1)
			r[l] = megpu_isa_sreg(w, sr, l);
	}
}

/*
 * The lanes of the wave at local id @first of work-group (@gx, @gy) that
 * are work-items of the grid: a wave with none is never launched. A
 * one-row work-group (the usual 1D grid) takes a prefix of the lanes,
 * found without the two divisions per lane of the general case (issue
 * 25: they were a tenth of a wave program's launch).
 */
static inline uint32_t megpu_isa_wave_lanes(uint32_t grid_x, uint32_t grid_y,
					    uint32_t group_x, uint32_t group_y,
					    uint64_t gx, uint64_t gy,
					    uint64_t first)
{
	uint64_t size = (uint64_t)group_x * group_y;
	uint32_t mask = 0;

	if (group_y == 1) {
		/* lane l: x = gx * group_x + first + l, y = gy */
		uint64_t x0 = gx * group_x + first, n;

		if (gy >= grid_y || first >= group_x || x0 >= grid_x)
			return 0;
		n = group_x - first < grid_x - x0 ? group_x - first :
						    grid_x - x0;
		return n >= MEGPU_WAVE_LANES ?
			(uint32_t)((1ull << MEGPU_WAVE_LANES) - 1) :
			(uint32_t)((1ull << n) - 1);
	}

	for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++) {
		uint64_t local = first + l;
		uint64_t x = gx * group_x + local % group_x;
		uint64_t y = gy * group_y + local / group_x;

		if (local < size && x < grid_x && y < grid_y)
			mask |= 1u << l;
	}
	return mask;
}

/*
 * A binary ALU instruction's second operand: src1's register, or with
 * src1 == MEGPU_ISA_IMM the immediate (sign-extended for the integer
 * ALU, the raw binary32 bits for the float one).
 */
static inline uint64_t megpu_isa_imm_operand(uint32_t op, uint32_t imm)
{
	return megpu_isa_is_falu(op) ? imm : (uint64_t)megpu_isa_sext(imm);
}

static inline int megpu_isa_reg_ok(uint32_t r)
{
	return r < MEGPU_WAVE_REGS;
}

/*
 * The fault @insn takes whatever the wave's state: MEGPU_FAULT_BAD_OPCODE
 * for an unknown opcode, MEGPU_FAULT_BAD_OPERAND for a register field
 * >= MEGPU_WAVE_REGS it reads or writes (src1 may be MEGPU_ISA_IMM in the
 * binary ALU), a special register >= MEGPU_SR_COUNT or an LDARG offset
 * outside the user arguments; else 0. Faults that depend on the state
 * (mask stack, a taken branch's target, memory, privilege) are the
 * interpreter's. A program is checked when it is loaded; an instruction
 * that fails faults only when a wave reaches it.
 */
static inline uint32_t megpu_isa_check(uint64_t insn)
{
	uint32_t op = MEGPU_INSN_OP(insn), imm = MEGPU_INSN_IMM(insn);
	int d = megpu_isa_reg_ok(MEGPU_INSN_DST(insn));
	int a = megpu_isa_reg_ok(MEGPU_INSN_SRC0(insn));
	int b = megpu_isa_reg_ok(MEGPU_INSN_SRC1(insn));
	int ok;

	switch (op) {
	case MEGPU_OP_NOP:
	case MEGPU_OP_END:
	case MEGPU_OP_ELSE:
	case MEGPU_OP_ENDIF:
	case MEGPU_OP_JMP:
	case MEGPU_OP_INTERRUPT:
	case MEGPU_OP_SLEEP:
		ok = 1;
		break;
	case MEGPU_OP_LI:
	case MEGPU_OP_LIH:
		ok = d;
		break;
	case MEGPU_OP_S2R:
		ok = d && imm < MEGPU_SR_COUNT;
		break;
	case MEGPU_OP_LDARG:
		ok = d && !(imm & 7) && imm <= MEGPU_PARGS_USER_SIZE - 8;
		break;
	case MEGPU_OP_LDARG32:
		ok = d && !(imm & 3) && imm <= MEGPU_PARGS_USER_SIZE - 4;
		break;
	case MEGPU_OP_MOV:
	case MEGPU_OP_I2F:
	case MEGPU_OP_F2I:
	case MEGPU_OP_LD32:
	case MEGPU_OP_LD64:
		ok = d && a;
		break;
	case MEGPU_OP_IF:
	case MEGPU_OP_BRANY:
		ok = a;
		break;
	case MEGPU_OP_ST32:
	case MEGPU_OP_ST64:
		ok = a && b;
		break;
	case MEGPU_OP_ATOMADD32:
	case MEGPU_OP_ATOMCAS32:
	case MEGPU_OP_ATOMXCHG32:
		ok = d && a && b;
		break;
	case MEGPU_OP_SYSCALL:
		ok = d && a && b &&
		     megpu_isa_reg_ok(MEGPU_INSN_SYSCALL_SRC2(insn));
		break;
	default:
		if (!megpu_isa_is_alu(op) && !megpu_isa_is_falu(op))
			return MEGPU_FAULT_BAD_OPCODE;
		ok = d && a && (MEGPU_INSN_SRC1(insn) == MEGPU_ISA_IMM || b);
		break;
	}
	return ok ? 0 : MEGPU_FAULT_BAD_OPERAND;
}

#endif /* MEGPU_ISA_H */
