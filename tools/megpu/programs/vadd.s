; VADD as a wave program: c[i] = a[i] + b[i] for i < n (uint32, wraps),
; the same as the built-in MEGPU_KERNEL_VADD on the same grid.
;
; User arguments (struct megpu_pargs.user): user[0] = a, user[1] = b,
; user[2] = c (GPU addresses of uint32 arrays), user[3] = n.
; Work-item i = global_id handles element i; items past n do nothing.

	s2r	r1, global_id
	ldarg32	r2, 24			; n
	cmpltu	r3, r1, r2
	if	r3			; lanes with i < n
	shl	r4, r1, 2		; byte offset of element i
	ldarg	r5, 0
	add	r5, r5, r4
	ld32	r6, [r5]		; a[i]
	ldarg	r5, 8
	add	r5, r5, r4
	ld32	r7, [r5]		; b[i]
	add	r6, r6, r7
	ldarg	r5, 16
	add	r5, r5, r4
	st32	[r5], r6		; c[i]
	endif
	end
