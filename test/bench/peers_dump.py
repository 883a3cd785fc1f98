#!/usr/bin/env python3
#
# peers_dump.py HOST:PORT INDEX: every document of an OpenSearch index (or
# alias), as CSV lines "id,source JSON" for COPY ... (FORMAT csv); peers.sh
# compares them with a reference built in SQL.  Standard library only.

import csv
import http.client
import json
import sys
import urllib.parse


def main():
    host, port = sys.argv[1].rsplit(':', 1)
    index = urllib.parse.quote(sys.argv[2])
    conn = http.client.HTTPConnection(host, int(port), timeout=120)

    def call(method, path, body):
        conn.request(method, path, json.dumps(body), {'Content-Type': 'application/json'})
        answer = conn.getresponse()
        data = json.loads(answer.read())
        if answer.status != 200:
            raise SystemExit('peers_dump: %s %s: %d %s' % (method, path, answer.status, data))
        return data

    out = csv.writer(sys.stdout, lineterminator='\n')
    page = call('POST', '/%s/_search?scroll=2m' % index, {'size': 5000, 'sort': ['_doc']})
    while page['hits']['hits']:
        for hit in page['hits']['hits']:
            out.writerow([hit['_id'], json.dumps(hit['_source'], separators=(',', ':'))])
        page = call('POST', '/_search/scroll', {'scroll': '2m', 'scroll_id': page['_scroll_id']})
    call('DELETE', '/_search/scroll', {'scroll_id': page['_scroll_id']})


if __name__ == '__main__':
    main()
