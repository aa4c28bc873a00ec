// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the wave ISA assembler and disassembler, the
 * program argument block and the program DISPATCH emitter, and the
 * programs under tools/megpu/programs/. No GPU needed.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_wave.h"
#include "libmegpu.h"
#include "tap.h"
#include "../../qemu-device/tests/qtest/megpu-wave-programs.h"


/* Each instruction in its canonical spelling and its encoding. */
static const struct {
	const char *text;
	uint64_t insn;
} every[] = {
	{ "nop", I(NOP, 0, 0, 0, 0) },
	{ "end", I(END, 0, 0, 0, 0) },
	{ "mov r1, r31", I(MOV, 1, 31, 0, 0) },
	{ "li r2, -5", I(LI, 2, 0, 0, -5) },
	{ "li r2, 0x12345678", I(LI, 2, 0, 0, 0x12345678) },
	{ "lih r3, 0xdeadbeef", I(LIH, 3, 0, 0, 0xdeadbeef) },
	{ "s2r r4, global_id", I(S2R, 4, 0, 0, MEGPU_SR_GLOBAL_ID) },
	{ "s2r r4, global_id_x", I(S2R, 4, 0, 0, MEGPU_SR_GLOBAL_ID_X) },
	{ "s2r r4, global_id_y", I(S2R, 4, 0, 0, MEGPU_SR_GLOBAL_ID_Y) },
	{ "s2r r4, local_id", I(S2R, 4, 0, 0, MEGPU_SR_LOCAL_ID) },
	{ "s2r r4, local_id_x", I(S2R, 4, 0, 0, MEGPU_SR_LOCAL_ID_X) },
	{ "s2r r4, local_id_y", I(S2R, 4, 0, 0, MEGPU_SR_LOCAL_ID_Y) },
	{ "s2r r4, group_id_x", I(S2R, 4, 0, 0, MEGPU_SR_GROUP_ID_X) },
	{ "s2r r4, group_id_y", I(S2R, 4, 0, 0, MEGPU_SR_GROUP_ID_Y) },
	{ "s2r r4, grid_x", I(S2R, 4, 0, 0, MEGPU_SR_GRID_X) },
	{ "s2r r4, grid_y", I(S2R, 4, 0, 0, MEGPU_SR_GRID_Y) },
	{ "s2r r4, group_size_x", I(S2R, 4, 0, 0, MEGPU_SR_GROUP_SIZE_X) },
	{ "s2r r4, group_size_y", I(S2R, 4, 0, 0, MEGPU_SR_GROUP_SIZE_Y) },
	{ "s2r r4, wave_id", I(S2R, 4, 0, 0, MEGPU_SR_WAVE_ID) },
	{ "s2r r4, lane_id", I(S2R, 4, 0, 0, MEGPU_SR_LANE_ID) },
	{ "s2r r4, exec", I(S2R, 4, 0, 0, MEGPU_SR_EXEC) },
	{ "s2r r4, args", I(S2R, 4, 0, 0, MEGPU_SR_ARGS) },
	{ "ldarg r5, 120", I(LDARG, 5, 0, 0, 120) },
	{ "ldarg32 r5, 4", I(LDARG32, 5, 0, 0, 4) },
	{ "add r1, r2, r3", I(ADD, 1, 2, 3, 0) },
	{ "add r1, r2, -1", I(ADD, 1, 2, IMM, -1) },
	{ "sub r1, r2, r3", I(SUB, 1, 2, 3, 0) },
	{ "mul r1, r2, 100", I(MUL, 1, 2, IMM, 100) },
	{ "and r1, r2, 0xff00ff00", I(AND, 1, 2, IMM, 0xff00ff00) },
	{ "or r1, r2, r3", I(OR, 1, 2, 3, 0) },
	{ "xor r1, r2, r3", I(XOR, 1, 2, 3, 0) },
	{ "shl r1, r2, 3", I(SHL, 1, 2, IMM, 3) },
	{ "shr r1, r2, r3", I(SHR, 1, 2, 3, 0) },
	{ "sar r1, r2, 63", I(SAR, 1, 2, IMM, 63) },
	{ "min r1, r2, r3", I(MIN, 1, 2, 3, 0) },
	{ "max r1, r2, r3", I(MAX, 1, 2, 3, 0) },
	{ "minu r1, r2, r3", I(MINU, 1, 2, 3, 0) },
	{ "maxu r1, r2, r3", I(MAXU, 1, 2, 3, 0) },
	{ "fadd r1, r2, r3", I(FADD, 1, 2, 3, 0) },
	{ "fadd r1, r2, 1.5", I(FADD, 1, 2, IMM, 0x3fc00000) },
	{ "fsub r1, r2, -2.0", I(FSUB, 1, 2, IMM, 0xc0000000) },
	{ "fmul r1, r2, 0.1", I(FMUL, 1, 2, IMM, 0x3dcccccd) },
	{ "fmin r1, r2, r3", I(FMIN, 1, 2, 3, 0) },
	{ "fmax r1, r2, 0x7fc00001", I(FMAX, 1, 2, IMM, 0x7fc00001) },
	{ "i2f r1, r2", I(I2F, 1, 2, 0, 0) },
	{ "f2i r1, r2", I(F2I, 1, 2, 0, 0) },
	{ "cmpeq r1, r2, r3", I(CMPEQ, 1, 2, 3, 0) },
	{ "cmpne r1, r2, 0", I(CMPNE, 1, 2, IMM, 0) },
	{ "cmplt r1, r2, r3", I(CMPLT, 1, 2, 3, 0) },
	{ "cmple r1, r2, r3", I(CMPLE, 1, 2, 3, 0) },
	{ "cmpltu r1, r2, r3", I(CMPLTU, 1, 2, 3, 0) },
	{ "cmpleu r1, r2, r3", I(CMPLEU, 1, 2, 3, 0) },
	{ "fcmpeq r1, r2, r3", I(FCMPEQ, 1, 2, 3, 0) },
	{ "fcmplt r1, r2, 3.0", I(FCMPLT, 1, 2, IMM, 0x40400000) },
	{ "fcmple r1, r2, r3", I(FCMPLE, 1, 2, 3, 0) },
	{ "if r7", I(IF, 0, 7, 0, 0) },
	{ "else", I(ELSE, 0, 0, 0, 0) },
	{ "endif", I(ENDIF, 0, 0, 0, 0) },
	{ "jmp 17", I(JMP, 0, 0, 0, 17) },
	{ "brany r9, 0", I(BRANY, 0, 9, 0, 0) },
	{ "ld32 r1, [r2]", I(LD32, 1, 2, 0, 0) },
	{ "ld64 r1, [r2+16]", I(LD64, 1, 2, 0, 16) },
	{ "st32 [r2-4], r3", I(ST32, 0, 2, 3, -4) },
	{ "st64 [r2+8], r3", I(ST64, 0, 2, 3, 8) },
	{ "atomadd32 r1, [r2], r3", I(ATOMADD32, 1, 2, 3, 0) },
	{ "atomcas32 r1, [r2+4], r3", I(ATOMCAS32, 1, 2, 3, 4) },
	{ "atomxchg32 r1, [r2], r3", I(ATOMXCHG32, 1, 2, 3, 0) },
	{ "syscall r1, 42, r2, r3, r4", MEGPU_INSN_SYSCALL(1, 42, 2, 3, 4) },
	{ "syscall.hi r1, 42, r2, r3, r4",
	  MEGPU_INSN_SYSCALL_HI(1, 42, 2, 3, 4) },
	{ "interrupt", I(INTERRUPT, 0, 0, 0, 0) },
	{ "sleep", I(SLEEP, 0, 0, 0, 0) },
	{ "sleep irq", I(SLEEP, 0, 0, 0, MEGPU_SLEEP_IRQ) },
	{ ".quad 0x00000000000000ee", 0xee },
};

static void every_instruction(void)
{
	char buf[MEGPU_ASM_LINE_MAX], err[128];
	struct megpu_prog prog;
	uint32_t seen[8] = { 0 };
	unsigned int i;
	int op;

	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		int ret = megpu_asm(every[i].text, &prog, err, sizeof(err));

		if (ret)
			printf("#   '%s': %s\n", every[i].text, err);
		CHECK_EQ(ret, 0);
		CHECK_EQ(prog.len, 1);
		if (prog.len == 1)
			CHECK_EQ(prog.insn[0], every[i].insn);
		megpu_prog_fini(&prog);
		megpu_disasm_one(every[i].insn, buf, sizeof(buf));
		if (strcmp(buf, every[i].text))
			printf("#   disasm '%s' != '%s'\n", buf, every[i].text);
		CHECK(!strcmp(buf, every[i].text));
		op = MEGPU_INSN_OP(every[i].insn);
		seen[op / 32] |= 1u << (op % 32);
	}
	/* the table covers every mnemonic */
	for (op = 0; op < 256; op++) {
		if (megpu_op_name(op)) {
			CHECK(seen[op / 32] & (1u << (op % 32)));
			CHECK_EQ(megpu_op_by_name(megpu_op_name(op)), op);
		}
	}
	CHECK_EQ(megpu_op_by_name("FADD"), MEGPU_OP_FADD);
	CHECK_EQ(megpu_op_by_name("frobnicate"), -EINVAL);
	CHECK(megpu_sreg_name(MEGPU_SR_COUNT) == NULL);
}

/* Any 64-bit word disassembles to a line that assembles back to it. */
static void round_trip_any_word(void)
{
	char buf[MEGPU_ASM_LINE_MAX];
	struct megpu_prog prog;
	uint64_t x = 0x9e3779b97f4a7c15ull, w;
	unsigned int i, valid = 0;

	for (i = 0; i < 200000; i++) {
		int ret;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* mostly known opcodes with small register fields */
		w = x;
		if (i % 4)	/* an opcode below 0x63, registers r0..r31 */
			w = MEGPU_INSN(i % 0x63, x >> 8, x >> 16,
				       (i & 8) ? IMM : x >> 24, x >> 32) &
			    ~(i & 16 ? 0x1f1f1f00ull : 0xe0e0e000ull);
		ret = megpu_disasm_one(w, buf, sizeof(buf));
		valid += !ret;
		CHECK(ret == 0 || ret == -EINVAL || ret == -EBADMSG);
		CHECK_EQ(megpu_asm(buf, &prog, NULL, 0), 0);
		CHECK_EQ(prog.len, 1);
		if (prog.len == 1 && prog.insn[0] != w) {
			printf("#   0x%016llx -> '%s'\n", (unsigned long long)w,
			       buf);
			CHECK_EQ(prog.insn[0], w);
		}
		megpu_prog_fini(&prog);
	}
	/* and many of them had a mnemonic spelling */
	CHECK(valid > 2000);
}

static void labels_and_syntax(void)
{
	static const char src[] =
		"; a comment line\n"
		"start:\n"
		"  LI R1, 0x10    # hash comment\n"
		"loop: top:  sub r1, r1, 1 // slash comment\n"
		"\tcmpne r2, r1, 0\n"
		"\tbrany r2, loop\n"
		"\tbrany r2, top\n"
		"\tjmp done\n"
		"\tld32 r3, [ r4 + 0x20 ]\n"
		"\tst32 [r4 - 8], r3\n"
		"\tli r5, 1.0\n"
		"\tfadd r6, r6, 2\n"
		"\tfadd r6, r6, 0x40000000\n"
		"\tli r7, 4294967295\n"
		"\tli r7, -2147483648\n"
		"\tjmp start\n"
		"done: end\n";
	const uint64_t want[] = {
		I(LI, 1, 0, 0, 0x10),
		I(SUB, 1, 1, IMM, 1),
		I(CMPNE, 2, 1, IMM, 0),
		I(BRANY, 0, 2, 0, 1),
		I(BRANY, 0, 2, 0, 1),
		I(JMP, 0, 0, 0, 14),
		I(LD32, 3, 4, 0, 0x20),
		I(ST32, 0, 4, 3, -8),
		I(LI, 5, 0, 0, 0x3f800000),
		I(FADD, 6, 6, IMM, 0x40000000),
		I(FADD, 6, 6, IMM, 0x40000000),
		I(LI, 7, 0, 0, 0xffffffff),
		I(LI, 7, 0, 0, 0x80000000),
		I(JMP, 0, 0, 0, 0),
		I(END, 0, 0, 0, 0),
	};
	char err[128] = "";
	struct megpu_prog prog;
	unsigned int i;

	CHECK_EQ(megpu_asm(src, &prog, err, sizeof(err)), 0);
	if (err[0])
		printf("#   %s\n", err);
	CHECK_EQ(prog.len, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < prog.len && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(prog.insn[i], want[i]);
	megpu_prog_fini(&prog);
}

/* Errors name the line and the problem; nothing is left allocated. */
static void errors(void)
{
	static const struct {
		const char *src;
		const char *err;
	} cases[] = {
		{ "nop\nfrob r1\n", "line 2: unknown instruction 'frob'" },
		{ "add r1, r2\n", "line 1: add takes 3 operands, got 2" },
		{ "end r1", "line 1: end takes 0 operands, got 1" },
		{ "mov r1, r32", "line 1: register 'r32' out of range" },
		{ "mov r1, x3", "line 1: expected a register, got 'x3'" },
		{ "mov r1, r3x", "line 1: bad register 'r3x'" },
		{ "li r1, 0x100000000", "line 1: immediate '0x100000000' out "
		  "of range" },
		{ "li r1, -2147483649", "out of range" },
		{ "li r1, 12abc", "line 1: bad number '12abc'" },
		{ "li r1, abc", "bad number 'abc'" },
		{ "\n\njmp nowhere", "line 3: undefined label 'nowhere'" },
		{ "a: nop\na: end", "line 2: duplicate label 'a'" },
		{ "s2r r1, bogus", "unknown special register 'bogus'" },
		{ "ld32 r1, r2", "expected a memory operand" },
		{ "ld32 r1, [r2*4]", "bad memory operand" },
		{ "ld32 r1, [r2+1.5]", "offset '1.5' is not an integer" },
		{ "ld32 r1, [r2+0x80000000]", "out of range" },
		{ "syscall r1, 0x1000000, r2, r3, r4", "syscall number" },
		{ "syscall.hi r1, 0x1000000, r2, r3, r4", "syscall number" },
		{ "add.hi r1, r2, r3", "unknown instruction 'add.hi'" },
		{ "syscall.lo r1, 1, r2, r3, r4",
		  "unknown instruction 'syscall.lo'" },
		{ "add r1, , r2", "empty operand" },
		{ "add r1, r2, r3, r4, r5, r6, r7", "too many operands" },
		{ "sleep irq, 2", "sleep takes at most one operand" },
		{ ".quad -1", "bad .quad value" },
		{ "", "empty program" },
		{ "; only a comment\n", "empty program" },
	};
	struct megpu_prog prog;
	char err[128];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = megpu_asm(cases[i].src, &prog, err, sizeof(err));

		CHECK_EQ(ret, -EINVAL);
		if (!strstr(err, cases[i].err))
			printf("#   '%s': got '%s', want '%s'\n", cases[i].src,
			       err, cases[i].err);
		CHECK(strstr(err, cases[i].err) != NULL);
		CHECK(prog.insn == NULL && prog.len == 0);
	}
	/* no error buffer is fine */
	CHECK_EQ(megpu_asm("bad", &prog, NULL, 0), -EINVAL);
}

/* The unknown-opcode and bad-field cases of the disassembler. */
static void disasm_bad_words(void)
{
	char buf[MEGPU_ASM_LINE_MAX];
	const uint64_t words[] = { 0xee, I(MOV, 32, 1, 0, 0),
				   I(END, 1, 0, 0, 0),
				   I(S2R, 1, 0, 0, MEGPU_SR_COUNT),
				   /* syscall.hi with s2 = 64 */
				   I(SYSCALL, 1, 2, 3, 42 << 8 |
				     MEGPU_SYSCALL_HI | 64) };
	const int want[] = { -EINVAL, -EBADMSG, -EBADMSG, -EBADMSG, -EBADMSG };
	struct megpu_prog prog;
	unsigned int i;

	/* the ".hi" suffix is case-insensitive like mnemonics */
	CHECK_EQ(megpu_asm("SYSCALL.HI r1, 7, r2, r3, r31", &prog, NULL, 0), 0);
	CHECK_EQ(prog.len, 1);
	if (prog.len == 1)
		CHECK_EQ(prog.insn[0], MEGPU_INSN_SYSCALL_HI(1, 7, 2, 3, 31));
	megpu_prog_fini(&prog);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(megpu_disasm_one(words[i], buf, sizeof(buf)),
			 want[i]);
		CHECK(!strncmp(buf, ".quad 0x", 8));
	}
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/*
 * The .s programs assemble, VADD and CHECKSUM to the encodings the
 * device qtest runs.
 */
static void programs(void)
{
	static const struct {
		const char *path;
		const uint64_t *insn;
		unsigned int len;
	} progs[] = {
		{ "tools/megpu/programs/vadd.s", vadd_prog, 17 },
		{ "tools/megpu/programs/checksum.s", checksum_prog, 12 },
		{ "tools/megpu/programs/syscall.s", NULL, 13 },
	};
	struct megpu_prog prog;
	char err[128] = "";
	unsigned int i, j;
	uint8_t bytes[8 * 17];

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char *src = read_file(progs[i].path);

		CHECK(src != NULL);
		if (!src)
			continue;
		CHECK_EQ(megpu_asm(src, &prog, err, sizeof(err)), 0);
		if (err[0])
			printf("#   %s: %s\n", progs[i].path, err);
		CHECK_EQ(prog.len, progs[i].len);
		for (j = 0; progs[i].insn && j < prog.len && j < progs[i].len;
		     j++)
			CHECK_EQ(prog.insn[j], progs[i].insn[j]);
		if (i == 0 && prog.len == 17) {
			megpu_prog_store(&prog, bytes);
			CHECK_EQ(bytes[0], MEGPU_OP_S2R);
			CHECK_EQ(bytes[1], 1);
			CHECK_EQ(bytes[4], MEGPU_SR_GLOBAL_ID);
			CHECK_EQ(bytes[8 * 16], MEGPU_OP_END);
		}
		megpu_prog_fini(&prog);
		free(src);
	}
}

static void pargs_and_dispatch(void)
{
	struct megpu_pargs p = { .program = 0x123456789000ull, .len = 17 };
	struct megpu_pargs q;
	struct megpu_cs cs;
	uint8_t raw[MEGPU_PARGS_SIZE];
	unsigned int i;

	for (i = 0; i < MEGPU_PARGS_USER_SIZE / 8; i++)
		p.user[i] = 0x0101010101010101ull * i + 0x10;
	memset(raw, 0xee, sizeof(raw));
	megpu_pargs_pack(raw, &p);
	CHECK_EQ(raw[MEGPU_PARGS_PROGRAM], 0x00);
	CHECK_EQ(raw[MEGPU_PARGS_PROGRAM + 1], 0x90);
	CHECK_EQ(raw[MEGPU_PARGS_PROGRAM + 5], 0x12);
	CHECK_EQ(raw[MEGPU_PARGS_LENGTH], 17);
	CHECK_EQ(raw[MEGPU_PARGS_FLAGS], 0);
	CHECK_EQ(raw[MEGPU_PARGS_USER + 8], 0x11);
	CHECK_EQ(raw[MEGPU_PARGS_SIZE - 1], 0x0f);
	megpu_pargs_unpack(raw, &q);
	CHECK(!memcmp(&p.user, &q.user, sizeof(p.user)));
	CHECK_EQ(q.program, p.program);
	CHECK_EQ(q.len, p.len);

	megpu_cs_init(&cs);
	megpu_cs_dispatch_program(&cs, 0xabc0, 100, 2, 16, 1);
	CHECK_EQ(cs.len, 1 + MEGPU_PKT_DISPATCH_COUNT);
	if (cs.len == 1 + MEGPU_PKT_DISPATCH_COUNT) {
		char line[MEGPU_CS_LINE_MAX];

		CHECK_EQ(cs.dw[1], MEGPU_KERNEL_PROGRAM);
		CHECK_EQ(cs.dw[2], 0xabc0);
		megpu_cs_decode_one(cs.dw, cs.len, line, sizeof(line));
		CHECK(strstr(line, "kernel=program") != NULL);
	}
	megpu_cs_fini(&cs);
	CHECK_EQ(megpu_kernel_by_name("program"), MEGPU_KERNEL_PROGRAM);
}

int main(void)
{
	TEST_RUN(every_instruction);
	TEST_RUN(round_trip_any_word);
	TEST_RUN(labels_and_syntax);
	TEST_RUN(errors);
	TEST_RUN(disasm_bad_words);
	TEST_RUN(programs);
	TEST_RUN(pargs_and_dispatch);
	return tap_done();
}
