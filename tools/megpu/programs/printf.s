; Seed 003's vprintf: work-item i builds a record for the printf
; service (libmegpu.h, MEGPU_SYS_PRINTF = 0x100) and calls it; the
; service formats it on the CPU and prints it as one whole line.
;
; Record (32 bytes per work-item at records + 32 i): u32 format address,
; u32 argument count (3), then the arguments i, grid_x and a string
; address.
;
; User arguments: user[0] = records (in a BO the service was given),
; user[1] = format address (low half) and string address (high half),
; user[2] = results (uint64 array: what each call returned, the bytes
; printed or an error).

	s2r	r1, global_id
	ldarg	r2, 0
	shl	r3, r1, 5
	add	r2, r2, r3		; my record
	ldarg32	r4, 8			; format address
	st32	[r2], r4
	li	r5, 3
	st32	[r2+4], r5
	st32	[r2+8], r1		; %u: i
	s2r	r6, grid_x
	st32	[r2+12], r6		; %u: the grid
	ldarg32	r7, 12
	st32	[r2+16], r7		; %s: the string
	syscall	r8, 0x100, r2, r0, r0	; MEGPU_SYS_PRINTF(record)
	ldarg	r9, 16
	shl	r10, r1, 3
	add	r9, r9, r10
	st64	[r9], r8
	end
