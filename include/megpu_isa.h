/* SPDX-License-Identifier: MIT */
/*
 * The wave ISA's arithmetic (megpu_hw.h, "Wave ISA"), one copy for the
 * device's interpreter (megpu-wave.c) and libmegpu's CPU interpreter
 * (wave_cpu.c), so that a program computes the same on an engine and on
 * a CPU (seed 002: one intermediate form both sides run). Pure C: no
 * state, no memory, no faults (operands are checked by the callers).
 */
#ifndef MEGPU_ISA_H
#define MEGPU_ISA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "megpu_hw.h"

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

/*
 * A binary ALU instruction's second operand: src1's register, or with
 * src1 == MEGPU_ISA_IMM the immediate (sign-extended for the integer
 * ALU, the raw binary32 bits for the float one).
 */
static inline uint64_t megpu_isa_imm_operand(uint32_t op, uint32_t imm)
{
	return megpu_isa_is_falu(op) ? imm : (uint64_t)megpu_isa_sext(imm);
}

#endif /* MEGPU_ISA_H */
