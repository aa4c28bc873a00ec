; SAXPY as a wave program: y[i] = a * x[i] + y[i] for i < n (IEEE
; binary32, the product rounded before the add), the same as the
; built-in MEGPU_KERNEL_SAXPY on the same grid.
;
; User arguments: user[0] = x, user[1] = y (GPU addresses of float
; arrays), user[2] = n, user[3] = the bits of the float a.

	s2r	r1, global_id
	ldarg32	r2, 16			; n
	cmpltu	r3, r1, r2
	if	r3
	shl	r4, r1, 2
	ldarg	r5, 0
	add	r5, r5, r4
	ld32	r6, [r5]		; x[i]
	ldarg32	r7, 24			; a
	fmul	r6, r6, r7
	ldarg	r5, 8
	add	r5, r5, r4
	ld32	r7, [r5]		; y[i]
	fadd	r6, r6, r7
	st32	[r5], r6		; y[i]
	endif
	end
