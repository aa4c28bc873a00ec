/*
 * megpu: programmable waves and their GPU-to-CPU calls (seed 003)
 *
 * DOC: wave interpreter
 *
 * Seed 003 (US 9,170,820, GPU-to-CPU system calls) needs work-items that
 * can stop in the middle of a program, wait for the CPU and go on. The
 * built-in kernels run to the end in C, so they cannot; this file runs
 * programs of the device's own small instruction set (the "Wave ISA" in
 * megpu_hw.h) instead, DISPATCHed as MEGPU_KERNEL_PROGRAM.
 *
 * Choices:
 * - A wave is MEGPU_WAVE_LANES work-items of one work-group that share
 *   a program counter; its state (PC, execution mask and IF mask stack,
 *   status) is the struct MegpuWave, its per-lane registers its slot's
 *   lanes of the dispatch's register file, where a register's lanes of
 *   all slots lie side by side. Registers start at zero: a launch
 *   clears those a lane may read before writing them (the program is
 *   walked once at load, megpu_wave_clears()); the others hold what
 *   an earlier wave of the same dispatch left, which no lane can see
 *   (the rows a program names are zeroed when the dispatch starts, so
 *   never another context's). Nothing of a wave lives
 *   on a C stack, so a wave can park at any instruction.
 * - The engine thread keeps up to MEGPU_WAVE_SLOTS waves resident and
 *   interprets them round-robin, MEGPU_WAVE_SLICE instructions at a time;
 *   a finished wave's slot takes the next wave of the grid. A parked
 *   (SLEEP) wave is skipped, so the others run on; when every resident
 *   wave is parked the engine sleeps until WAVE_RESTART or a reset. No
 *   coroutine and no thread per wave.
 * - The program is loaded through the MMU when the dispatch starts (an
 *   instruction-cache fill), so a bad program page faults before any
 *   wave runs and the program cannot change under running waves. It is
 *   decoded there, once for all waves (MegpuInsn: fields extracted,
 *   operands checked by megpu_isa_check(), which libmegpu's CPU
 *   interpreter shares), so that a step only dispatches on the opcode;
 *   an instruction that cannot run still faults only when a wave gets
 *   to it. An LDARG and the ADD after it into the same register (the
 *   usual row address) run in a gang as one ADD of the argument
 *   (megpu_wave_fuse()). Binary ALU ops run as one straight loop over
 *   the lanes per opcode. The decoded form is not kept from one
 *   dispatch to the next: the device does not see the guest's writes
 *   to the program, and decoding is one pass over the words the fill
 *   reads anyway.
 * - Loads and stores go through megpu_mem_rw (MMU, posted writes in
 *   relaxed mode, an engine sees its own queued writes); consecutive
 *   lanes are merged into one access. The resident waves at one PC run
 *   as a gang, an instruction at a time for all of them, and a gang's
 *   load or store merges consecutive lanes across its waves (in launch
 *   order): a work-group's row in one access, as the built-in kernels
 *   read it, instead of one per 16 lanes (issue 25: VADD over 1M
 *   elements 2.5x faster). An instruction that only computes registers
 *   is dispatched once for the whole gang, then runs over the lanes of
 *   each wave (megpu_gang_plain()); so do IF, ELSE and ENDIF
 *   (megpu_gang_mask()), which never part the gang. The gang keeps its
 *   PC and instruction count while it runs together and writes them to
 *   its waves before one is looked at alone. Waves that branch apart
 *   leave the gang; a fault still names the wave whose lane faulted. A
 *   gang's full row of consecutive addresses is one access without
 *   per-lane bookkeeping (megpu_gang_ldst_row()). Atomics are host
 *   atomics on the mapped guest RAM, not posted, like the CHECKSUM add;
 *   a wave's consecutive lanes adding to one word are one add of their
 *   sum, each lane getting the value it would have seen in lane order,
 *   and so is a whole gang whose every lane adds to one word
 *   (megpu_gang_atomadd(), in launch order). A gang of consecutive
 *   slots with every lane on (slots refill in launch order when a gang
 *   ends together: the usual case) holds each register as one run of
 *   lanes, and runs an instruction as one loop over all of them
 *   (megpu_gang_flat()) instead of a loop per wave. Such a gang knows
 *   which registers hold a line (megpu_line_set()), and a row whose
 *   address register is one needs no look at every lane's address. A
 *   gang's rows of stores join one posted write per page in relaxed
 *   mode (megpu-writeq.c); its row loads read RAM in place when the
 *   engine has no pending write there (megpu_mem_read_view()).
 *   The gang's slice, with its lane loops, is compiled for AVX2 as well
 *   and runs so where the host has it.
 * - Any error faults the job (the DISPATCH packet) with
 *   FAULT_INFO.WAVE, the wave id and PC in WAVE_FAULT_ID/PC; QEMU never
 *   asserts on a guest value. A per-wave instruction budget (property
 *   "wave-budget", 0 = none) turns a runaway loop into a BUDGET fault,
 *   and the engine checks for a reset between slices, so the driver's
 *   job timeout can always stop a dispatch.
 * - With wave-spin-us set, an engine whose runnable waves have run out
 *   while one is parked in a SYSCALL polls for the restart that long
 *   before it sleeps: a polling engine resumes the wave at once where a
 *   sleeping thread takes a host wake-up (10-20 us here). After a poll
 *   in vain it sleeps at once for a while (megpu_waves_idle_locked).
 *   Off by default: on a host without a CPU to spare (2 cores shared
 *   with other guests, load 6-8) the polling thread took the CPU that
 *   the main loop and the guest's service needed, and the round trips
 *   got slower (traced medians, 1 caller: user-space service 47-112 us
 *   without the poll, 316-493 us with it; ECHO 36-57 us, 53-56 us).
 * - SLEEP parks the wave under the engine lock, and WAVE_RESTART takes
 *   the same lock: a restart can never slip in before the park. With
 *   flag MEGPU_SLEEP_IRQ the wave raises MISC_IRQ_WAVE only once it is
 *   parked, so the CPU's restart cannot race the sleep. SLEEP and
 *   INTERRUPT fault PRIVILEGED unless WAVE_CONTROL.RAW is set: a wave
 *   parked by a SLEEP nobody will restart would hold its engine until
 *   a reset, and an INTERRUPT loop would interrupt a driver that has no
 *   use for it (megpu's driver never sets RAW; SYSCALL does not need it).
 * - SYSCALL follows the seed's steps 2-4 and 7 per active lane: take a
 *   FREE slot of the engine's mailbox (SET_MAILBOX) with a host CAS,
 *   fill it, publish ACTIVE, then park the wave and raise
 *   MISC_IRQ_SYSCALL. When the CPU has set the slots RETURNING and
 *   restarted the wave, the wave copies each RET into its lane's
 *   destination and frees the slot. Lanes that find no FREE slot retry
 *   on the wave's next turns (the seed's software loop), so far fewer
 *   slots than work-items work. Once every runnable wave has retried in
 *   vain, the engine waits for a restart (at most 1 ms, for slots that
 *   other engines free) rather than spin through the mailbox. While a
 *   wave is inside a SYSCALL, a restart is never lost: one that comes
 *   while the wave is briefly runnable is remembered and keeps it from
 *   parking again.
 * - Acquisition priority (seed 003's optional one, MEGPU_SYSCALL_HI):
 *   while a wave of the dispatch waits in a HI SYSCALL for slots, the
 *   other SYSCALLs of the dispatch still collect their results (freeing
 *   slots) but claim none, so every slot the engine frees goes to a HI
 *   waiter. It is per engine and dispatch: other engines and the CPU do
 *   not know it. Without HI calls nothing changes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "megpu-internal.h"
#include "hw/misc/megpu_isa.h"
#include "trace.h"
#ifdef HOST_X86_64
#include "host/cpuinfo.h"
#endif
#include "hw/misc/megpu_hw_wave.h"

/* the execution mask with every lane on */
#define MEGPU_WAVE_ALL_LANES    ((1u << MEGPU_WAVE_LANES) - 1)
/* instructions a wave runs before the next resident wave gets a turn */
#define MEGPU_WAVE_SLICE        256
/* when every wave is parked: how often to look for a reset anyway (ms) */
#define MEGPU_WAVE_PARK_POLL_MS 100
/* a SYSCALL that found no FREE slot and no one else to run: retry after */
#define MEGPU_WAVE_RETRY_MS     1
/* waits that sleep at once after a restart poll that came to nothing */
#define MEGPU_WAVE_SPIN_BACKOFF 8

enum {
    MEGPU_WAVE_FREE,            /* slot unused */
    MEGPU_WAVE_READY,           /* runnable */
    MEGPU_WAVE_PARKED,          /* SLEEP: waits for WAVE_RESTART */
};

/* What a slice of a wave ended with. */
enum {
    MEGPU_RUN_YIELD,            /* slice used up: others' turn */
    MEGPU_RUN_NEXT,             /* (step only) go on */
    MEGPU_RUN_END,
    MEGPU_RUN_PARK,
    MEGPU_RUN_FAULT,
    MEGPU_RUN_SPIN,             /* SYSCALL found no FREE slot: retry */
};

typedef struct MegpuWave {
    uint32_t state;             /* MEGPU_WAVE_*, under the engine lock */
    uint32_t id;                /* MEGPU_WAVE_ID() */
    uint32_t pc;                /* instruction index */
    uint32_t exec;              /* execution mask, bit per lane */
    uint32_t depth;             /* entries in mask_stack */
    uint32_t mask_stack[MEGPU_WAVE_MASK_DEPTH];
    uint64_t insns;             /* instructions run, for the budget */
    uint64_t launch_no;         /* launch order in the dispatch */
    uint64_t group_x, group_y;  /* work-group id */
    uint32_t first;             /* local linear id of lane 0 */
    /* SYSCALL in progress; the two flags under the engine lock */
    bool in_syscall;
    bool restart_pending;       /* restarted while not parked */
    bool sys_hi;                /* the SYSCALL has MEGPU_SYSCALL_HI */
    uint32_t sys_wait;          /* lanes still waiting for a result */
    uint32_t sys_held;          /* lanes holding a mailbox slot */
    uint32_t sys_slot[MEGPU_WAVE_LANES];
    /* the wave's lanes of register 0 in MegpuWaves.reg (wave_reg()) */
    uint64_t *r0;
} MegpuWave;

/* a register's lanes of every slot, side by side: one row of the file */
#define MEGPU_WAVE_ROW          (MEGPU_WAVE_SLOTS * MEGPU_WAVE_LANES)

/* The lanes of register @reg of @w: MEGPU_WAVE_LANES of them. */
static inline uint64_t *wave_reg(const MegpuWave *w, unsigned reg)
{
    return w->r0 + (size_t)reg * MEGPU_WAVE_ROW;
}

/*
 * An instruction as the loader decoded it: fields extracted, operands
 * checked (megpu_isa_check()), the ALU's immediate operand widened, so
 * that the interpreter's loop does none of it per step. One that would
 * fault whatever the wave's state keeps its code in @fault and faults
 * when a wave reaches it, not before.
 */
typedef struct MegpuInsn {
    uint8_t op, dst, s0, s1;
    uint32_t fault;             /* MEGPU_FAULT_*, 0 if it can run */
    uint32_t imm;
    uint64_t b;                 /* binary ALU, src1 == IMM: the operand */
    uint64_t raw;               /* SYSCALL reads its own fields */
    /*
     * An LDARG whose next instruction adds a register to what it loaded,
     * into the same register: a gang runs the pair as one ADD of the
     * argument's value (megpu_wave_fuse()). The instruction itself stays
     * what it is, for a wave that steps alone or a jump to the ADD.
     */
    bool fused;
    uint8_t fused_src;          /* the ADD's other register */
    uint64_t fused_arg;         /* the argument's value */
} MegpuInsn;

/* One program DISPATCH: what the waves share, and the resident waves. */
struct MegpuWaves {
    uint64_t args;              /* GPU address of the user arguments */
    uint64_t prog_addr;
    uint32_t len;
    MegpuInsn *code;            /* decoded at load, host endian */
    uint32_t clear;             /* registers a launch clears, a bit each */
    uint8_t user[MEGPU_PARGS_USER_SIZE];
    uint32_t grid_x, grid_y, group_x, group_y;
    uint64_t groups_x, groups;
    uint32_t waves_per_group;
    uint64_t next_group;        /* next wave to launch: group, */
    uint32_t next_wave;         /* and wave within it */
    uint64_t launched;
    unsigned turn;              /* round-robin position */
    /*
     * Not cleared when a dispatch starts (a task queue's tasks start one
     * each): a wave's header and the registers it may read first are
     * cleared at its launch, the scratch is written before it is read.
     */
    MegpuWave wave[MEGPU_WAVE_SLOTS];
    /*
     * The register file, a register's lanes of all slots in one row
     * (slot by slot): a gang of waves in consecutive slots holds a
     * register as one run of lanes, so its instructions are one loop
     * over them all (megpu_gang_flat()) instead of one per wave.
     */
    uint64_t reg[MEGPU_WAVE_REGS][MEGPU_WAVE_ROW];
    /*
     * Registers the flat gang running now knows to hold a line: lane l
     * of its run holds line_base + l * line_step (megpu_line_set()).
     * Valid within one gang slice only: zero at its start.
     */
    uint32_t line_known;
    uint64_t line_base[MEGPU_WAVE_REGS], line_step[MEGPU_WAVE_REGS];
    /* a gang's load or store (megpu_gang_ldst), not on the stack */
    uint64_t gang_addr[MEGPU_WAVE_SLOTS * MEGPU_WAVE_LANES];
    uint16_t gang_at[MEGPU_WAVE_SLOTS * MEGPU_WAVE_LANES]; /* wave, lane */
    uint8_t gang_buf[MEGPU_WAVE_SLOTS * MEGPU_WAVE_LANES * 8];
};

/*
 * Lane blocks @o of @n lanes (a multiple of MEGPU_WAVE_LANES: a wave's
 * or a flat gang's), for a loop over the block's lanes inside: GCC's
 * vectoriser at -O2 (its "very cheap" cost model) takes only loops that
 * need no scalar remainder, which one of a constant 16 lanes is and one
 * of a variable count is not (it ran a lane at a time).
 */
#define FOR_LANE_BLOCKS(n, o) \
    for (unsigned o = 0; o < (n); o += MEGPU_WAVE_LANES)

#define FOR_EACH_LANE(w, l) \
    for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) \
        if ((w)->exec & (1u << l))

static uint64_t megpu_insn_addr(MegpuWaves *W, MegpuWave *w)
{
    return W->prog_addr + (uint64_t)w->pc * 8;
}

/* A fault of the wave's current instruction, about the instruction. */
static int megpu_wave_fault(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                            uint32_t code)
{
    megpu_fault(x, code, megpu_insn_addr(W, w), false);
    return MEGPU_RUN_FAULT;
}

/* ---- launching waves ---- */

/* Lanes of the next wave that hold a work-item of the grid. */
/* Fill free slots with the next waves of the grid. */
static void megpu_waves_launch_locked(MegpuEngine *e, MegpuWaves *W)
{
    bool all_free = true;

    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        all_free &= W->wave[slot].state == MEGPU_WAVE_FREE;
    }
    if (all_free) {
        /* every slot launches (the usual case): whole rows at once */
        for (uint32_t c = W->clear; c; c &= c - 1) {
            memset(W->reg[ctz32(c)], 0, sizeof(W->reg[0]));
        }
    }
    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        MegpuWave *w = &W->wave[slot];
        uint32_t mask = 0;

        if (w->state != MEGPU_WAVE_FREE) {
            continue;
        }
        /* waves with no work-item in the grid are never launched */
        while (!mask && W->next_group < W->groups) {
            /* a 1-D grid of groups (the usual case): no division */
            bool one_row = W->next_group < W->groups_x;
            uint64_t gx = one_row ? W->next_group :
                          W->next_group % W->groups_x;
            uint64_t gy = one_row ? 0 : W->next_group / W->groups_x;
            uint32_t first = W->next_wave * MEGPU_WAVE_LANES;

            mask = megpu_isa_wave_lanes(W->grid_x, W->grid_y, W->group_x,
                                        W->group_y, gx, gy, first);
            if (mask) {
                /*
                 * The header's scalars, field by field (a memset of the
                 * whole header was a rep stos, a sixth of a short
                 * program's time). The IF mask stack and the mailbox
                 * slots are written before they are read: depth and
                 * sys_held say which entries hold anything.
                 */
                w->pc = 0;
                w->depth = 0;
                w->insns = 0;
                w->in_syscall = false;
                w->restart_pending = false;
                w->sys_hi = false;
                w->sys_wait = 0;
                w->sys_held = 0;
                /* only those a lane may read first (megpu_wave_clears()) */
                for (uint32_t c = all_free ? 0 : W->clear; c; c &= c - 1) {
                    memset(wave_reg(w, ctz32(c)), 0,
                           MEGPU_WAVE_LANES * sizeof(uint64_t));
                }
                w->group_x = gx;
                w->group_y = gy;
                w->first = first;
                w->exec = mask;
            }
            if (++W->next_wave == W->waves_per_group) {
                W->next_wave = 0;
                W->next_group++;
            }
        }
        if (!mask) {
            return;             /* the grid is used up */
        }
        w->id = MEGPU_WAVE_ID(e->idx, slot, e->wave_seq);
        w->launch_no = W->launched;
        e->wave_seq = (e->wave_seq + 1) & 0xfffff;
        w->state = MEGPU_WAVE_READY;
        e->waves_live++;
        W->launched++;
    }
}

/* ---- instructions ---- */

/* What the wave's special registers read (megpu_isa_sreg()). */
static struct megpu_isa_wave megpu_wave_pos(MegpuWaves *W, MegpuWave *w)
{
    return (struct megpu_isa_wave) {
        .grid_x = W->grid_x, .grid_y = W->grid_y,
        .group_x = W->group_x, .group_y = W->group_y,
        .group_id_x = w->group_x, .group_id_y = w->group_y,
        .first = w->first, .wave_id = w->id, .args = W->args,
        .exec = w->exec,
    };
}

/*
 * LD/ST of 4 or 8 bytes per active lane. Runs of lanes with consecutive
 * addresses become one access; lanes are done in order, so of two lanes
 * storing to the same address the higher one wins.
 */
static int megpu_wave_ldst(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                           uint32_t op, uint32_t dst, uint32_t base,
                           uint32_t src, uint32_t imm)
{
    unsigned size = (op == MEGPU_OP_LD64 || op == MEGPU_OP_ST64) ? 8 : 4;
    bool write = op == MEGPU_OP_ST32 || op == MEGPU_OP_ST64;
    uint64_t addr[MEGPU_WAVE_LANES];
    uint8_t buf[MEGPU_WAVE_LANES * 8];

    FOR_EACH_LANE(w, l) {
        addr[l] = wave_reg(w, base)[l] + megpu_isa_sext(imm);
        if (addr[l] & (size - 1)) {
            megpu_fault(x, MEGPU_FAULT_MISALIGNED, addr[l], write);
            return MEGPU_RUN_FAULT;
        }
    }
    for (unsigned l = 0; l < MEGPU_WAVE_LANES; ) {
        unsigned n = 0;

        if (!(w->exec & (1u << l))) {
            l++;
            continue;
        }
        /* the run of lanes l .. l + n - 1 */
        do {
            if (write) {
                if (size == 8) {
                    stq_le_p(buf + n * 8, wave_reg(w, src)[l + n]);
                } else {
                    stl_le_p(buf + n * 4, wave_reg(w, src)[l + n]);
                }
            }
            n++;
        } while (l + n < MEGPU_WAVE_LANES && (w->exec & (1u << (l + n))) &&
                 addr[l + n] == addr[l] + n * size);
        if (!megpu_mem_rw(x, addr[l], buf, n * size, write)) {
            return MEGPU_RUN_FAULT;
        }
        for (unsigned i = 0; !write && i < n; i++) {
            /* LD32 zero-extends: ldl_le_p() is an int */
            wave_reg(w, dst)[l + i] = size == 8 ? ldq_le_p(buf + i * 8) :
                               (uint32_t)ldl_le_p(buf + i * 4);
        }
        l += n;
    }
    if (write) {
        megpu_wake_waiters(x->e->s);
    }
    return MEGPU_RUN_NEXT;
}

/*
 * The negative control of the atomics (property x-wave-nonatomic): the
 * same operations as a plain read, a yield, and a write, so concurrent
 * updates get lost and a test can show that it would notice.
 */
static bool megpu_wave_rmw32(MegpuExec *x, MegpuMap *m, uint32_t op,
                             uint32_t val, uint32_t *io)
{
    uint32_t *p = m->host, old = le32_to_cpu(qatomic_read(p)), new = val;

    if (op == MEGPU_OP_ATOMADD32) {
        new = old + val;
    } else if (op == MEGPU_OP_ATOMCAS32 && old != *io) {
        new = old;
    }
    g_thread_yield();
    qatomic_set(p, cpu_to_le32(new));
    megpu_mem_unmap(x, m);
    *io = old;
    return true;
}

/* One 32-bit atomic on guest RAM; *io: CAS compare value in, old out. */
static bool megpu_wave_atomic32(MegpuExec *x, uint32_t op, uint64_t addr,
                                uint32_t val, uint32_t *io)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(x, addr, 4, true, &m);
    uint32_t old;

    if (!p) {
        return false;
    }
    /* not posted: queued writes to the word land first */
    megpu_wq_order(x->e->s, m.pa, 4);
    if (x->e->s->wave_nonatomic) {
        return megpu_wave_rmw32(x, &m, op, val, io);
    }
    switch (op) {
    case MEGPU_OP_ATOMADD32:
        old = cpu_to_le32(megpu_le32_add(p, val) - val);
        break;
    case MEGPU_OP_ATOMCAS32:
        old = qatomic_cmpxchg(p, cpu_to_le32(*io), cpu_to_le32(val));
        break;
    case MEGPU_OP_ATOMXCHG32:
        old = qatomic_xchg(p, cpu_to_le32(val));
        break;
    default:
        g_assert_not_reached();
    }
    megpu_mem_unmap(x, &m);
    *io = le32_to_cpu(old);
    return true;
}

/*
 * The atomics of a wave, lane by lane in order. Consecutive lanes that
 * add to the same word (a reduction, as CHECKSUM does) become one add
 * of their sum, and each lane gets the value its own add would have
 * seen with the lanes before it done just before (issue 25: one host
 * atomic per wave instead of sixteen). Not in the negative control
 * (x-wave-nonatomic), whose lanes must be able to lose updates.
 */
static int megpu_wave_atomic(MegpuExec *x, MegpuWave *w, uint32_t op,
                             uint32_t dst, uint32_t base, uint32_t src,
                             uint32_t imm)
{
    bool fold = op == MEGPU_OP_ATOMADD32 && !x->e->s->wave_nonatomic;

    for (unsigned l = 0; l < MEGPU_WAVE_LANES; ) {
        uint64_t addr = wave_reg(w, base)[l] + megpu_isa_sext(imm);
        uint32_t io = wave_reg(w, dst)[l], sum;
        unsigned k = l + 1;

        if (!(w->exec & (1u << l))) {
            l++;
            continue;
        }
        if (addr & 3) {
            megpu_fault(x, MEGPU_FAULT_MISALIGNED, addr, true);
            return MEGPU_RUN_FAULT;
        }
        sum = wave_reg(w, src)[l];
        while (fold && k < MEGPU_WAVE_LANES && (w->exec & (1u << k)) &&
               wave_reg(w, base)[k] + megpu_isa_sext(imm) == addr) {
            sum += wave_reg(w, src)[k++];
        }
        if (!megpu_wave_atomic32(x, op, addr, sum, &io)) {
            return MEGPU_RUN_FAULT;
        }
        for (; l < k; l++) {
            /* the lane's operand before its destination (src == dst) */
            uint32_t v = wave_reg(w, src)[l];

            wave_reg(w, dst)[l] = io;
            io += v;
        }
    }
    megpu_wake_waiters(x->e->s);
    return MEGPU_RUN_NEXT;
}

static int megpu_wave_jump(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                           uint32_t target)
{
    if (target >= W->len) {
        return megpu_wave_fault(x, W, w, MEGPU_FAULT_PC_RANGE);
    }
    w->pc = target;
    return MEGPU_RUN_NEXT;
}

/* ---- SYSCALL (seed 003) ---- */

/* Mailbox slot @slot of the engine, mapped for atomics; NULL: faulted. */
static uint32_t *megpu_mbox_map(MegpuExec *x, uint32_t slot)
{
    hwaddr pa = x->e->mbox_base + (uint64_t)slot * MEGPU_MBOX_SLOT_SIZE;
    uint32_t *p = megpu_ram_map(x->e->s, pa, MEGPU_MBOX_SLOT_SIZE, true,
                                NULL);

    if (!p) {
        megpu_fault(x, MEGPU_FAULT_BUS, pa, true);
    }
    return p;
}

static void megpu_mbox_unmap(MegpuExec *x, uint32_t *p)
{
    megpu_ram_unmap(x->e->s, p, MEGPU_MBOX_SLOT_SIZE, true);
}

/*
 * Lanes whose slot is RETURNING: take RET, free the slot. A held slot is
 * ACTIVE (not answered yet) or RETURNING, with the wave as its caller:
 * anything else (set FREE under the wave, taken by another caller,
 * garbage) faults MBOX_SLOT, rather than wait for an answer that will
 * never come or take another's.
 */
static bool megpu_syscall_collect(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                                  uint32_t dst)
{
    for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
        uint32_t *p, state, caller;

        if (!(w->sys_held & (1u << l))) {
            continue;
        }
        p = megpu_mbox_map(x, w->sys_slot[l]);
        if (!p) {
            return false;
        }
        /* acquire: RET was written before RETURNING */
        state = le32_to_cpu(qatomic_load_acquire(&p[MEGPU_MBOX_STATE / 4]));
        caller = le32_to_cpu(qatomic_read(&p[MEGPU_MBOX_CALLER / 4]));
        if (caller != w->id || (state != MEGPU_MBOX_ACTIVE &&
                                state != MEGPU_MBOX_RETURNING)) {
            megpu_mbox_unmap(x, p);
            qemu_log_mask(LOG_GUEST_ERROR, "megpu: wave 0x%x: mailbox slot "
                          "%u is %u, caller 0x%x\n", w->id, w->sys_slot[l],
                          state, caller);
            megpu_wave_fault(x, W, w, MEGPU_FAULT_MBOX_SLOT);
            return false;
        }
        if (state == MEGPU_MBOX_RETURNING) {
            wave_reg(w, dst)[l] = ldq_le_p((uint8_t *)p + MEGPU_MBOX_RET);
            trace_megpu_wave_syscall_return(x->e->idx, w->id, l,
                                            w->sys_slot[l],
                                            wave_reg(w, dst)[l]);
            qatomic_store_release(&p[MEGPU_MBOX_STATE / 4],
                                  cpu_to_le32(MEGPU_MBOX_FREE));
            w->sys_held &= ~(1u << l);
            w->sys_wait &= ~(1u << l);
        }
        megpu_mbox_unmap(x, p);
    }
    return true;
}

/*
 * FREE -> FILLING with a compare-and-swap, so that of the lanes (of any
 * engine, or the CPU) racing for a slot exactly one gets it. Under
 * x-wave-nonatomic a plain read, a yield and a write instead: two
 * callers can take the same slot, which the tests must notice.
 */
static bool megpu_mbox_take(MegpuExec *x, uint32_t *state)
{
    if (x->e->s->wave_nonatomic) {
        if (qatomic_read(state) != cpu_to_le32(MEGPU_MBOX_FREE)) {
            return false;
        }
        g_thread_yield();
        qatomic_set(state, cpu_to_le32(MEGPU_MBOX_FILLING));
        return true;
    }
    return qatomic_cmpxchg(state, cpu_to_le32(MEGPU_MBOX_FREE),
                           cpu_to_le32(MEGPU_MBOX_FILLING)) ==
           cpu_to_le32(MEGPU_MBOX_FREE);
}

/* Is @id a wave of this device that lives (it may hold slots)? */
static bool megpu_wave_live(MegpuState *s, uint32_t id)
{
    unsigned n = MEGPU_WAVE_ID_ENGINE(id), slot = MEGPU_WAVE_ID_SLOT(id);
    MegpuEngine *e;
    bool live;

    if (n >= s->num_engines || slot >= MEGPU_WAVE_SLOTS) {
        return false;
    }
    e = &s->engines[n];
    qemu_mutex_lock(&e->lock);
    live = e->waves && e->waves->wave[slot].state != MEGPU_WAVE_FREE &&
           e->waves->wave[slot].id == id;
    qemu_mutex_unlock(&e->lock);
    return live;
}

/*
 * A RETURNING slot whose caller is no live wave: nobody will ever
 * collect it (an answer for a wave that is gone, or a CPU's bad write),
 * so a SYSCALL takes it back (RETURNING -> FILLING, a compare-and-swap)
 * rather than let the mailbox shrink for good, and counts it. The caller
 * is read after the state and again after the swap: if the slot went
 * round (collected, claimed, answered) meanwhile, it is a live wave's
 * answer and goes back to RETURNING (nobody else writes a FILLING slot).
 */
static bool megpu_mbox_reclaim(MegpuExec *x, uint32_t *p)
{
    uint32_t *state = &p[MEGPU_MBOX_STATE / 4];
    uint32_t *callerp = &p[MEGPU_MBOX_CALLER / 4];
    uint32_t caller;

    if (qatomic_load_acquire(state) != cpu_to_le32(MEGPU_MBOX_RETURNING)) {
        return false;
    }
    caller = le32_to_cpu(qatomic_read(callerp));
    if (megpu_wave_live(x->e->s, caller) ||
        qatomic_cmpxchg(state, cpu_to_le32(MEGPU_MBOX_RETURNING),
                        cpu_to_le32(MEGPU_MBOX_FILLING)) !=
        cpu_to_le32(MEGPU_MBOX_RETURNING)) {
        return false;
    }
    if (le32_to_cpu(qatomic_read(callerp)) != caller) {
        qatomic_store_release(state, cpu_to_le32(MEGPU_MBOX_RETURNING));
        return false;
    }
    qatomic_inc(&x->e->s->syscall_strays);
    qemu_log_mask(LOG_GUEST_ERROR, "megpu: stray RETURNING mailbox slot "
                  "of caller 0x%x taken back\n", caller);
    return true;
}

/*
 * Does a wave of @W other than @self wait in a MEGPU_SYSCALL_HI SYSCALL
 * for a slot (lanes without one), parked or not? The sys_* fields are
 * the engine thread's own; a WAVE_RESTART (main loop) changes a wave's
 * state, under the engine lock (TSan).
 */
static bool megpu_syscall_hi_waiting(MegpuEngine *e, MegpuWaves *W,
                                     MegpuWave *self)
{
    bool waiting = false;

    qemu_mutex_lock(&e->lock);
    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS && !waiting; slot++) {
        MegpuWave *o = &W->wave[slot];

        waiting = o != self && o->state != MEGPU_WAVE_FREE &&
                  o->in_syscall && o->sys_hi &&
                  (o->sys_wait & ~o->sys_held);
    }
    qemu_mutex_unlock(&e->lock);
    return waiting;
}

/* Lanes without a slot: claim FREE ones, fill and publish them. */
static bool megpu_syscall_claim(MegpuExec *x, MegpuWave *w, uint64_t insn,
                                uint32_t *published)
{
    uint32_t need = w->sys_wait & ~w->sys_held;
    uint32_t src[3] = {
        MEGPU_INSN_SRC0(insn), MEGPU_INSN_SRC1(insn),
        MEGPU_INSN_SYSCALL_SRC2(insn),
    };

    for (uint32_t slot = 0; need && slot < x->e->mbox_slots; slot++) {
        unsigned l = ctz32(need);
        uint32_t *p = megpu_mbox_map(x, slot);

        if (!p) {
            return false;
        }
        if (megpu_mbox_take(x, &p[MEGPU_MBOX_STATE / 4]) ||
            megpu_mbox_reclaim(x, p)) {
            qatomic_set(&p[MEGPU_MBOX_OP / 4],
                        cpu_to_le32(MEGPU_INSN_SYSCALL_N(insn)));
            for (unsigned i = 0; i < 3; i++) {
                qatomic_set(&p[MEGPU_MBOX_ARG(i) / 4],
                            cpu_to_le32(wave_reg(w, src[i])[l]));
            }
            qatomic_set(&p[MEGPU_MBOX_CALLER / 4], cpu_to_le32(w->id));
            /* release: the CPU sees the fields once it sees ACTIVE */
            qatomic_store_release(&p[MEGPU_MBOX_STATE / 4],
                                  cpu_to_le32(MEGPU_MBOX_ACTIVE));
            trace_megpu_wave_syscall(x->e->idx, w->id, l, slot,
                                     MEGPU_INSN_SYSCALL_N(insn));
            w->sys_slot[l] = slot;
            w->sys_held |= 1u << l;
            need &= ~(1u << l);
            (*published)++;
        }
        megpu_mbox_unmap(x, p);
    }
    return true;
}

/*
 * Park @w under the engine lock, unless a restart came while it ran
 * (only possible inside a SYSCALL): then it stays runnable.
 */
static bool megpu_wave_park(MegpuEngine *e, MegpuWave *w)
{
    bool park;

    qemu_mutex_lock(&e->lock);
    park = !w->restart_pending;
    w->restart_pending = false;
    if (park) {
        w->state = MEGPU_WAVE_PARKED;
        e->waves_parked++;
    }
    qemu_mutex_unlock(&e->lock);
    return park;
}

/*
 * SYSCALL dst, N, s0, s1, s2. Runs again (the PC stays) each time the
 * wave gets a turn until every active lane has its result.
 */
static int megpu_wave_syscall(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                              uint64_t insn)
{
    MegpuEngine *e = x->e;
    uint32_t published = 0;

    if (!e->mbox_slots) {
        return megpu_wave_fault(x, W, w, MEGPU_FAULT_NO_MAILBOX);
    }
    if (!w->in_syscall) {
        /*
         * A release, like FLUSH: what the wave wrote before the call is
         * in memory when the CPU serves it (relaxed mode posts writes).
         */
        if (!megpu_wq_engine_flush(x)) {
            return MEGPU_RUN_FAULT;
        }
        qemu_mutex_lock(&e->lock);
        w->in_syscall = true;
        w->restart_pending = false;
        qemu_mutex_unlock(&e->lock);
        w->sys_wait = w->exec;
        w->sys_held = 0;
        w->sys_hi = MEGPU_INSN_SYSCALL_IS_HI(insn);
    }
    if (!megpu_syscall_collect(x, W, w, MEGPU_INSN_DST(insn))) {
        return MEGPU_RUN_FAULT;
    }
    /* acquisition priority: normal calls wait while a HI call waits */
    if ((w->sys_hi || !megpu_syscall_hi_waiting(e, W, w)) &&
        !megpu_syscall_claim(x, w, insn, &published)) {
        return MEGPU_RUN_FAULT;
    }
    if (published) {
        qatomic_add(&e->s->syscalls, published);
    }
    if (!w->sys_wait) {
        /* a restart that came meanwhile was for this call: forget it */
        qemu_mutex_lock(&e->lock);
        w->in_syscall = false;
        w->restart_pending = false;
        qemu_mutex_unlock(&e->lock);
        w->pc++;
        return MEGPU_RUN_NEXT;
    }
    if (!w->sys_held) {
        /* every slot is busy (or priority): try again later */
        qatomic_inc(&e->s->syscall_retries);
        return MEGPU_RUN_SPIN;
    }
    /* results come with a restart; the interrupt only after the park */
    if (megpu_wave_park(e, w)) {
        trace_megpu_wave_park(e->idx, w->id, w->pc);
    }
    if (published) {
        megpu_misc_irq(e->s, MEGPU_MISC_IRQ_SYSCALL);
    }
    return MEGPU_RUN_PARK;
}

/* SLEEP: park under the engine lock, so WAVE_RESTART sees it parked. */
static int megpu_wave_sleep(MegpuExec *x, MegpuWave *w, uint32_t flags)
{
    MegpuEngine *e = x->e;

    w->pc++;
    megpu_wave_park(e, w);
    trace_megpu_wave_park(e->idx, w->id, w->pc - 1);
    if (flags & MEGPU_SLEEP_IRQ) {
        megpu_misc_irq(e->s, MEGPU_MISC_IRQ_WAVE);
        qatomic_inc(&e->s->wave_interrupts);
        trace_megpu_wave_interrupt(e->idx, w->id);
    }
    return MEGPU_RUN_PARK;
}

/* clang (the TSan and fuzzing builds) has no ivdep: it just ignores it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/*
 * A binary ALU instruction over the lanes: the wave's (@lanes is
 * MEGPU_WAVE_LANES) or a flat gang's from @w on (@lanes of them, every
 * one on). Inlined with a constant @op at
 * each call, so the ISA's switch folds away and each loop is straight
 * code; inactive lanes keep their value (a select, no branch per lane).
 * No local array for the immediate: QEMU builds with
 * -ftrivial-auto-var-init=zero, which would clear it on every call.
 */
static inline QEMU_ALWAYS_INLINE void
megpu_binop_lanes(uint32_t op, MegpuWave *w, const MegpuInsn *d,
                  unsigned lanes)
{
    const uint64_t *a = wave_reg(w, d->s0);
    const uint64_t *b = d->s1 == MEGPU_ISA_IMM ? NULL : wave_reg(w, d->s1);
    uint64_t *r = wave_reg(w, d->dst);
    uint32_t exec = w->exec;

    /*
     * Every lane on (the usual case): no select, and loops the compiler
     * may vectorise; registers are whole rows, so r aliases a or b
     * lane for lane only (ivdep).
     */
    if (exec == MEGPU_WAVE_ALL_LANES) {
        uint64_t bv = d->b;

        FOR_LANE_BLOCKS(lanes, o) {
            const uint64_t *ao = a + o, *bo = b ? b + o : NULL;
            uint64_t *ro = r + o;

            if (bo) {
#pragma GCC ivdep
                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    ro[l] = megpu_isa_is_falu(op) ?
                            megpu_isa_falu(op, ao[l], bo[l]) :
                            megpu_isa_alu(op, ao[l], bo[l]);
                }
            } else {
#pragma GCC ivdep
                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    ro[l] = megpu_isa_is_falu(op) ?
                            megpu_isa_falu(op, ao[l], bv) :
                            megpu_isa_alu(op, ao[l], bv);
                }
            }
        }
        return;
    }
    for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
        uint64_t bv = b ? b[l] : d->b;
        uint64_t v = megpu_isa_is_falu(op) ? megpu_isa_falu(op, a[l], bv) :
                                             megpu_isa_alu(op, a[l], bv);

        r[l] = (exec >> l) & 1 ? v : r[l];
    }
}

#pragma GCC diagnostic pop

/*
 * megpu_binop_lanes() for a gang, @op still a constant: over its @flat
 * lanes at once if it is flat (megpu_gang_flat()), else wave by wave.
 */
static inline QEMU_ALWAYS_INLINE void
megpu_binop_gang(uint32_t op, MegpuWave **g, unsigned n, unsigned flat,
                 const MegpuInsn *d)
{
    if (flat) {
        megpu_binop_lanes(op, g[0], d, flat);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        megpu_binop_lanes(op, g[i], d, MEGPU_WAVE_LANES);
    }
}

/*
 * A binary ALU op for the waves @g[0 .. @n): one dispatch on the opcode,
 * then the lanes of every wave (issue 25: a gang of 16 waves paid 16
 * switches per instruction). False for an opcode that is no binary ALU
 * op (none gets here).
 */
static inline QEMU_ALWAYS_INLINE bool
megpu_wave_binop(MegpuWave **g, unsigned n, unsigned flat, const MegpuInsn *d)
{
    switch (d->op) {
    case MEGPU_OP_ADD:
        megpu_binop_gang(MEGPU_OP_ADD, g, n, flat, d);
        break;
    case MEGPU_OP_SUB:
        megpu_binop_gang(MEGPU_OP_SUB, g, n, flat, d);
        break;
    case MEGPU_OP_MUL:
        megpu_binop_gang(MEGPU_OP_MUL, g, n, flat, d);
        break;
    case MEGPU_OP_AND:
        megpu_binop_gang(MEGPU_OP_AND, g, n, flat, d);
        break;
    case MEGPU_OP_OR:
        megpu_binop_gang(MEGPU_OP_OR, g, n, flat, d);
        break;
    case MEGPU_OP_XOR:
        megpu_binop_gang(MEGPU_OP_XOR, g, n, flat, d);
        break;
    case MEGPU_OP_SHL:
        megpu_binop_gang(MEGPU_OP_SHL, g, n, flat, d);
        break;
    case MEGPU_OP_SHR:
        megpu_binop_gang(MEGPU_OP_SHR, g, n, flat, d);
        break;
    case MEGPU_OP_SAR:
        megpu_binop_gang(MEGPU_OP_SAR, g, n, flat, d);
        break;
    case MEGPU_OP_MIN:
        megpu_binop_gang(MEGPU_OP_MIN, g, n, flat, d);
        break;
    case MEGPU_OP_MAX:
        megpu_binop_gang(MEGPU_OP_MAX, g, n, flat, d);
        break;
    case MEGPU_OP_MINU:
        megpu_binop_gang(MEGPU_OP_MINU, g, n, flat, d);
        break;
    case MEGPU_OP_MAXU:
        megpu_binop_gang(MEGPU_OP_MAXU, g, n, flat, d);
        break;
    case MEGPU_OP_CMPEQ:
        megpu_binop_gang(MEGPU_OP_CMPEQ, g, n, flat, d);
        break;
    case MEGPU_OP_CMPNE:
        megpu_binop_gang(MEGPU_OP_CMPNE, g, n, flat, d);
        break;
    case MEGPU_OP_CMPLT:
        megpu_binop_gang(MEGPU_OP_CMPLT, g, n, flat, d);
        break;
    case MEGPU_OP_CMPLE:
        megpu_binop_gang(MEGPU_OP_CMPLE, g, n, flat, d);
        break;
    case MEGPU_OP_CMPLTU:
        megpu_binop_gang(MEGPU_OP_CMPLTU, g, n, flat, d);
        break;
    case MEGPU_OP_CMPLEU:
        megpu_binop_gang(MEGPU_OP_CMPLEU, g, n, flat, d);
        break;
    case MEGPU_OP_FADD:
        megpu_binop_gang(MEGPU_OP_FADD, g, n, flat, d);
        break;
    case MEGPU_OP_FSUB:
        megpu_binop_gang(MEGPU_OP_FSUB, g, n, flat, d);
        break;
    case MEGPU_OP_FMUL:
        megpu_binop_gang(MEGPU_OP_FMUL, g, n, flat, d);
        break;
    case MEGPU_OP_FMIN:
        megpu_binop_gang(MEGPU_OP_FMIN, g, n, flat, d);
        break;
    case MEGPU_OP_FMAX:
        megpu_binop_gang(MEGPU_OP_FMAX, g, n, flat, d);
        break;
    case MEGPU_OP_FCMPEQ:
        megpu_binop_gang(MEGPU_OP_FCMPEQ, g, n, flat, d);
        break;
    case MEGPU_OP_FCMPLT:
        megpu_binop_gang(MEGPU_OP_FCMPLT, g, n, flat, d);
        break;
    case MEGPU_OP_FCMPLE:
        megpu_binop_gang(MEGPU_OP_FCMPLE, g, n, flat, d);
        break;
    default:
        return false;
    }
    return true;
}

/*
 * Lines: what a flat gang knows about a register's lanes without
 * looking at them. A row load or store looks at every lane's address to
 * see that they are one run (issue 25: with a program's three rows, a
 * sixth of its time in the interpreter); an address register that is
 * known to be a line of the access's size needs no look. A flat gang's
 * step records a line for what it writes from lines and constants (S2R
 * of a position along a row, LI, LDARG, MOV, ADD, SUB, SHL and MUL,
 * each 64-bit wrapping, which a line stays under) and forgets any other
 * register it writes. Nothing else may keep a line: a gang slice starts
 * with none, and forgets them all when the gang stops being flat or a
 * step goes wave by wave.
 */
static inline QEMU_ALWAYS_INLINE void
megpu_line_set(MegpuWaves *W, unsigned r, uint64_t base, uint64_t step)
{
    W->line_known |= 1u << r;
    W->line_base[r] = base;
    W->line_step[r] = step;
}

static inline QEMU_ALWAYS_INLINE void
megpu_line_forget(MegpuWaves *W, unsigned r)
{
    W->line_known &= ~(1u << r);
}

static inline QEMU_ALWAYS_INLINE bool
megpu_line_get(const MegpuWaves *W, unsigned r, uint64_t *base, uint64_t *step)
{
    if (!(W->line_known & (1u << r))) {
        return false;
    }
    *base = W->line_base[r];
    *step = W->line_step[r];
    return true;
}

/*
 * After a flat gang's binary ALU op @op into @dst of @s0 and @s1 (or,
 * @s1 MEGPU_ISA_IMM, of @b): a fused LDARG + ADD is an ADD of @b.
 */
static inline QEMU_ALWAYS_INLINE void
megpu_line_binop(MegpuWaves *W, uint32_t op, unsigned dst, unsigned s0,
                 unsigned s1, uint64_t b)
{
    uint64_t ab, as, bb = b, bs = 0;

    if (!megpu_line_get(W, s0, &ab, &as) ||
        (s1 != MEGPU_ISA_IMM && !megpu_line_get(W, s1, &bb, &bs))) {
        megpu_line_forget(W, dst);
        return;
    }
    switch (op) {
    case MEGPU_OP_ADD:
        megpu_line_set(W, dst, ab + bb, as + bs);
        return;
    case MEGPU_OP_SUB:
        megpu_line_set(W, dst, ab - bb, as - bs);
        return;
    case MEGPU_OP_SHL:
        if (!bs) {
            megpu_line_set(W, dst, ab << (bb & 63), as << (bb & 63));
            return;
        }
        break;
    case MEGPU_OP_MUL:
        if (!bs) {
            megpu_line_set(W, dst, ab * bb, as * bb);
            return;
        }
        if (!as) {
            megpu_line_set(W, dst, ab * bb, ab * bs);
            return;
        }
        break;
    }
    megpu_line_forget(W, dst);
}

/*
 * Is the gang @g[0 .. @n) flat: waves in consecutive slots (in launch
 * order, as slots refill when a gang ends together) with every lane on?
 * Then each register of the gang is one run of lanes from
 * wave_reg(g[0], reg) on, and this returns their number; else 0.
 */
static inline unsigned megpu_gang_flat(MegpuWave **g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (g[i]->exec != MEGPU_WAVE_ALL_LANES ||
            g[i]->r0 != g[0]->r0 + i * MEGPU_WAVE_LANES) {
            return 0;
        }
    }
    return n * MEGPU_WAVE_LANES;
}

/*
 * The instructions that only compute registers and go on (no memory, no
 * control flow, no fault once decoded), for the waves @g[0 .. @n) with
 * one dispatch: a gang runs them as one step, over all its lanes at
 * once if it is flat (@flat lanes, megpu_gang_flat()). The caller
 * advances the PCs. False for any other instruction.
 */
static inline QEMU_ALWAYS_INLINE bool
megpu_gang_plain(MegpuWaves *W, MegpuWave **g, unsigned n, unsigned flat,
                 const MegpuInsn *d)
{
    uint32_t op = d->op, dst = d->dst, s0 = d->s0, imm = d->imm;

    switch (op) {
    case MEGPU_OP_NOP:
        return true;
    case MEGPU_OP_MOV:
        if (flat) {
            uint64_t *r = wave_reg(g[0], dst);
            const uint64_t *a = wave_reg(g[0], s0);
            uint64_t lb, ls;

            if (megpu_line_get(W, s0, &lb, &ls)) {
                megpu_line_set(W, dst, lb, ls);
            } else {
                megpu_line_forget(W, dst);
            }

            FOR_LANE_BLOCKS(flat, o) {
                uint64_t *ro = r + o;
                const uint64_t *ao = a + o;

                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    ro[l] = ao[l];
                }
            }
            return true;
        }
        for (unsigned i = 0; i < n; i++) {
            FOR_EACH_LANE(g[i], l) {
                wave_reg(g[i], dst)[l] = wave_reg(g[i], s0)[l];
            }
        }
        return true;
    case MEGPU_OP_LI:
    case MEGPU_OP_LIH:
        if (flat) {
            uint64_t *r = wave_reg(g[0], dst);

            if (op == MEGPU_OP_LI) {
                megpu_line_set(W, dst, megpu_isa_sext(imm), 0);
            } else {
                megpu_line_forget(W, dst);
            }

            FOR_LANE_BLOCKS(flat, o) {
                uint64_t *ro = r + o;

                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    ro[l] = op == MEGPU_OP_LI ? megpu_isa_sext(imm) :
                            (uint64_t)imm << 32 | (uint32_t)ro[l];
                }
            }
            return true;
        }
        for (unsigned i = 0; i < n; i++) {
            FOR_EACH_LANE(g[i], l) {
                uint64_t *r = wave_reg(g[i], dst);

                r[l] = op == MEGPU_OP_LI ? megpu_isa_sext(imm) :
                       (uint64_t)imm << 32 | (uint32_t)r[l];
            }
        }
        return true;
    case MEGPU_OP_S2R: {
        /* only S2R pays for clearing it (auto-var-init) */
        struct megpu_isa_wave pos = megpu_wave_pos(W, g[0]);
        /* a line over the gang: every wave along a row, each on */
        uint64_t base = 0, slope = 0;
        bool line = flat;

        for (unsigned i = 0; i < n; i++) {
            uint64_t *r = wave_reg(g[i], dst), v0, step;

            /* the dispatch's fields stay, the wave's own change */
            pos.group_id_x = g[i]->group_x;
            pos.group_id_y = g[i]->group_y;
            pos.first = g[i]->first;
            pos.wave_id = g[i]->id;
            pos.exec = g[i]->exec;
            if (!megpu_isa_sreg_row(&pos, imm, &v0, &step)) {
                megpu_isa_sreg_lanes(&pos, imm, r);
                line = false;
                continue;
            }
            if (!i) {
                base = v0;
                slope = step;
            }
            line &= v0 == base + (uint64_t)i * MEGPU_WAVE_LANES * slope;
            /* along a row (the usual case): here, with the gang's SIMD */
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                r[l] = v0 + step * l;
            }
        }
        if (line) {
            megpu_line_set(W, dst, base, slope);
        } else {
            megpu_line_forget(W, dst);
        }
        return true;
    }
    case MEGPU_OP_LDARG:
    case MEGPU_OP_LDARG32: {
        uint64_t v = op == MEGPU_OP_LDARG ? ldq_le_p(W->user + imm) :
                     (uint32_t)ldl_le_p(W->user + imm);

        if (flat) {
            uint64_t *r = wave_reg(g[0], dst);

            megpu_line_set(W, dst, v, 0);
            FOR_LANE_BLOCKS(flat, o) {
                uint64_t *ro = r + o;

                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    ro[l] = v;
                }
            }
            return true;
        }
        for (unsigned i = 0; i < n; i++) {
            uint64_t *r = wave_reg(g[i], dst);
            uint32_t exec = g[i]->exec;

            if (exec == MEGPU_WAVE_ALL_LANES) {
                /* the usual case: a plain fill */
                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    r[l] = v;
                }
                continue;
            }
            /* a select, not a branch per lane */
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                r[l] = (exec >> l) & 1 ? v : r[l];
            }
        }
        return true;
    }
    case MEGPU_OP_ADD ... MEGPU_OP_MAXU:
    case MEGPU_OP_CMPEQ ... MEGPU_OP_CMPLEU:
    case MEGPU_OP_FADD ... MEGPU_OP_FMAX:
    case MEGPU_OP_FCMPEQ ... MEGPU_OP_FCMPLE:
        /* false for a hole in the ranges: the step faults it */
        if (!megpu_wave_binop(g, n, flat, d)) {
            return false;
        }
        if (flat) {
            megpu_line_binop(W, op, dst, s0, d->s1, d->b);
        }
        return true;
    case MEGPU_OP_I2F:
    case MEGPU_OP_F2I:
        megpu_line_forget(W, dst);
        for (unsigned i = 0; i < n; i++) {
            FOR_EACH_LANE(g[i], l) {
                wave_reg(g[i], dst)[l] = op == MEGPU_OP_I2F ?
                    megpu_isa_i2f(wave_reg(g[i], s0)[l]) :
                    megpu_isa_f2i(wave_reg(g[i], s0)[l]);
            }
        }
        return true;
    default:
        return false;
    }
}

/*
 * IF, ELSE and ENDIF for the waves @g[0 .. @n) as one step (none moves
 * a PC but by one, so a gang stays whole). False, with nothing changed,
 * if one of them would over- or underflow its mask stack: the caller's
 * step wave by wave faults the right wave. A flat gang's IF whose
 * condition holds on every lane (a bounds check, the usual IF) only
 * pushes: one look at the row for a zero instead of a mask built lane
 * by lane (issue 25: an IF and its ENDIF cost 0.4 ns an element).
 */
static inline QEMU_ALWAYS_INLINE bool
megpu_gang_mask(MegpuWave **g, unsigned n, unsigned flat, const MegpuInsn *d)
{
    if (d->op == MEGPU_OP_IF) {
        uint64_t zero = 0;

        for (unsigned i = 0; i < n; i++) {
            if (g[i]->depth >= MEGPU_WAVE_MASK_DEPTH) {
                return false;
            }
        }
        if (flat) {
            const uint64_t *c = wave_reg(g[0], d->s0);

            FOR_LANE_BLOCKS(flat, o) {
                const uint64_t *co = c + o;

                for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                    zero |= co[l] == 0;
                }
            }
        }
        for (unsigned i = 0; flat && !zero && i < n; i++) {
            g[i]->mask_stack[g[i]->depth++] = g[i]->exec;
        }
        for (unsigned i = 0; (!flat || zero) && i < n; i++) {
            MegpuWave *w = g[i];
            const uint64_t *c = wave_reg(w, d->s0);
            uint32_t taken = 0;

            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                taken |= (uint32_t)(c[l] != 0) << l;
            }
            w->mask_stack[w->depth++] = w->exec;
            w->exec &= taken;
        }
        return true;
    }
    for (unsigned i = 0; i < n; i++) {
        if (!g[i]->depth) {
            return false;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        MegpuWave *w = g[i];

        if (d->op == MEGPU_OP_ELSE) {
            /* the lanes that were active at the IF but not taken */
            w->exec = w->mask_stack[w->depth - 1] & ~w->exec;
        } else {
            w->exec = w->mask_stack[--w->depth];
        }
    }
    return true;
}

/* Execute one decoded instruction. */
static int megpu_wave_step(MegpuExec *x, MegpuWaves *W, MegpuWave *w,
                           const MegpuInsn *d)
{
    uint32_t op = d->op, dst = d->dst, s0 = d->s0, s1 = d->s1;
    uint32_t imm = d->imm;
    bool any;

    if (unlikely(d->fault)) {
        return megpu_wave_fault(x, W, w, d->fault);
    }
    if (megpu_gang_plain(W, &w, 1, 0, d)) {
        w->pc++;
        return MEGPU_RUN_NEXT;
    }
    switch (op) {
    case MEGPU_OP_END:
        return MEGPU_RUN_END;
    case MEGPU_OP_IF:
    case MEGPU_OP_ELSE:
    case MEGPU_OP_ENDIF:
        if (!megpu_gang_mask(&w, 1, 0, d)) {
            return megpu_wave_fault(x, W, w, MEGPU_FAULT_MASK_STACK);
        }
        break;
    case MEGPU_OP_JMP:
        return megpu_wave_jump(x, W, w, imm);
    case MEGPU_OP_BRANY:
        any = false;
        FOR_EACH_LANE(w, l) {
            any |= wave_reg(w, s0)[l] != 0;
        }
        if (any) {
            return megpu_wave_jump(x, W, w, imm);
        }
        break;
    case MEGPU_OP_LD32:
    case MEGPU_OP_LD64:
        if (megpu_wave_ldst(x, W, w, op, dst, s0, 0, imm) != MEGPU_RUN_NEXT) {
            return MEGPU_RUN_FAULT;
        }
        break;
    case MEGPU_OP_ST32:
    case MEGPU_OP_ST64:
        if (megpu_wave_ldst(x, W, w, op, 0, s0, s1, imm) != MEGPU_RUN_NEXT) {
            return MEGPU_RUN_FAULT;
        }
        break;
    case MEGPU_OP_ATOMADD32:
    case MEGPU_OP_ATOMCAS32:
    case MEGPU_OP_ATOMXCHG32:
        if (megpu_wave_atomic(x, w, op, dst, s0, s1, imm) != MEGPU_RUN_NEXT) {
            return MEGPU_RUN_FAULT;
        }
        break;
    case MEGPU_OP_SYSCALL:
        return megpu_wave_syscall(x, W, w, d->raw);
    case MEGPU_OP_INTERRUPT:
    case MEGPU_OP_SLEEP:
        /* nobody would restart the wave or answer the interrupt */
        if (!(qatomic_read(&x->e->s->wave_control) & MEGPU_WAVE_CTRL_RAW)) {
            return megpu_wave_fault(x, W, w, MEGPU_FAULT_PRIVILEGED);
        }
        if (op == MEGPU_OP_SLEEP) {
            return megpu_wave_sleep(x, w, imm);
        }
        megpu_misc_irq(x->e->s, MEGPU_MISC_IRQ_WAVE);
        qatomic_inc(&x->e->s->wave_interrupts);
        trace_megpu_wave_interrupt(x->e->idx, w->id);
        break;
    default:
        /* megpu_isa_check() faulted it already: no assert on guest data */
        return megpu_wave_fault(x, W, w, MEGPU_FAULT_BAD_OPCODE);
    }
    w->pc++;
    return MEGPU_RUN_NEXT;
}

/*
 * @lanes lanes (a wave's, or a flat gang's) to and from a gang's buffer,
 * @size bytes each, little endian; a memcpy where the host is little
 * endian, which is what the compiler turns into a few vector moves
 * (32-bit lanes: a widening).
 */
static inline void megpu_lanes_pack(uint8_t *restrict p,
                                    const uint64_t *restrict v,
                                    unsigned lanes, unsigned size)
{
    FOR_LANE_BLOCKS(lanes, o) {
        uint8_t *po = p + o * size;
        const uint64_t *vo = v + o;

        if (size == 8) {
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                stq_le_p(po + l * 8, vo[l]);
            }
        } else {
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                stl_le_p(po + l * 4, vo[l]);
            }
        }
    }
}

static inline void megpu_lanes_unpack(uint64_t *restrict r,
                                      const uint8_t *restrict p,
                                      unsigned lanes, unsigned size)
{
    FOR_LANE_BLOCKS(lanes, o) {
        uint64_t *ro = r + o;
        const uint8_t *po = p + o * size;

        if (size == 8) {
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                ro[l] = ldq_le_p(po + l * 8);
            }
        } else {
            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                ro[l] = (uint32_t)ldl_le_p(po + l * 4);
            }
        }
    }
}

/*
 * The usual case of megpu_gang_ldst(): every lane of every wave active
 * and the addresses one run across the gang, in launch order (a
 * work-group's row). One access, and the registers copied straight to
 * and from the buffer, without the per-lane bookkeeping of the general
 * case (issue 25: that bookkeeping was a third of a VADD program's
 * time). The same access, faults and result as the general case.
 * Returns -1 when the gang's lanes are not such a run.
 */
static inline QEMU_ALWAYS_INLINE int
megpu_gang_ldst_row(MegpuExec *x, MegpuWaves *W, MegpuWave **g, unsigned n,
                    unsigned flat, const MegpuInsn *d, MegpuWave **who)
{
    unsigned size = (d->op == MEGPU_OP_LD64 || d->op == MEGPU_OP_ST64) ? 8 : 4;
    bool write = d->op == MEGPU_OP_ST32 || d->op == MEGPU_OP_ST64;
    uint64_t a0 = wave_reg(g[0], d->s0)[0];
    uint64_t base = a0 + megpu_isa_sext(d->imm);
    uint8_t *buf = W->gang_buf;
    unsigned lanes = n * MEGPU_WAVE_LANES;
    const uint8_t *src;
    MegpuMap m;
    uint64_t q;

    if (base & (size - 1)) {
        return -1;
    }
    if (flat) {
        /* the gang's lanes are one run: one loop each, no wave by wave */
        const uint64_t *a = wave_reg(g[0], d->s0);
        uint64_t apart = 0, lb, ls;
        /*
         * A line of the access's size needs no look at every lane; its
         * first and last lane are looked at all the same (cheap, and a
         * line kept wrongly shows there more often than not).
         */
        bool line = megpu_line_get(W, d->s0, &lb, &ls) && ls == size &&
                    lb == a0 && a[flat - 1] == a0 + (flat - 1) * size;

        FOR_LANE_BLOCKS(line ? 0 : flat, o) {
            const uint64_t *ao = a + o;
            uint64_t off = (uint64_t)o * size;

            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                apart |= (ao[l] - a0) ^ (off + l * size);
            }
        }
        if (apart) {
            return -1;
        }
        if (write) {
            megpu_lanes_pack(buf, wave_reg(g[0], d->s1), flat, size);
        }
    }
    for (unsigned i = 0; !flat && i < n; i++) {
        const uint64_t *a = wave_reg(g[i], d->s0);
        uint64_t off = (uint64_t)i * MEGPU_WAVE_LANES * size;
        uint64_t apart = 0;

        if (g[i]->exec != MEGPU_WAVE_ALL_LANES) {
            return -1;
        }
        /* differences or'ed, not a compare per lane: vectorises */
        for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
            apart |= (a[l] - a0) ^ (off + l * size);
        }
        if (apart) {
            return -1;
        }
    }
    for (unsigned i = 0; !flat && write && i < n; i++) {
        megpu_lanes_pack(buf + i * MEGPU_WAVE_LANES * size,
                         wave_reg(g[i], d->s1), MEGPU_WAVE_LANES, size);
    }
    if (write) {
        if (!megpu_mem_rw(x, base, buf, lanes * size, true)) {
            goto fault;
        }
        megpu_wake_waiters(x->e->s);
        return MEGPU_RUN_NEXT;
    }
    /* a load unpacks from RAM itself when it can (no copy) */
    src = megpu_mem_read_view(x, base, lanes * size, buf, &m);
    if (!src) {
        goto fault;
    }
    if (flat) {
        megpu_lanes_unpack(wave_reg(g[0], d->dst), src, flat, size);
    }
    for (unsigned i = 0; !flat && i < n; i++) {
        megpu_lanes_unpack(wave_reg(g[i], d->dst),
                           src + i * MEGPU_WAVE_LANES * size,
                           MEGPU_WAVE_LANES, size);
    }
    megpu_mem_view_done(x, &m);
    return MEGPU_RUN_NEXT;

fault:
    q = MIN((x->fault_addr - base) / size, lanes - 1);
    *who = g[q / MEGPU_WAVE_LANES];
    x->wave_id = (*who)->id;
    return MEGPU_RUN_FAULT;
}

/*
 * A load or store of every wave of a gang (same instruction), in launch
 * order: runs of consecutive addresses across the waves become one
 * access, so a work-group's row is read or written at once, as a
 * built-in kernel does. Every lane's alignment is checked first. A fault
 * names the wave whose lane holds the faulting address (*@who).
 */
static inline QEMU_ALWAYS_INLINE int
megpu_gang_ldst(MegpuExec *x, MegpuWaves *W, MegpuWave **g, unsigned n,
                unsigned flat, const MegpuInsn *d, MegpuWave **who)
{
    unsigned size = (d->op == MEGPU_OP_LD64 || d->op == MEGPU_OP_ST64) ? 8 : 4;
    bool write = d->op == MEGPU_OP_ST32 || d->op == MEGPU_OP_ST64;
    uint64_t *addr = W->gang_addr;
    uint16_t *at = W->gang_at;
    uint8_t *buf = W->gang_buf;
    unsigned m = 0;
    int r = megpu_gang_ldst_row(x, W, g, n, flat, d, who);

    if (r >= 0) {
        return r;
    }
    for (unsigned i = 0; i < n; i++) {
        FOR_EACH_LANE(g[i], l) {
            uint64_t a = wave_reg(g[i], d->s0)[l] + megpu_isa_sext(d->imm);

            if (a & (size - 1)) {
                *who = g[i];
                x->wave_id = g[i]->id;
                megpu_fault(x, MEGPU_FAULT_MISALIGNED, a, write);
                return MEGPU_RUN_FAULT;
            }
            addr[m] = a;
            at[m++] = i * MEGPU_WAVE_LANES + l;
        }
    }
    for (unsigned j = 0; j < m; ) {
        unsigned k = 0;

        /* the run j .. j + k - 1 */
        do {
            MegpuWave *w = g[at[j + k] / MEGPU_WAVE_LANES];

            if (write) {
                /* src1 is a store's operand only */
                uint64_t v = wave_reg(w, d->s1)[at[j + k] % MEGPU_WAVE_LANES];

                if (size == 8) {
                    stq_le_p(buf + k * 8, v);
                } else {
                    stl_le_p(buf + k * 4, v);
                }
            }
            k++;
        } while (j + k < m && addr[j + k] == addr[j] + k * size);
        if (!megpu_mem_rw(x, addr[j], buf, k * size, write)) {
            uint64_t q = MIN((x->fault_addr - addr[j]) / size, k - 1);

            *who = g[at[j + q] / MEGPU_WAVE_LANES];
            x->wave_id = (*who)->id;
            return MEGPU_RUN_FAULT;
        }
        for (unsigned i = 0; !write && i < k; i++) {
            MegpuWave *w = g[at[j + i] / MEGPU_WAVE_LANES];

            wave_reg(w, d->dst)[at[j + i] % MEGPU_WAVE_LANES] =
                size == 8 ? ldq_le_p(buf + i * 8) :
                (uint32_t)ldl_le_p(buf + i * 4);
        }
        j += k;
    }
    if (write) {
        megpu_wake_waiters(x->e->s);
    }
    return MEGPU_RUN_NEXT;
}

/*
 * ATOMADD32 of a gang whose every lane adds to one word (a reduction,
 * CHECKSUM's): one host atomic of the sum instead of one per wave, each
 * lane getting what the lanes before it in launch order left, as if the
 * waves had added in turn with nothing in between. The waves' own fold
 * (megpu_wave_atomic()) does the same within a wave. Returns -1 when the
 * gang is not such a reduction (or in the negative control).
 */
static inline QEMU_ALWAYS_INLINE int
megpu_gang_atomadd(MegpuExec *x, MegpuWave **g, unsigned n, unsigned flat,
                   const MegpuInsn *d, MegpuWave **who)
{
    uint64_t addr = wave_reg(g[0], d->s0)[0] + megpu_isa_sext(d->imm);
    uint32_t sum = 0, io = 0;
    /* a flat gang is one run of lanes: as one wave of @flat lanes */
    unsigned waves = flat ? 1 : n, lanes = flat ? flat : MEGPU_WAVE_LANES;

    if (x->e->s->wave_nonatomic || (addr & 3)) {
        return -1;
    }
    for (unsigned i = 0; i < waves; i++) {
        const uint64_t *a = wave_reg(g[i], d->s0);
        const uint64_t *v = wave_reg(g[i], d->s1);
        uint64_t apart = 0;

        if (g[i]->exec != MEGPU_WAVE_ALL_LANES) {
            return -1;
        }
        FOR_LANE_BLOCKS(lanes, o) {
            const uint64_t *ao = a + o, *vo = v + o;

            for (unsigned l = 0; l < MEGPU_WAVE_LANES; l++) {
                apart |= (ao[l] + megpu_isa_sext(d->imm)) ^ addr;
                sum += vo[l];
            }
        }
        if (apart) {
            return -1;
        }
    }
    if (!megpu_wave_atomic32(x, d->op, addr, sum, &io)) {
        *who = g[0];
        x->wave_id = g[0]->id;
        return MEGPU_RUN_FAULT;
    }
    for (unsigned i = 0; i < waves; i++) {
        uint64_t *r = wave_reg(g[i], d->dst);
        const uint64_t *v = wave_reg(g[i], d->s1);

        for (unsigned l = 0; l < lanes; l++) {
            /* the lane's operand before its destination (src == dst) */
            uint32_t vl = v[l];

            r[l] = io;
            io += vl;
        }
    }
    megpu_wake_waiters(x->e->s);
    return MEGPU_RUN_NEXT;
}

/* The gang's common PC and @ahead more instructions into its waves. */
static inline void megpu_gang_sync(MegpuWave **g, unsigned n, uint32_t pc,
                                   uint64_t *ahead)
{
    if (!*ahead) {
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        g[i]->pc = pc;
        g[i]->insns += *ahead;
    }
    *ahead = 0;
}

/*
 * Run the gang @g[0 .. @n) (READY waves at one PC, in launch order) for
 * up to a slice, one instruction at a time for all of them: register-only
 * instructions and IF, ELSE, ENDIF in one step (megpu_gang_plain(),
 * megpu_gang_mask()), loads and stores as one access per run of
 * addresses (megpu_gang_ldst()), the rest wave by wave. A wave whose PC
 * parts from the first's leaves the gang (it runs on a later turn); one
 * that ENDs goes to @ended. Returns
 * YIELD (slice used up), END (every wave ended), or what stopped wave
 * *@who (PARK, SPIN, FAULT); the waves after it in the gang have not run
 * that instruction yet and stay READY before it. Inlined into the
 * variants below.
 */
static inline QEMU_ALWAYS_INLINE int
megpu_gang_slice_lanes(MegpuExec *x, MegpuWaves *W, MegpuWave **g, unsigned n,
                       MegpuWave **ended, unsigned *nended, MegpuWave **who,
                       uint64_t *insns)
{
    uint64_t budget = x->e->s->wave_budget;
    uint32_t pc = g[0]->pc;
    /*
     * Instructions the whole gang ran that its waves' PC and count do
     * not show yet: written back (megpu_gang_sync()) before anything
     * looks at a wave alone, so that a step of the gang costs no pass
     * over its waves. The budget is looked at per instruction only in
     * a slice that can reach it.
     */
    uint64_t ahead = 0;
    bool watch = false;
    /* lanes of the gang if it is flat (megpu_gang_flat()), else 0 */
    unsigned flat = n > 1 ? megpu_gang_flat(g, n) : 0;
    int r;

    for (unsigned i = 0; budget && i < n; i++) {
        watch |= g[i]->insns + MEGPU_WAVE_SLICE > budget;
    }
    W->line_known = 0;
    for (unsigned k = 0; k < MEGPU_WAVE_SLICE && n; k++) {
        uint32_t lead = UINT32_MAX;
        const MegpuInsn *d;
        unsigned kept = 0;

        x->wave_pc = pc;
        x->wave_id = g[0]->id;
        *who = g[0];
        if (pc >= W->len || watch) {
            megpu_gang_sync(g, n, pc, &ahead);
        }
        if (pc >= W->len) {
            return megpu_wave_fault(x, W, g[0], MEGPU_FAULT_PC_RANGE);
        }
        d = &W->code[pc];
        for (unsigned i = 0; watch && i < n; i++) {
            if (g[i]->insns >= budget) {
                *who = g[i];
                x->wave_id = g[i]->id;
                return megpu_wave_fault(x, W, g[i], MEGPU_FAULT_BUDGET);
            }
        }
        if (n > 1 && d->fused && !watch) {
            /* LDARG and the ADD after it as one ADD (megpu_wave_fuse()) */
            const MegpuInsn add = {
                .op = MEGPU_OP_ADD, .dst = d->dst, .s0 = d->fused_src,
                .s1 = MEGPU_ISA_IMM, .b = d->fused_arg,
            };

            megpu_binop_gang(MEGPU_OP_ADD, g, n, flat, &add);
            if (flat) {
                megpu_line_binop(W, MEGPU_OP_ADD, d->dst, d->fused_src,
                                 MEGPU_ISA_IMM, d->fused_arg);
            }
            ahead += 2;
            pc += 2;
            *insns += 2 * n;
            continue;
        }
        if (n > 1 && !d->fault && megpu_gang_plain(W, g, n, flat, d)) {
            ahead++;
            pc++;
            *insns += n;
            continue;
        }
        if (n > 1 && !d->fault &&
            (d->op == MEGPU_OP_IF || d->op == MEGPU_OP_ELSE ||
             d->op == MEGPU_OP_ENDIF) && megpu_gang_mask(g, n, flat, d)) {
            /* lanes may have gone off or come back on */
            flat = megpu_gang_flat(g, n);
            if (!flat) {
                W->line_known = 0;
            }
            ahead++;
            pc++;
            *insns += n;
            continue;
        }
        r = -1;
        if (n > 1 && !d->fault && d->op >= MEGPU_OP_LD32 &&
            d->op <= MEGPU_OP_ST64) {
            if (d->op == MEGPU_OP_LD32 || d->op == MEGPU_OP_LD64) {
                megpu_line_forget(W, d->dst);
            }
            r = megpu_gang_ldst(x, W, g, n, flat, d, who);
        } else if (n > 1 && !d->fault && d->op == MEGPU_OP_ATOMADD32) {
            megpu_line_forget(W, d->dst);
            r = megpu_gang_atomadd(x, g, n, flat, d, who);
        }
        if (r >= 0) {
            /* counted even if it faults, as a step counts it */
            ahead++;
            *insns += n;
            if (r != MEGPU_RUN_NEXT) {
                megpu_gang_sync(g, n, pc, &ahead);
                return r;
            }
            pc++;
            continue;
        }
        megpu_gang_sync(g, n, pc, &ahead);
        if (!d->fault && d->op == MEGPU_OP_END) {
            /* the whole gang ends: no step wave by wave */
            for (unsigned i = 0; i < n; i++) {
                g[i]->insns++;
                ended[(*nended)++] = g[i];
            }
            *insns += n;
            return MEGPU_RUN_END;
        }
        /* wave by wave: what it writes is no line of the gang's */
        W->line_known = 0;
        for (unsigned i = 0; i < n; i++) {
            /* counted as it runs: the waves after a PARK run it later */
            g[i]->insns++;
            (*insns)++;
            x->wave_id = g[i]->id;
            r = megpu_wave_step(x, W, g[i], d);
            if (r == MEGPU_RUN_END) {
                ended[(*nended)++] = g[i];
                continue;
            }
            if (r != MEGPU_RUN_NEXT) {
                *who = g[i];
                return r;
            }
            /* branches set the PC themselves; the rest advanced it */
            if (lead == UINT32_MAX) {
                lead = g[i]->pc;
            }
            if (g[i]->pc == lead) {
                g[kept++] = g[i];
            }
        }
        n = kept;
        pc = lead;
        flat = n > 1 ? megpu_gang_flat(g, n) : 0;
    }
    megpu_gang_sync(g, n, pc, &ahead);
    return n ? MEGPU_RUN_YIELD : MEGPU_RUN_END;
}

/*
 * The gang's slice compiled twice, with every lane loop in it: for the
 * baseline x86-64 that QEMU builds for (SSE2: two 64-bit lanes per
 * instruction, no 64-bit compare) and for AVX2 (four, with compares and
 * masks), chosen by what the host has (host/cpuinfo.h; property
 * x-wave-simd=off takes the baseline, for the tests). Issue 25: a
 * program's time per element 15.5 -> 12.1 ns (VADD, 64k elements).
 */
static int megpu_gang_slice_base(MegpuExec *x, MegpuWaves *W, MegpuWave **g,
                                 unsigned n, MegpuWave **ended,
                                 unsigned *nended, MegpuWave **who,
                                 uint64_t *insns)
{
    return megpu_gang_slice_lanes(x, W, g, n, ended, nended, who, insns);
}

#ifdef HOST_X86_64
static int __attribute__((target("avx2")))
megpu_gang_slice_avx2(MegpuExec *x, MegpuWaves *W, MegpuWave **g, unsigned n,
                      MegpuWave **ended, unsigned *nended, MegpuWave **who,
                      uint64_t *insns)
{
    return megpu_gang_slice_lanes(x, W, g, n, ended, nended, who, insns);
}
#endif

static int megpu_gang_slice(MegpuExec *x, MegpuWaves *W, MegpuWave **g,
                            unsigned n, MegpuWave **ended, unsigned *nended,
                            MegpuWave **who, uint64_t *insns)
{
#ifdef HOST_X86_64
    if (x->e->s->wave_simd && (cpuinfo & CPUINFO_AVX2)) {
        return megpu_gang_slice_avx2(x, W, g, n, ended, nended, who, insns);
    }
#endif
    return megpu_gang_slice_base(x, W, g, n, ended, nended, who, insns);
}

/*
 * The gang of @w: the READY waves at its PC, not inside a SYSCALL, in
 * launch order (so that their lanes' addresses follow each other).
 */
static unsigned megpu_gang_pick_locked(MegpuWaves *W, MegpuWave *w,
                                       MegpuWave **g)
{
    unsigned n = 0;

    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        MegpuWave *o = &W->wave[slot];
        unsigned i;

        if (o != w && (o->state != MEGPU_WAVE_READY || o->in_syscall ||
                       w->in_syscall || o->pc != w->pc)) {
            continue;
        }
        for (i = n; i > 0 && g[i - 1]->launch_no > o->launch_no; i--) {
            g[i] = g[i - 1];
        }
        g[i] = o;
        n++;
    }
    return n;
}

/* ---- the dispatch ---- */

/* How many resident waves are runnable? */
static unsigned megpu_waves_ready_locked(MegpuWaves *W)
{
    unsigned n = 0;

    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        n += W->wave[slot].state == MEGPU_WAVE_READY;
    }
    return n;
}

/* Is a wave parked in a SYSCALL, waiting for the CPU's answer? */
static bool megpu_waves_calling_locked(MegpuWaves *W)
{
    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        if (W->wave[slot].state == MEGPU_WAVE_PARKED &&
            W->wave[slot].in_syscall) {
            return true;
        }
    }
    return false;
}

/*
 * No resident wave can run: wait for a WAVE_RESTART (or a reset), at
 * most @ms. While a wave is parked in a SYSCALL its answer usually
 * comes within tens of microseconds, so the engine first polls for up
 * to wave-spin-us, as a hardware wave scheduler watches its restart
 * line, and only then sleeps on the condition variable: waking a
 * sleeping host thread took 10-20 us of a 60-70 us round trip (its
 * "restart -> resume" stage), polling takes 1-3 us. Not for plain
 * SLEEPs, whose restart may be far off. A poll that ends without the
 * restart means slow answers (a user-space service): the next
 * MEGPU_WAVE_SPIN_BACKOFF waits sleep at once, so that the polling
 * does not take the host CPU the service needs. Called and returns
 * with the engine lock held.
 */
static void megpu_waves_idle_locked(MegpuEngine *e, MegpuWaves *W, int ms)
{
    uint32_t seen = e->wave_wakes;
    int64_t end;

    if (e->s->wave_spin_us && megpu_waves_calling_locked(W) &&
        !e->wave_spin_skip) {
        end = get_clock() + e->s->wave_spin_us * (int64_t)SCALE_US;
        qemu_mutex_unlock(&e->lock);
        while (qatomic_read(&e->wave_wakes) == seen &&
               !megpu_engine_should_abort(e) && get_clock() < end) {
            cpu_relax();
        }
        qemu_mutex_lock(&e->lock);
        if (e->wave_wakes == seen) {
            /* in vain: slow answers (a user service), back off */
            e->wave_spin_skip = MEGPU_WAVE_SPIN_BACKOFF;
        }
    } else if (e->wave_spin_skip) {
        e->wave_spin_skip--;
    }
    if (e->wave_wakes == seen && !e->reset_pending && !e->stop) {
        qemu_cond_timedwait(&e->cond, &e->lock, ms);
    }
}

static bool megpu_waves_run(MegpuExec *x, MegpuWaves *W)
{
    MegpuEngine *e = x->e;
    unsigned spins = 0;         /* slices in a row that found no slot */
    /*
     * Written before they are read, each turn: out of the loop, so that
     * -ftrivial-auto-var-init does not clear them on every turn.
     */
    MegpuWave *gang[MEGPU_WAVE_SLOTS], *ended[MEGPU_WAVE_SLOTS];

    for (;;) {
        MegpuWave *w = NULL;
        unsigned n, nended = 0;
        uint64_t insns = 0;
        int r;

        qemu_mutex_lock(&e->lock);
        if (e->reset_pending || e->stop) {
            qemu_mutex_unlock(&e->lock);
            x->aborted = true;
            return false;
        }
        megpu_waves_launch_locked(e, W);
        if (!e->waves_live) {
            qemu_mutex_unlock(&e->lock);
            return true;
        }
        for (unsigned i = 0; i < MEGPU_WAVE_SLOTS; i++) {
            unsigned slot = (W->turn + i) % MEGPU_WAVE_SLOTS;

            if (W->wave[slot].state == MEGPU_WAVE_READY) {
                w = &W->wave[slot];
                W->turn = slot + 1;
                break;
            }
        }
        if (!w) {
            /* all parked: WAVE_RESTART and reset wake us */
            megpu_waves_idle_locked(e, W, MEGPU_WAVE_PARK_POLL_MS);
            qemu_mutex_unlock(&e->lock);
            continue;
        }
        n = megpu_gang_pick_locked(W, w, gang);
        qemu_mutex_unlock(&e->lock);

        r = megpu_gang_slice(x, W, gang, n, ended, &nended, &w, &insns);

        qemu_mutex_lock(&e->lock);
        e->wave_insns += insns;
        for (unsigned i = 0; i < nended; i++) {
            ended[i]->state = MEGPU_WAVE_FREE;
            e->waves_live--;
        }
        spins = r == MEGPU_RUN_SPIN ? spins + 1 : 0;
        if (spins && spins >= megpu_waves_ready_locked(W)) {
            /*
             * Every runnable wave retried its SYSCALL in vain since the
             * last one that got on: give the CPU time to free a slot
             * (a restart ends the wait) instead of spinning through the
             * mailbox, which would take the host CPU the answer needs.
             */
            megpu_waves_idle_locked(e, W, MEGPU_WAVE_RETRY_MS);
            spins = 0;
        }
        qemu_mutex_unlock(&e->lock);
        if (r == MEGPU_RUN_FAULT) {
            trace_megpu_wave_fault(e->idx, w->id, w->pc, x->fault_code);
            return false;
        }
    }
}

/*
 * Decode @insn once, for every wave of the dispatch (MegpuInsn). The
 * register fields an instruction uses are < MEGPU_WAVE_REGS once it
 * passed megpu_isa_check(); those it does not use may hold anything and
 * become r0 here, so that no code path can index past the register file
 * with one (src1 stays MEGPU_ISA_IMM for the ALU's immediate).
 */
static void megpu_wave_decode(uint64_t insn, MegpuInsn *d)
{
    uint8_t *reg[3] = { &d->dst, &d->s0, &d->s1 };

    d->op = MEGPU_INSN_OP(insn);
    d->dst = MEGPU_INSN_DST(insn);
    d->s0 = MEGPU_INSN_SRC0(insn);
    d->s1 = MEGPU_INSN_SRC1(insn);
    d->imm = MEGPU_INSN_IMM(insn);
    d->b = megpu_isa_imm_operand(d->op, d->imm);
    d->raw = insn;
    d->fault = megpu_isa_check(insn);
    d->fused = false;           /* megpu_wave_fuse() looks at it later */
    for (unsigned i = 0; i < 3; i++) {
        bool imm = reg[i] == &d->s1 && *reg[i] == MEGPU_ISA_IMM &&
                   (megpu_isa_is_alu(d->op) || megpu_isa_is_falu(d->op));

        if (*reg[i] >= MEGPU_WAVE_REGS && !imm) {
            *reg[i] = 0;
        }
    }
}

/*
 * The registers @d reads and writes (a bit each), as the launch's clear
 * needs them: an instruction not listed reads every register field it
 * has and writes none (LIH reads the half it keeps, an atomic's
 * destination is CAS's compare value, a SYSCALL writes only once the
 * CPU answered), which can only clear more.
 */
static void megpu_wave_regs_used(const MegpuInsn *d, uint32_t *reads,
                                 uint32_t *writes)
{
    uint32_t s1 = d->s1 == MEGPU_ISA_IMM ? 0 : 1u << d->s1;

    *reads = 0;
    *writes = 0;
    switch (d->op) {
    case MEGPU_OP_NOP:
    case MEGPU_OP_ELSE:
    case MEGPU_OP_ENDIF:
        return;
    case MEGPU_OP_S2R:
    case MEGPU_OP_LDARG:
    case MEGPU_OP_LDARG32:
    case MEGPU_OP_LI:
        *writes = 1u << d->dst;
        return;
    case MEGPU_OP_MOV:
    case MEGPU_OP_I2F:
    case MEGPU_OP_F2I:
    case MEGPU_OP_LD32:
    case MEGPU_OP_LD64:
        *reads = 1u << d->s0;
        *writes = 1u << d->dst;
        return;
    case MEGPU_OP_ADD ... MEGPU_OP_MAXU:
    case MEGPU_OP_CMPEQ ... MEGPU_OP_CMPLEU:
    case MEGPU_OP_FADD ... MEGPU_OP_FMAX:
    case MEGPU_OP_FCMPEQ ... MEGPU_OP_FCMPLE:
        *reads = 1u << d->s0 | s1;
        *writes = 1u << d->dst;
        return;
    case MEGPU_OP_IF:
        *reads = 1u << d->s0;
        return;
    case MEGPU_OP_ST32:
    case MEGPU_OP_ST64:
        *reads = 1u << d->s0 | s1;
        return;
    }
    *reads = 1u << d->dst | 1u << d->s0 | s1;
    if (d->op == MEGPU_OP_SYSCALL &&
        MEGPU_INSN_SYSCALL_SRC2(d->raw) < MEGPU_WAVE_REGS) {
        *reads |= 1u << MEGPU_INSN_SYSCALL_SRC2(d->raw);
    }
}

/*
 * Which registers a launch must clear (registers start at zero): those
 * a lane may read before it wrote them. The program is walked from its
 * start, IF regions kept as a stack of instances (an ELSE starts a new
 * one): a write covers the reads in its own region instance and those
 * nested in it, whose lanes are a subset of its own, and nothing before
 * the first jump can be run again with other lanes. So:
 * - without JMP or BRANY in the program the walk goes to the first END,
 *   fault or mask-stack error (nothing after one runs) and the registers
 *   read before a covering write are cleared;
 * - with one, it stops at the first jump, and only writes outside every
 *   IF before it count: every other register the program names is
 *   cleared.
 * Registers no instruction names are never touched. Issue 25: clearing
 * every named register was a tenth of a VADD program's time; VADD,
 * SAXPY and CHECKSUM write each register before reading it.
 */
static uint32_t megpu_wave_clears(const MegpuWaves *W, uint32_t *namedp)
{
    uint32_t stack[MEGPU_WAVE_MASK_DEPTH], next = 1, need = 0, top = 0;
    uint32_t named = 0, reads, writes;
    uint32_t inst[MEGPU_WAVE_REGS];     /* region instance of the write */
    uint8_t depth_of[MEGPU_WAVE_REGS];  /* its depth; 0xff: none yet */
    unsigned depth = 0;
    bool jumps = false, whole = false;

    for (uint32_t pc = 0; pc < W->len; pc++) {
        const MegpuInsn *d = &W->code[pc];

        jumps |= d->op == MEGPU_OP_JMP || d->op == MEGPU_OP_BRANY;
        /* an instruction that faults touches no register */
        if (!d->fault) {
            megpu_wave_regs_used(d, &reads, &writes);
            named |= reads | writes;
        }
    }
    memset(depth_of, 0xff, sizeof(depth_of));
    for (uint32_t pc = 0; pc < W->len; pc++) {
        const MegpuInsn *d = &W->code[pc];

        if (d->fault || d->op == MEGPU_OP_END) {
            whole = !jumps;
            break;
        }
        if (d->op == MEGPU_OP_JMP || d->op == MEGPU_OP_BRANY) {
            break;
        }
        megpu_wave_regs_used(d, &reads, &writes);
        for (; reads; reads &= reads - 1) {
            unsigned r = ctz32(reads), k = depth_of[r];

            /* covered: written here or in a region enclosing this one */
            if (k > depth || (k && stack[k - 1] != inst[r])) {
                need |= 1u << r;
            }
        }
        if (d->op == MEGPU_OP_IF) {
            if (depth == MEGPU_WAVE_MASK_DEPTH) {
                whole = !jumps;         /* it faults there */
                break;
            }
            stack[depth++] = next++;
        } else if (d->op == MEGPU_OP_ELSE || d->op == MEGPU_OP_ENDIF) {
            if (!depth) {
                whole = !jumps;         /* it faults there */
                break;
            }
            if (d->op == MEGPU_OP_ELSE) {
                stack[depth - 1] = next++;
            } else {
                depth--;
            }
        }
        for (; writes && (!jumps || !depth); writes &= writes - 1) {
            unsigned r = ctz32(writes);

            if (depth < depth_of[r]) {
                depth_of[r] = depth;
                inst[r] = depth ? stack[depth - 1] : 0;
                top |= depth ? 0 : 1u << r;
            }
        }
        if (pc + 1 == W->len) {
            whole = !jumps;             /* the PC runs off the end: faults */
        }
    }
    if (!whole) {
        need |= named & ~top;
    }
    *namedp = named;
    return need & named;
}

/*
 * LDARG rX then ADD rX, rX, rY (or rY, rX), rY another register: the
 * pair computes rX = rY + the argument for the active lanes, which a
 * gang runs as one ADD of an immediate (issue 25: each program's row
 * address is such a pair; a fill of every lane saved). The argument is
 * the dispatch's, read at load, like LDARG's. Neither instruction can
 * fault once decoded; the gang does not fuse where it watches its
 * instruction budget, so a BUDGET fault still comes at the right one.
 */
static void megpu_wave_fuse(MegpuWaves *W, MegpuInsn *d, const MegpuInsn *a)
{
    uint32_t x = d->dst;

    if (d->fault || a->fault || a->op != MEGPU_OP_ADD || a->dst != x ||
        a->s1 == MEGPU_ISA_IMM ||
        (d->op != MEGPU_OP_LDARG && d->op != MEGPU_OP_LDARG32) ||
        (a->s0 == x) == (a->s1 == x)) {
        return;
    }
    d->fused = true;
    d->fused_src = a->s0 == x ? a->s1 : a->s0;
    d->fused_arg = d->op == MEGPU_OP_LDARG ? ldq_le_p(W->user + d->imm) :
                   (uint32_t)ldl_le_p(W->user + d->imm);
}

/*
 * The program arguments and the program: an instruction-cache fill
 * through the MMU, decoded once (a bad page faults before any wave runs,
 * and the program cannot change under running waves).
 */
static bool megpu_wave_load(MegpuExec *x, MegpuWaves *W, uint64_t args)
{
    g_autofree uint64_t *raw = NULL;
    uint8_t pargs[MEGPU_PARGS_SIZE];
    uint32_t named;

    if (args & 7) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!megpu_mem_rw(x, args, pargs, sizeof(pargs), false)) {
        return false;
    }
    W->args = args + MEGPU_PARGS_USER;
    W->prog_addr = ldq_le_p(pargs + MEGPU_PARGS_PROGRAM);
    W->len = ldl_le_p(pargs + MEGPU_PARGS_LENGTH);
    memcpy(W->user, pargs + MEGPU_PARGS_USER, MEGPU_PARGS_USER_SIZE);
    if ((W->prog_addr & 7) || !W->len || W->len > MEGPU_PROGRAM_MAX_INSNS ||
        ldl_le_p(pargs + MEGPU_PARGS_FLAGS)) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    raw = g_new(uint64_t, W->len);
    if (!megpu_mem_rw(x, W->prog_addr, raw, W->len * 8ull, false)) {
        return false;
    }
    W->code = g_new(MegpuInsn, W->len);
    for (uint32_t i = 0; i < W->len; i++) {
        MegpuInsn *d = &W->code[i];

        megpu_wave_decode(le64_to_cpu(raw[i]), d);
    }
    for (uint32_t i = 0; i + 1 < W->len; i++) {
        megpu_wave_fuse(W, &W->code[i], &W->code[i + 1]);
    }
    W->clear = megpu_wave_clears(W, &named);
    /*
     * The register file is fresh heap: the rows the program may touch
     * start at zero once, so that whatever the walk leaves uncleared at
     * a launch holds this dispatch's own values at worst, never another
     * context's (a few KiB; the launches clear per wave).
     */
    for (; named; named &= named - 1) {
        memset(W->reg[ctz32(named)], 0, sizeof(W->reg[0]));
    }
    return true;
}

bool megpu_wave_dispatch(MegpuExec *x, uint64_t args, uint32_t grid_x,
                         uint32_t grid_y, uint32_t group_x, uint32_t group_y)
{
    MegpuEngine *e = x->e;
    uint64_t group = (uint64_t)group_x * group_y;
    g_autofree MegpuWaves *W = NULL;
    bool ok;

    if (e->type != MEGPU_ENGINE_GFX && e->type != MEGPU_ENGINE_COMPUTE) {
        return megpu_fault(x, MEGPU_FAULT_UNSUPPORTED, x->pkt_addr, false);
    }
    if (!group || group > MEGPU_MAX_GROUP_SIZE) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    /* ~80 KiB, of which only the head needs clearing */
    W = g_malloc(sizeof(*W));
    memset(W, 0, offsetof(MegpuWaves, wave));
    for (unsigned slot = 0; slot < MEGPU_WAVE_SLOTS; slot++) {
        W->wave[slot].state = MEGPU_WAVE_FREE;
        W->wave[slot].r0 = &W->reg[0][slot * MEGPU_WAVE_LANES];
    }
    if (!megpu_wave_load(x, W, args)) {
        g_free(W->code);
        return false;
    }
    W->grid_x = grid_x;
    W->grid_y = grid_y;
    W->group_x = group_x;
    W->group_y = group_y;
    W->groups_x = DIV_ROUND_UP((uint64_t)grid_x, group_x);
    W->groups = W->groups_x * DIV_ROUND_UP((uint64_t)grid_y, group_y);
    W->waves_per_group = DIV_ROUND_UP(group, MEGPU_WAVE_LANES);
    megpu_spi_count(e, (uint64_t)grid_x * grid_y, W->groups);
    trace_megpu_wave_dispatch_start(e->idx, W->prog_addr, W->len, grid_x,
                                    grid_y, group_x, group_y);

    qemu_mutex_lock(&e->lock);
    e->waves = W;
    e->wave_spin_skip = 0;      /* a new program: poll for restarts again */
    qemu_mutex_unlock(&e->lock);

    x->in_wave = true;
    ok = megpu_waves_run(x, W);
    x->in_wave = false;

    qemu_mutex_lock(&e->lock);
    e->waves = NULL;
    e->waves_live = 0;
    e->waves_parked = 0;
    qemu_mutex_unlock(&e->lock);
    trace_megpu_wave_dispatch_end(e->idx, W->launched, ok);
    g_free(W->code);
    return ok;
}

/* ---- registers ---- */

/* WAVE_RESTART (under the BQL): wake one parked wave, or count an error */
void megpu_wave_restart(MegpuState *s, uint32_t id)
{
    unsigned n = MEGPU_WAVE_ID_ENGINE(id), slot = MEGPU_WAVE_ID_SLOT(id);
    bool ok = false, wake = false;

    if (n < s->num_engines && slot < MEGPU_WAVE_SLOTS) {
        MegpuEngine *e = &s->engines[n];
        MegpuWave *w;

        qemu_mutex_lock(&e->lock);
        w = e->waves ? &e->waves->wave[slot] : NULL;
        if (w && w->state == MEGPU_WAVE_PARKED && w->id == id) {
            w->state = MEGPU_WAVE_READY;
            e->waves_parked--;
            wake = true;
            ok = true;
        } else if (w && w->state == MEGPU_WAVE_READY && w->id == id &&
                   w->in_syscall) {
            /* it looks at its slots again before it parks */
            w->restart_pending = true;
            ok = true;
        }
        if (ok) {
            /* an engine polling for restarts sees this (wave-spin-us) */
            qatomic_inc(&e->wave_wakes);
        }
        qemu_mutex_unlock(&e->lock);
        /* after the unlock, as a doorbell's (megpu_engine_write()) */
        if (wake) {
            qemu_cond_broadcast(&e->cond);
        }
    }
    if (ok) {
        s->wave_restarts++;
    } else {
        s->wave_restart_errors++;
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: WAVE_RESTART of 0x%x: not a parked wave\n", id);
    }
    trace_megpu_wave_restart(id, ok);
}

/* PARKED_WAVE: the id of the parked wave in the lowest slot, or NONE. */
uint32_t megpu_wave_parked_locked(MegpuEngine *e)
{
    for (unsigned slot = 0; e->waves && slot < MEGPU_WAVE_SLOTS; slot++) {
        if (e->waves->wave[slot].state == MEGPU_WAVE_PARKED) {
            return e->waves->wave[slot].id;
        }
    }
    return MEGPU_WAVE_ID_NONE;
}
