#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Parse rdma-core's pyverbs suite output (run_tests.py -v) for t_pyverbs.sh.

One run of a device may be split into parts: when a test stalls, the runner
kills the suite and starts it again on the tests that have not run yet.
Every part's log is parsed; outcomes are per test id
(tests.test_mr.MRTest.test_mr_rereg_pd).

  running LOG                 id of the test started last and not finished
  remaining ALL LOG...        ids listed in ALL that no LOG has an outcome for
  parse OUT.json LOG... [--hung ID]... [--killed] [--seconds N]
  table LABEL=JSON...         the ran/ok/fail/error/skip/xfail/xpass table
  failures JSON               failing tests grouped by exception message
  clean JSON                  exit 0 if the run has no fail/error/hung/xpass
  superset REF.json JSON      exit 0 if every test ok in REF is ok in JSON
  match JSON REGEX...         exit 0 if every test whose name matches passes
                              (REGEX !R: leave out ids matching R)

Outcomes: ok, skip, fail, error, hung, and unittest's two verdicts on a
test its author marked @expectedFailure: "expected failure" (xfail: it
failed, as its author said it would) and "unexpected success" (xpass).
An xfail is no pass: nothing was shown to work, so superset and match
(which want ok) count it against the device; nor is it a failure of the
device (the suite's author expects every device to fail it), so clean,
like unittest itself, lets it through, and the table counts it apart.
An xpass fails clean, as it fails unittest's run: the test no longer
tests what its author thought.  (rdma-core 44's suite marks no test.)
"""
import json
import re
import sys

# "test_x (tests.test_mr.MRTest.test_x)" (3.11) or "test_x (tests.test_mr.MRTest)",
# optionally followed by the first docstring line, then " ... ".
# Class-level entries: "setUpClass (tests.test_odp.OdpTestCase)".
START = re.compile(r'^ *(\w+) \(([\w.]+)\)(?: \(.*\))?(?:\n[^\n]*?)? \.\.\. ',
                   re.M)
STATUS = re.compile(r'(?:^|(?<= \.\.\. ))(ok|FAIL|ERROR|expected failure|'
                    r'unexpected success|skipped (?:\'.*\'|".*"))$', re.M)
BLOCK = re.compile(r'^={50,}\n(ERROR|FAIL): (\w+) \(([\w.]+)\)[^\n]*\n'
                   r'(?:[^\n]*\n)?-{50,}\n'
                   r'(.*?)(?=^={50,}$|^-{50,}\nRan |\Z)', re.M | re.S)
RAN = re.compile(r'^Ran (\d+) tests? in ([\d.]+)s', re.M)
RESULT = re.compile(r'^(OK|FAILED)(?: \((.*)\))?$', re.M)


def test_id(name, paren):
    if paren.endswith('.' + name):
        return paren
    return paren + '.' + name


def read(path):
    with open(path, errors='replace') as f:
        return f.read()


def squeeze(s):
    """Long runs of one character (data validation dumps) as cNNN."""
    return re.sub(r'(.)\1{7,}', lambda m: '%s{x%d}' % (m.group(1),
                                                     len(m.group(0))), s)


def test_output(s):
    """What a test printed between its start and its status, shortened."""
    lines = [squeeze(l.strip()) for l in s.split('\n') if l.strip()]
    return ' | '.join(l[:200] for l in lines[:3])


def scan(text):
    """[(id, outcome or None, reason, output)] in order of appearance."""
    starts = [(m.start(), m.end(), test_id(m.group(1), m.group(2)))
              for m in START.finditer(text)]
    res = []
    for i, (_, end, tid) in enumerate(starts):
        limit = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        m = STATUS.search(text, end, limit)
        if not m:
            # A status may follow a later start line only for subtests; the
            # test is unfinished if nothing follows it at all.
            res.append((tid, None, '', test_output(text[end:limit])))
            continue
        st = m.group(1)
        reason = ''
        if st.startswith('skipped'):
            reason = st[len('skipped '):].strip('\'"')
            st = 'skip'
        outcome = {'ok': 'ok', 'FAIL': 'fail', 'ERROR': 'error',
                   'expected failure': 'xfail',
                   'unexpected success': 'xpass'}.get(st, st)
        res.append((tid, outcome, reason, test_output(text[end:m.start()])))
    return res


RANK = {None: 0, 'ok': 1, 'skip': 2, 'xfail': 3, 'xpass': 4, 'fail': 5,
        'error': 6, 'hung': 7}


def outcomes(logs):
    out = {}
    for log in logs:
        for tid, oc, reason, output in scan(read(log)):
            if oc is None:
                continue
            # Subtests print more than one status for one test: keep the worst.
            if tid not in out or RANK[oc] > RANK[out[tid]['outcome']]:
                out[tid] = {'outcome': oc, 'reason': reason}
                if output:
                    out[tid]['output'] = output
    return out


def exc_line(tb):
    """The exception line of a traceback and the innermost test frame."""
    lines = [l for l in tb.rstrip('\n').split('\n') if l.strip()]
    exc = ''
    for i, l in enumerate(lines):
        if re.match(r'^[\w.]+(Error|Exception|Exit|Interrupt|Warning|Test)\b.*',
                    l) or re.match(r'^[\w.]+: ', l):
            exc = l
            # Multi-line messages: keep the first line only.
            break
    if not exc and lines:
        exc = lines[-1]
    frame = ''
    for l in lines:
        m = re.match(r'^\s*File "([^"]*/)?([^"/]+)", line (\d+), in (\S+)', l)
        if m and m.group(2).startswith(('test_', 'utils', 'base')):
            frame = '%s:%s %s' % (m.group(2), m.group(3), m.group(4))
    return exc.strip(), frame


def cmd_running(log):
    res = scan(read(log))
    if res and res[-1][1] is None:
        print(res[-1][0])


def cmd_remaining(all_path, logs):
    done = outcomes(logs)
    classes = {tid.rsplit('.', 1)[0] for tid in done
               if tid.endswith(('.setUpClass', '.setUpModule'))}
    for line in read(all_path).split('\n'):
        tid = line.strip()
        if not tid or not tid.startswith('tests.'):
            continue
        if tid in done or tid.rsplit('.', 1)[0] in classes:
            continue
        print(tid)


def cmd_parse(out_json, args):
    logs, hung, killed, seconds = [], [], False, None
    it = iter(args)
    for a in it:
        if a == '--hung':
            hung.append(next(it))
        elif a == '--killed':
            killed = True
        elif a == '--seconds':
            seconds = float(next(it))
        else:
            logs.append(a)
    tests = outcomes(logs)
    for tid in hung:
        tests[tid] = {'outcome': 'hung', 'reason': 'no progress, killed'}
        for log in logs:
            for t, oc, _, output in scan(read(log)):
                if t == tid and oc is None and output:
                    tests[tid]['output'] = output
    ran, fails, errs, skips = 0, 0, 0, 0
    for log in logs:
        text = read(log)
        for m in BLOCK.finditer(text):
            tid = test_id(m.group(2), m.group(3))
            exc, frame = exc_line(m.group(4))
            t = tests.setdefault(tid, {'outcome': m.group(1).lower(),
                                       'reason': ''})
            t.setdefault('exc', exc)
            t.setdefault('frame', frame)
            t.setdefault('traceback', m.group(4).strip()[-4000:])
        m = RAN.search(text)
        if m:
            ran += int(m.group(1))
        m = RESULT.search(text)
        if m and m.group(2):
            kv = dict(x.split('=') for x in m.group(2).split(', ') if '=' in x)
            fails += int(kv.get('failures', 0))
            errs += int(kv.get('errors', 0))
            skips += int(kv.get('skipped', 0))
    with open(out_json, 'w') as f:
        json.dump({'tests': tests, 'hung': hung, 'killed': killed,
                   'seconds': seconds, 'unittest': {
                       'ran': ran, 'failures': fails, 'errors': errs,
                       'skipped': skips}}, f, indent=1, sort_keys=True)


def load(path):
    with open(path) as f:
        return json.load(f)


def counts(d):
    c = {'ran': 0, 'ok': 0, 'fail': 0, 'error': 0, 'skip': 0, 'hung': 0,
         'xfail': 0, 'xpass': 0}
    for tid, t in d['tests'].items():
        oc = t['outcome']
        c[oc] += 1
        # unittest counts class-level skips as skipped, not as run.
        if not tid.endswith(('.setUpClass', '.setUpModule', '.tearDownClass',
                             '.tearDownModule')):
            c['ran'] += 1
    return c


def cmd_table(args):
    print('pyverbs     ran  ok   fail error skip hung xfail xpass  seconds  '
          '(unittest: ran/fail/err/skip)')
    for a in args:
        label, path = a.split('=', 1)
        d = load(path)
        c = counts(d)
        u = d['unittest']
        sec = '%.0f' % d['seconds'] if d.get('seconds') is not None else '-'
        print('%-10s  %-4d %-4d %-4d %-5d %-4d %-4d %-5d %-5d  %-7s  '
              '(%d/%d/%d/%d)%s' % (
                  label, c['ran'], c['ok'], c['fail'], c['error'], c['skip'],
                  c['hung'], c['xfail'], c['xpass'], sec, u['ran'],
                  u['failures'], u['errors'], u['skipped'],
                  '  KILLED' if d.get('killed') else ''))


def short(tid):
    return tid[len('tests.'):] if tid.startswith('tests.') else tid


def cmd_failures(path):
    d = load(path)
    groups = {}
    for tid, t in sorted(d['tests'].items()):
        if t['outcome'] not in ('fail', 'error', 'hung', 'xfail', 'xpass'):
            continue
        key = t.get('exc') or t['outcome']
        if t['outcome'] == 'hung':
            key = 'HUNG: ' + t['reason']
        elif t['outcome'] == 'xfail':
            key = 'XFAIL: failed as its author expects (not a pass)'
        elif t['outcome'] == 'xpass':
            key = 'XPASS: passed, but its author expects it to fail'
        # rdmacm players run in child processes and report there.
        if 'active/passive side' in key and t.get('output'):
            key += ' -- ' + t['output']
        groups.setdefault(key, []).append((tid, t))
    for key, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print('[%d] %s' % (len(members), key))
        for tid, t in members:
            print('      %s %s  (%s)' % (t['outcome'].upper(), short(tid),
                                        t.get('frame', '')))


def cmd_clean(path, skip=()):
    d = load(path)
    bad = [tid for tid, t in d['tests'].items()
           if t['outcome'] in ('fail', 'error', 'hung', 'xpass') and
           not any(re.search(r[1:], tid) for r in skip)]
    return 0 if not bad and not d.get('killed') else 1


def cmd_superset(ref_path, path):
    ref, d = load(ref_path), load(path)
    bad = 0
    for tid, t in sorted(ref['tests'].items()):
        if t['outcome'] != 'ok':
            continue
        oc = d['tests'].get(tid, {'outcome': 'not run'})
        if oc['outcome'] != 'ok':
            bad += 1
            why = oc.get('reason') or oc.get('exc') or ''
            print('%s: %s%s' % (short(tid), oc['outcome'],
                                (' ' + why) if why else ''))
    return 1 if bad else 0


def cmd_match(path, regexes):
    d = load(path)
    bad = 0
    seen = 0
    inc = [r for r in regexes if not r.startswith('!')]
    exc = [r[1:] for r in regexes if r.startswith('!')]
    for tid, t in sorted(d['tests'].items()):
        name = tid.rsplit('.', 1)[-1]
        if not any(re.search(r, name) for r in inc):
            continue
        if any(re.search(r, tid) for r in exc):
            continue
        seen += 1
        if t['outcome'] != 'ok':
            bad += 1
            why = t.get('exc') or t.get('reason') or ''
            if t.get('output'):
                why += ' -- ' + t['output']
            print('%s: %s %s' % (short(tid), t['outcome'], why))
    if not seen:
        print('no test matches %s' % ' '.join(regexes))
        return 1
    return 1 if bad else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 64
    cmd, args = argv[1], argv[2:]
    if cmd == 'running':
        return cmd_running(args[0]) or 0
    if cmd == 'remaining':
        return cmd_remaining(args[0], args[1:]) or 0
    if cmd == 'parse':
        return cmd_parse(args[0], args[1:]) or 0
    if cmd == 'table':
        return cmd_table(args) or 0
    if cmd == 'failures':
        return cmd_failures(args[0]) or 0
    if cmd == 'clean':
        return cmd_clean(args[0], args[1:])
    if cmd == 'superset':
        return cmd_superset(args[0], args[1])
    if cmd == 'match':
        return cmd_match(args[0], args[1:])
    print(__doc__)
    return 64


if __name__ == '__main__':
    sys.exit(main(sys.argv))
