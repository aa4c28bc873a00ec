; CHECKSUM as a wave program: *sum += a[i] for every i < n (uint32,
; wraps), the same result as the built-in MEGPU_KERNEL_CHECKSUM on the
; same grid. The built-in adds one partial sum per work-group; here
; each work-item adds its element with an atomic add, which gives the
; same total.
;
; User arguments: user[0] = a (uint32 array), user[1] = sum (address of
; one uint32, 4-byte aligned), user[2] = n.

	s2r	r1, global_id
	ldarg32	r2, 16			; n
	cmpltu	r3, r1, r2
	if	r3
	shl	r4, r1, 2
	ldarg	r5, 0
	add	r5, r5, r4
	ld32	r6, [r5]		; a[i]
	ldarg	r7, 8
	atomadd32 r8, [r7], r6		; *sum += a[i]
	endif
	end
