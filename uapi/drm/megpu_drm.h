/* SPDX-License-Identifier: MIT */
/*
 * megpu DRM driver uAPI.
 */
#ifndef _MEGPU_DRM_H_
#define _MEGPU_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_MEGPU_GET_PARAM		0x00
#define DRM_MEGPU_GEM_CREATE		0x01
#define DRM_MEGPU_GEM_MMAP_OFFSET	0x02
#define DRM_MEGPU_GEM_INFO		0x03
#define DRM_MEGPU_GEM_WAIT		0x04
#define DRM_MEGPU_SUBMIT		0x05
#define DRM_MEGPU_FLUSH			0x06
#define DRM_MEGPU_SYSCALL_WAIT		0x07
#define DRM_MEGPU_SYSCALL_RETURN	0x08
#define DRM_MEGPU_MSEM_QUERY		0x10
#define DRM_MEGPU_TASKQ_CHECK		0x18
#define DRM_MEGPU_TASKQ_NOTIFY		0x19
#define DRM_MEGPU_TASKQ_ATTACH		0x1a
#define DRM_MEGPU_TASKQ_WAIT		0x1b
#define DRM_MEGPU_TASKQ_SLEEP		0x1c
#define DRM_MEGPU_TASKQ_DETACH		0x1d

#define DRM_IOCTL_MEGPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_GET_PARAM, \
		 struct drm_megpu_get_param)
#define DRM_IOCTL_MEGPU_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_GEM_CREATE, \
		 struct drm_megpu_gem_create)
#define DRM_IOCTL_MEGPU_GEM_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_GEM_MMAP_OFFSET, \
		 struct drm_megpu_gem_mmap_offset)
#define DRM_IOCTL_MEGPU_GEM_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_GEM_INFO, \
		 struct drm_megpu_gem_info)
#define DRM_IOCTL_MEGPU_GEM_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MEGPU_GEM_WAIT, \
		struct drm_megpu_gem_wait)
#define DRM_IOCTL_MEGPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_SUBMIT, \
		 struct drm_megpu_submit)
#define DRM_IOCTL_MEGPU_FLUSH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_FLUSH, \
		 struct drm_megpu_flush)
#define DRM_IOCTL_MEGPU_SYSCALL_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_SYSCALL_WAIT, \
		 struct drm_megpu_syscall_wait)
#define DRM_IOCTL_MEGPU_MSEM_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_MSEM_QUERY, \
		 struct drm_megpu_msem_query)
#define DRM_IOCTL_MEGPU_SYSCALL_RETURN \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MEGPU_SYSCALL_RETURN, \
		struct drm_megpu_syscall_return)
#define DRM_IOCTL_MEGPU_TASKQ_CHECK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_CHECK, \
		 struct drm_megpu_taskq_check)
#define DRM_IOCTL_MEGPU_TASKQ_NOTIFY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_NOTIFY, \
		struct drm_megpu_taskq_notify)
#define DRM_IOCTL_MEGPU_TASKQ_ATTACH \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_ATTACH, \
		struct drm_megpu_taskq_attach)
#define DRM_IOCTL_MEGPU_TASKQ_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_WAIT, \
		 struct drm_megpu_taskq_wait)
#define DRM_IOCTL_MEGPU_TASKQ_SLEEP \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_SLEEP, \
		 struct drm_megpu_taskq_sleep)
#define DRM_IOCTL_MEGPU_TASKQ_DETACH \
	DRM_IOW(DRM_COMMAND_BASE + DRM_MEGPU_TASKQ_DETACH, \
		struct drm_megpu_taskq_detach)

/**
 * enum drm_megpu_param - parameters for &struct drm_megpu_get_param
 */
enum drm_megpu_param {
	/** @DRM_MEGPU_PARAM_DEVICE_ID: PCI device ID of the GPU. */
	DRM_MEGPU_PARAM_DEVICE_ID = 0,
	/**
	 * @DRM_MEGPU_PARAM_HW_VERSION: hardware version, major in bits 31:16
	 * and minor in bits 15:0.
	 */
	DRM_MEGPU_PARAM_HW_VERSION = 1,
	/** @DRM_MEGPU_PARAM_ENGINE_COUNT: number of engines. */
	DRM_MEGPU_PARAM_ENGINE_COUNT = 2,
	/**
	 * @DRM_MEGPU_PARAM_FEATURES: feature bits, the device's capability
	 * register (MEGPU_CAP_* in the hardware contract).
	 */
	DRM_MEGPU_PARAM_FEATURES = 3,
	/**
	 * @DRM_MEGPU_PARAM_ENGINE_TYPES: type of each engine, 2 bits per
	 * engine starting at bit 0: 0 gfx, 1 compute, 2 copy, 3 video.
	 */
	DRM_MEGPU_PARAM_ENGINE_TYPES = 4,
	/** @DRM_MEGPU_PARAM_VA_SIZE: bytes of GPU virtual address space. */
	DRM_MEGPU_PARAM_VA_SIZE = 5,
	/**
	 * @DRM_MEGPU_PARAM_JOB_TIMEOUT_MS: how long a job may run before its
	 * engine is reset. A job whose engine keeps taking tasks from task
	 * queues (a DEQUEUE) gets another period each time, up to 64.
	 */
	DRM_MEGPU_PARAM_JOB_TIMEOUT_MS = 6,
	/**
	 * @DRM_MEGPU_PARAM_MAILBOX_SLOTS: slots of the file's mailbox for
	 * GPU-to-CPU calls (SYSCALL instructions of wave programs); 0 when
	 * the device runs no wave programs.
	 */
	DRM_MEGPU_PARAM_MAILBOX_SLOTS = 7,
	/**
	 * @DRM_MEGPU_PARAM_MGPU_AGENT_ID: this device's agent id for the
	 * multi-GPU packets (MSEM_*, ARB_*). The driver numbers
	 * the megpu devices it binds 0, 1, ... in PCI address order and
	 * renumbers them all when one comes or goes; the id is the slot a
	 * device's MSEM packets use and its side in ARB blocks. Devices
	 * beyond MEGPU_MGPU_MAX_AGENTS get the id ~0 and their multi-GPU
	 * packets fault. -EOPNOTSUPP without the MGPU feature.
	 */
	DRM_MEGPU_PARAM_MGPU_AGENT_ID = 16,
	/**
	 * @DRM_MEGPU_PARAM_MGPU_AGENT_COUNT: how many agents share
	 * coordination words: the number of bound megpu devices, at most
	 * MEGPU_MGPU_MAX_AGENTS. -EOPNOTSUPP without the MGPU feature.
	 */
	DRM_MEGPU_PARAM_MGPU_AGENT_COUNT = 17,
};

/**
 * struct drm_megpu_get_param - query a device parameter
 *
 * Returns -EINVAL for an unknown @param or a non-zero @pad.
 */
struct drm_megpu_get_param {
	/** @param: in, one of &enum drm_megpu_param. */
	__u32 param;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: out, the parameter's value. */
	__u64 value;
};

/**
 * DRM_MEGPU_GEM_CREATE_READ_ONLY - the GPU may read but not write the BO
 *
 * Its pages are mapped without write permission in the GPU page tables:
 * a GPU write to it faults the job. An import never grants more than
 * its export: a buffer imported through PRIME is read-only on this GPU
 * when it is a read-only megpu BO of another device, or when its dma-buf
 * was exported without write access (DRM_IOCTL_PRIME_HANDLE_TO_FD
 * without DRM_RDWR). The CPU may map an imported buffer through this
 * device too (&struct drm_megpu_gem_mmap_offset), writable only when its
 * dma-buf was exported with write access.
 *
 * A BO has one dma-buf, as with every DRM driver: every later
 * PRIME_HANDLE_TO_FD of it returns a descriptor of the same file, with
 * the access of the first export whatever its flags. To hand a BO out
 * read-only, export it without DRM_RDWR first (or create it READ_ONLY);
 * once it was exported with DRM_RDWR, every export of it is writable.
 */
#define DRM_MEGPU_GEM_CREATE_READ_ONLY	0x1
#define DRM_MEGPU_GEM_CREATE_FLAGS	DRM_MEGPU_GEM_CREATE_READ_ONLY

/**
 * struct drm_megpu_gem_create - create a buffer object
 *
 * The BO is backed by shmem pages and mapped into the GPU address space of
 * the file that creates it, and of every file that later gets a handle to
 * it (through PRIME).
 *
 * Its pages stay pinned until the BO is freed, so they are charged: to the
 * file that creates it, up to the module parameter client_pinned_mb
 * (default a quarter of RAM), to the user who opened that file (its real
 * uid), up to user_pinned_mb for all of the user's files together
 * (default a quarter of RAM; no user limit for an opener with
 * CAP_IPC_LOCK), and to all megpu BOs together, up to pinned_mb (default
 * half of RAM). The charge stays with the BO until it is freed, also when
 * it outlives the file (PRIME). What the driver pins for a file counts
 * too: its mailbox (to the file and its user), its page tables (to the
 * user and all megpu memory), so opening the device fails with -ENOMEM
 * once user_pinned_mb or pinned_mb is reached. A PRIME import is the
 * exporter's charge, but the importing file and its user are charged the
 * import's scatterlist (32 bytes a page): DRM_IOCTL_PRIME_FD_TO_HANDLE
 * fails with -ENOSPC beyond the limits.
 *
 * Errors: -EINVAL for a zero size, a size above 1 GiB, unknown @flags or a
 * non-zero @pad, and when another thread of the file closed the new
 * handle before the ioctl returned (the BO is gone with it); -ENOSPC when
 * the BO would exceed any of the three pinning limits; -ENOMEM when
 * memory or GPU address space runs out.
 */
struct drm_megpu_gem_create {
	/** @size: in, bytes; rounded up to the page size. */
	__u64 size;
	/** @flags: in, DRM_MEGPU_GEM_CREATE_* flags. */
	__u32 flags;
	/** @handle: out, the GEM handle. */
	__u32 handle;
	/** @va: out, GPU virtual address of the BO in this file's space. */
	__u64 va;
	/** @pad: must be zero. */
	__u64 pad;
};

/**
 * struct drm_megpu_gem_mmap_offset - the fake offset to mmap a BO
 *
 * Any BO, imports included: an import is mapped through its dma-buf, and
 * mmap() with PROT_WRITE fails with -EACCES when the dma-buf was exported
 * without write access (DRM_RDWR).
 *
 * Errors: -ENOENT for an unknown handle, -EINVAL for a non-zero @pad.
 */
struct drm_megpu_gem_mmap_offset {
	/** @handle: in, the GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @offset: out, pass to mmap() on the DRM file. */
	__u64 offset;
};

/**
 * struct drm_megpu_gem_info - size, GPU address and access of a BO
 *
 * Used for BOs imported through PRIME, whose GPU address in this file's
 * space the importer does not know yet, nor whether its GPU may write
 * it (a job may list it DRM_MEGPU_BO_WRITE only if so).
 *
 * Errors: -ENOENT for an unknown handle, -EINVAL for a non-zero @pad or
 * @pad2.
 */
struct drm_megpu_gem_info {
	/** @handle: in, the GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @size: out, bytes. */
	__u64 size;
	/** @va: out, GPU virtual address in this file's space. */
	__u64 va;
	/**
	 * @flags: out, DRM_MEGPU_GEM_CREATE_READ_ONLY when the GPU may only
	 * read the BO (created so, or imported read-only), else 0.
	 */
	__u32 flags;
	/** @pad2: must be zero. */
	__u32 pad2;
};

/**
 * struct drm_megpu_gem_wait - wait until the GPU is done with a BO
 *
 * Waits for every fence on the BO's reservation object (reads and writes).
 *
 * Errors: -ENOENT for an unknown handle, -EINVAL for a non-zero @pad,
 * -ETIME when @timeout_ns passed first, -ERESTARTSYS on a signal.
 */
struct drm_megpu_gem_wait {
	/** @handle: in, the GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/**
	 * @timeout_ns: in, absolute CLOCK_MONOTONIC time in nanoseconds;
	 * 0 only polls.
	 */
	__s64 timeout_ns;
};

/** DRM_MEGPU_BO_READ - the job reads the BO */
#define DRM_MEGPU_BO_READ		0x1
/**
 * DRM_MEGPU_BO_WRITE - the job writes the BO
 *
 * Not for a BO the GPU may only read (DRM_MEGPU_GEM_CREATE_READ_ONLY, or
 * imported read-only): SUBMIT fails with -EACCES, so that a reader never
 * becomes the BO's writer for implicit synchronization.
 */
#define DRM_MEGPU_BO_WRITE		0x2

/**
 * struct drm_megpu_bo_ref - a BO a job uses
 *
 * The job waits for earlier writers of every BO it reads and for earlier
 * readers and writers of every BO it writes (implicit synchronization),
 * and its fence is added to the BO's reservation object accordingly.
 */
struct drm_megpu_bo_ref {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: DRM_MEGPU_BO_READ and/or DRM_MEGPU_BO_WRITE, not 0. */
	__u32 flags;
};

/**
 * struct drm_megpu_sync - a syncobj and a timeline point
 */
struct drm_megpu_sync {
	/** @handle: syncobj handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @point: timeline point, 0 for a binary syncobj. */
	__u64 point;
};

/**
 * DRM_MEGPU_SUBMIT_NO_IMPLICIT - do not wait for the BOs' earlier fences
 *
 * The job still adds its fence to the BOs; only explicit in-syncs order it.
 */
#define DRM_MEGPU_SUBMIT_NO_IMPLICIT	0x1
/**
 * DRM_MEGPU_SUBMIT_NO_FLUSH - do not flush the job's writes at its end
 *
 * See "Memory model" below: the job's fence and semaphore then only say
 * that its packets ran; its writes may still be on their way to memory
 * until a later flush.
 */
#define DRM_MEGPU_SUBMIT_NO_FLUSH	0x2
/**
 * DRM_MEGPU_SUBMIT_HOST_FLUSH - the host-driven flush handshake
 *
 * Instead of a flush by the engine, the job ends with the engine's idle
 * signal; on it the driver starts a host flush, waits for the device's
 * flush-done acknowledgment and only then signals the job's fence; jobs
 * that depend on it are started by the CPU after that. A flush that is
 * not acknowledged within a job timeout of the engine's end of the job
 * fails the job alone with -ETIMEDOUT.
 */
#define DRM_MEGPU_SUBMIT_HOST_FLUSH	0x4
#define DRM_MEGPU_SUBMIT_FLAGS \
	(DRM_MEGPU_SUBMIT_NO_IMPLICIT | DRM_MEGPU_SUBMIT_NO_FLUSH | \
	 DRM_MEGPU_SUBMIT_HOST_FLUSH)

/**
 * struct drm_megpu_extension - header of an extension of an ioctl
 *
 * Extensions form a chain through @next; each starts with this header
 * inside a larger struct that @id names. At most
 * %DRM_MEGPU_MAX_EXTENSIONS in one chain, each id at most once.
 */
struct drm_megpu_extension {
	/** @next: user pointer to the next extension, 0 at the end. */
	__u64 next;
	/** @id: DRM_MEGPU_EXT_ID_*. */
	__u32 id;
	/** @flags: must be zero. */
	__u32 flags;
};

/** DRM_MEGPU_MAX_EXTENSIONS - longest extension chain of one ioctl */
#define DRM_MEGPU_MAX_EXTENSIONS	8

/**
 * DRM_MEGPU_EXT_ID_OUT_SYNCS - more out-syncs for a job
 *
 * &struct drm_megpu_ext_out_syncs in &drm_megpu_submit.extensions.
 */
#define DRM_MEGPU_EXT_ID_OUT_SYNCS	1

/**
 * struct drm_megpu_ext_out_syncs - syncobjs that also receive a job's fence
 *
 * Each of @count syncobjs (a timeline point when its point is not 0)
 * gets the job's fence, as &drm_megpu_submit.out_sync does.
 */
struct drm_megpu_ext_out_syncs {
	/** @base: @base.id is %DRM_MEGPU_EXT_ID_OUT_SYNCS. */
	struct drm_megpu_extension base;
	/** @syncs: in, pointer to @count &struct drm_megpu_sync. */
	__u64 syncs;
	/** @count: in, 1 to DRM_MEGPU_MAX_SYNCS. */
	__u32 count;
	/** @pad: must be zero. */
	__u32 pad;
};

/** DRM_MEGPU_MAX_BOS - most BOs one job may reference */
#define DRM_MEGPU_MAX_BOS		256
/** DRM_MEGPU_MAX_SYNCS - most in-syncs one job may have */
#define DRM_MEGPU_MAX_SYNCS		64

/**
 * struct drm_megpu_submit - submit a job to one engine
 *
 * The job runs the indirect buffer (IB) at @ib_va, @ib_size bytes of
 * packets written by userspace into one of the file's BOs (which must
 * also be listed in @bos), after its dependencies: the in-syncs and,
 * unless DRM_MEGPU_SUBMIT_NO_IMPLICIT, the BOs' earlier fences. The job's
 * fence is installed in @out_sync when its handle is not 0.
 *
 * A job that faults (a bad packet or GPU address) completes with -EFAULT;
 * a job that does not complete within the timeout is stopped, its engine
 * is reset and it completes with -ETIMEDOUT. Either way, other jobs and
 * clients are not affected, except that a job that names a failed job in
 * its in-syncs completes with -ECANCELED, without running its IB, instead
 * of using its producer's unfinished output. Dependencies through BOs
 * (implicit) order jobs but do not pass errors on: a job that overwrites
 * a failed job's BO runs. The error is the fence's status, visible e.g.
 * through a sync_file exported from @out_sync.
 *
 * A hang bans the file (as amdgpu, i915 and xe ban a guilty context):
 * once a job of this file timed out, its jobs not yet run on that engine
 * complete with -ECANCELED without running, and every later SUBMIT on the
 * file fails with -EIO; open the device again to get a new file. Closing
 * a file (its last descriptor) waits up to a second in all for its queued
 * jobs to reach their engines, as with other DRM drivers, so that a
 * process may submit and exit; a killed process does not wait. Jobs still
 * queued then are cancelled (their fences complete with -ESRCH); jobs on
 * an engine run to their end.
 *
 * Memory model. The GPU's writes may reach memory late and out of order
 * (the device's relaxed write mode). A job's completed fence (out-sync,
 * GEM_WAIT, implicit sync) means all its writes are in memory, visible to
 * the CPU and every engine: by default the job ends with a flush by its
 * engine, or with DRM_MEGPU_SUBMIT_HOST_FLUSH with a host flush. A job
 * waiting for another on the GPU (semaphore) sees its writes for the same
 * reason. Within one engine, a job sees the writes of the jobs before it.
 * With DRM_MEGPU_SUBMIT_NO_FLUSH the fence only means the packets ran:
 * the writes become visible with a later flush (DRM_IOCTL_MEGPU_FLUSH, or
 * a flush by that engine). Inside an IB, a FLUSH packet orders the
 * engine's earlier writes before its later packets (e.g. a SIGNAL).
 *
 * Errors: -EINVAL for an engine index out of range, unknown @flags (or
 * both NO_FLUSH and HOST_FLUSH), a non-zero pad, an @out_sync point
 * without a handle, an IB that is empty, not dword aligned, larger than
 * MEGPU_IB_MAX_DWORDS dwords or outside every listed BO, more than
 * DRM_MEGPU_MAX_BOS BOs or DRM_MEGPU_MAX_SYNCS in-syncs, in-syncs whose
 * pending fences (chains and arrays unwrapped) come from more than
 * DRM_MEGPU_MAX_SYNCS fence contexts, a BO listed twice or with no or
 * unknown flags, an extension chain that is longer than
 * DRM_MEGPU_MAX_EXTENSIONS, names an unknown id or one id twice, or has
 * non-zero flags or pad; -ENOENT for an unknown BO or syncobj handle
 * or a missing timeline point; -EACCES for DRM_MEGPU_BO_WRITE on a BO
 * the GPU may only read; -EFAULT for unreadable arrays or
 * extensions; -EIO on a file banned after a hang; -EBUSY when the file
 * already has the module parameter job_limit's number of submitted jobs
 * (default 16384) not yet complete and released: submit again once some
 * are. The memory jobs hold is charged to the submitter's memory cgroup.
 */
struct drm_megpu_submit {
	/** @engine: in, engine index, below DRM_MEGPU_PARAM_ENGINE_COUNT. */
	__u32 engine;
	/** @flags: in, DRM_MEGPU_SUBMIT_* flags. */
	__u32 flags;
	/** @ib_va: in, GPU virtual address of the IB, dword aligned. */
	__u64 ib_va;
	/** @ib_size: in, IB size in bytes, a multiple of 4, not 0. */
	__u32 ib_size;
	/** @bo_count: in, number of entries in @bos. */
	__u32 bo_count;
	/** @bos: in, pointer to an array of struct drm_megpu_bo_ref. */
	__u64 bos;
	/**
	 * @in_syncs: in, pointer to an array of struct drm_megpu_sync: the
	 * job runs after their fences and fails with -ECANCELED when one
	 * of them failed. Of several fences of one context (a timeline's
	 * earlier points), only the latest counts.
	 */
	__u64 in_syncs;
	/** @in_sync_count: in, number of entries in @in_syncs. */
	__u32 in_sync_count;
	/** @pad: must be zero. */
	__u32 pad;
	/**
	 * @out_sync: in, syncobj (and timeline point) that receives the
	 * job's fence; handle 0 for none.
	 */
	struct drm_megpu_sync out_sync;
	/**
	 * @extensions: in, user pointer to a chain of &struct
	 * drm_megpu_extension (%DRM_MEGPU_EXT_ID_OUT_SYNCS), 0 for none.
	 */
	__u64 extensions;
};

/**
 * struct drm_megpu_flush - flush the GPU's writes to memory
 *
 * Starts a host flush and waits for the device's acknowledgment: every
 * write any engine issued before the call is then in memory. A call
 * made during a function level reset waits for the reset to end first.
 * At most 64 callers of the device wait for an acknowledgment at once;
 * the others wait, in order, for one of them to return first.
 *
 * Errors: -EINVAL for non-zero @flags or @pad, -EOPNOTSUPP when the device
 * has no posted writes (no MEGPU_CAP_FLUSH), -ETIMEDOUT when the device
 * does not acknowledge within a second, -ERESTARTSYS on a signal.
 */
struct drm_megpu_flush {
	/**
	 * @seqno: out, this flush's sequence number: it grows with every
	 * flush of the device, across function level resets too.
	 */
	__u64 seqno;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * DOC: GPU-to-CPU system calls
 *
 * A wave program's ``syscall dst, N, s0, s1, s2`` puts the call in a slot
 * of a mailbox the driver gives each file (DRM_MEGPU_PARAM_MAILBOX_SLOTS
 * slots, far fewer than work-items: callers wait for a free slot), parks
 * the wave and interrupts. The driver's interrupt handler scans every
 * ACTIVE slot: calls with N below DRM_MEGPU_SYSCALL_USER it answers
 * itself; the others it hands to the file's service, any thread of the
 * client blocked in DRM_IOCTL_MEGPU_SYSCALL_WAIT, which answers each with
 * DRM_IOCTL_MEGPU_SYSCALL_RETURN. A blocking ioctl rather than a DRM
 * event: a service thread sleeps in it without owning the file's event
 * stream, and gets several calls per wakeup. Only the file whose job
 * made a call sees and answers it.
 *
 * The answer restarts the caller's wave with the 64-bit result in dst.
 * Unanswered calls are covered by the job timeout. When the file is
 * closed, its calls are answered with -EPIPE (as a 64-bit two's
 * complement), so no wave of it waits for a service that is gone.
 *
 * SYSCALL is the only way a program stops for the CPU: the ISA's raw
 * ``sleep`` and ``interrupt`` fault the job (-EFAULT, fault code
 * PRIVILEGED), since nothing would restart such a wave or listen to its
 * interrupt.
 */

/** DRM_MEGPU_SYSCALL_ECHO - in the kernel: s0 | (u64)s1 << 32 */
#define DRM_MEGPU_SYSCALL_ECHO		1
/** DRM_MEGPU_SYSCALL_ADD - in the kernel: (u64)s0 + s1 + s2 */
#define DRM_MEGPU_SYSCALL_ADD		2
/*
 * DRM_MEGPU_SYSCALL_USER: N from here up goes to the file's service;
 * a kernel N the driver does not know returns -EOPNOTSUPP.
 */
#define DRM_MEGPU_SYSCALL_USER		0x100

/**
 * struct drm_megpu_syscall - one call handed to the service
 */
struct drm_megpu_syscall {
	/** @slot: the mailbox slot: answer with it. */
	__u32 slot;
	/** @op: N, at least DRM_MEGPU_SYSCALL_USER. */
	__u32 op;
	/** @args: s0, s1, s2. */
	__u32 args[3];
	/** @caller: the calling wave's id (MEGPU_WAVE_ID()). */
	__u32 caller;
};

/**
 * struct drm_megpu_syscall_wait - wait for calls to serve
 *
 * Blocks until at least one call of this file's jobs waits for the
 * service, or until @timeout_ns, and copies up to @count of them to
 * @calls. Each call is handed out once.
 *
 * Errors: -EINVAL for a zero @count or non-zero @flags; -EOPNOTSUPP
 * when the device runs no wave programs; -ETIME when no call came before
 * @timeout_ns; -EFAULT for an unwritable @calls; -ERESTARTSYS on a
 * signal.
 */
struct drm_megpu_syscall_wait {
	/** @calls: in, pointer to @count struct drm_megpu_syscall. */
	__u64 calls;
	/** @timeout_ns: in, absolute CLOCK_MONOTONIC time (0: poll). */
	__s64 timeout_ns;
	/** @count: in, room in @calls; out, calls written. */
	__u32 count;
	/** @flags: must be zero. */
	__u32 flags;
};

/**
 * struct drm_megpu_syscall_answer - one answer of a batch
 */
struct drm_megpu_syscall_answer {
	/** @ret: the 64-bit result. */
	__u64 ret;
	/** @slot: &drm_megpu_syscall.slot. */
	__u32 slot;
	/** @caller: &drm_megpu_syscall.caller. */
	__u32 caller;
};

/**
 * define DRM_MEGPU_SYSCALL_RETURN_BATCH - answer several calls at once
 *
 * &drm_megpu_syscall_return.answers points to @count struct
 * drm_megpu_syscall_answer; @ret, @slot and @caller must be zero. The
 * batch is answered whole or not at all, and each caller's wave is
 * restarted once, after its last answer.
 */
#define DRM_MEGPU_SYSCALL_RETURN_BATCH	0x1

/**
 * struct drm_megpu_syscall_return - answer a call, or a batch of them
 *
 * Writes @ret as the call's result and restarts the caller's wave (once
 * the caller has no other call with the service). With
 * %DRM_MEGPU_SYSCALL_RETURN_BATCH, answers @count calls in one ioctl.
 *
 * Errors: -EOPNOTSUPP when the device runs no wave programs (as
 * &DRM_IOCTL_MEGPU_SYSCALL_WAIT); -EINVAL for a @slot out of range, flags
 * other than %DRM_MEGPU_SYSCALL_RETURN_BATCH, non-zero @pad or @pad2, a
 * batch of 0 or of more answers than the mailbox has slots, a batch with
 * @ret, @slot or @caller set, or @answers or @count set without the
 * flag; -ENOENT when a slot holds no call of its caller handed to this
 * file's service (answered already, twice in the batch, or never handed
 * out): nothing of the batch is answered then; -EFAULT for an unreadable
 * @answers; -ENODEV after an unplug.
 */
struct drm_megpu_syscall_return {
	/** @ret: in, the 64-bit result. */
	__u64 ret;
	/** @slot: in, &drm_megpu_syscall.slot. */
	__u32 slot;
	/** @caller: in, &drm_megpu_syscall.caller. */
	__u32 caller;
	/** @flags: in, 0 or %DRM_MEGPU_SYSCALL_RETURN_BATCH. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
	/**
	 * @answers: in, with %DRM_MEGPU_SYSCALL_RETURN_BATCH: pointer to
	 * @count struct drm_megpu_syscall_answer.
	 */
	__u64 answers;
	/** @count: in, the answers in the batch. */
	__u32 count;
	/** @pad2: must be zero. */
	__u32 pad2;
};

/**
 * struct drm_megpu_msem_query - value of a multi-summed semaphore
 *
 * Reads the agents' 32-bit slots at @offset in the BO (which may be
 * imported from another megpu device) and returns their wrapping sum
 * over @mask, for debugging. Slots are read one by one, not
 * atomically together, so the value is exact only when no engine is
 * signalling or waiting on the semaphore.
 *
 * Errors: -ENOENT for an unknown @handle; -EINVAL for a non-zero @pad,
 * an unaligned @offset, an empty @mask or one with agents at or beyond
 * the agent count, or slots past the end of the BO; -EOPNOTSUPP
 * without the MGPU feature.
 */
struct drm_megpu_msem_query {
	/** @handle: in, GEM handle of the BO holding the slots. */
	__u32 handle;
	/** @mask: in, the agents whose slots are summed. */
	__u32 mask;
	/** @offset: in, byte offset of slot 0, 4-byte aligned. */
	__u64 offset;
	/** @value: out, the 32-bit wrapping sum (negative: bit 31). */
	__u32 value;
	/** @pad: must be zero. */
	__u32 pad;
	/** @slots: out, the slots read, agent n at index n. */
	__u32 slots[8];
};

/**
 * DOC: task queues
 *
 * A task queue (layout MEGPU_TQ_* in megpu_hw.h) is memory in a BO that
 * the client maps: CPU threads take tasks from it with atomics on its
 * lock word, and engines do the same when a job runs a DEQUEUE packet
 * from an IB. DEQUEUE uses the job's GPU addresses, so the GPU MMU keeps
 * it inside the client's own memory: the kernel needs to trust nothing
 * of a queue for that. DRM_IOCTL_MEGPU_TASKQ_CHECK is what the kernel
 * checks before it relies on a queue itself (the BO is the caller's,
 * writable by the GPU, the queue fits in it, size and alignment), and
 * gives the queue's GPU address. DRM_IOCTL_MEGPU_TASKQ_NOTIFY is the
 * CPU's release notification of the EVENT exclusion mode: engines that
 * sleep on a queue's lock look again at once, and so do CPU threads that
 * sleep in DRM_IOCTL_MEGPU_TASKQ_SLEEP, which an engine's release wakes
 * as well.
 */

/**
 * struct drm_megpu_taskq_check - check a task queue in a BO
 *
 * Errors: -EOPNOTSUPP when the device has no task queues (no
 * MEGPU_CAP_TASKQ in DRM_MEGPU_PARAM_FEATURES); -EINVAL for non-zero
 * @flags or @pad, @slots not a power of two in 1..MEGPU_TQ_MAX_SLOTS, or
 * @offset not MEGPU_TQ_ALIGN aligned; -ENOENT for a handle that is not
 * one of the caller's BOs; -EACCES for a BO the GPU may not write
 * (DRM_MEGPU_GEM_CREATE_READ_ONLY); -ERANGE when MEGPU_TQ_BYTES(@slots)
 * bytes at @offset do not fit in the BO.
 */
struct drm_megpu_taskq_check {
	/** @handle: in, the GEM handle of the BO holding the queue. */
	__u32 handle;
	/** @slots: in, descriptor slots of the queue. */
	__u32 slots;
	/** @offset: in, byte offset of the queue in the BO. */
	__u64 offset;
	/** @va: out, GPU virtual address of the queue in this file. */
	__u64 va;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_megpu_taskq_notify - wake engines sleeping on queue locks
 *
 * Writes the device's TASKQ_NOTIFY register. Cheap, needs no queue: a
 * CPU dequeuer calls it after releasing an EVENT-mode queue whose
 * WAITERS count is not zero, or after adding tasks.
 *
 * Errors: -EOPNOTSUPP without task queues; -EINVAL for non-zero @flags
 * or @pad; -ENODEV after an unplug.
 */
struct drm_megpu_taskq_notify {
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/** DRM_MEGPU_TASKQ_SLEEP_READ - return the release count at once */
#define DRM_MEGPU_TASKQ_SLEEP_READ	0x1

/**
 * struct drm_megpu_taskq_sleep - sleep until a queue is released
 *
 * How a CPU thread sleeps on an EVENT-mode queue's lock so that both an
 * engine's release and another thread's wake it (an event count): read
 * the device's release count (%DRM_MEGPU_TASKQ_SLEEP_READ), add 1 to the
 * queue's WAITERS and CPU_WAITERS, look at the lock again, and if it is
 * still taken call this with the count read: it returns once the count
 * differs from @seq, so a release between the look and the call is not
 * lost. The count moves on every release that found a sleeper: an
 * engine's (its MISC_IRQ_TASKQ_RELEASE), any file's
 * &DRM_IOCTL_MEGPU_TASKQ_NOTIFY, the driver's own dequeuer's. It is one
 * count per device, so a wake may be for another queue: look again.
 *
 * A file has at most 64 threads asleep here at once: a release wakes
 * them from a work item, file by file, and no list of sleepers one user
 * parks may grow without bound. Beyond, the call fails at once with
 * -EBUSY and the thread sleeps some other way (libmegpu: on the lock
 * word's futex, which CPU releases wake, and the safety poll).
 *
 * Errors: -EOPNOTSUPP without task queues; -EINVAL for unknown @flags;
 * -ETIME when @timeout_ns passed with the count still at @seq;
 * -EBUSY when the file has 64 threads asleep here already;
 * -ERESTARTSYS on a signal.
 */
struct drm_megpu_taskq_sleep {
	/** @timeout_ns: in, absolute CLOCK_MONOTONIC time; 0 only looks. */
	__s64 timeout_ns;
	/** @seq: in, the release count seen; out, the count now. */
	__u32 seq;
	/** @flags: 0 or %DRM_MEGPU_TASKQ_SLEEP_READ. */
	__u32 flags;
};

/**
 * struct drm_megpu_taskq_queue - one queue of &struct drm_megpu_taskq_attach
 */
struct drm_megpu_taskq_queue {
	/** @handle: the GEM handle of the BO holding the queue. */
	__u32 handle;
	/** @slots: descriptor slots of the queue (its MEGPU_TQ_HDR_SIZE). */
	__u32 slots;
	/** @offset: byte offset of the queue in the BO. */
	__u64 offset;
};

/**
 * struct drm_megpu_taskq_attach - let the driver dequeue for engines
 *
 * The driver's dequeuing module takes
 * batches of the tasks a GPU may run from @count queues (the first is the
 * engines' own, the others are stolen from), under the queues' lock word
 * like every other dequeuer, whenever one of @engines asks for work (the
 * device's "request work" interrupt, raised when its ring runs empty),
 * and submits each batch as a job of this file: DISPATCH per task, then
 * the task's notification as DEQUEUE writes it, with the owner id
 * MEGPU_TQ_OWNER_DRIVER(engine). An event-gated task stays in its queue
 * until its event happened (the driver reads the event word, which must
 * be in one of the file's BOs, when asked for work, on
 * &DRM_IOCTL_MEGPU_TASKQ_NOTIFY and about every millisecond meanwhile),
 * as DEQUEUE leaves it; then it is taken as DEQUEUE would take it (the
 * take rules are one for every dequeuer).
 *
 * The attachment completes once every queue is CLOSED and every one of
 * its tasks is notified (HDR_DONE == tail, whoever ran it), with status
 * -EIO if a job of the dequeuer failed, the file is banned (then the
 * dequeuer takes no task: each stays queued for the other consumers) or
 * the device had a function level
 * reset (an attach made during one waits for its end), -EPROTO if a queue became
 * malformed, -EFAULT if an event-gated task's event word is in none of
 * the file's BOs (the attachment then stops), -ECANCELED on a detach before
 * that, -ENODEV when the device is unplugged, -ETIMEDOUT (and the
 * attachment stops) when nothing moved in the queues for a job timeout
 * (&DRM_MEGPU_PARAM_JOB_TIMEOUT_MS), or after 64 job timeouts in all.
 * &DRM_IOCTL_MEGPU_TASKQ_WAIT waits for it. A CPU dequeuer that notifies
 * a queue's last task calls &DRM_IOCTL_MEGPU_TASKQ_NOTIFY so that the
 * driver looks again; so does a producer that adds tasks.
 *
 * Completion is not a dma_fence (no syncobj gets one): it depends on
 * userspace (CPU dequeuers running tasks, producers closing queues), and
 * a fence must not wait on userspace (the kernel's "Indefinite DMA
 * Fences" rules). The dequeuer's own jobs are ordinary jobs with
 * ordinary fences, which depend on the GPU only.
 *
 * One attachment per file; &DRM_IOCTL_MEGPU_TASKQ_DETACH or closing the
 * file ends it.
 *
 * Errors: -EOPNOTSUPP without task queues; -EINVAL for non-zero @flags,
 * @count 0 or above MEGPU_DEQ_MAX_QUEUES, @engines empty or naming an
 * engine that is missing or does not run DISPATCH (gfx and compute do),
 * a non-zero pad, or a bad queue size or alignment (as
 * &DRM_IOCTL_MEGPU_TASKQ_CHECK); -EFAULT for an unreadable @queues;
 * -ENOENT for a handle that is not the caller's; -EACCES, -ERANGE as
 * &DRM_IOCTL_MEGPU_TASKQ_CHECK; -EBUSY when the file is attached already,
 * or has the module parameter job_limit's number of jobs not yet
 * released (the dequeuer's jobs are the file's, as its SUBMIT jobs: a
 * detached attachment's jobs run out, and count until then); -ENOSPC
 * when the driver's IBs for the attachment (pinned, charged to the file
 * as BOs are, until the last job using them is gone) would exceed either
 * pinning limit.
 */
struct drm_megpu_taskq_attach {
	/** @queues: pointer to @count &struct drm_megpu_taskq_queue. */
	__u64 queues;
	/** @count: number of queues. */
	__u32 count;
	/** @engines: bit mask of the engines it dequeues for. */
	__u32 engines;
	/** @pad: must be zero. */
	__u32 pad;
	/** @flags: must be zero. */
	__u32 flags;
};

/**
 * struct drm_megpu_taskq_detach - stop this file's attachment
 *
 * Ends the attachment of &DRM_IOCTL_MEGPU_TASKQ_ATTACH: the driver takes
 * no more tasks for it, jobs already submitted run out, and the
 * attachment completes with -ECANCELED if it had not completed. The file
 * may attach again afterwards.
 *
 * Errors: -EOPNOTSUPP without task queues; -EINVAL for non-zero @flags or
 * @pad; -ENOENT when the file has no attachment.
 */
struct drm_megpu_taskq_detach {
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_megpu_taskq_wait - wait for this file's attachment to complete
 *
 * Blocks until the attachment of &DRM_IOCTL_MEGPU_TASKQ_ATTACH completes
 * (or at once if it has), then returns 0 with its @status. Up to 64
 * threads of a file may wait at once; a detach completes it (-ECANCELED).
 *
 * Errors: -EOPNOTSUPP without task queues; -EINVAL for non-zero @flags;
 * -EBUSY when 64 threads of the file wait already;
 * -ENOENT when the file has no attachment (never attached, or detached);
 * -ETIME when @timeout_ns passed first; -ERESTARTSYS on a signal.
 */
struct drm_megpu_taskq_wait {
	/** @timeout_ns: in, absolute CLOCK_MONOTONIC time; 0 only polls. */
	__s64 timeout_ns;
	/**
	 * @status: out, 0 when every task was notified, or the error the
	 * attachment ended with (see &struct drm_megpu_taskq_attach).
	 */
	__s32 status;
	/** @flags: must be zero. */
	__u32 flags;
};

#if defined(__cplusplus)
}
#endif

#endif /* _MEGPU_DRM_H_ */
