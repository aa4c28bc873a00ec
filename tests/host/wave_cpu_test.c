// SPDX-License-Identifier: MIT
/*
 * Host unit tests of libmegpu's CPU interpreter of wave programs
 * (tools/lib/megpu/wave_cpu.c, seed 002's one program for both sides):
 * the hand-written ALU vectors the device's qtest meets, VADD and a
 * user's program against plain C over partial work-groups, divergence,
 * atomics, and every fault a bad program can take, each ending the run
 * with its code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmegpu.h"
#include "megpu_hw_wave.h"
#include "megpu_isa.h"
#include "megpu_programs.h"
#include "tap.h"
#include "../../qemu-device/tests/qtest/megpu-wave-programs.h"

#define VA_BASE		0x200000ull
#define ARENA		(1u << 20)
#define PROG		(VA_BASE + 0x0000)
#define PARGS		(VA_BASE + 0x8000)
#define VEC_A		(VA_BASE + 0x10000)
#define VEC_B		(VA_BASE + 0x20000)
#define VEC_C		(VA_BASE + 0x30000)

static uint8_t *arena;
static struct megpu_tq_region region;
static struct megpu_tq_agent agent;

static void *cpu(uint64_t va)
{
	return arena + (va - VA_BASE);
}

static void setup(void)
{
	memset(arena, 0, ARENA);
	region = (struct megpu_tq_region) { VA_BASE, arena, ARENA };
	agent = (struct megpu_tq_agent) { .owner = 1, .regions = &region,
					  .nregions = 1 };
}

/* Program @insn at PROG, arguments at PARGS; run it on the CPU. */
static int run(const uint64_t *insn, uint32_t len, const uint64_t *user,
	       unsigned int nuser, uint32_t gx, uint32_t gy, uint32_t lx,
	       uint32_t ly)
{
	struct megpu_pargs p = { .program = PROG, .len = len };

	for (uint32_t i = 0; i < len; i++)
		for (int b = 0; b < 8; b++)
			((uint8_t *)cpu(PROG))[8 * i + b] = insn[i] >> (8 * b);
	for (unsigned int i = 0; i < nuser; i++)
		p.user[i] = user[i];
	megpu_pargs_pack(cpu(PARGS), &p);
	return megpu_program_run_cpu(&agent, PARGS, gx, gy, lx, ly);
}

/* The device's qtest vectors, through the same program shape. */
static void test_alu_vectors(void)
{
	uint64_t p[2 + 6 * ALU_VECTORS_N], user[1] = { VEC_C }, *out;
	unsigned int n = alu_vectors_program(p);

	setup();
	CHECK_EQ(run(p, n, user, 1, 1, 1, 1, 1), 0);
	out = cpu(VEC_C);
	for (unsigned int i = 0; i < ALU_VECTORS_N; i++) {
		if (out[i] != alu_vectors[i].expect)
			printf("# vector %u: op 0x%x (0x%llx, 0x%llx) = 0x%llx\n",
			       i, alu_vectors[i].op,
			       (unsigned long long)alu_vectors[i].a,
			       (unsigned long long)alu_vectors[i].b,
			       (unsigned long long)out[i]);
		CHECK_EQ(out[i], alu_vectors[i].expect);
	}
}

/* VADD as a program over a grid that ends in a partial work-group. */
static void test_vadd(void)
{
	enum { N = 1000 };
	uint32_t *a = cpu(VEC_A), *b = cpu(VEC_B), *c = cpu(VEC_C);
	uint64_t user[4] = { VEC_A, VEC_B, VEC_C, N };

	setup();
	for (uint32_t i = 0; i < N + 8; i++) {
		a[i] = i * 2654435761u;
		b[i] = ~i;
		c[i] = 0xeeeeeeee;
	}
	CHECK_EQ(run(vadd_prog, sizeof(vadd_prog) / 8, user, 4, N, 1, 48, 1),
		 0);
	for (uint32_t i = 0; i < N; i++)
		if (c[i] != a[i] + b[i]) {
			CHECK_EQ(c[i], a[i] + b[i]);
			break;
		}
	/* past the grid: untouched */
	CHECK_EQ(c[N], 0xeeeeeeee);
}

/*
 * A user's program, from source (scale_xor.s): c[i] = k * a[i] + (b[i] ^
 * 0x55), k read past LDARG's 128 bytes through the ARGS register.
 */
static void test_user_program(void)
{
	const char *src = megpu_program("scale_xor");
	enum { N = 300 };
	uint32_t *a = cpu(VEC_A), *b = cpu(VEC_B), *c = cpu(VEC_C);
	uint64_t user[4] = { VEC_A, VEC_B, VEC_C, N }, *words;
	struct megpu_prog prog;
	char err[128];

	setup();
	CHECK(src != NULL);
	CHECK_EQ(megpu_asm(src, &prog, err, sizeof(err)), 0);
	*(uint32_t *)cpu(PARGS + MEGPU_PARGS_USER + 200) = 3;
	words = calloc(prog.len, 8);
	megpu_prog_store(&prog, words);
	for (uint32_t i = 0; i < N; i++) {
		a[i] = i * 7 + 3;
		b[i] = i << 9;
	}
	/* 2-D groups: the global id still runs over the whole grid */
	CHECK_EQ(run(words, prog.len, user, 4, 20, 15, 4, 4), 0);
	for (uint32_t i = 0; i < N; i++)
		if (c[i] != 3 * a[i] + (b[i] ^ 0x55)) {
			CHECK_EQ(c[i], 3 * a[i] + (b[i] ^ 0x55));
			break;
		}
	free(words);
	megpu_prog_fini(&prog);
}

/*
 * Divergence and atomics: odd lanes add 2 and even lanes 1 to one
 * counter with ATOMADD32, in 3 work-groups of 24 (partial waves).
 */
static void test_divergence_atomics(void)
{
	static const uint64_t p[] = {
		I(S2R, 1, 0, 0, MEGPU_SR_LOCAL_ID),
		I(LDARG, 2, 0, 0, 0),
		I(AND, 3, 1, IMM, 1),
		I(IF, 0, 3, 0, 0),
		I(LI, 4, 0, 0, 2),
		I(ELSE, 0, 0, 0, 0),
		I(LI, 4, 0, 0, 1),
		I(ENDIF, 0, 0, 0, 0),
		I(ATOMADD32, 5, 2, 4, 0),
		I(END, 0, 0, 0, 0),
	};
	uint64_t user[1] = { VEC_C };

	setup();
	CHECK_EQ(run(p, sizeof(p) / 8, user, 1, 72, 1, 24, 1), 0);
	/* per group: 12 odd (2 each) and 12 even (1 each) local ids */
	CHECK_EQ(*(uint32_t *)cpu(VEC_C), 3 * (12 * 2 + 12));
}

/*
 * Arguments past LDARG's 128 bytes: the ARGS special register gives the
 * user arguments' address, and a plain load reads byte 1000 of them.
 */
static void test_args_block(void)
{
	static const uint64_t p[] = {
		I(S2R, 1, 0, 0, MEGPU_SR_ARGS),
		I(LD32, 2, 1, 0, 1000),
		I(LDARG, 3, 0, 0, 0),
		I(ST64, 0, 3, 1, 0),
		I(ST32, 0, 3, 2, 8),
		I(END, 0, 0, 0, 0),
	};
	uint64_t user[1] = { VEC_C };

	setup();
	*(uint32_t *)cpu(PARGS + MEGPU_PARGS_USER + 1000) = 0xc0ffee;
	CHECK_EQ(run(p, sizeof(p) / 8, user, 1, 1, 1, 1, 1), 0);
	CHECK_EQ(*(uint64_t *)cpu(VEC_C), PARGS + MEGPU_PARGS_USER);
	CHECK_EQ(*(uint32_t *)cpu(VEC_C + 8), 0xc0ffee);
}

/* Each way a program can go wrong ends the run with its fault. */
static void test_faults(void)
{
	uint64_t user[1] = { VEC_C };
	uint64_t outside[1] = { 0x10 };
	uint64_t deep[MEGPU_WAVE_MASK_DEPTH + 3];
	const uint64_t bad_op[] = { MEGPU_INSN(0xee, 0, 0, 0, 0) };
	const uint64_t bad_reg[] = { I(MOV, 40, 1, 0, 0), I(END, 0, 0, 0, 0) };
	const uint64_t load[] = {
		I(LDARG, 1, 0, 0, 0), I(LD32, 2, 1, 0, 0), I(END, 0, 0, 0, 0),
	};
	const uint64_t misaligned[] = {
		I(LDARG, 1, 0, 0, 0), I(LD32, 2, 1, 0, 2), I(END, 0, 0, 0, 0),
	};
	const uint64_t loop[] = { I(JMP, 0, 0, 0, 0) };
	const uint64_t jump_out[] = { I(JMP, 0, 0, 0, 9) };
	const uint64_t no_end[] = { I(NOP, 0, 0, 0, 0) };
	const uint64_t syscall[] = {
		MEGPU_INSN_SYSCALL(1, 2, 1, 1, 1), I(END, 0, 0, 0, 0),
	};
	const uint64_t sreg[] = { I(S2R, 1, 0, 0, 99), I(END, 0, 0, 0, 0) };
	unsigned int n = 0;

	setup();
	CHECK_EQ(run(bad_op, 1, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_BAD_OPCODE);
	CHECK_EQ(run(bad_reg, 2, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_BAD_OPERAND);
	CHECK_EQ(run(sreg, 2, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_BAD_OPERAND);
	CHECK_EQ(run(load, 3, outside, 1, 1, 1, 1, 1), MEGPU_FAULT_MMU);
	CHECK_EQ(run(misaligned, 3, user, 1, 1, 1, 1, 1),
		 MEGPU_FAULT_MISALIGNED);
	CHECK_EQ(run(loop, 1, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_BUDGET);
	CHECK_EQ(run(jump_out, 1, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_PC_RANGE);
	CHECK_EQ(run(no_end, 1, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_PC_RANGE);
	CHECK_EQ(run(syscall, 2, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_PRIVILEGED);
	for (n = 0; n < MEGPU_WAVE_MASK_DEPTH + 1; n++)
		deep[n] = I(IF, 0, 0, 0, 0);
	deep[n++] = I(END, 0, 0, 0, 0);
	CHECK_EQ(run(deep, n, NULL, 0, 1, 1, 1, 1), MEGPU_FAULT_MASK_STACK);
	/* the arguments block itself: misaligned, unmapped, no program */
	CHECK_EQ(megpu_program_run_cpu(&agent, PARGS + 4, 1, 1, 1, 1),
		 MEGPU_FAULT_BAD_ARG);
	CHECK_EQ(megpu_program_run_cpu(&agent, 0x10, 1, 1, 1, 1),
		 MEGPU_FAULT_MMU);
	memset(cpu(PARGS), 0, MEGPU_PARGS_SIZE);
	CHECK_EQ(megpu_program_run_cpu(&agent, PARGS, 1, 1, 1, 1),
		 MEGPU_FAULT_BAD_ARG);
	CHECK_EQ(run(bad_op, 1, NULL, 0, 1, 1, 0, 1), MEGPU_FAULT_BAD_ARG);
}

/*
 * megpu_isa_check(), which both interpreters trust to have checked the
 * operands: every opcode the assembler knows passes with good fields and
 * no other does; each field an opcode uses fails when out of range, the
 * fields it does not use are ignored; an instruction that cannot run
 * faults only when reached (not after END, not on a branch not taken).
 */
static void test_isa_check(void)
{
	static const struct {
		uint64_t insn;
		uint32_t want;
	} v[] = {
		{ I(MOV, 32, 1, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(MOV, 1, 32, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(MOV, 1, 2, 200, 0), 0 },		/* src1 unused */
		{ I(LI, 255, 0, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(LI, 31, 200, 200, 0), 0 },
		{ I(S2R, 1, 0, 0, MEGPU_SR_COUNT), MEGPU_FAULT_BAD_OPERAND },
		{ I(S2R, 1, 0, 0, MEGPU_SR_COUNT - 1), 0 },
		{ I(LDARG, 1, 0, 0, 4), MEGPU_FAULT_BAD_OPERAND },
		{ I(LDARG, 1, 0, 0, MEGPU_PARGS_USER_SIZE - 8), 0 },
		{ I(LDARG, 1, 0, 0, MEGPU_PARGS_USER_SIZE), MEGPU_FAULT_BAD_OPERAND },
		{ I(LDARG32, 1, 0, 0, MEGPU_PARGS_USER_SIZE - 4), 0 },
		{ I(LDARG32, 1, 0, 0, 2), MEGPU_FAULT_BAD_OPERAND },
		{ I(ADD, 1, 2, MEGPU_ISA_IMM, 5), 0 },
		{ I(ADD, 1, 2, 32, 5), MEGPU_FAULT_BAD_OPERAND },
		{ I(FMUL, 1, 32, 3, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(CMPLEU, 32, 1, 2, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(IF, 200, 1, 200, 0), 0 },
		{ I(IF, 0, 32, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(BRANY, 0, 40, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(JMP, 99, 99, 99, 70000), 0 },	/* target: when taken */
		{ I(LD32, 1, 2, 99, 0), 0 },
		{ I(LD64, 1, 32, 0, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(ST32, 99, 1, 2, 0), 0 },		/* dst unused */
		{ I(ST64, 0, 1, 32, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(ATOMCAS32, 32, 1, 2, 0), MEGPU_FAULT_BAD_OPERAND },
		{ I(ATOMXCHG32, 1, 2, 3, 0), 0 },
		{ MEGPU_INSN_SYSCALL(1, 2, 3, 4, 31), 0 },
		{ MEGPU_INSN_SYSCALL(1, 2, 3, 4, 32), MEGPU_FAULT_BAD_OPERAND },
		{ I(SLEEP, 255, 255, 255, 0), 0 },	/* privileged: at run */
	};
	const uint64_t dead[] = {
		I(END, 0, 0, 0, 0), I(MOV, 99, 99, 0, 0),
		MEGPU_INSN(0xee, 0, 0, 0, 0),
	};
	const uint64_t untaken[] = {
		I(LI, 1, 0, 0, 0), I(BRANY, 0, 1, 0, 1000), I(END, 0, 0, 0, 0),
	};
	unsigned int op, i;

	for (op = 0; op < 256; op++) {
		uint64_t insn = MEGPU_INSN(op, 1, 2, 3, 0);

		if (op == MEGPU_OP_SYSCALL)
			insn = MEGPU_INSN_SYSCALL(1, 2, 3, 4, 5);
		CHECK_EQ(megpu_isa_check(insn), megpu_op_name(op) ? 0 :
			 MEGPU_FAULT_BAD_OPCODE);
	}
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (megpu_isa_check(v[i].insn) != v[i].want)
			printf("#   case %u: 0x%016llx\n", i,
			       (unsigned long long)v[i].insn);
		CHECK_EQ(megpu_isa_check(v[i].insn), v[i].want);
	}
	setup();
	CHECK_EQ(run(dead, 3, NULL, 0, 1, 1, 1, 1), 0);
	CHECK_EQ(run(untaken, 3, NULL, 0, 1, 1, 1, 1), 0);
}

/*
 * megpu_isa_wave_lanes() for one-row work-groups (its shortcut) against
 * the definition: lane l holds local id first + l of the group, which
 * must be in the group and its position in the grid.
 */
static uint32_t lanes_by_definition(uint32_t grid_x, uint32_t grid_y,
				    uint32_t group_x, uint32_t group_y,
				    uint64_t gx, uint64_t gy, uint64_t first)
{
	uint32_t mask = 0;

	for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++) {
		uint64_t local = first + l;
		uint64_t x = gx * group_x + local % group_x;
		uint64_t y = gy * group_y + local / group_x;

		if (local < (uint64_t)group_x * group_y && x < grid_x &&
		    y < grid_y)
			mask |= 1u << l;
	}
	return mask;
}

static void test_wave_lanes(void)
{
	static const uint32_t big[] = { 0xffffffffu, 0xfffffff0u, 1u << 31 };
	unsigned int bad = 0, cases = 0;

	/* grids up to 70 x 3, groups up to 40 x 2, five groups, 3 waves */
	for (unsigned int i = 0; i < 70 * 3 * 40 * 2 * 5 * 3; i++) {
		uint32_t grid_x = 1 + i % 70, grid_y = 1 + i / 70 % 3;
		uint32_t group_x = 1 + i / 210 % 40, group_y = 1 + i / 8400 % 2;
		uint64_t g = i / 16800 % 5, f = 16 * (i / 84000);

		cases++;
		bad += megpu_isa_wave_lanes(grid_x, grid_y, group_x, group_y,
					    g, g % 3, f) !=
		       lanes_by_definition(grid_x, grid_y, group_x, group_y,
					   g, g % 3, f);
	}
	/* the largest grids: no overflow in the shortcut */
	for (unsigned int i = 0; i < 3; i++)
		for (uint64_t g = big[i] / 64 - 2; g < big[i] / 64 + 2; g++) {
			cases++;
			bad += megpu_isa_wave_lanes(big[i], 1, 64, 1, g, 0, 48) !=
			       lanes_by_definition(big[i], 1, 64, 1, g, 0, 48);
		}
	printf("# %u of %u cases differ\n", bad, cases);
	CHECK_EQ(bad, 0);
}

/*
 * megpu_isa_sreg_lanes() (its shortcut along a row) against
 * megpu_isa_sreg() lane by lane, in waves that do and do not cross a
 * row of their work-group, with lanes off.
 */
static void test_sreg_lanes(void)
{
	unsigned int bad = 0, cases = 0;

	for (unsigned int i = 0; i < 40 * 3 * 4 * MEGPU_SR_COUNT; i++) {
		struct megpu_isa_wave w = {
			.grid_x = 1000, .grid_y = 7,
			.group_x = 1 + i % 40, .group_y = 1 + i / 40 % 3,
			.group_id_x = 3, .group_id_y = 2,
			.first = 16 * (i / 120 % 4), .wave_id = 77,
			.args = 0x1234, .exec = 0xfff7,
		};
		uint32_t sr = i / 480;
		uint64_t r[MEGPU_WAVE_LANES];

		memset(r, 0xee, sizeof(r));
		megpu_isa_sreg_lanes(&w, sr, r);
		for (unsigned int l = 0; l < MEGPU_WAVE_LANES; l++) {
			uint64_t want = (w.exec >> l) & 1 ?
				megpu_isa_sreg(&w, sr, l) : 0xeeeeeeeeeeeeeeeeull;

			cases++;
			bad += r[l] != want;
		}
	}
	printf("# %u of %u lanes differ\n", bad, cases);
	CHECK_EQ(bad, 0);
}

int main(void)
{
	arena = malloc(ARENA);
	if (!arena)
		return 1;
	TEST_RUN(test_alu_vectors);
	TEST_RUN(test_vadd);
	TEST_RUN(test_user_program);
	TEST_RUN(test_divergence_atomics);
	TEST_RUN(test_args_block);
	TEST_RUN(test_faults);
	TEST_RUN(test_isa_check);
	TEST_RUN(test_wave_lanes);
	TEST_RUN(test_sreg_lanes);
	free(arena);
	return tap_done();
}
