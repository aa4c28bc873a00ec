#!/usr/bin/env python3
"""Line, branch and function coverage of gcov data (make coverage).

usage: coverage.py --side NAME --json OUT.json --match SUBSTR
                   [--guest-log LOG]... [--root DIR] [--list OUT.txt]
                   [GCDA...]

--list: every line no test ran and every line with a branch no test
took, by file and function, with its source text (what to cover or to
name as unreachable).

--guest-log: the .gcda files a guest printed (tools/vm/init, a kernel
with CONFIG_GCOV_KERNEL) are written back beside their .gcno files,
which must lie under DIR (the module's build directory), and counted;
several guests' logs add up.

A function counts as reached when it ran or when any of its lines ran
(a copy inlined into its caller runs the lines, not the function).
Tracepoint boilerplate (the *_trace.h headers) is left out.

Runs gcov's JSON output over the .gcda files, keeps the source files
whose path contains SUBSTR, prints a table per file and the functions no
test reached, and merges {NAME: {file: figures}} into OUT.json.
"""
import argparse
import base64
import json
import os
import subprocess
import sys


def gcov_json(gcda):
    out = subprocess.run(['gcov', '-j', '-t', '-b', os.path.basename(gcda)],
                         cwd=os.path.dirname(gcda), capture_output=True,
                         text=True, check=False).stdout
    for doc in out.splitlines():
        doc = doc.strip()
        if doc.startswith('{'):
            yield json.loads(doc)


def from_guest_log(log, root):
    """The MEGPU-GCOV blocks of a guest log, written to their paths."""
    root = os.path.realpath(root)
    out, path, chunks = [], None, []
    with open(log, errors='replace') as fh:
        for line in fh:
            line = line.rstrip('\r\n')
            if line.startswith('MEGPU-GCOV '):
                path, chunks = line.split(' ', 1)[1], []
            elif line == 'MEGPU-GCOV-END' and path:
                dest = os.path.realpath(path)
                if dest.startswith(root + os.sep) and dest.endswith('.gcda'):
                    with open(dest, 'wb') as f:
                        f.write(base64.b64decode(''.join(chunks)))
                    out.append(dest)
                path = None
            elif path:
                chunks.append(line.strip())
    return out


def write_list(out, lines, branches, spans, paths):
    """Unrun lines and untaken branches, by file and function."""
    with open(out, 'w') as fh:
        for name in sorted(lines):
            try:
                with open(paths[name], errors='replace') as src:
                    text = src.read().splitlines()
            except OSError:
                text = []
            fl, fb = lines[name], branches[name]
            missed = {}
            for n, c in fl.items():
                if not c:
                    missed[n] = 'line'
            for (n, i), c in fb.items():
                if not c and fl.get(n, 0) and n not in missed:
                    taken = sum(1 for (m, _), k in fb.items()
                                if m == n and k)
                    total = sum(1 for (m, _) in fb if m == n)
                    missed[n] = f'branch {taken}/{total}'
            if not missed:
                continue
            fh.write(f'== {name}\n')
            last = None
            for n in sorted(missed):
                fn = next((s for s in sorted(spans.get(name, []))
                           if s[0] <= n <= s[1]), (0, 0, '?'))[2]
                if fn != last:
                    fh.write(f'  {fn}:\n')
                    last = fn
                src = text[n - 1].strip() if 0 < n <= len(text) else ''
                fh.write(f'    {n:5} {missed[n]:12} {src}\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--side', required=True)
    ap.add_argument('--json', required=True)
    ap.add_argument('--match', required=True)
    ap.add_argument('--guest-log', action='append', default=[])
    ap.add_argument('--root')
    ap.add_argument('--list')
    ap.add_argument('gcda', nargs='*')
    a = ap.parse_args()

    # gcov's documents of every .gcda: a guest's files are read before
    # the next guest's overwrite them
    docs = [doc for gcda in a.gcda for doc in gcov_json(gcda)]
    for log in a.guest_log:
        for gcda in from_guest_log(log, a.root):
            docs += list(gcov_json(gcda))

    # file -> line -> count; file -> (line, branch index) -> count;
    # file -> function -> (executions, first line, last line)
    lines, branches, funcs, spans, paths = {}, {}, {}, {}, {}
    for doc in docs:
        for f in doc['files']:
            name = f['file']
            full = os.path.join(doc.get('current_working_directory', ''),
                                name)
            if (a.match not in name or not name.endswith(('.c', '.h')) or
                    name.endswith('_trace.h')):
                continue
            name = name[name.index(a.match):]
            paths.setdefault(name, full)
            fl = lines.setdefault(name, {})
            fb = branches.setdefault(name, {})
            for ln in f['lines']:
                n = ln['line_number']
                fl[n] = fl.get(n, 0) + ln['count']
                for i, b in enumerate(ln['branches']):
                    fb[(n, i)] = fb.get((n, i), 0) + b['count']
            ff = funcs.setdefault(name, {})
            for fn in f['functions']:
                if fn['name'] not in ff:
                    spans.setdefault(name, []).append(
                        (fn['start_line'], fn['end_line'], fn['name']))
                runs = ff.get(fn['name'], (0,))[0] + fn['execution_count']
                ff[fn['name']] = (runs, fn['start_line'], fn['end_line'])
    # a function inlined everywhere: reached if its lines ran
    for name, ff in funcs.items():
        fl = lines[name]
        for fn, (runs, first, last) in ff.items():
            if not runs and any(fl.get(n, 0) for n in range(first, last + 1)):
                runs = 1
            ff[fn] = runs
    if not lines:
        print(f'coverage: no gcov data for {a.match}', file=sys.stderr)
        return 1

    def pct(hit, total):
        return round(100.0 * hit / total, 1) if total else 100.0

    table, never = {}, []
    for name in sorted(lines):
        fl, fb, ff = lines[name], branches[name], funcs[name]
        row = {
            'lines': len(fl), 'lines_hit': sum(1 for c in fl.values() if c),
            'branches': len(fb),
            'branches_hit': sum(1 for c in fb.values() if c),
            'functions': len(ff),
            'functions_hit': sum(1 for c in ff.values() if c),
        }
        row['line_pct'] = pct(row['lines_hit'], row['lines'])
        row['branch_pct'] = pct(row['branches_hit'], row['branches'])
        row['unreached'] = sorted(f for f, c in ff.items() if not c)
        never += [f'{os.path.basename(name)}: {f}' for f in row['unreached']]
        table[name] = row
    tot = {k: sum(r[k] for r in table.values())
           for k in ('lines', 'lines_hit', 'branches', 'branches_hit',
                     'functions', 'functions_hit')}
    print(f'{a.side + " coverage":44} {"lines":>8} {"branches":>9} '
          f'{"functions":>10}')
    for name, r in table.items():
        print(f'  {os.path.basename(name):42} {r["line_pct"]:7.1f}% '
              f'{r["branch_pct"]:8.1f}% {r["functions_hit"]:5}/'
              f'{r["functions"]:<4}')
    print(f'  {"total":42} {pct(tot["lines_hit"], tot["lines"]):7.1f}% '
          f'{pct(tot["branches_hit"], tot["branches"]):8.1f}% '
          f'{tot["functions_hit"]:5}/{tot["functions"]:<4}')
    print(f'functions no test reaches ({len(never)}):')
    for f in never:
        print(f'  {f}')

    if a.list:
        write_list(a.list, lines, branches, spans, paths)

    data = {}
    if os.path.exists(a.json):
        with open(a.json) as fh:
            data = json.load(fh)
    data[a.side] = {'files': table, 'total': tot}
    with open(a.json, 'w') as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
