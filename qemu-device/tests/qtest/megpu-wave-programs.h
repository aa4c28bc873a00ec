/*
 * megpu: VADD and CHECKSUM as wave programs, hand-encoded with the
 * contract's macros. The device qtest runs them against the built-in
 * kernels; the host test checks that tools/megpu/programs/{vadd,checksum}.s
 * assemble to exactly these words. Then the ALU vectors, hand-written
 * from the ISA table, which the device (qtest) and libmegpu's CPU
 * interpreter (host test) must both meet. One copy for all.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef MEGPU_WAVE_PROGRAMS_H
#define MEGPU_WAVE_PROGRAMS_H

#define I(op, d, a, b, imm) MEGPU_INSN(MEGPU_OP_##op, d, a, b, imm)
#define IMM                 MEGPU_ISA_IMM

/* user: a, b, c, n (as u32 at 24) */
static const uint64_t vadd_prog[] = {
    I(S2R, 1, 0, 0, MEGPU_SR_GLOBAL_ID),
    I(LDARG32, 2, 0, 0, 24),
    I(CMPLTU, 3, 1, 2, 0),
    I(IF, 0, 3, 0, 0),
    I(SHL, 4, 1, IMM, 2),
    I(LDARG, 5, 0, 0, 0),
    I(ADD, 5, 5, 4, 0),
    I(LD32, 6, 5, 0, 0),
    I(LDARG, 5, 0, 0, 8),
    I(ADD, 5, 5, 4, 0),
    I(LD32, 7, 5, 0, 0),
    I(ADD, 6, 6, 7, 0),
    I(LDARG, 5, 0, 0, 16),
    I(ADD, 5, 5, 4, 0),
    I(ST32, 0, 5, 6, 0),
    I(ENDIF, 0, 0, 0, 0),
    I(END, 0, 0, 0, 0),
};

/* user: x, y, n (as u32 at 16), the bits of the float a (u32 at 24) */
static const uint64_t saxpy_prog[] = {
    I(S2R, 1, 0, 0, MEGPU_SR_GLOBAL_ID),
    I(LDARG32, 2, 0, 0, 16),
    I(CMPLTU, 3, 1, 2, 0),
    I(IF, 0, 3, 0, 0),
    I(SHL, 4, 1, IMM, 2),
    I(LDARG, 5, 0, 0, 0),
    I(ADD, 5, 5, 4, 0),
    I(LD32, 6, 5, 0, 0),
    I(LDARG32, 7, 0, 0, 24),
    I(FMUL, 6, 6, 7, 0),
    I(LDARG, 5, 0, 0, 8),
    I(ADD, 5, 5, 4, 0),
    I(LD32, 7, 5, 0, 0),
    I(FADD, 6, 6, 7, 0),
    I(ST32, 0, 5, 6, 0),
    I(ENDIF, 0, 0, 0, 0),
    I(END, 0, 0, 0, 0),
};

/* user: a, sum address, n (as u32 at 16) */
static const uint64_t checksum_prog[] = {
    I(S2R, 1, 0, 0, MEGPU_SR_GLOBAL_ID),
    I(LDARG32, 2, 0, 0, 16),
    I(CMPLTU, 3, 1, 2, 0),
    I(IF, 0, 3, 0, 0),
    I(SHL, 4, 1, IMM, 2),
    I(LDARG, 5, 0, 0, 0),
    I(ADD, 5, 5, 4, 0),
    I(LD32, 6, 5, 0, 0),
    I(LDARG, 7, 0, 0, 8),
    I(ATOMADD32, 8, 7, 6, 0),
    I(ENDIF, 0, 0, 0, 0),
    I(END, 0, 0, 0, 0),
};


/*
 * The ALU against hand-written vectors, not against a model of it: each
 * expected value is worked out from the ISA table in
 * Documentation/megpu-hw.rst (64-bit wrapping integers, shifts by
 * src1 & 63, binary32 with round to nearest even, FMIN/FMAX returning
 * the non-NaN operand, F2I truncating and saturating to int32 with NaN
 * giving 0). Edge cases: shifts at and past the width, signed overflow,
 * -0.0, infinities, NaN, conversions that round or saturate.
 */
#define F1      0x3f800000ull   /* 1.0f */
#define F2      0x40000000ull   /* 2.0f */
#define FNEG1   0xbf800000ull   /* -1.0f */
#define FNZ     0x80000000ull   /* -0.0f */
#define FINF    0x7f800000ull
#define FNINF   0xff800000ull
#define FNAN    0x7fc00000ull
#define SMIN    0x8000000000000000ull
#define SMAX    0x7fffffffffffffffull
#define ALL     0xffffffffffffffffull

static const struct megpu_alu_vector {
    uint32_t op;
    uint64_t a, b, expect;
} alu_vectors[] = {
    { MEGPU_OP_ADD, SMAX, 1, SMIN },                    /* signed overflow */
    { MEGPU_OP_ADD, ALL, 1, 0 },
    { MEGPU_OP_SUB, 0, 1, ALL },
    { MEGPU_OP_SUB, SMIN, 1, SMAX },
    { MEGPU_OP_MUL, 0x100000000ull, 0x100000000ull, 0 },
    { MEGPU_OP_MUL, ALL, ALL, 1 },                      /* -1 * -1 */
    { MEGPU_OP_MUL, 3, -5ull, -15ull },
    { MEGPU_OP_AND, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull,
      0x0f000f000f000f00ull },
    { MEGPU_OP_OR, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull,
      0xfff0fff0fff0fff0ull },
    { MEGPU_OP_XOR, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull,
      0xf0f0f0f0f0f0f0f0ull },
    { MEGPU_OP_SHL, 1, 63, SMIN },
    { MEGPU_OP_SHL, 1, 64, 1 },                         /* 64 & 63 = 0 */
    { MEGPU_OP_SHL, 1, 65, 2 },
    { MEGPU_OP_SHL, 3, 0x100, 3 },
    { MEGPU_OP_SHR, SMIN, 63, 1 },
    { MEGPU_OP_SHR, SMIN, 64, SMIN },
    { MEGPU_OP_SAR, SMIN, 63, ALL },
    { MEGPU_OP_SAR, SMIN, 1, 0xc000000000000000ull },
    { MEGPU_OP_SAR, 0x40, 70, 1 },                      /* 70 & 63 = 6 */
    { MEGPU_OP_MIN, ALL, 1, ALL },                      /* -1 < 1 */
    { MEGPU_OP_MIN, SMIN, SMAX, SMIN },
    { MEGPU_OP_MAX, ALL, 1, 1 },
    { MEGPU_OP_MINU, ALL, 1, 1 },
    { MEGPU_OP_MAXU, ALL, 1, ALL },
    { MEGPU_OP_CMPEQ, 5, 5, 1 },
    { MEGPU_OP_CMPNE, 5, 5, 0 },
    { MEGPU_OP_CMPLT, ALL, 0, 1 },
    { MEGPU_OP_CMPLTU, ALL, 0, 0 },
    { MEGPU_OP_CMPLE, 5, 5, 1 },
    { MEGPU_OP_CMPLE, SMAX, SMIN, 0 },
    { MEGPU_OP_CMPLEU, 0, 0, 1 },
    { MEGPU_OP_FADD, F1, F2, 0x40400000ull },           /* 3.0 */
    { MEGPU_OP_FADD, 0x3dcccccdull, 0x3e4ccccdull, 0x3e99999aull },
    { MEGPU_OP_FADD, FNZ, FNZ, FNZ },                   /* -0 + -0 */
    { MEGPU_OP_FADD, FNZ, 0, 0 },                       /* -0 + +0 */
    { MEGPU_OP_FADD, 0x4b800000ull, F1, 0x4b800000ull }, /* 2^24 + 1 */
    { MEGPU_OP_FSUB, F1, F1, 0 },
    { MEGPU_OP_FSUB, F1, F2, FNEG1 },
    { MEGPU_OP_FMUL, FNZ, F1, FNZ },
    { MEGPU_OP_FMUL, 0x7f7fffffull, F2, FINF },         /* overflow */
    { MEGPU_OP_FMUL, F2, 0x3f000000ull, F1 },           /* 2 * 0.5 */
    { MEGPU_OP_FMIN, FNAN, F2, F2 },
    { MEGPU_OP_FMIN, F1, F2, F1 },
    { MEGPU_OP_FMIN, FNINF, F1, FNINF },
    { MEGPU_OP_FMAX, F1, FNAN, F1 },
    { MEGPU_OP_FMAX, FNEG1, F1, F1 },
    { MEGPU_OP_FCMPEQ, FNZ, 0, 1 },                     /* -0 == +0 */
    { MEGPU_OP_FCMPEQ, FNAN, FNAN, 0 },
    { MEGPU_OP_FCMPLT, FNINF, FINF, 1 },
    { MEGPU_OP_FCMPLT, FNAN, F1, 0 },
    { MEGPU_OP_FCMPLE, F1, FNAN, 0 },
    { MEGPU_OP_FCMPLE, F1, F1, 1 },
    { MEGPU_OP_F2I, 0x406ccccdull, 0, 3 },              /* 3.7 */
    { MEGPU_OP_F2I, 0xc06ccccdull, 0, -3ull },          /* -3.7 */
    { MEGPU_OP_F2I, FINF, 0, 0x7fffffffull },
    { MEGPU_OP_F2I, FNINF, 0, 0xffffffff80000000ull },
    { MEGPU_OP_F2I, 0x4f32d05eull, 0, 0x7fffffffull },  /* 3e9 */
    { MEGPU_OP_F2I, FNAN, 0, 0 },
    { MEGPU_OP_F2I, FNZ, 0, 0 },
    { MEGPU_OP_I2F, ALL, 0, FNEG1 },
    { MEGPU_OP_I2F, 16777217, 0, 0x4b800000ull },       /* to even */
    { MEGPU_OP_I2F, SMAX, 0, 0x5f000000ull },           /* 2^63 */
    { MEGPU_OP_I2F, 0, 0, 0 },
};

#define ALU_VECTORS_N   (sizeof(alu_vectors) / sizeof(alu_vectors[0]))

/*
 * The program that runs every vector on one lane: user[0] is where the
 * results go, one u64 each. Writes at most 2 + 6 * ALU_VECTORS_N words
 * to @p; returns how many.
 */
static inline unsigned alu_vectors_program(uint64_t *p)
{
    unsigned n = 0;

    p[n++] = I(LDARG, 2, 0, 0, 0);
    for (unsigned i = 0; i < ALU_VECTORS_N; i++) {
        uint64_t a = alu_vectors[i].a, b = alu_vectors[i].b;

        p[n++] = I(LI, 5, 0, 0, (uint32_t)a);
        p[n++] = I(LIH, 5, 0, 0, (uint32_t)(a >> 32));
        p[n++] = I(LI, 4, 0, 0, (uint32_t)b);
        p[n++] = I(LIH, 4, 0, 0, (uint32_t)(b >> 32));
        p[n++] = MEGPU_INSN(alu_vectors[i].op, 10, 5, 4, 0);
        p[n++] = I(ST64, 0, 2, 10, 8 * i);
    }
    p[n++] = I(END, 0, 0, 0, 0);
    return n;
}

#endif
