; A user's program for task queues (seed 002), no built-in kernel's:
; c[i] = k * a[i] + (b[i] ^ 0x55) for i < n, where k is an argument past
; LDARG's 128 bytes, read through the ARGS special register: the task's
; argument block is longer than the program-arguments block.
;
; User arguments: user[0] = a, user[1] = b, user[2] = c (GPU addresses
; of uint32s), user[3] = n; k a uint32 at byte 200 of the user arguments.

	s2r	r1, global_id
	ldarg32	r2, 24			; n
	cmpltu	r3, r1, r2
	if	r3
	shl	r4, r1, 2
	ldarg	r5, 0
	add	r5, r5, r4
	ld32	r6, [r5]		; a[i]
	s2r	r8, args
	ld32	r9, [r8+200]		; k
	mul	r6, r6, r9
	ldarg	r5, 8
	add	r5, r5, r4
	ld32	r7, [r5]		; b[i]
	xor	r7, r7, 0x55
	add	r6, r6, r7
	ldarg	r5, 16
	add	r5, r5, r4
	st32	[r5], r6		; c[i]
	endif
	end
