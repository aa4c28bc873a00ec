// SPDX-License-Identifier: MIT
/*
 * The wave ISA assembler and disassembler (the "Wave ISA" of megpu_hw.h).
 * Pure logic, no device access: the host unit tests link it.
 *
 * Syntax, one instruction per line:
 *
 *	loop:	add r1, r1, 1		; comment (also '#' or "//")
 *		ld32 r2, [r3+8]
 *		st32 [r3-4], r2
 *		atomcas32 r4, [r5], r6
 *		s2r r7, global_id
 *		brany r8, loop
 *		syscall r1, 42, r2, r3, r4
 *		syscall.hi r1, 42, r2, r3, r4	; acquisition priority
 *		sleep irq
 *		.quad 0x0123456789abcdef
 *
 * Registers are r0..r31. Immediates are decimal or hex, optionally
 * negative, or floats (with a '.', an exponent, "inf" or "nan"), which
 * give their binary32 bits. In float instructions a decimal integer is
 * a float too (fadd r1, r1, 1 adds 1.0), while hex is raw bits. Branch
 * targets are labels or instruction indexes. ".quad" emits any 64-bit
 * word, which the disassembler uses for what has no other spelling.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "megpu_hw_wave.h"
#include "libmegpu.h"

/* Operand shapes. */
enum {
	F_NONE,		/* end */
	F_DS,		/* mov rd, rs */
	F_DI,		/* li rd, imm */
	F_DSR,		/* s2r rd, sreg */
	F_DOFF,		/* ldarg rd, offset */
	F_DST,		/* add rd, rs, rt|imm */
	F_S,		/* if rs */
	F_TGT,		/* jmp target */
	F_STGT,		/* brany rs, target */
	F_DM,		/* ld32 rd, [rs+imm] */
	F_MT,		/* st32 [rs+imm], rt */
	F_DMT,		/* atomadd32 rd, [rs+imm], rt */
	F_SYSCALL,	/* syscall[.hi] rd, N, rs0, rs1, rs2 */
	F_SLEEP,	/* sleep [irq] */
};

struct op_info {
	const char *name;
	unsigned char op;
	unsigned char fmt;
	bool fp;	/* float immediates */
};

static const struct op_info ops[] = {
	{ "nop", MEGPU_OP_NOP, F_NONE, false },
	{ "end", MEGPU_OP_END, F_NONE, false },
	{ "mov", MEGPU_OP_MOV, F_DS, false },
	{ "li", MEGPU_OP_LI, F_DI, false },
	{ "lih", MEGPU_OP_LIH, F_DI, false },
	{ "s2r", MEGPU_OP_S2R, F_DSR, false },
	{ "ldarg", MEGPU_OP_LDARG, F_DOFF, false },
	{ "ldarg32", MEGPU_OP_LDARG32, F_DOFF, false },
	{ "add", MEGPU_OP_ADD, F_DST, false },
	{ "sub", MEGPU_OP_SUB, F_DST, false },
	{ "mul", MEGPU_OP_MUL, F_DST, false },
	{ "and", MEGPU_OP_AND, F_DST, false },
	{ "or", MEGPU_OP_OR, F_DST, false },
	{ "xor", MEGPU_OP_XOR, F_DST, false },
	{ "shl", MEGPU_OP_SHL, F_DST, false },
	{ "shr", MEGPU_OP_SHR, F_DST, false },
	{ "sar", MEGPU_OP_SAR, F_DST, false },
	{ "min", MEGPU_OP_MIN, F_DST, false },
	{ "max", MEGPU_OP_MAX, F_DST, false },
	{ "minu", MEGPU_OP_MINU, F_DST, false },
	{ "maxu", MEGPU_OP_MAXU, F_DST, false },
	{ "fadd", MEGPU_OP_FADD, F_DST, true },
	{ "fsub", MEGPU_OP_FSUB, F_DST, true },
	{ "fmul", MEGPU_OP_FMUL, F_DST, true },
	{ "fmin", MEGPU_OP_FMIN, F_DST, true },
	{ "fmax", MEGPU_OP_FMAX, F_DST, true },
	{ "i2f", MEGPU_OP_I2F, F_DS, false },
	{ "f2i", MEGPU_OP_F2I, F_DS, false },
	{ "cmpeq", MEGPU_OP_CMPEQ, F_DST, false },
	{ "cmpne", MEGPU_OP_CMPNE, F_DST, false },
	{ "cmplt", MEGPU_OP_CMPLT, F_DST, false },
	{ "cmple", MEGPU_OP_CMPLE, F_DST, false },
	{ "cmpltu", MEGPU_OP_CMPLTU, F_DST, false },
	{ "cmpleu", MEGPU_OP_CMPLEU, F_DST, false },
	{ "fcmpeq", MEGPU_OP_FCMPEQ, F_DST, true },
	{ "fcmplt", MEGPU_OP_FCMPLT, F_DST, true },
	{ "fcmple", MEGPU_OP_FCMPLE, F_DST, true },
	{ "if", MEGPU_OP_IF, F_S, false },
	{ "else", MEGPU_OP_ELSE, F_NONE, false },
	{ "endif", MEGPU_OP_ENDIF, F_NONE, false },
	{ "jmp", MEGPU_OP_JMP, F_TGT, false },
	{ "brany", MEGPU_OP_BRANY, F_STGT, false },
	{ "ld32", MEGPU_OP_LD32, F_DM, false },
	{ "ld64", MEGPU_OP_LD64, F_DM, false },
	{ "st32", MEGPU_OP_ST32, F_MT, false },
	{ "st64", MEGPU_OP_ST64, F_MT, false },
	{ "atomadd32", MEGPU_OP_ATOMADD32, F_DMT, false },
	{ "atomcas32", MEGPU_OP_ATOMCAS32, F_DMT, false },
	{ "atomxchg32", MEGPU_OP_ATOMXCHG32, F_DMT, false },
	{ "syscall", MEGPU_OP_SYSCALL, F_SYSCALL, false },
	{ "interrupt", MEGPU_OP_INTERRUPT, F_NONE, false },
	{ "sleep", MEGPU_OP_SLEEP, F_SLEEP, false },
};

#define NUM_OPS (sizeof(ops) / sizeof(ops[0]))

static const char *const sreg_names[MEGPU_SR_COUNT] = {
	[MEGPU_SR_GLOBAL_ID] = "global_id",
	[MEGPU_SR_GLOBAL_ID_X] = "global_id_x",
	[MEGPU_SR_GLOBAL_ID_Y] = "global_id_y",
	[MEGPU_SR_LOCAL_ID] = "local_id",
	[MEGPU_SR_LOCAL_ID_X] = "local_id_x",
	[MEGPU_SR_LOCAL_ID_Y] = "local_id_y",
	[MEGPU_SR_GROUP_ID_X] = "group_id_x",
	[MEGPU_SR_GROUP_ID_Y] = "group_id_y",
	[MEGPU_SR_GRID_X] = "grid_x",
	[MEGPU_SR_GRID_Y] = "grid_y",
	[MEGPU_SR_GROUP_SIZE_X] = "group_size_x",
	[MEGPU_SR_GROUP_SIZE_Y] = "group_size_y",
	[MEGPU_SR_WAVE_ID] = "wave_id",
	[MEGPU_SR_LANE_ID] = "lane_id",
	[MEGPU_SR_EXEC] = "exec",
	[MEGPU_SR_ARGS] = "args",
};

static const struct op_info *op_info(unsigned int op)
{
	unsigned int i;

	for (i = 0; i < NUM_OPS; i++)
		if (ops[i].op == op)
			return &ops[i];
	return NULL;
}

const char *megpu_op_name(unsigned int op)
{
	const struct op_info *o = op_info(op);

	return o ? o->name : NULL;
}

int megpu_op_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < NUM_OPS; i++)
		if (!strcasecmp(name, ops[i].name))
			return ops[i].op;
	return -EINVAL;
}

const char *megpu_sreg_name(unsigned int sr)
{
	return sr < MEGPU_SR_COUNT ? sreg_names[sr] : NULL;
}

/* --- assembling --- */

#define MAX_TOKEN 64

struct label {
	char name[MAX_TOKEN];
	uint32_t pc;
};

struct asm_state {
	struct megpu_prog *prog;
	uint32_t cap;
	struct label *labels;
	size_t nlabels, label_cap;
	unsigned int line;
	bool resolve;		/* second pass: labels are known */
	char *err;
	size_t errlen;
};

static int asm_error(struct asm_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int asm_error(struct asm_state *st, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (st->err && st->errlen) {
		n = st->line ? snprintf(st->err, st->errlen, "line %u: ",
					st->line) : 0;
		if (n >= 0 && (size_t)n < st->errlen) {
			va_start(ap, fmt);
			vsnprintf(st->err + n, st->errlen - n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static char *skip_space(char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static void trim_end(char *p)
{
	size_t n = strlen(p);

	while (n && isspace((unsigned char)p[n - 1]))
		p[--n] = 0;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '.';
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

static int parse_reg(struct asm_state *st, const char *s, uint32_t *r)
{
	char *end;
	unsigned long v;

	if ((s[0] != 'r' && s[0] != 'R') || !isdigit((unsigned char)s[1]))
		return asm_error(st, "expected a register, got '%s'", s);
	v = strtoul(s + 1, &end, 10);
	if (*end)
		return asm_error(st, "bad register '%s'", s);
	if (v >= MEGPU_WAVE_REGS)
		return asm_error(st, "register '%s' out of range (r0..r%d)", s,
				 MEGPU_WAVE_REGS - 1);
	*r = v;
	return 0;
}

static bool is_float_literal(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!strncasecmp(s, "0x", 2))
		return false;
	return strpbrk(s, ".eE") || !strcasecmp(s, "inf") ||
	       !strcasecmp(s, "nan");
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/*
 * An immediate: a 32-bit value (-2^31 .. 2^32 - 1), or a float. With
 * @fp, decimal integers are floats too.
 */
static int parse_imm(struct asm_state *st, const char *s, bool fp,
		     uint32_t *imm)
{
	const char *digits = s + (*s == '-' || *s == '+');
	bool hex = !strncasecmp(digits, "0x", 2);
	char *end;

	if (!*s)
		return asm_error(st, "missing immediate");
	if (is_float_literal(s) || (fp && !hex)) {
		float f;

		errno = 0;
		f = strtof(s, &end);
		if (*end || end == s)
			return asm_error(st, "bad number '%s'", s);
		*imm = f32_bits(f);
		return 0;
	}
	if (!isdigit((unsigned char)*digits))
		return asm_error(st, "bad number '%s'", s);
	errno = 0;
	if (*s == '-') {
		long long v = strtoll(s, &end, 0);

		if (*end)
			return asm_error(st, "bad number '%s'", s);
		if (errno || v < INT32_MIN)
			return asm_error(st, "immediate '%s' out of range", s);
		*imm = (uint32_t)v;
	} else {
		unsigned long long v = strtoull(s, &end, 0);

		if (*end)
			return asm_error(st, "bad number '%s'", s);
		if (errno || v > UINT32_MAX)
			return asm_error(st, "immediate '%s' out of range", s);
		*imm = (uint32_t)v;
	}
	return 0;
}

static int parse_sreg(struct asm_state *st, const char *s, uint32_t *sr)
{
	unsigned int i;

	for (i = 0; i < MEGPU_SR_COUNT; i++) {
		if (!strcasecmp(s, sreg_names[i])) {
			*sr = i;
			return 0;
		}
	}
	return asm_error(st, "unknown special register '%s'", s);
}

static int parse_target(struct asm_state *st, const char *s, uint32_t *pc)
{
	size_t i;

	if (isdigit((unsigned char)*s))
		return parse_imm(st, s, false, pc);
	if (!is_ident_start(*s))
		return asm_error(st, "bad branch target '%s'", s);
	if (!st->resolve) {
		*pc = 0;		/* first pass: not known yet */
		return 0;
	}
	for (i = 0; i < st->nlabels; i++) {
		if (!strcmp(st->labels[i].name, s)) {
			*pc = st->labels[i].pc;
			return 0;
		}
	}
	return asm_error(st, "undefined label '%s'", s);
}

/* "[rN]", "[rN+imm]", "[rN-imm]", spaces allowed inside. */
static int parse_mem(struct asm_state *st, char *s, uint32_t *base,
		     uint32_t *off)
{
	char reg[MAX_TOKEN], num[MAX_TOKEN + 1];
	size_t n = strlen(s), i = 0, j = 0;
	char *p;
	int ret;

	if (n < 3 || s[0] != '[' || s[n - 1] != ']')
		return asm_error(st, "expected a memory operand [rN+offset], "
				 "got '%s'", s);
	s[n - 1] = 0;
	p = skip_space(s + 1);
	while (is_ident(p[i]) && i < MAX_TOKEN - 1) {
		reg[i] = p[i];
		i++;
	}
	reg[i] = 0;
	ret = parse_reg(st, reg, base);
	if (ret)
		return ret;
	p = skip_space(p + i);
	*off = 0;
	if (!*p)
		return 0;
	if (*p != '+' && *p != '-')
		return asm_error(st, "bad memory operand near '%s'", p);
	if (*p == '-')
		num[j++] = '-';
	p = skip_space(p + 1);
	trim_end(p);
	if (strlen(p) >= MAX_TOKEN)
		return asm_error(st, "offset too long");
	strcpy(num + j, p);
	ret = parse_imm(st, num, false, off);
	if (ret)
		return ret;
	if (is_float_literal(num))
		return asm_error(st, "offset '%s' is not an integer", num);
	/* the offset is sign-extended: it must fit in int32 */
	if (num[0] != '-' && *off > INT32_MAX)
		return asm_error(st, "offset '%s' out of range", num);
	return 0;
}

static int emit(struct asm_state *st, uint64_t insn)
{
	struct megpu_prog *prog = st->prog;

	if (prog->len >= MEGPU_PROGRAM_MAX_INSNS)
		return asm_error(st, "program longer than %d instructions",
				 MEGPU_PROGRAM_MAX_INSNS);
	if (prog->len == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 64;
		uint64_t *p = realloc(prog->insn, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		prog->insn = p;
		st->cap = cap;
	}
	prog->insn[prog->len++] = insn;
	return 0;
}

#define MAX_OPERANDS 6

/* Split at top-level commas (not inside brackets); trims each part. */
static int split_operands(struct asm_state *st, char *s, char **argv)
{
	int argc = 0, depth = 0;
	char *start = s;

	s = skip_space(s);
	if (!*s)
		return 0;
	for (start = s; ; s++) {
		if (*s == '[')
			depth++;
		else if (*s == ']')
			depth--;
		if ((*s == ',' && !depth) || !*s) {
			bool last = !*s;

			if (argc == MAX_OPERANDS)
				return asm_error(st, "too many operands");
			*s = 0;
			start = skip_space(start);
			trim_end(start);
			if (!*start)
				return asm_error(st, "empty operand");
			argv[argc++] = start;
			if (last)
				break;
			start = s + 1;
		}
	}
	return argc;
}

static const int fmt_operands[] = {
	[F_NONE] = 0, [F_DS] = 2, [F_DI] = 2, [F_DSR] = 2, [F_DOFF] = 2,
	[F_DST] = 3, [F_S] = 1, [F_TGT] = 1, [F_STGT] = 2, [F_DM] = 2,
	[F_MT] = 2, [F_DMT] = 3, [F_SYSCALL] = 5, [F_SLEEP] = -1,
};

/* @hi: the mnemonic had the ".hi" suffix (SYSCALL only) */
static int assemble_insn(struct asm_state *st, const struct op_info *o,
			 bool hi, char *args, uint64_t *insn)
{
	uint32_t d = 0, a = 0, b = 0, imm = 0, s2 = 0, n = 0;
	char *argv[MAX_OPERANDS];
	int argc = split_operands(st, args, argv), ret = 0;

	if (argc < 0)
		return argc;
	if (o->fmt == F_SLEEP) {
		if (argc > 1)
			return asm_error(st, "sleep takes at most one operand");
		if (argc == 1 && !strcasecmp(argv[0], "irq"))
			imm = MEGPU_SLEEP_IRQ;
		else if (argc == 1)
			ret = parse_imm(st, argv[0], false, &imm);
		*insn = MEGPU_INSN(o->op, 0, 0, 0, imm);
		return ret;
	}
	if (argc != fmt_operands[o->fmt])
		return asm_error(st, "%s takes %d operand%s, got %d", o->name,
				 fmt_operands[o->fmt],
				 fmt_operands[o->fmt] == 1 ? "" : "s", argc);
	switch (o->fmt) {
	case F_NONE:
		break;
	case F_DS:
		ret = parse_reg(st, argv[0], &d) ?: parse_reg(st, argv[1], &a);
		break;
	case F_DI:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_imm(st, argv[1], false, &imm);
		break;
	case F_DSR:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_sreg(st, argv[1], &imm);
		break;
	case F_DOFF:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_imm(st, argv[1], false, &imm);
		break;
	case F_DST:
		ret = parse_reg(st, argv[0], &d) ?: parse_reg(st, argv[1], &a);
		if (ret)
			break;
		if (argv[2][0] == 'r' || argv[2][0] == 'R') {
			ret = parse_reg(st, argv[2], &b);
		} else {
			b = MEGPU_ISA_IMM;
			ret = parse_imm(st, argv[2], o->fp, &imm);
		}
		break;
	case F_S:
		ret = parse_reg(st, argv[0], &a);
		break;
	case F_TGT:
		ret = parse_target(st, argv[0], &imm);
		break;
	case F_STGT:
		ret = parse_reg(st, argv[0], &a) ?:
		      parse_target(st, argv[1], &imm);
		break;
	case F_DM:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_mem(st, argv[1], &a, &imm);
		break;
	case F_MT:
		ret = parse_mem(st, argv[0], &a, &imm) ?:
		      parse_reg(st, argv[1], &b);
		break;
	case F_DMT:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_mem(st, argv[1], &a, &imm) ?:
		      parse_reg(st, argv[2], &b);
		break;
	case F_SYSCALL:
		ret = parse_reg(st, argv[0], &d) ?:
		      parse_imm(st, argv[1], false, &n) ?:
		      parse_reg(st, argv[2], &a) ?:
		      parse_reg(st, argv[3], &b) ?:
		      parse_reg(st, argv[4], &s2);
		if (!ret && n > MEGPU_SYSCALL_MAX_N)
			ret = asm_error(st, "syscall number %u out of range", n);
		if (!ret)
			imm = n << 8 | s2 | (hi ? MEGPU_SYSCALL_HI : 0);
		break;
	}
	*insn = MEGPU_INSN(o->op, d, a, b, imm);
	return ret;
}

static int add_label(struct asm_state *st, const char *name)
{
	size_t i;

	if (strlen(name) >= MAX_TOKEN)
		return asm_error(st, "label too long");
	for (i = 0; i < st->nlabels; i++)
		if (!strcmp(st->labels[i].name, name))
			return asm_error(st, "duplicate label '%s'", name);
	if (st->nlabels == st->label_cap) {
		size_t cap = st->label_cap ? st->label_cap * 2 : 16;
		struct label *l = realloc(st->labels, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		st->labels = l;
		st->label_cap = cap;
	}
	strcpy(st->labels[st->nlabels].name, name);
	st->labels[st->nlabels].pc = st->prog->len;
	st->nlabels++;
	return 0;
}

/* One source line: [label:]* [instruction] [comment]. */
static int assemble_line(struct asm_state *st, char *s)
{
	const struct op_info *o;
	char *p, *mnem, *dot;
	uint64_t insn = 0;
	bool hi = false;
	int ret;

	/* comments */
	for (p = s; *p; p++) {
		if (*p == ';' || *p == '#' || (p[0] == '/' && p[1] == '/')) {
			*p = 0;
			break;
		}
	}
	s = skip_space(s);
	/* labels */
	for (;;) {
		char *colon;

		p = s;
		while (is_ident(*p))
			p++;
		colon = skip_space(p);
		if (p == s || !is_ident_start(*s) || *colon != ':')
			break;
		*p = 0;
		if (!st->resolve) {
			ret = add_label(st, s);
			if (ret)
				return ret;
		}
		s = skip_space(colon + 1);
	}
	if (!*s)
		return 0;
	mnem = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = 0;
	if (!strcasecmp(mnem, ".quad")) {
		unsigned long long v;
		char *end;

		p = skip_space(s);
		trim_end(p);
		errno = 0;
		v = strtoull(p, &end, 0);
		if (!*p || *end || errno || *p == '-')
			return asm_error(st, "bad .quad value '%s'", p);
		return emit(st, v);
	}
	/* "syscall.hi": the one suffix, SYSCALL's acquisition priority */
	dot = strchr(mnem, '.');
	if (dot && dot != mnem && !strcasecmp(dot, ".hi")) {
		*dot = 0;
		hi = true;
	}
	ret = megpu_op_by_name(mnem);
	if (hi && ret != MEGPU_OP_SYSCALL) {
		*dot = '.';
		ret = -EINVAL;
	}
	if (ret < 0)
		return asm_error(st, "unknown instruction '%s'", mnem);
	o = op_info(ret);
	ret = assemble_insn(st, o, hi, s, &insn);
	return ret ?: emit(st, insn);
}

static int assemble_pass(struct asm_state *st, const char *src)
{
	const char *p = src;
	char *line;
	int ret = 0;

	st->prog->len = 0;
	st->line = 0;
	while (*p) {
		size_t n = strcspn(p, "\n");

		st->line++;
		line = strndup(p, n);
		if (!line)
			return -ENOMEM;
		ret = assemble_line(st, line);
		free(line);
		if (ret)
			return ret;
		p += n + (p[n] == '\n');
	}
	return 0;
}

int megpu_asm(const char *src, struct megpu_prog *prog, char *err,
	      size_t errlen)
{
	struct asm_state st = {
		.prog = prog, .err = err, .errlen = errlen,
	};
	int ret;

	prog->insn = NULL;
	prog->len = 0;
	if (err && errlen)
		err[0] = 0;
	/* pass 1 finds the labels, pass 2 encodes with them */
	ret = assemble_pass(&st, src);
	if (!ret) {
		st.resolve = true;
		ret = assemble_pass(&st, src);
	}
	if (!ret && !prog->len) {
		st.line = 0;
		ret = asm_error(&st, "empty program");
	}
	free(st.labels);
	if (ret)
		megpu_prog_fini(prog);
	return ret;
}

void megpu_prog_fini(struct megpu_prog *prog)
{
	free(prog->insn);
	prog->insn = NULL;
	prog->len = 0;
}

void megpu_prog_store(const struct megpu_prog *prog, void *dst)
{
	uint8_t *p = dst;
	uint32_t i;
	int b;

	for (i = 0; i < prog->len; i++)
		for (b = 0; b < 8; b++)
			p[i * 8 + b] = prog->insn[i] >> (8 * b);
}

/* --- disassembling --- */

static void fmt_imm(char *buf, size_t len, uint32_t imm)
{
	int32_t v = (int32_t)imm;

	if (v >= -65536 && v <= 65536)
		snprintf(buf, len, "%d", v);
	else
		snprintf(buf, len, "0x%x", imm);
}

/* A float immediate: the shortest exact decimal, else the raw bits. */
static void fmt_fimm(char *buf, size_t len, uint32_t imm)
{
	float f;
	int prec;

	memcpy(&f, &imm, sizeof(f));
	if (isfinite(f)) {
		for (prec = 1; prec <= 9; prec++) {
			snprintf(buf, len, "%.*g", prec, f);
			if (f32_bits(strtof(buf, NULL)) == imm)
				break;
		}
		/* make it read back as a float */
		if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 <= len)
			strcat(buf, ".0");
		return;
	}
	snprintf(buf, len, "0x%x", imm);
}

static void fmt_mem(char *buf, size_t len, uint32_t base, uint32_t off)
{
	int32_t v = (int32_t)off;

	if (!v)
		snprintf(buf, len, "[r%u]", base);
	else if (v < 0)
		snprintf(buf, len, "[r%u-%lld]", base, -(long long)v);
	else
		snprintf(buf, len, "[r%u+%d]", base, v);
}

static void disasm_text(const struct op_info *o, uint64_t insn, char *buf,
			size_t len)
{
	uint32_t d = MEGPU_INSN_DST(insn), a = MEGPU_INSN_SRC0(insn);
	uint32_t b = MEGPU_INSN_SRC1(insn), imm = MEGPU_INSN_IMM(insn);
	char x[48], m[48];

	switch (o->fmt) {
	case F_NONE:
		snprintf(buf, len, "%s", o->name);
		break;
	case F_DS:
		snprintf(buf, len, "%s r%u, r%u", o->name, d, a);
		break;
	case F_DI:
	case F_DOFF:
		fmt_imm(x, sizeof(x), imm);
		snprintf(buf, len, "%s r%u, %s", o->name, d, x);
		break;
	case F_DSR:
		snprintf(buf, len, "%s r%u, %s", o->name, d,
			 imm < MEGPU_SR_COUNT ? sreg_names[imm] : "?");
		break;
	case F_DST:
		if (b != MEGPU_ISA_IMM)
			snprintf(x, sizeof(x), "r%u", b);
		else if (o->fp)
			fmt_fimm(x, sizeof(x), imm);
		else
			fmt_imm(x, sizeof(x), imm);
		snprintf(buf, len, "%s r%u, r%u, %s", o->name, d, a, x);
		break;
	case F_S:
		snprintf(buf, len, "%s r%u", o->name, a);
		break;
	case F_TGT:
		snprintf(buf, len, "%s %u", o->name, imm);
		break;
	case F_STGT:
		snprintf(buf, len, "%s r%u, %u", o->name, a, imm);
		break;
	case F_DM:
		fmt_mem(m, sizeof(m), a, imm);
		snprintf(buf, len, "%s r%u, %s", o->name, d, m);
		break;
	case F_MT:
		fmt_mem(m, sizeof(m), a, imm);
		snprintf(buf, len, "%s %s, r%u", o->name, m, b);
		break;
	case F_DMT:
		fmt_mem(m, sizeof(m), a, imm);
		snprintf(buf, len, "%s r%u, %s, r%u", o->name, d, m, b);
		break;
	case F_SYSCALL:
		snprintf(buf, len, "%s%s r%u, %u, r%u, r%u, r%u", o->name,
			 MEGPU_INSN_SYSCALL_IS_HI(insn) ? ".hi" : "", d,
			 MEGPU_INSN_SYSCALL_N(insn), a, b,
			 MEGPU_INSN_SYSCALL_SRC2(insn));
		break;
	case F_SLEEP:
		if (imm == MEGPU_SLEEP_IRQ)
			snprintf(buf, len, "%s irq", o->name);
		else if (imm)
			snprintf(buf, len, "%s 0x%x", o->name, imm);
		else
			snprintf(buf, len, "%s", o->name);
		break;
	}
}

/*
 * The mnemonic form when it assembles back to exactly @insn (unused
 * fields zero, registers in range), else ".quad": every word round-trips.
 */
int megpu_disasm_one(uint64_t insn, char *buf, size_t len)
{
	const struct op_info *o = op_info(MEGPU_INSN_OP(insn));
	struct megpu_prog prog = { 0 };
	char text[MEGPU_ASM_LINE_MAX];
	bool same;

	if (o) {
		disasm_text(o, insn, text, sizeof(text));
		same = !megpu_asm(text, &prog, NULL, 0) && prog.len == 1 &&
		       prog.insn[0] == insn;
		megpu_prog_fini(&prog);
		if (same) {
			snprintf(buf, len, "%s", text);
			return 0;
		}
	}
	snprintf(buf, len, ".quad 0x%016" PRIx64, insn);
	return o ? -EBADMSG : -EINVAL;
}

int megpu_disasm(const uint64_t *insn, size_t n,
		 void (*line)(void *priv, size_t pc, const char *text),
		 void *priv)
{
	char buf[MEGPU_ASM_LINE_MAX];
	size_t pc;
	int bad = 0;

	for (pc = 0; pc < n; pc++) {
		if (megpu_disasm_one(insn[pc], buf, sizeof(buf)))
			bad++;
		line(priv, pc, buf);
	}
	return bad;
}
