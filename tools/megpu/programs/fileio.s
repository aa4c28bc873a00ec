; Seed 003's fileio: work-item i fills chunk i of a buffer (dword k of
; the buffer = k), then asks the fileio service (MEGPU_SYS_FILEIO =
; 0x103) to write that chunk at its offset in the service's file: the
; file ends up holding the whole buffer.
;
; User arguments: user[0] = data (in a BO the service was given),
; user[1] = chunk bytes (a multiple of 4), user[2] = results (uint64
; array: each call's answer, the bytes written or an error).

	s2r	r1, global_id
	ldarg	r2, 0
	ldarg32	r3, 8			; chunk bytes
	mul	r4, r1, r3		; file offset
	add	r5, r2, r4		; chunk address
	shr	r6, r4, 2		; first dword index
	li	r7, 0
fill:	st32	[r5], r6
	add	r5, r5, 4
	add	r6, r6, 1
	add	r7, r7, 4
	cmpltu	r8, r7, r3
	brany	r8, fill
	add	r5, r2, r4
	syscall	r9, 0x103, r5, r3, r4	; MEGPU_SYS_FILEIO(addr, len, offset)
	ldarg	r10, 16
	shl	r11, r1, 3
	add	r10, r10, r11
	st64	[r10], r9
	end
