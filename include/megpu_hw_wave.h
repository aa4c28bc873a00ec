/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: the wave ISA (seed 003),
 * its special registers and the mailboxes of GPU-to-CPU calls.
 *
 * Part of include/megpu_hw.h (which includes every part); included
 * by the device and the driver. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_WAVE_H
#define MEGPU_HW_WAVE_H

#include "megpu_hw_packets.h"

/*
 * Wave ISA (seed 003's programmable waves). A DISPATCH of
 * MEGPU_KERNEL_PROGRAM splits each work-group into waves of
 * MEGPU_WAVE_LANES work-items (lane l = local linear id % LANES); lanes
 * past the group or the grid start inactive. Every lane has
 * MEGPU_WAVE_REGS 64-bit registers (floats: IEEE binary32 in bits 31:0,
 * bits 63:32 written as 0); an execution mask says which lanes run.
 *
 * Program argument block (8-byte aligned, little endian): the program's
 * address (8-byte aligned; GPU VA inside an IB), its length in
 * instructions (1..MEGPU_PROGRAM_MAX_INSNS), flags (0), then
 * MEGPU_PARGS_USER_SIZE bytes of user arguments read by LDARG/LDARG32.
 */
#define MEGPU_WAVE_LANES		16
#define MEGPU_WAVE_REGS			32
#define MEGPU_WAVE_MASK_DEPTH		16	/* nested IFs */
#define MEGPU_WAVE_SLOTS		16	/* resident waves per engine */
#define MEGPU_PROGRAM_MAX_INSNS		65536

#define MEGPU_PARGS_PROGRAM		0	/* u64 */
#define MEGPU_PARGS_LENGTH		8	/* u32 */
#define MEGPU_PARGS_FLAGS		12	/* u32, must be 0 */
#define MEGPU_PARGS_USER		16
#define MEGPU_PARGS_USER_SIZE		128
#define MEGPU_PARGS_SIZE		(MEGPU_PARGS_USER + MEGPU_PARGS_USER_SIZE)

/*
 * Wave ids, per device: engine, resident slot and a launch number that
 * makes a stale id (of a wave that ended) not match a later wave.
 */
#define MEGPU_WAVE_ID(eng, slot, seq) \
	((((eng) & 0xfu) << 28) | (((slot) & 0xffu) << 20) | ((seq) & 0xfffffu))
#define MEGPU_WAVE_ID_ENGINE(id)	(((id) >> 28) & 0xf)
#define MEGPU_WAVE_ID_SLOT(id)		(((id) >> 20) & 0xff)
#define MEGPU_WAVE_ID_SEQ(id)		((id) & 0xfffff)
#define MEGPU_WAVE_ID_NONE		0xffffffffu

/*
 * Instructions are 64 bits, little endian: opcode 7:0, dst 15:8,
 * src0 23:16, src1 31:24, imm 63:32. Register fields >= MEGPU_WAVE_REGS
 * fault BAD_OPERAND, except src1 == MEGPU_ISA_IMM in the binary ALU,
 * float and compare ops, which then use imm instead: sign-extended for
 * integer ops, the binary32 bits for float ops. Memory addresses are
 * src0 + sign-extended imm; branch targets are instruction indexes in
 * imm.
 */
#define MEGPU_INSN(op, dst, s0, s1, imm) \
	((uint64_t)((op) & 0xffu) | (uint64_t)((dst) & 0xffu) << 8 | \
	 (uint64_t)((s0) & 0xffu) << 16 | (uint64_t)((s1) & 0xffu) << 24 | \
	 (uint64_t)(uint32_t)(imm) << 32)
#define MEGPU_INSN_OP(i)		((uint32_t)(i) & 0xff)
#define MEGPU_INSN_DST(i)		((uint32_t)((i) >> 8) & 0xff)
#define MEGPU_INSN_SRC0(i)		((uint32_t)((i) >> 16) & 0xff)
#define MEGPU_INSN_SRC1(i)		((uint32_t)((i) >> 24) & 0xff)
#define MEGPU_INSN_IMM(i)		((uint32_t)((i) >> 32))
#define MEGPU_ISA_IMM			0xff
/*
 * SYSCALL dst, N, s0, s1, s2: s2 in imm 6:0, flags in imm 7, N in imm
 * 31:8. Flag MEGPU_SYSCALL_HI ("syscall.hi", seed 003's optional
 * acquisition priority): while a HI SYSCALL of a wave of the dispatch
 * has lanes without a mailbox slot, the engine's non-HI SYSCALLs of that
 * dispatch claim no FREE slot (they retry); see megpu-hw.rst.
 */
#define MEGPU_SYSCALL_HI		MEGPU_BIT(7)
#define MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, flags) \
	MEGPU_INSN(MEGPU_OP_SYSCALL, dst, s0, s1, \
		   ((uint32_t)(n) << 8) | ((s2) & 0x7fu) | \
		   ((flags) & MEGPU_SYSCALL_HI))
#define MEGPU_INSN_SYSCALL(dst, n, s0, s1, s2) \
	MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, 0)
#define MEGPU_INSN_SYSCALL_HI(dst, n, s0, s1, s2) \
	MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, MEGPU_SYSCALL_HI)
#define MEGPU_INSN_SYSCALL_N(i)		(MEGPU_INSN_IMM(i) >> 8)
#define MEGPU_INSN_SYSCALL_SRC2(i)	(MEGPU_INSN_IMM(i) & 0x7f)
#define MEGPU_INSN_SYSCALL_IS_HI(i)	\
	(!!(MEGPU_INSN_IMM(i) & MEGPU_SYSCALL_HI))
#define MEGPU_SYSCALL_MAX_N		0xffffff

/* Control and moves. Per lane unless said "wave". */
#define MEGPU_OP_NOP			0x00
#define MEGPU_OP_END			0x01	/* wave: the wave ends */
#define MEGPU_OP_MOV			0x02	/* dst = s0 */
#define MEGPU_OP_LI			0x03	/* dst = sext(imm) */
#define MEGPU_OP_LIH			0x04	/* dst = imm << 32 | dst[31:0] */
#define MEGPU_OP_S2R			0x05	/* dst = special reg imm */
#define MEGPU_OP_LDARG			0x06	/* dst = user arg u64 at imm */
#define MEGPU_OP_LDARG32		0x07	/* dst = user arg u32 at imm */
/* Integer ALU, 64-bit, dst = s0 op s1; shifts use s1 & 63. */
#define MEGPU_OP_ADD			0x10
#define MEGPU_OP_SUB			0x11
#define MEGPU_OP_MUL			0x12
#define MEGPU_OP_AND			0x13
#define MEGPU_OP_OR			0x14
#define MEGPU_OP_XOR			0x15
#define MEGPU_OP_SHL			0x16
#define MEGPU_OP_SHR			0x17	/* logical */
#define MEGPU_OP_SAR			0x18	/* arithmetic */
#define MEGPU_OP_MIN			0x19	/* signed */
#define MEGPU_OP_MAX			0x1a
#define MEGPU_OP_MINU			0x1b	/* unsigned */
#define MEGPU_OP_MAXU			0x1c
/* Float ALU on binary32 (round to nearest even, as the host does). */
#define MEGPU_OP_FADD			0x20
#define MEGPU_OP_FSUB			0x21
#define MEGPU_OP_FMUL			0x22
#define MEGPU_OP_FMIN			0x23
#define MEGPU_OP_FMAX			0x24
#define MEGPU_OP_I2F			0x25	/* dst = (float)(int64)s0 */
#define MEGPU_OP_F2I			0x26	/* trunc, saturating int32, NaN 0 */
/* Compares: dst = 1 if true else 0. */
#define MEGPU_OP_CMPEQ			0x30
#define MEGPU_OP_CMPNE			0x31
#define MEGPU_OP_CMPLT			0x32	/* signed */
#define MEGPU_OP_CMPLE			0x33
#define MEGPU_OP_CMPLTU			0x34	/* unsigned */
#define MEGPU_OP_CMPLEU			0x35
#define MEGPU_OP_FCMPEQ			0x36	/* false for NaN */
#define MEGPU_OP_FCMPLT			0x37
#define MEGPU_OP_FCMPLE			0x38
/* Divergence and branches (wave). */
#define MEGPU_OP_IF			0x40	/* push mask; mask &= s0 != 0 */
#define MEGPU_OP_ELSE			0x41	/* mask = top & ~mask */
#define MEGPU_OP_ENDIF			0x42	/* mask = pop */
#define MEGPU_OP_JMP			0x43	/* pc = imm */
#define MEGPU_OP_BRANY			0x44	/* if any active s0 != 0 */
/* Memory through the GPU MMU; address = s0 + sext(imm), aligned. */
#define MEGPU_OP_LD32			0x50	/* dst = zext(u32) */
#define MEGPU_OP_LD64			0x51
#define MEGPU_OP_ST32			0x52	/* mem = s1[31:0] */
#define MEGPU_OP_ST64			0x53	/* mem = s1 */
#define MEGPU_OP_ATOMADD32		0x54	/* dst = old; mem += s1 */
#define MEGPU_OP_ATOMCAS32		0x55	/* mem == dst ? s1; dst = old */
#define MEGPU_OP_ATOMXCHG32		0x56	/* dst = old; mem = s1 */
/* Seed 003: GPU-to-CPU calls (wave). */
#define MEGPU_OP_SYSCALL		0x60	/* see MEGPU_INSN_SYSCALL */
#define MEGPU_OP_INTERRUPT		0x61	/* raise MISC_IRQ_WAVE */
#define MEGPU_OP_SLEEP			0x62	/* park until WAVE_RESTART */
/* SLEEP imm: raise MISC_IRQ_WAVE once parked (INTERRUPT + SLEEP, no race) */
#define MEGPU_SLEEP_IRQ			MEGPU_BIT(0)

/*
 * Mailboxes (seed 003): an array of slots in memory shared by the CPU
 * and the device, little endian. The device (SYSCALL) takes a FREE slot
 * with a compare-and-swap FREE -> FILLING, writes N, the three
 * arguments and the caller's wave id, then stores ACTIVE, parks the wave
 * and raises MISC_IRQ_SYSCALL. The CPU runs the call, writes RET, stores
 * RETURNING and writes the wave id to WAVE_RESTART; the wave then reads
 * RET into its destination register and stores FREE.
 */
#define MEGPU_MBOX_STATE		0	/* u32: MEGPU_MBOX_* below */
#define MEGPU_MBOX_OP			4	/* u32: N */
#define MEGPU_MBOX_ARG(i)		(8 + (i) * 4)	/* u32 s0, s1, s2 */
#define MEGPU_MBOX_CALLER		20	/* u32: wave id */
#define MEGPU_MBOX_RET			24	/* u64: result */
#define MEGPU_MBOX_SLOT_SIZE		32
#define MEGPU_MBOX_ALIGN		32
#define MEGPU_MBOX_MAX_SLOTS		1024

#define MEGPU_MBOX_FREE			0
#define MEGPU_MBOX_FILLING		1
#define MEGPU_MBOX_ACTIVE		2
#define MEGPU_MBOX_RETURNING		3

/* Special registers for S2R (imm). */
#define MEGPU_SR_GLOBAL_ID		0	/* y * grid_x + x */
#define MEGPU_SR_GLOBAL_ID_X		1
#define MEGPU_SR_GLOBAL_ID_Y		2
#define MEGPU_SR_LOCAL_ID		3	/* ly * group_x + lx */
#define MEGPU_SR_LOCAL_ID_X		4
#define MEGPU_SR_LOCAL_ID_Y		5
#define MEGPU_SR_GROUP_ID_X		6
#define MEGPU_SR_GROUP_ID_Y		7
#define MEGPU_SR_GRID_X			8
#define MEGPU_SR_GRID_Y			9
#define MEGPU_SR_GROUP_SIZE_X		10
#define MEGPU_SR_GROUP_SIZE_Y		11
#define MEGPU_SR_WAVE_ID		12	/* MEGPU_WAVE_ID() */
#define MEGPU_SR_LANE_ID		13
#define MEGPU_SR_EXEC			14	/* the execution mask */
/*
 * GPU address of the user arguments (the program-arguments block +
 * MEGPU_PARGS_USER): a program loads arguments past LDARG's 128 bytes
 * with LD32/LD64 from here (a task's block may be longer, ARG_SIZE).
 */
#define MEGPU_SR_ARGS			15
#define MEGPU_SR_COUNT			16

#endif /* MEGPU_HW_WAVE_H */
