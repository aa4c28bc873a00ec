#!/usr/bin/env python3
"""Sort ThreadSanitizer reports (make check-tsan) into device state and
guest RAM, print a table, and exit 1 if any report is on device state.

A report whose memory has a "Location is" line (heap, global, stack,
thread) is on QEMU's or the device's own state: a bug to fix or, for
QEMU code, a suppression with its reason (tools/vm/sanitizers/tsan.supp).
A report without one is on mapped guest RAM: the guest-visible races the
seeds' tests are about (posted writes, semaphores, mailboxes, queues),
counted by the pair of functions, not failed.

usage: tsan-reports.py LOG...
"""
import collections
import re
import sys

FRAME = re.compile(r'^\s+#\d+ (\S+) ')
SKIP = re.compile(r'^(memcpy|memmove|memset|__tsan|pthread_|__interceptor)')


def reports(text):
    for chunk in text.split('WARNING: ThreadSanitizer:')[1:]:
        body = chunk.split('SUMMARY: ThreadSanitizer')[0]
        kind = body.split('(')[0].strip()
        tops, take = [], True
        for line in body.splitlines():
            if re.match(r'^  (Write|Read|Atomic|Previous)', line):
                take = True
                continue
            m = FRAME.match(line)
            if m and take and not SKIP.match(m.group(1)):
                tops.append(m.group(1))
                take = False
        loc = re.search(r'^  Location is (.*)', body, re.M)
        yield kind, ' / '.join(tops[:2]), loc.group(1) if loc else None


def main():
    state, guest = collections.Counter(), collections.Counter()
    for path in sys.argv[1:]:
        with open(path, errors='replace') as f:
            for kind, pair, loc in reports(f.read()):
                if loc is None:
                    guest[pair] += 1
                else:
                    state[f'{kind}: {pair} ({loc.split(" at ")[0]})'] += 1
    print(f'{"reports on guest RAM (by design)":60} {"count":>6}')
    for pair, n in guest.most_common():
        print(f'  {pair:58} {n:6}')
    print(f'{"reports on device or QEMU state (failures)":60} {"count":>6}')
    for what, n in state.most_common():
        print(f'  {what:58} {n:6}')
    print(f'tsan: {sum(state.values())} on device state, '
          f'{sum(guest.values())} on guest RAM')
    return 1 if state else 0


if __name__ == '__main__':
    sys.exit(main())
