#!/usr/bin/env python3
#
# latency_probe.py: commit -> visible, for latency.sh.  Every ~100 ms (a
# random 50 to 150 ms after the last), commits an UPDATE setting a unique
# name on one of the first --rows users (one not still awaited), notes when
# the commit returned, then polls every 2 ms, until the name is there, the
# table sink (flusso_docs.users) and, given --opensearch, the alias by
# realtime _mget.  Prints p50/p95/p99/max per sink in ms.  With
# --commit-only it commits the same updates and polls nothing: the load
# of the reference run; with --no-table only OpenSearch is polled (for
# peers.sh's systems without a table sink).  Standard library only: SQL
# goes through one psql process, HTTP through one kept-alive connection.

import argparse
import http.client
import json
import math
import random
import subprocess
import time
import urllib.parse

SENTINEL = '__probe_done__'


class Psql:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv + ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1'],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    def run(self, sql):
        self.proc.stdin.write(sql + ';\n\\echo ' + SENTINEL + '\n')
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if line == '':
                raise SystemExit('latency_probe: psql ended')
            line = line.rstrip('\n')
            if line == SENTINEL:
                return lines
            lines.append(line)


def percentiles(values):
    if not values:
        return 'no samples'
    v = sorted(values)

    def rank(p):
        return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]
    return 'p50 %.0f  p95 %.0f  p99 %.0f  max %.0f ms (%d samples)' % (
        rank(50), rank(95), rank(99), v[-1], len(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=float, required=True)
    ap.add_argument('--rows', type=int, default=20)
    ap.add_argument('--opensearch', help='host:port')
    ap.add_argument('--alias', default='lat-users')
    ap.add_argument('--commit-only', action='store_true')
    ap.add_argument('--no-table', action='store_true')
    ap.add_argument('psql', nargs='+', help='psql and its connection arguments')
    args = ap.parse_args()

    db = Psql(args.psql)
    os_conn = None
    if args.opensearch and not args.commit_only:
        host, port = args.opensearch.rsplit(':', 1)
        os_conn = http.client.HTTPConnection(host, int(port), timeout=10)
    rows = list(range(1, args.rows + 1))
    waiting = {}                # row -> [name, committed at, table ms, opensearch ms]
    table_ms, opensearch_ms = [], []
    lost = 0
    seq = 0
    start = time.monotonic()
    end = start + args.seconds
    next_commit = start + random.uniform(0.05, 0.15)
    while True:
        now = time.monotonic()
        if now >= end and not waiting:
            break
        if now >= next_commit and now < end:
            free = [r for r in rows if r not in waiting]
            if free:
                row = random.choice(free)
                seq += 1
                name = 'probe %d %d' % (seq, random.randrange(1 << 30))
                db.run("UPDATE users SET name = '%s' WHERE id = %d" % (name, row))
                if not args.commit_only:
                    waiting[row] = [name, time.monotonic(), 0.0 if args.no_table else None,
                                    None if os_conn else 0.0]
            next_commit = max(next_commit, now) + random.uniform(0.05, 0.15)
        if waiting:
            todo = [r for r, w in waiting.items() if w[2] is None]
            if todo:
                ids = ','.join("'%d'" % r for r in todo)
                for line in db.run("SELECT id || '|' || coalesce(doc->>'name', '') "
                                   "FROM flusso_docs.users WHERE id IN (%s)" % ids):
                    rid, name = line.split('|', 1)
                    w = waiting[int(rid)]
                    if name == w[0]:
                        w[2] = (time.monotonic() - w[1]) * 1000
                        table_ms.append(w[2])
            todo = [r for r, w in waiting.items() if w[3] is None]
            if todo and os_conn:
                body = json.dumps({'ids': [str(r) for r in todo]})
                os_conn.request('POST', '/%s/_mget?realtime=true&_source_includes=name'
                                % urllib.parse.quote(args.alias), body,
                                {'Content-Type': 'application/json'})
                answer = json.loads(os_conn.getresponse().read())
                for doc in answer.get('docs', []):
                    w = waiting[int(doc['_id'])]
                    if doc.get('found') and doc['_source'].get('name') == w[0]:
                        w[3] = (time.monotonic() - w[1]) * 1000
                        opensearch_ms.append(w[3])
            now = time.monotonic()
            for r in list(waiting):
                w = waiting[r]
                if w[2] is not None and w[3] is not None:
                    del waiting[r]
                elif now - w[1] > 30:
                    lost += 1
                    del waiting[r]
        time.sleep(0.002)
    if args.commit_only:
        print('probe: %d updates committed' % seq)
        return
    if not args.no_table:
        print('table sink (flusso_docs):       ' + percentiles(table_ms))
    if os_conn:
        print('OpenSearch (realtime _mget):    ' + percentiles(opensearch_ms))
    print('probe: %d updates committed, %d not visible within 30 s' % (seq, lost))


if __name__ == '__main__':
    main()
