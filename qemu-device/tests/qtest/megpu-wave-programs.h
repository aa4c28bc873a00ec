/*
 * megpu: VADD and CHECKSUM as wave programs, hand-encoded with the
 * contract's macros. The device qtest runs them against the built-in
 * kernels; the host test checks that tools/megpu/programs/{vadd,checksum}.s
 * assemble to exactly these words. One copy for both.
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

#endif
