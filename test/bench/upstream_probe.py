#!/usr/bin/env python3
#
# upstream_probe.py: commit on the publisher -> seen on the subscriber, for
# upstream.sh.  --probes times, ~10 times a second, commits an UPDATE of a
# user's name on the publisher (with its position, pg_current_wal_lsn(),
# read after the commit, as an application would), then, taking turns:
#   applied   polls the subscriber's users table every 1 ms until the
#             name is there: the subscription alone (the reference);
#   wait      calls flusso_wait('users', upstream_lsn => the position) on
#             the subscriber, then reads the document, which must hold it.
# The time runs from the commit's start to the name seen or the wait's
# return.  Prints p50/p99/max per mode, and how many waits returned false
# or returned true before the document held the name.

import argparse
import shlex
import time

from latency_probe import Psql


def rank(values, p):
    v = sorted(values)
    return v[max(0, -(-len(v) * p // 100) - 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--probes', type=int, default=200)
    ap.add_argument('--users', type=int, required=True)
    ap.add_argument('--publisher', required=True, help='psql command line of the publisher')
    ap.add_argument('--subscriber', required=True, help='psql command line of the subscriber')
    args = ap.parse_args()

    pub = Psql(shlex.split(args.publisher))
    sub = Psql(shlex.split(args.subscriber))
    times = {'applied': [], 'wait': []}
    false_answers = early = 0
    for i in range(args.probes):
        mode = 'applied' if i % 2 == 0 else 'wait'
        row = 1 + (i * 7919) % args.users
        name = 'upstream probe %d' % i
        t0 = time.monotonic()
        lsn = pub.run("UPDATE users SET name = '%s' WHERE id = %d;"
                      "SELECT pg_current_wal_lsn()" % (name, row))[0]
        if mode == 'applied':
            while sub.run('SELECT name FROM users WHERE id = %d' % row) != [name]:
                time.sleep(0.001)
            times[mode].append((time.monotonic() - t0) * 1000)
        else:
            answer = sub.run("SELECT flusso_wait('users', '10s', upstream_lsn => '%s')" % lsn)
            times[mode].append((time.monotonic() - t0) * 1000)
            if answer != ['t']:
                false_answers += 1
            elif sub.run("SELECT doc->>'name' FROM flusso_docs.users WHERE id = '%d'" % row) != [name]:
                early += 1
        time.sleep(0.1)
    for mode, label in (('applied', 'applied by the subscription (reference)'),
                        ('wait', 'flusso_wait(upstream_lsn) true')):
        v = times[mode]
        print('%-42s p50 %6.1f  p99 %6.1f  max %6.1f ms (%d probes)'
              % (label, rank(v, 50), rank(v, 99), max(v), len(v)))
    print('ratio, flusso_wait to applied: p50 %.2f, p99 %.2f'
          % (rank(times['wait'], 50) / rank(times['applied'], 50),
             rank(times['wait'], 99) / rank(times['applied'], 99)))
    print('waits false: %d; true before the document held the change: %d'
          % (false_answers, early))


if __name__ == '__main__':
    main()
