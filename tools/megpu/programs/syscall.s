; Seed 003: every work-item calls the CPU. Work-item i runs
; "syscall r4, 1, i, lane, wave_id" and stores the 64-bit result at
; out[i]. The engine needs a mailbox (SET_MAILBOX); the CPU answers the
; ACTIVE slots and restarts the callers (Documentation/megpu-hw.rst,
; "Mailboxes and SYSCALL").
;
; User arguments: user[0] = out (uint64 array), user[1] = n.

	s2r	r1, global_id
	ldarg32	r2, 8			; n
	cmpltu	r3, r1, r2
	if	r3
	s2r	r5, lane_id
	s2r	r6, wave_id
	syscall	r4, 1, r1, r5, r6	; r4 = the CPU's answer
	ldarg	r7, 0
	shl	r8, r1, 3
	add	r7, r7, r8
	st64	[r7], r4
	endif
	end
