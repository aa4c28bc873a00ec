/* SPDX-License-Identifier: MIT */
/*
 * libmegpu: userspace access to megpu GPUs on top of libdrm.
 *
 * Functions return 0 or a negative errno; they never print.
 */
#ifndef LIBMEGPU_H
#define LIBMEGPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "megpu_drm.h"

#define MEGPU_DRIVER_NAME "megpu"

/* A relative timeout that never expires. */
#define MEGPU_FOREVER INT64_MAX

/**
 * struct megpu - an open megpu render node
 * @fd: render node file descriptor
 * @node: its path, e.g. /dev/dri/renderD128
 */
struct megpu {
	int fd;
	char node[64];
};

/*
 * Open the index-th megpu render node found by drmGetDevices2().
 * Returns -ENODEV when there are not that many megpu devices.
 */
int megpu_open(struct megpu *gpu, unsigned int index);
/* Open the render node again: a second client of the same device. */
int megpu_reopen(const struct megpu *gpu, struct megpu *other);
void megpu_close(struct megpu *gpu);

/* Count the megpu render nodes present. */
int megpu_count_devices(void);

int megpu_get_param(struct megpu *gpu, uint32_t param, uint64_t *value);

/*
 * DRM_IOCTL_MEGPU_FLUSH: a host flush; when it returns, every write any
 * engine issued before the call is in memory. *@seqno (optional) gets the
 * device's flush sequence number of this flush.
 */
int megpu_flush(struct megpu *gpu, uint64_t *seqno);

/* "gfx", "compute", "copy", "video", or "?" for an unknown type. */
const char *megpu_engine_type_name(unsigned int type);
/* MEGPU_ENGINE_* for a name from megpu_engine_type_name(), else -EINVAL. */
int megpu_engine_type_by_name(const char *name);

/* Engine count and the packed type word (DRM_MEGPU_PARAM_ENGINE_*). */
int megpu_engines(struct megpu *gpu, unsigned int *count, uint64_t *types);
/* Index of the first engine of @type, or -ENODEV. */
int megpu_find_engine(struct megpu *gpu, unsigned int type);

/* The driver's name of engine @index (fdinfo, debugfs): "gfx0", "copy1". */
void megpu_engine_name(uint64_t types, unsigned int index, char *buf,
		       size_t len);
/* What an engine type accepts: bit per opcode, bit per kernel. */
uint32_t megpu_engine_packets(unsigned int type);
uint32_t megpu_engine_kernels(unsigned int type);

/* --- Buffer objects (bo.c) --- */

/**
 * struct megpu_bo - a GEM buffer object of one client
 * @gpu: the client (render node) owning @handle
 * @handle: GEM handle in @gpu's file
 * @flags: DRM_MEGPU_GEM_CREATE_* it was created with (0 when imported)
 * @size: bytes, page rounded
 * @va: GPU virtual address in @gpu's address space
 * @map: CPU mapping after megpu_bo_map(), else NULL
 */
struct megpu_bo {
	struct megpu *gpu;
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t va;
	void *map;
};

/* Create a BO (GEM_CREATE); *bo is allocated and freed by megpu_bo_free. */
int megpu_bo_new(struct megpu *gpu, uint64_t size, uint32_t flags,
		 struct megpu_bo **bo);
/* Map the BO for the CPU (idempotent); the mapping is in bo->map. */
int megpu_bo_map(struct megpu_bo *bo);
/* Unmap, close the handle and free; NULL is allowed. */
void megpu_bo_free(struct megpu_bo *bo);
/*
 * Wait until the GPU is done with the BO: @timeout_ns is relative, 0 only
 * polls, MEGPU_FOREVER never expires. -ETIME when it expired.
 */
int megpu_bo_wait(struct megpu_bo *bo, int64_t timeout_ns);
/* GEM_INFO on any handle of @gpu. */
int megpu_bo_info(struct megpu *gpu, uint32_t handle, uint64_t *size,
		  uint64_t *va);
/*
 * GEM_INFO's access flags of any handle of @gpu: READ_ONLY when its GPU
 * may only read the BO (a job may not list it as written).
 */
int megpu_bo_flags(struct megpu *gpu, uint32_t handle, uint32_t *flags);
/* PRIME: a dma-buf fd for the BO (O_CLOEXEC | O_RDWR). */
int megpu_bo_export(struct megpu_bo *bo, int *dmabuf_fd);
/* PRIME: a BO of @gpu for a dma-buf fd; size, va and flags from GEM_INFO. */
int megpu_bo_import(struct megpu *gpu, int dmabuf_fd, struct megpu_bo **bo);

/* --- Command streams (cs.c) --- */

/**
 * struct megpu_cs - a growable buffer of packet dwords
 * @dw: the dwords
 * @len: dwords used
 * @cap: dwords allocated
 * @error: first error of an emitter (sticky), 0 if none
 *
 * Emitters return 0 or the error and also record it in @error, so a
 * sequence of emits can be checked once.
 */
struct megpu_cs {
	uint32_t *dw;
	uint32_t len;
	uint32_t cap;
	int error;
};

void megpu_cs_init(struct megpu_cs *cs);
void megpu_cs_fini(struct megpu_cs *cs);
/* Empty the stream, keep the memory, clear the error. */
void megpu_cs_reset(struct megpu_cs *cs);
static inline uint32_t megpu_cs_bytes(const struct megpu_cs *cs)
{
	return cs->len * 4;
}

/*
 * Any packet: header with @op, @count payload dwords from @payload (zeros
 * when NULL) and header @flags. No validation: tests use it to build
 * malformed packets; everyone else uses the typed emitters below.
 */
int megpu_cs_packet(struct megpu_cs *cs, unsigned int op, unsigned int flags,
		    const uint32_t *payload, unsigned int count);

int megpu_cs_nop(struct megpu_cs *cs, unsigned int count);
int megpu_cs_ib(struct megpu_cs *cs, uint64_t addr, uint32_t dwords);
/* @n data dwords, 1..MEGPU_PKT_MAX_COUNT - 2. */
int megpu_cs_write_data(struct megpu_cs *cs, uint64_t addr,
			const uint32_t *data, unsigned int n);
int megpu_cs_write32(struct megpu_cs *cs, uint64_t addr, uint32_t value);
int megpu_cs_timestamp(struct megpu_cs *cs, uint64_t addr, uint64_t value,
		       bool irq);
int megpu_cs_copy(struct megpu_cs *cs, uint64_t src, uint64_t dst,
		  uint32_t bytes);
int megpu_cs_fill(struct megpu_cs *cs, uint64_t dst, uint32_t bytes,
		  uint32_t value);
int megpu_cs_dispatch(struct megpu_cs *cs, unsigned int kernel, uint64_t args,
		      uint32_t grid_x, uint32_t grid_y, uint32_t group_x,
		      uint32_t group_y);
int megpu_cs_set_context(struct megpu_cs *cs, uint64_t pt_base,
			 uint32_t ctx_id);
/* SET_MAILBOX (ring only): the engine's mailbox for SYSCALL, bus address. */
int megpu_cs_set_mailbox(struct megpu_cs *cs, uint64_t addr, uint32_t slots);
int megpu_cs_signal(struct megpu_cs *cs, uint64_t addr, uint64_t value);
int megpu_cs_wait(struct megpu_cs *cs, uint64_t addr, uint64_t value);
/* FLUSH: the engine's earlier writes reach memory before its next packet. */
int megpu_cs_flush(struct megpu_cs *cs);
/* IDLE_SIGNAL: raise the engine's IDLE interrupt at this point. */
int megpu_cs_idle_signal(struct megpu_cs *cs);
/*
 * DEQUEUE (seed 002): the engine takes tasks from the @count queues whose
 * GPU addresses are the 64-bit words at @queues, its own being @home;
 * MEGPU_DEQ_* @flags.
 */
int megpu_cs_dequeue(struct megpu_cs *cs, uint64_t queues, uint32_t count,
		     uint32_t home, uint32_t flags);

/*
 * DISPATCH of an image kernel (BLUR3X3, SEPIA) over a @width x @height
 * image: one work-item per pixel, work-groups of whole rows (up to
 * MEGPU_MAX_GROUP_SIZE pixels wide, as many rows as fit), so that each
 * row is one write.
 */
int megpu_cs_dispatch_image(struct megpu_cs *cs, unsigned int kernel,
			    uint64_t args, uint32_t width, uint32_t height);

/* Longest line megpu_cs_decode_one() writes for a short packet. */
#define MEGPU_CS_LINE_MAX 256

/*
 * Decode the packet at @dw (@n dwords left) into one text line in @buf,
 * e.g. "TIMESTAMP addr=0x1000 value=88 irq" (snprintf semantics: a long
 * WRITE_DATA is cut). Returns the dwords the packet takes, or -ENODATA
 * when it runs past @n, -EINVAL for an unknown opcode, -EBADMSG for a
 * payload length the packet cannot have; @buf then describes the error.
 */
int megpu_cs_decode_one(const uint32_t *dw, size_t n, char *buf, size_t len);

/*
 * Decode a whole stream, calling @line for each packet (and once for the
 * error that stops it). Returns the packet count or the first error;
 * *@bad_dword (optional) is the dword offset of the bad packet.
 */
int megpu_cs_decode(const uint32_t *dw, size_t n,
		    void (*line)(void *priv, size_t dword, const char *text),
		    void *priv, size_t *bad_dword);

/*
 * Resolve a symbolic address "@name" (from megpu_cs_parse_line) to a GPU
 * address; return 0 or a negative errno.
 */
typedef int (*megpu_cs_resolve_fn)(void *priv, const char *name,
				   uint64_t *addr);

/*
 * Parse one line in the decoder's syntax and emit the packet: the inverse
 * of megpu_cs_decode_one(). Addresses may be "@name" or "@name+offset",
 * resolved by @resolve (NULL: symbols are an error). Blank lines and
 * '#' comments emit nothing. Returns 0, -EINVAL for a syntax error or
 * the resolver's error.
 */
int megpu_cs_parse_line(struct megpu_cs *cs, const char *line,
			megpu_cs_resolve_fn resolve, void *priv);

/* Packet name ("WRITE_DATA") or NULL; opcode for a name or -EINVAL. */
const char *megpu_packet_name(unsigned int op);
int megpu_packet_by_name(const char *name);

/*
 * DISPATCH of a wave program (MEGPU_KERNEL_PROGRAM): @pargs is the GPU
 * address of its argument block, see megpu_pargs_write().
 */
int megpu_cs_dispatch_program(struct megpu_cs *cs, uint64_t pargs,
			      uint32_t grid_x, uint32_t grid_y,
			      uint32_t group_x, uint32_t group_y);

/* --- Kernel arguments (kargs.c) --- */

/**
 * struct megpu_kargs - a DISPATCH argument block, see MEGPU_KARGS_*
 * @ptr: four GPU addresses
 * @n: element count
 * @param: kernel parameters (SAXPY: param[0] is the float a's bits)
 */
struct megpu_kargs {
	uint64_t ptr[4];
	uint32_t n;
	uint32_t param[3];
};

/**
 * struct megpu_pargs - a program DISPATCH argument block, see MEGPU_PARGS_*
 * @program: GPU address of the first instruction (8-byte aligned)
 * @len: instructions
 * @user: user arguments; LDARG at byte offset 8 * i reads user[i], and
 *	LDARG32 at 8 * i and 8 * i + 4 its low and high halves
 */
struct megpu_pargs {
	uint64_t program;
	uint32_t len;
	uint64_t user[16];	/* MEGPU_PARGS_USER_SIZE bytes */
};

/* Encode/decode MEGPU_PARGS_SIZE little-endian bytes (flags are 0). */
void megpu_pargs_pack(void *dst, const struct megpu_pargs *p);
void megpu_pargs_unpack(const void *src, struct megpu_pargs *p);
/*
 * Write @p at @offset of a mapped BO (8-byte aligned); *@va (optional)
 * gets its GPU address for megpu_cs_dispatch_program().
 */
int megpu_pargs_write(struct megpu_bo *bo, uint64_t offset,
		      const struct megpu_pargs *p, uint64_t *va);

/*
 * Kernel name ("vadd", "program") or NULL; MEGPU_KERNEL_* for a name or
 * -EINVAL.
 */
const char *megpu_kernel_name(unsigned int kernel);
int megpu_kernel_by_name(const char *name);

/* Encode/decode MEGPU_KARGS_SIZE little-endian bytes. */
void megpu_kargs_pack(void *dst, const struct megpu_kargs *k);
void megpu_kargs_unpack(const void *src, struct megpu_kargs *k);
/*
 * Write @k at @offset of a mapped BO (offset 8-byte aligned); *@va
 * (optional) gets its GPU address for megpu_cs_dispatch().
 */
int megpu_kargs_write(struct megpu_bo *bo, uint64_t offset,
		      const struct megpu_kargs *k, uint64_t *va);
/* The bits of a float, for param[]. */
uint32_t megpu_f32_bits(float f);
/*
 * What built-in @kernel does to host arrays ptr[0..3] of @n elements
 * (CHECKSUM adds to ptr[1][0]): the CPU reference results are checked
 * against. The image kernels (BLUR3X3, SEPIA) read image ptr[0] and
 * write image ptr[1], param[0] x param[1] pixels with a row pitch of
 * param[2] pixels, and ignore @n. -EINVAL for an unknown kernel or a
 * pitch below the width.
 */
int megpu_kernel_ref(unsigned int kernel, uint32_t *const ptr[4], uint32_t n,
		     const uint32_t param[3]);
/*
 * The image kernels on the CPU, exactly as the hardware contract defines
 * them, on RGBA8888 pixels (r in bits 7:0, alpha in 31:24): @width x
 * @height pixels of rows @pitch pixels apart; pixels of @dst between
 * rows are left alone. @src and @dst must not overlap.
 * BLUR3X3: per channel (alpha too), the 3x3 mean rounded down, edges
 * clamped to the image. SEPIA: the contract's weights, alpha kept.
 */
void megpu_ref_blur3x3(const uint32_t *src, uint32_t *dst, uint32_t width,
		       uint32_t height, uint32_t pitch);
void megpu_ref_sepia(const uint32_t *src, uint32_t *dst, uint32_t width,
		     uint32_t height, uint32_t pitch);
uint32_t megpu_ref_sepia_px(uint32_t px);

/* --- Jobs (submit.c) --- */

#define MEGPU_JOB_MAX_BOS DRM_MEGPU_MAX_BOS
#define MEGPU_JOB_MAX_SYNCS DRM_MEGPU_MAX_SYNCS
#define MEGPU_JOB_MAX_OUTS 8

/**
 * struct megpu_job - one submission to one engine
 * @engine: engine index
 * @flags: DRM_MEGPU_SUBMIT_* flags
 * @bos: BOs the job uses; the IB BO is added (READ) at submit
 * @bo_count: entries in @bos
 * @in: in-syncs (binary: point 0)
 * @in_count: entries in @in
 * @out: out-sync, handle 0 for none
 * @more_out: more out-syncs (DRM_MEGPU_EXT_ID_OUT_SYNCS)
 * @more_out_count: entries in @more_out
 * @ib: BO holding the IB; NULL lets megpu_job_upload() allocate one that
 *	megpu_job_fini() frees
 * @ib_offset: byte offset of the IB in @ib
 * @ib_dwords: IB length set by megpu_job_upload()
 * @own_ib: @ib was allocated by the job
 */
struct megpu_job {
	unsigned int engine;
	uint32_t flags;
	struct drm_megpu_bo_ref bos[MEGPU_JOB_MAX_BOS];
	unsigned int bo_count;
	struct drm_megpu_sync in[MEGPU_JOB_MAX_SYNCS];
	unsigned int in_count;
	struct drm_megpu_sync out;
	struct drm_megpu_sync more_out[MEGPU_JOB_MAX_OUTS];
	unsigned int more_out_count;
	struct megpu_bo *ib;
	uint64_t ib_offset;
	uint32_t ib_dwords;
	bool own_ib;
};

void megpu_job_init(struct megpu_job *job, unsigned int engine);
/* Free the IB BO if the job allocated it. */
void megpu_job_fini(struct megpu_job *job);
/* List a BO (flags are or-ed in when it is listed already); -E2BIG. */
int megpu_job_add_bo(struct megpu_job *job, struct megpu_bo *bo,
		     uint32_t flags);
/* Add an in-sync; -E2BIG when there are DRM_MEGPU_MAX_SYNCS already. */
int megpu_job_wait_sync(struct megpu_job *job, uint32_t syncobj,
			uint64_t point);
void megpu_job_signal_sync(struct megpu_job *job, uint32_t syncobj,
			   uint64_t point);
/*
 * One more syncobj (a point when @point is not 0) that gets the job's
 * fence, through SUBMIT's out-sync extension; -E2BIG past
 * MEGPU_JOB_MAX_OUTS.
 */
int megpu_job_add_signal_sync(struct megpu_job *job, uint32_t syncobj,
			      uint64_t point);
/* Use @bo at @offset for the IB instead of a BO of the job's own. */
void megpu_job_set_ib(struct megpu_job *job, struct megpu_bo *bo,
		      uint64_t offset);
/*
 * Copy @cs into the IB, allocating the IB BO on first use or when it is
 * too small. The job's own IB BO is waited for if the GPU may still run
 * it; an IB set with megpu_job_set_ib() is the caller's to keep idle
 * (so batches can fill many IBs of one BO). -EINVAL for an empty stream
 * or one with an emit error, -ENOSPC when it does not fit the set IB.
 */
int megpu_job_upload(struct megpu *gpu, struct megpu_job *job,
		     const struct megpu_cs *cs);
/* DRM_IOCTL_MEGPU_SUBMIT of the uploaded IB (again and again if need be). */
int megpu_job_submit(struct megpu *gpu, struct megpu_job *job);
/*
 * The same with a chain of SUBMIT extensions (struct drm_megpu_extension)
 * of the caller's after the job's own out-sync extension.
 */
int megpu_job_submit_ext(struct megpu *gpu, struct megpu_job *job,
			 uint64_t extensions);
/* megpu_job_upload() then megpu_job_submit(). */
int megpu_job_run(struct megpu *gpu, struct megpu_job *job,
		  const struct megpu_cs *cs);

/* --- Syncobjs and fences (syncobj.c) --- */

int megpu_syncobj_new(struct megpu *gpu, bool signaled, uint32_t *handle);
void megpu_syncobj_free(struct megpu *gpu, uint32_t handle);
/*
 * Wait for a syncobj point (0: binary) to signal, waiting for it to be
 * submitted first; @timeout_ns relative. -ETIME when it expired.
 */
int megpu_syncobj_wait(struct megpu *gpu, uint32_t handle, uint64_t point,
		       int64_t timeout_ns);
/* Wait for all (or, with !@all, any) of @n syncobjs (binary). */
int megpu_syncobj_wait_many(struct megpu *gpu, uint32_t *handles,
			    unsigned int n, bool all, int64_t timeout_ns);
/* Copy the fence at @src_point into @dst (at @dst_point, 0: binary). */
int megpu_syncobj_transfer(struct megpu *gpu, uint32_t dst,
			   uint64_t dst_point, uint32_t src,
			   uint64_t src_point);
/* Export the fence at @point as a sync_file fd. */
int megpu_syncobj_export(struct megpu *gpu, uint32_t handle, uint64_t point,
			 int *sync_file);
/* Replace a binary syncobj's fence by a sync_file's fence. */
int megpu_syncobj_import(struct megpu *gpu, uint32_t handle, int sync_file);
/*
 * Status of a sync_file: 0 signaled without error, 1 still pending, or
 * the fence error (-EFAULT, -ETIMEDOUT, ...). -errno if the query fails.
 */
int megpu_sync_file_status(int sync_file);
/*
 * The error of the fence at a syncobj point (0: binary): 0 signaled
 * fine, -EINPROGRESS still pending, the fence error (-EFAULT faulted,
 * -ETIMEDOUT hung, -ECANCELED a dependency failed, ...), or an errno of
 * the query itself (-EINVAL when there is no fence).
 */
int megpu_fence_status(int fd, uint32_t syncobj, uint64_t point);

/* --- debugfs (debugfs.c) --- */

/*
 * Path of /sys/kernel/debug/dri/<N>/<name> for this device (N from the
 * card node of the same DRM device). -ENOENT when it does not exist.
 */
int megpu_debugfs_path(struct megpu *gpu, const char *name, char *buf,
		       size_t len);
/* The value of "key value" line @key of debugfs file "counters". */
int megpu_debugfs_counter(struct megpu *gpu, const char *key,
			  uint64_t *value);

/* Engines megpu_flush_stats() holds: MEGPU_MAX_ENGINES. */
#define MEGPU_STATS_ENGINES 16

/**
 * struct megpu_flush_stats - debugfs "flush": posted writes and flushes
 * @relaxed: the device's write mode is relaxed (else strict)
 * @host_started: host flushes the driver started
 * @host_done: host flushes the device acknowledged
 * @mc_queue: writes in the memory-controller queue
 * @engines: entries in @eng
 * @eng: per engine, in index order: its driver name ("gfx0"), writes in
 *	its queue, writes that found it full, FLUSH packets it ran, IDLE
 *	interrupts the device raised and the driver counted
 */
struct megpu_flush_stats {
	bool relaxed;
	uint64_t host_started, host_done;
	uint32_t mc_queue;
	unsigned int engines;
	struct {
		char name[16];
		uint32_t queue, stalled_writes, flushes, idle_signals;
		uint32_t idle_irqs;
	} eng[MEGPU_STATS_ENGINES];
};

/* Read and parse debugfs "flush"; -ENOENT without it, -EBADMSG. */
int megpu_flush_stats(struct megpu *gpu, struct megpu_flush_stats *st);
/*
 * The device's write mode through debugfs "write_mode": *@strict, or
 * set it (strict drains the queues first). -ENOENT when the driver has
 * no such file (no runtime knob).
 */
int megpu_write_mode_get(struct megpu *gpu, bool *strict);
int megpu_write_mode_set(struct megpu *gpu, bool strict);

/*
 * The seed 001 dump (debugfs "rings", "frames", "timestamps",
 * "semaphores", "resources") parsed, and the test knobs. The ring words
 * are decoded here with megpu_cs_decode_one(): one packet decoder for the
 * driver's rings, the tool and the tests. Engines are named by index.
 */

/* A whole debugfs file of the device in a new buffer, or NULL (errno). */
char *megpu_debugfs_read(struct megpu *gpu, const char *name);
/* Write @text to a debugfs knob of the device; 0 or -errno. */
int megpu_debugfs_write(struct megpu *gpu, const char *name,
			const char *text);
/* A whole text file (debugfs, sysfs, procfs) in a new buffer, or NULL. */
char *megpu_read_file(const char *path);
/*
 * A bool parameter of megpu.ko (gpu_semaphores, drop_waits): 1 (Y), 0
 * (N) or -errno; set it (root).
 */
int megpu_module_param_get(const char *name);
int megpu_module_param_set(const char *name, bool on);
/* debugfs delay_us: @engine sleeps @usec before each packet (0: off). */
int megpu_debug_delay_us(struct megpu *gpu, unsigned int engine,
			 unsigned int usec);

/**
 * struct megpu_debug_ref - a semaphore object's tag, "copy0@12:sem7"
 * @engine: engine index, -1 when the name is unknown
 * @ts: timestamp
 * @sem: semaphore object number
 */
struct megpu_debug_ref {
	int engine;
	uint64_t ts;
	uint32_t sem;
};

/**
 * struct megpu_debug_frame - a frame as the planner recorded it ("frames")
 * @engine: engine index
 * @seqno: the job's timestamp
 * @ctx: its GPU context
 * @ib: its IB's GPU address
 * @nwaits: entries of @waits
 * @waits: what it waits for
 * @signal: its own semaphore
 */
struct megpu_debug_frame {
	unsigned int engine;
	uint64_t seqno;
	uint32_t ctx;
	uint64_t ib;
	unsigned int nwaits;
	struct megpu_debug_ref waits[MEGPU_STATS_ENGINES];
	struct megpu_debug_ref signal;
};

/*
 * debugfs "frames": the last frames of every engine, oldest first per
 * engine, into @f (up to @max); their count, or -ENOENT / -EBADMSG.
 */
int megpu_debug_frames(struct megpu *gpu, struct megpu_debug_frame *f,
		       unsigned int max);

/* debugfs "timestamps": @engine's current and next timestamps. */
int megpu_debug_timestamps(struct megpu *gpu, unsigned int engine,
			   uint64_t *cur, uint64_t *next);

/**
 * struct megpu_debug_sems - debugfs "semaphores": the pool
 * @pool: objects in the pool
 * @busy: objects in use (tag or waiters not expired)
 * @pool_waits: jobs that found the pool in use and waited
 * @count: entries of @obj (at most @max of megpu_debug_semaphores())
 * @obj: objects in use: number, tag, slot value
 */
struct megpu_debug_sems {
	unsigned int pool, busy;
	uint64_t pool_waits;
	unsigned int count;
	struct {
		struct megpu_debug_ref tag;
		uint64_t value;
	} *obj;
};

/* Parse "semaphores"; @s->obj gets up to @max objects (NULL: none). */
int megpu_debug_semaphores(struct megpu *gpu, struct megpu_debug_sems *s,
			   unsigned int max);

/**
 * struct megpu_debug_resource - a BO's resource object ("resources")
 * @id: the driver's BO number
 * @size: its size
 * @nwrites: entries of @write
 * @write: its last writers, one per engine at most
 * @nreads: entries of @read
 * @read: its last readers since
 */
struct megpu_debug_resource {
	unsigned int id;
	uint64_t size;
	unsigned int nwrites, nreads;
	struct megpu_debug_ref write[MEGPU_STATS_ENGINES];
	struct megpu_debug_ref read[MEGPU_STATS_ENGINES];
};

/* Parse "resources" into @r (up to @max); the count or -errno. */
int megpu_debug_resources(struct megpu *gpu, struct megpu_debug_resource *r,
			  unsigned int max);

/**
 * struct megpu_debug_ring - the words of an engine's last frames
 * @engine: engine index
 * @size: the ring's size in bytes
 * @start: ring offset of @dw[0]
 * @ndw: words in @dw
 * @dw: the words, in ring order from @start (allocated)
 */
struct megpu_debug_ring {
	unsigned int engine;
	uint32_t size, start, ndw;
	uint32_t *dw;
};

/* Read debugfs "rings" into @r (up to @max engines); count or -errno. */
int megpu_debug_rings(struct megpu *gpu, struct megpu_debug_ring *r,
		      unsigned int max);
void megpu_debug_rings_free(struct megpu_debug_ring *r, unsigned int n);

/**
 * struct megpu_debug_packet - one decoded ring packet
 * @off: its ring offset
 * @op: opcode
 * @a: first operand: addr (WAIT, SIGNAL, TIMESTAMP, IB, SET_MAILBOX),
 *	page table (SET_CONTEXT)
 * @b: second: value (WAIT, SIGNAL, TIMESTAMP), dwords (IB), ctx
 *	(SET_CONTEXT), slots (SET_MAILBOX)
 * @flags: header flags
 * @text: the decoder's line
 */
struct megpu_debug_packet {
	uint32_t off;
	unsigned int op;
	uint64_t a, b;
	uint32_t flags;
	char text[MEGPU_CS_LINE_MAX];
};

/*
 * Decode the words of @r into @p (up to @max packets): their count, or
 * the decoder's error (-EINVAL, -EBADMSG, -ENODATA) at a bad packet.
 */
int megpu_debug_ring_packets(const struct megpu_debug_ring *r,
			     struct megpu_debug_packet *p, unsigned int max);

/* --- The seed's FIG. 5 chain: blur, then sepia (image.c) --- */

/**
 * struct megpu_chain - BLUR3X3 on one engine, then SEPIA on another that
 * depends on it, src -> tmp -> dst, images @width x @height, packed rows
 * @gpu: the client
 * @blur_engine: engine of the blur (producer)
 * @sepia_engine: engine of the sepia (consumer)
 * @width: pixels per row
 * @height: rows
 * @src: input image (mapped)
 * @tmp: the blurred image, written by the blur, read by the sepia
 * @dst: output image (mapped)
 * @args: the two DISPATCH argument blocks
 * @blur: the blur job
 * @sepia: the sepia job
 * @blur_sync: the blur's out-sync, the sepia's in-sync
 * @sepia_sync: the sepia's out-sync
 */
struct megpu_chain {
	struct megpu *gpu;
	unsigned int blur_engine, sepia_engine;
	uint32_t width, height;
	struct megpu_bo *src, *tmp, *dst, *args;
	struct megpu_job blur, sepia;
	uint32_t blur_sync, sepia_sync;
};

/**
 * struct megpu_chain_times - when each step of a chain run happened
 * @start: megpu_now_ns() when the blur was submitted (launch)
 * @blur_done: the blur's fence signalled (with HOST_FLUSH: after the
 *	driver's idle -> flush -> flush done)
 * @sepia_done: the sepia's fence signalled
 */
struct megpu_chain_times {
	int64_t start, blur_done, sepia_done;
};

/*
 * Set up a chain: BOs (zeroed, mapped) and jobs. The engines must accept
 * DISPATCH of their kernel (gfx, compute, video); -EINVAL otherwise.
 */
int megpu_chain_init(struct megpu_chain *c, struct megpu *gpu,
		     unsigned int blur_engine, unsigned int sepia_engine,
		     uint32_t width, uint32_t height);
void megpu_chain_fini(struct megpu_chain *c);
/*
 * Run the chain once on what is in c->src: the blur submitted with
 * @blur_flags (DRM_MEGPU_SUBMIT_HOST_FLUSH, 0 for the GPU-internal flush,
 * DRM_MEGPU_SUBMIT_NO_FLUSH for none), the sepia with the default flush,
 * ordered only by the blur's out-sync as its in-sync (NO_IMPLICIT).
 * Waits for both (@timeout_ns each); 0, a fence error or -ETIME.
 * c->dst then holds the result; @t (optional) gets the times.
 */
int megpu_chain_run(struct megpu_chain *c, uint32_t blur_flags,
		    int64_t timeout_ns, struct megpu_chain_times *t);
/*
 * The expected result on the CPU: blur then sepia of c->src into
 * @expect (width * height pixels). 0 or -ENOMEM.
 */
int megpu_chain_reference(const struct megpu_chain *c, uint32_t *expect);
/* Pixels of c->dst that differ from @expect. */
uint64_t megpu_chain_mismatches(const struct megpu_chain *c,
				const uint32_t *expect);

/* --- time --- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t megpu_now_ns(void);

/* --- Wave programs: assembler and disassembler (asm.c) --- */

/**
 * struct megpu_prog - an assembled wave program
 * @insn: the instructions, host endian (megpu_prog_store() for memory)
 * @len: their count
 */
struct megpu_prog {
	uint64_t *insn;
	uint32_t len;
};

/* Longest line megpu_disasm_one() writes. */
#define MEGPU_ASM_LINE_MAX 96

/*
 * Assemble @src (syntax at the top of asm.c) into *@prog, which the
 * caller frees with megpu_prog_fini(). Returns 0, -ENOMEM, or -EINVAL
 * with "line N: what" in @err (optional, @errlen bytes).
 */
int megpu_asm(const char *src, struct megpu_prog *prog, char *err,
	      size_t errlen);
void megpu_prog_fini(struct megpu_prog *prog);
/* Store the program as little-endian words (8 * len bytes) at @dst. */
void megpu_prog_store(const struct megpu_prog *prog, void *dst);

/*
 * One instruction to one line of assembler (branch targets as indexes).
 * A word with no mnemonic spelling becomes ".quad 0x...": -EINVAL for an
 * unknown opcode, -EBADMSG for a known one with bad fields; either way
 * the line assembles back to @insn.
 */
int megpu_disasm_one(uint64_t insn, char *buf, size_t len);
/* Every instruction, a line each; returns how many were not valid. */
int megpu_disasm(const uint64_t *insn, size_t n,
		 void (*line)(void *priv, size_t pc, const char *text),
		 void *priv);

/* Mnemonic ("fadd") or NULL; opcode for a mnemonic or -EINVAL. */
const char *megpu_op_name(unsigned int op);
int megpu_op_by_name(const char *name);
/* Special register name for S2R ("global_id") or NULL. */
const char *megpu_sreg_name(unsigned int sr);

/* --- Wave programs in buffers (program.c) --- */

/*
 * Assemble @src and store it at offset 0 of a new mapped BO of @gpu
 * (*@bo, freed with megpu_bo_free()); *@len gets the instruction count
 * for struct megpu_pargs. Errors as megpu_asm() (@err optional).
 */
int megpu_prog_load(struct megpu *gpu, const char *src, struct megpu_bo **bo,
		    uint32_t *len, char *err, size_t errlen);

/* --- GPU-to-CPU system calls (syscall.c) --- */

/*
 * Ops of the example services (the seed's vprintf, malloc, free, fileio),
 * all >= DRM_MEGPU_SYSCALL_USER. GPU addresses are 32 bits (the VA size),
 * so one argument register holds one.
 *
 * PRINTF s0 = address of a record: u32 format address (a NUL-terminated
 *	string), u32 argument count (<= MEGPU_SYS_PRINTF_MAX_ARGS), then
 *	that many u32 arguments. Conversions: %d %i %u %x %X %o %c with
 *	flags "-0 +#" and a width, %s (a u32 GPU address of a string) and
 *	%%. Output is line-buffered per calling wave: whole lines only
 *	reach the file. Returns the bytes formatted.
 * MALLOC s0 = size: the address of a 16-byte aligned block of the pool,
 *	or 0 when it does not fit (or size is 0).
 * FREE	s0 = an address MALLOC returned: 0, or -EINVAL for anything else.
 * FILEIO s0 = address, s1 = length, s2 = file offset: pwrite()s those
 *	bytes to the service's file; the bytes written or -errno.
 * Any address or length outside the BOs given to the service answers
 * -EFAULT, as a 64-bit two's complement; an op with no handler
 * -EOPNOTSUPP, as the kernel answers an unknown kernel op.
 */
#define MEGPU_SYS_PRINTF		(DRM_MEGPU_SYSCALL_USER + 0)
#define MEGPU_SYS_MALLOC		(DRM_MEGPU_SYSCALL_USER + 1)
#define MEGPU_SYS_FREE			(DRM_MEGPU_SYSCALL_USER + 2)
#define MEGPU_SYS_FILEIO		(DRM_MEGPU_SYSCALL_USER + 3)
#define MEGPU_SYS_PRINTF_MAX_ARGS	8
/* Error value @err (a negative errno) as a syscall result. */
#define MEGPU_SYS_ERR(err)		((uint64_t)(int64_t)(err))

/* DRM_MEGPU_PARAM_MAILBOX_SLOTS: 0 when the device runs no programs. */
int megpu_mailbox_slots(struct megpu *gpu, uint32_t *slots);
/*
 * DRM_IOCTL_MEGPU_SYSCALL_WAIT: up to @max calls into @calls, waiting
 * up to @timeout_ns (relative; 0 polls, MEGPU_FOREVER never expires).
 * Returns the count (> 0), -ETIME when none came, or -errno.
 */
int megpu_syscall_wait(struct megpu *gpu, struct drm_megpu_syscall *calls,
		       uint32_t max, int64_t timeout_ns);
/* DRM_IOCTL_MEGPU_SYSCALL_RETURN: answer @slot of @caller with @ret. */
int megpu_syscall_return(struct megpu *gpu, uint32_t slot, uint32_t caller,
			 uint64_t ret);
/*
 * The same for @n answers in one ioctl (DRM_MEGPU_SYSCALL_RETURN_BATCH),
 * all or none; -ENOENT when one of them is no call to answer.
 */
int megpu_syscall_return_batch(struct megpu *gpu,
			       const struct drm_megpu_syscall_answer *answers,
			       uint32_t n);

struct megpu_service;

/* A handler: the result the caller's dst gets. Runs in a service thread. */
typedef uint64_t (*megpu_sys_fn)(struct megpu_service *svc,
				 const struct drm_megpu_syscall *call,
				 void *priv);

#define MEGPU_SERVICE_MAX_OPS		32
#define MEGPU_SERVICE_MAX_BOS		64
#define MEGPU_SERVICE_MAX_THREADS	8

/**
 * struct megpu_service - the CPU side of a client's user syscalls
 * @gpu: the client whose calls it answers
 * @calls: calls answered
 * @errors: answers SYSCALL_RETURN refused (the call was gone)
 * @wait_error: the error that stopped a thread, 0 if none
 *
 * The rest is private. Set up handlers and BOs, then start threads (or
 * call megpu_service_serve() from your own loop); stop before freeing
 * what the handlers use.
 */
struct megpu_service {
	struct megpu *gpu;
	uint64_t calls, errors;
	int wait_error;
	/*
	 * Answer each call with an ioctl of its own instead of one batch
	 * per wait (for comparisons; the threads read it at each wait, set
	 * it with __atomic_store_n()).
	 */
	bool answer_each;
	/* private */
	pthread_mutex_t lock;
	struct {
		uint32_t op;
		megpu_sys_fn fn;
		void *priv;
	} ops[MEGPU_SERVICE_MAX_OPS];
	unsigned int nops;
	struct {
		uint64_t va, size;
		uint8_t *map;
	} bos[MEGPU_SERVICE_MAX_BOS];
	unsigned int nbos;
	pthread_t threads[MEGPU_SERVICE_MAX_THREADS];
	unsigned int nthreads;
	int stop;
	void *printf_state, *pool_state;
	int file_fd;
};

int megpu_service_init(struct megpu_service *svc, struct megpu *gpu);
/* Stops the threads if they run and frees the service's state. */
void megpu_service_fini(struct megpu_service *svc);
/* Answer @op (>= DRM_MEGPU_SYSCALL_USER, else -EINVAL) with @fn. */
int megpu_service_handle(struct megpu_service *svc, uint32_t op,
			 megpu_sys_fn fn, void *priv);
/* Let handlers reach a mapped BO of svc->gpu by GPU address. */
int megpu_service_add_bo(struct megpu_service *svc, struct megpu_bo *bo);
/*
 * The CPU pointer for @len bytes at GPU address @va, or NULL when they
 * are not all inside one BO given to the service.
 */
void *megpu_service_ptr(struct megpu_service *svc, uint64_t va,
			uint64_t len);
/*
 * Wait up to @timeout_ns (relative) for calls and answer them in this
 * thread: the count answered, -ETIME, or -errno of SYSCALL_WAIT.
 */
int megpu_service_serve(struct megpu_service *svc, int64_t timeout_ns);
/* Run @n (1..MEGPU_SERVICE_MAX_THREADS) threads looping on serve. */
int megpu_service_start(struct megpu_service *svc, unsigned int n);
/* Stop and join the threads (within ~100 ms), flush printf's lines. */
void megpu_service_stop(struct megpu_service *svc);

/* The example services; each adds its op(s) and what it needs. */
/* PRINTF: lines go to @fd with write(2). */
int megpu_service_printf(struct megpu_service *svc, int fd);
/* MALLOC and FREE from the whole of @pool (mapped, svc->gpu's). */
int megpu_service_malloc(struct megpu_service *svc, struct megpu_bo *pool);
/* FILEIO into @fd (kept open by the caller). */
int megpu_service_fileio(struct megpu_service *svc, int fd);
/* Flush PRINTF lines still buffered (text with no newline yet). */
void megpu_service_printf_flush(struct megpu_service *svc);

/*
 * Multi-GPU coordination (seed 000): the rules of MSEM and ARB as pure
 * functions (mgpu.c), the same arithmetic as the device.
 */
/* Wrapping 32-bit sum of the slots in @mask (the logical semaphore). */
uint32_t megpu_msem_sum(const uint32_t *slots, unsigned int agents,
			uint32_t mask);
/* Bit 31: the logical semaphore is negative. */
bool megpu_msem_negative(uint32_t sum);
/* 0 if MSEM_WAIT accepts @mask for @agent of @agents, else -EINVAL. */
int megpu_msem_check_mask(unsigned int agent, unsigned int agents,
			  uint32_t mask);
/* One MSEM_SIGNAL by @agent. */
void megpu_msem_signal_model(uint32_t *slots, unsigned int agent);
/*
 * One MSEM_WAIT attempt, atomically: pre-decrement, sum, compensate.
 * 1: passed, 0: blocked (slots unchanged), -EINVAL: bad mask.
 */
int megpu_msem_wait_model(uint32_t *slots, unsigned int agents,
			  unsigned int agent, uint32_t mask, uint32_t *sum);
/*
 * Eq. 1, the tournament's nodes and the literal tree are megpu_arb_*()
 * in megpu_hw.h, the code the device runs.
 */
/* Eq. 2: (DW2[16,8,0] || DW1[24,16,8,0]) AND the Table 3 ID of @gpu. */
uint8_t megpu_arb_eq2(uint32_t dw1, uint32_t dw2, unsigned int gpu);
/* Eq. 3 as printed (known wrong: see the seed notes); 1 grants. */
unsigned int megpu_arb_eq3(uint8_t a);
/* A schedule block's agent list from @seed over the agents of @mask. */
size_t megpu_mgpu_schedule(uint64_t seed, uint32_t agents_mask,
			   uint8_t *out, size_t len);

/* Packets and ioctls of seed 000 (mgpu_drm.c). */
int megpu_cs_msem_signal(struct megpu_cs *cs, uint64_t addr);
int megpu_cs_msem_wait(struct megpu_cs *cs, uint64_t addr, uint32_t mask);
/* ARB_ACQUIRE (@acquire) or ARB_RELEASE with MEGPU_ARB_FLAG_* @flags. */
int megpu_cs_arb(struct megpu_cs *cs, bool acquire, uint64_t addr,
		 uint32_t flags);
/* This device's agent id and the agent count (GET_PARAM 16, 17). */
int megpu_mgpu_agent(struct megpu *gpu, unsigned int *id, unsigned int *count);
/* DRM_IOCTL_MEGPU_MSEM_QUERY: the summed value of the slots at @offset. */
int megpu_msem_query(struct megpu_bo *bo, uint64_t offset, uint32_t mask,
		     uint32_t *value);
/* --- Task queues (seed 002, taskq.c) --- */

/**
 * struct megpu_task - a task descriptor, MEGPU_TQ_DESC_* (the seed's MyTask)
 * @cpu_fn: CPU function: the CPU version of built-in kernel @cpu_fn, or
 *	MEGPU_TQ_NONE
 * @gpu_kernel: built-in kernel an engine runs, or MEGPU_TQ_NONE
 * @data: GPU address of the argument block (struct megpu_kargs)
 * @range_x: global grid; @range_y
 * @group_x: local grid; @group_y
 * @notify: GPU address of a MEGPU_TQ_NOTE_* record, or 0
 * @affinity: MEGPU_TQ_AFF_*
 * @arg_size: 0 or MEGPU_KARGS_SIZE
 * @event_addr: 0, or the 64-bit event word the task waits for
 * @event_value: the value it waits for (wrap-safe >=)
 */
struct megpu_task {
	uint32_t cpu_fn;
	uint32_t gpu_kernel;
	uint64_t data;
	uint32_t range_x, range_y;
	uint32_t group_x, group_y;
	uint64_t notify;
	uint32_t affinity;
	uint32_t arg_size;
	uint64_t event_addr;
	uint64_t event_value;
};

/* A queue as the CPU sees it: its mapping and its GPU address. */
struct megpu_taskq {
	uint8_t *mem;
	uint64_t va;
};

/* GPU addresses [va, va + size) are at @cpu for CPU dequeuers. */
struct megpu_tq_region {
	uint64_t va;
	void *cpu;
	uint64_t size;
};

/**
 * struct megpu_tq_agent - a CPU dequeuer (the seed's CPU dequeuing module)
 * @owner: lock owner id, 1..0x3fffffff, unique among the dequeuers
 * @regions: how GPU addresses in tasks reach the CPU; @nregions
 * @notify: called to tell the engines (the driver writes
 *	MEGPU_REG_TASKQ_NOTIFY) after a release of an EVENT queue that had
 *	waiters, and after taking tasks an engine could not take (which may
 *	have blocked a queue's head for it), and after notifying the last
 *	task of a closed queue (for the driver's dequeuer, see
 *	megpu_taskq_attach()); NULL: engines notice within their poll period
 * @notify_priv: its argument
 * @nonatomic: test only: take the lock with a read, a pause and a write,
 *	and hold it a little longer, so that two holders overlap
 * @give_up_ns: 0: wait as long as a queue is open or holds a task this
 *	dequeuer may take later; else return -ETIMEDOUT after that long
 *	without a task (whoever was to add or free them stopped for good)
 * @tasks: counters of this dequeuer; @batches, @steals, @lock_retries,
 *	@faults (tasks notified with a STATUS), @busy_ns (running tasks)
 * @take_ns: time spent in takes that got tasks (look, lock, take,
 *	release); @take_hist: how many took < 1, 4, 16, 64, 256 us, more
 */
struct megpu_tq_agent {
	uint32_t owner;
	const struct megpu_tq_region *regions;
	unsigned int nregions;
	void (*notify)(void *priv);
	/*
	 * EVENT mode with engines: sleep in the driver, where an engine's
	 * release wakes the thread (megpu_taskq_sleep_cb, with notify_priv).
	 * Without it a thread sleeps on a futex that only a CPU's release
	 * wakes, and an engine's release is seen at the safety poll.
	 */
	int (*sleep)(void *priv, uint32_t *seq, uint64_t timeout_ns);
	void *notify_priv;
	bool nonatomic;
	uint64_t give_up_ns;
	uint64_t tasks, batches, steals, lock_retries, faults, busy_ns;
	/* EVENT mode: sleeps, and locks taken after the safety poll woke it */
	uint64_t event_sleeps, event_polled;
	uint64_t take_ns, take_hist[6];
};

/* The CPU address of GPU range [@va, @va + @len) in @a's regions, or NULL. */
void *megpu_tq_xlate(const struct megpu_tq_agent *a, uint64_t va,
		     uint64_t len);
/*
 * Run the wave program of the program-arguments block at GPU address
 * @pargs on the CPU over a @grid_x x @grid_y grid of @group_x x @group_y
 * work-groups, as an engine's DISPATCH of MEGPU_KERNEL_PROGRAM would,
 * memory through @a's regions (wave_cpu.c). 0, or the MEGPU_FAULT_* that
 * stopped it.
 */
int megpu_program_run_cpu(const struct megpu_tq_agent *a, uint64_t pargs,
			  uint32_t grid_x, uint32_t grid_y, uint32_t group_x,
			  uint32_t group_y);
/*
 * The driver's check of a queue of @slots at @offset of @bo
 * (DRM_IOCTL_MEGPU_TASKQ_CHECK); *@va gets its GPU address.
 */
int megpu_taskq_check(struct megpu *gpu, struct megpu_bo *bo,
		      uint64_t offset, uint32_t slots, uint64_t *va);
/*
 * DRM_IOCTL_MEGPU_TASKQ_NOTIFY: engines sleeping on a queue look again.
 * As a struct megpu_tq_agent notify callback, @priv is the struct megpu.
 */
int megpu_taskq_wake(struct megpu *gpu);
void megpu_taskq_wake_cb(void *priv);
/*
 * DRM_IOCTL_MEGPU_TASKQ_SLEEP: with @timeout_ns 0, read the device's
 * release count into *@seq; else sleep up to @timeout_ns (relative)
 * until it differs from *@seq and store it. 0, -ETIME, or -errno. As a
 * struct megpu_tq_agent sleep callback, @priv is the struct megpu.
 */
int megpu_taskq_sleep(struct megpu *gpu, uint32_t *seq, uint64_t timeout_ns);
int megpu_taskq_sleep_cb(void *priv, uint32_t *seq, uint64_t timeout_ns);
/*
 * Seed 002's discrete variant (DRM_IOCTL_MEGPU_TASKQ_ATTACH): the driver
 * dequeues from @count queues for @engines whenever one asks for work,
 * until every queue is closed and all its tasks are notified. 0 or
 * -errno.
 */
int megpu_taskq_attach(struct megpu *gpu, const struct drm_megpu_taskq_queue *qs,
		       unsigned int count, uint32_t engines);
/*
 * Wait up to @timeout_ns (relative; 0 polls) for the attachment to
 * complete (DRM_IOCTL_MEGPU_TASKQ_WAIT): what it completed with (0, or
 * -EIO, -EPROTO, -ECANCELED, -ETIMEDOUT, -ENODEV), or -ETIME when it did
 * not in time, -ENOENT without an attachment.
 */
int megpu_taskq_wait(struct megpu *gpu, int64_t timeout_ns);
int megpu_taskq_detach(struct megpu *gpu);

/* Encode/decode MEGPU_TQ_DESC_SIZE little-endian bytes. */
void megpu_task_pack(void *dst, const struct megpu_task *t);
void megpu_task_unpack(const void *src, struct megpu_task *t);
/* Malformed (as the device judges it): false. */
bool megpu_task_valid(const struct megpu_task *t);
/* May a CPU take @t from a queue with @qflags (the event aside)? */
bool megpu_task_cpu_eligible(const struct megpu_task *t, uint32_t qflags);

/*
 * Lay out an empty queue of @slots (a power of two) at @mem (GPU address
 * @va, both MEGPU_TQ_ALIGN aligned, MEGPU_TQ_BYTES(slots) bytes).
 * Batch sizes 0 take the defaults. -EINVAL for bad sizes or alignment.
 */
int megpu_taskq_init(struct megpu_taskq *q, void *mem, uint64_t va,
		     uint32_t slots, uint32_t flags, uint32_t batch_gpu,
		     uint32_t batch_cpu);
/* A header word (MEGPU_TQ_HDR_*), read atomically. */
uint32_t megpu_taskq_read(const struct megpu_taskq *q, uint32_t off);
/*
 * Append up to @n tasks under the queue lock; returns how many fit (0
 * when full), -EBADMSG for a malformed queue, -ETIMEDOUT when the lock
 * stayed held past the agent's give_up_ns.
 */
int megpu_taskq_push(struct megpu_taskq *q, struct megpu_tq_agent *a,
		     const struct megpu_task *t, unsigned int n);
/* Set FLAGS.CLOSED (after the last push). */
void megpu_taskq_close(struct megpu_taskq *q);

/*
 * One take: look without the lock (none eligible: 0, the lock word not
 * written), lock, take the contiguous run of CPU-eligible tasks at the
 * head (at most the queue's CPU batch; a malformed one alone), release.
 * Returns the count, with the tasks in @out and the index of the first
 * in *@first; -EBADMSG for a malformed queue, -ETIMEDOUT when the lock
 * stayed held past the agent's give_up_ns.
 */
int megpu_taskq_take(struct megpu_taskq *q, struct megpu_tq_agent *a,
		     struct megpu_task *out, uint32_t *first);
/*
 * Run @t on this CPU (megpu_kernel_ref on the translated arrays); 0 or
 * the MEGPU_FAULT_* code that stopped it (MMU: an address outside the
 * regions, BAD_ARG, TQ_BAD_TASK).
 */
uint32_t megpu_taskq_run(struct megpu_tq_agent *a, const struct megpu_task *t);
/* Write @t's notification (DONE last, atomically). */
void megpu_taskq_notify(struct megpu_tq_agent *a, const struct megpu_task *t,
			uint32_t batch, uint32_t status);
/*
 * The CPU dequeuer's loop, the engine's DEQUEUE mirrored: home queue
 * first, with MEGPU_DEQ_STEAL the others after it; ends when every queue
 * is closed and holds nothing this CPU may take (with MEGPU_DEQ_ONCE:
 * after a pass that found nothing). 0 or -EBADMSG.
 */
int megpu_taskq_dequeue(struct megpu_tq_agent *a, struct megpu_taskq *qs,
			unsigned int count, unsigned int home, uint32_t flags);
/*
 * @n threads, thread i running megpu_taskq_dequeue(&agents[i], qs,
 * count, i % count, flags); returns when all ended: 0 or the first error.
 */
int megpu_taskq_threads(struct megpu_tq_agent *agents, unsigned int n,
			struct megpu_taskq *qs, unsigned int count,
			uint32_t flags);

/*
 * debugfs mgpu_schedule: every agent takes its coordination steps in the
 * order of @agent (len 0: free running again). Needs debugfs (root).
 */
int megpu_mgpu_schedule_set(struct megpu *gpu, const uint8_t *agent,
			    size_t len);
/*
 * The device-side seed mode: the devices draw @len steps from @seed over
 * the agents of @agents_mask themselves (megpu_mgpu_seed_agent()), the
 * order megpu_mgpu_schedule() lists for the same seed. Needs debugfs.
 */
int megpu_mgpu_schedule_seeded(struct megpu *gpu, uint64_t seed,
			       uint32_t agents_mask, size_t len);
/*
 * The same, long enough for a whole run, with the devices' step trace:
 * mark each agent done (megpu_mgpu_schedule_done()) once its work
 * completed so that its turns pass, then read the trace: *@count steps
 * were taken, min(*count, @max) records (MEGPU_MGPU_REC_SIZE bytes each,
 * the device's layout) are copied to @recs. Needs debugfs.
 */
int megpu_mgpu_schedule_traced(struct megpu *gpu, uint64_t seed,
			       uint32_t agents_mask, size_t len);
int megpu_mgpu_schedule_done(struct megpu *gpu, unsigned int agent);
int megpu_mgpu_trace_read(struct megpu *gpu, uint8_t *recs, uint32_t max,
			  uint32_t *count);
#define MEGPU_MGPU_ENGINES 16	/* MEGPU_MAX_ENGINES */
/* debugfs mgpu: the agent, the schedule position, the MSEM/ARB counters. */
struct megpu_mgpu_status {
	int agent;		/* -1: beyond the agents the device can number */
	unsigned int count;
	unsigned int sched_pos, sched_len;
	unsigned int steps;
	unsigned int engines;
	uint32_t msem_retries[MEGPU_MGPU_ENGINES];
	uint32_t msem_false_blocks[MEGPU_MGPU_ENGINES];
	uint32_t arb_spins[MEGPU_MGPU_ENGINES];
	uint32_t arb_failed_waits[MEGPU_MGPU_ENGINES];
};
int megpu_mgpu_status(struct megpu *gpu, struct megpu_mgpu_status *st);

#endif
