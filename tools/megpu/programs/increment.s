; INCREMENT as a wave program: data[i] += 1 for i < n, what the built-in
; MEGPU_KERNEL_INCREMENT does. The work of "megpu bench partition"'s
; program row (seed 002: one program that engines and CPU threads run).
;
; User arguments: user[0] = data (GPU address of uint32s), user[1] = n.

	s2r	r1, global_id
	ldarg32	r2, 8			; n
	cmpltu	r3, r1, r2
	if	r3
	shl	r4, r1, 2
	ldarg	r5, 0
	add	r5, r5, r4
	ld32	r6, [r5]
	add	r6, r6, 1
	st32	[r5], r6
	endif
	end
