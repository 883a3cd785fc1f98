#!/usr/bin/env python3
"""fault_proxy.py: a fault-injecting HTTP/1.1 reverse proxy for flusso's TAP tests.

It sits between the extension (a libcurl client) and a real OpenSearch node and
owns nothing but this process: it only reads the control file and appends to
the log file.  Python 3.11 standard library only.

  python3 fault_proxy.py --listen PORT --upstream http://127.0.0.1:UPSTREAM_PORT \
      --control FILE [--log FILE]

It prints "fault_proxy: listening on 127.0.0.1:PORT" once listening and runs
until SIGTERM/SIGINT.  The control FILE holds one line, "MODE [NUMBER]", read
before each request and polled every 100 ms (missing or empty: pass):

  pass          forward the request and the response unchanged
  refuse        stop listening (ECONNREFUSED) and close client connections
  reset         forward, send half the response, then abort with a TCP RST
  slow N        forward, wait N seconds (default 3) before answering
  status CODE   answer CODE (default 503) with Retry-After: 1, don't forward
  item429       forward; in the first 3 _bulk responses after the mode was
                entered, turn the items at even indexes into 429 rejections
  hang          never answer; close the connection when the mode changes
  toolarge N    answer 413 to request bodies over N bytes (default 1 MiB)
  bulk413       answer 413 to every _bulk, whatever its size
  bignum        forward; in _bulk responses, every item's status becomes 1e30
  deep          answer every _bulk with 100,000 nested arrays
  huge N        answer every _bulk with a JSON body of N MiB (default 100)
  nomapping     answer 503 to every request for an index's _mapping
  major N       forward; GET / answers with version.number of major version N
                (the rest of the number kept), as an older or newer cluster would

Writing the file counts as entering its mode afresh (content or mtime change),
which resets the item429 counter and the _bulk counters below, and ends hung
requests.  GET /__proxy/stats answers {"requests": N, "by_mode": {...},
"bulks_max_in_flight": N, "id_overlaps": N} (stats requests are not counted):
the most _bulk requests in flight at once since the mode was entered, and how
many items of a _bulk named an index and id that a _bulk still in flight named
too (flusso must never send one document's versions concurrently).
Each request gets one line in the --log file: time, connection number, mode,
method, path and outcome (a status, or reset/hang/refused/closed).
"""
import argparse, asyncio, json, os, signal, socket, struct, sys, time
from http import HTTPStatus
from urllib.parse import urlsplit

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
       "upgrade", "content-length"}
REQ_DROP = HOP | {"host", "accept-encoding", "expect"}
DEFAULTS = {"slow": 3.0, "status": 503, "toolarge": 1 << 20, "huge": 100}


def header(headers, name):
    """The value of the first header called name (case-insensitive), or None."""
    return next((v for k, v in headers if k.lower() == name), None)


class Control:
    """The control file: the current mode and whether it was (re)entered."""

    def __init__(self, path):
        self.path, self.key, self.mode, self.arg = path, None, "pass", None
        self.changed = asyncio.Event()   # set (and replaced) on every change
        self.bulks = 0                   # _bulk requests since item429 was entered
        self.bulks_max = 0               # most _bulk requests in flight at once
        self.overlaps = 0                # items whose document was in flight already

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                text, mtime = f.read().decode(errors="replace").strip(), os.fstat(f.fileno()).st_mtime_ns
        except FileNotFoundError:
            text, mtime = "", None
        if (text, mtime) != self.key:
            self.key, self.bulks, self.bulks_max, self.overlaps = (text, mtime), 0, 0, 0
            words = text.split() or ["pass"]
            self.mode, self.arg = words[0], DEFAULTS.get(words[0])
            if len(words) > 1:
                try:
                    self.arg = float(words[1])
                except ValueError:
                    pass
            old, self.changed = self.changed, asyncio.Event()
            old.set()
        return self.mode


class Request:
    def __init__(self, method, target, version, headers, body, had_body):
        self.method, self.target, self.version = method, target, version
        self.headers, self.body, self.had_body = headers, body, had_body
        self.path = target.split("?", 1)[0]
        conn = (header(headers, "connection") or "").lower()
        self.close = "close" in conn or (version == "HTTP/1.0" and "keep-alive" not in conn)


async def read_headers(reader):
    headers = []
    while (line := await reader.readline()) not in (b"\r\n", b"\n"):
        if not line:
            raise asyncio.IncompleteReadError(b"", None)
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    return headers


async def read_body(reader, headers):
    """A Content-Length or chunked body (de-chunked); None if there is none."""
    if "chunked" in (header(headers, "transfer-encoding") or "").lower():
        body = bytearray()
        while size := int((await reader.readline()).split(b";")[0], 16):   # EOF: ValueError
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await read_headers(reader)       # trailers, discarded
        return bytes(body)
    if (length := header(headers, "content-length")) is not None:
        return await reader.readexactly(int(length))
    return None


def render(status, headers, body, close, keep_length=False):
    """A response to the client, with our own Content-Length and Connection."""
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP or
              (keep_length and k.lower() == "content-length")]
    if not keep_length:
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def json_error(status, kind, reason="fault proxy"):
    """An OpenSearch-style JSON error answer: (headers, body)."""
    doc = {"error": {"type": kind, "reason": reason}, "status": status}
    body = json.dumps(doc, separators=(",", ":")).encode()
    return [("Content-Type", "application/json"), ("Retry-After", "1")], body


class Proxy:
    def __init__(self, args):
        self.port, self.ctl, self.server = args.listen, Control(args.control), None
        up = urlsplit(args.upstream)
        self.up_host, self.up_port, self.up_netloc = up.hostname, up.port or 80, up.netloc
        self.log = open(args.log, "a", buffering=1) if args.log else None
        self.clients, self.total, self.by_mode, self.conns = set(), 0, {}, 0
        self.bulks_now, self.flying = 0, {}   # _bulk requests in flight, their documents

    def note(self, req, outcome):
        if self.log:
            now = time.time()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
            self.log.write(f"{stamp} conn#{req.conn} [{req.mode}] {req.method} {req.target} -> {outcome}\n")

    async def listen(self):
        try:
            self.server = await asyncio.start_server(self.client, "127.0.0.1", self.port,
                                                     reuse_address=True, limit=1 << 20)
        except OSError as e:
            print(f"fault_proxy: cannot listen on {self.port}: {e}", file=sys.stderr)

    async def watch(self):
        """Poll the control file: stop listening in refuse mode, resume after."""
        while True:
            refuse = self.ctl.poll() == "refuse"
            if refuse and self.server:
                self.server.close()
                self.server = None
                for w in list(self.clients):
                    w.close()
            elif not refuse and not self.server:
                await self.listen()
            await asyncio.sleep(0.1)

    async def client(self, reader, writer):
        """One client connection: its requests in order, until one closes it."""
        self.clients.add(writer)
        self.conns += 1
        conn = self.conns                # numbered in the log, to show keep-alive
        try:
            while line := await reader.readline():
                if not line.strip():
                    continue
                method, target, version = line.decode("latin-1").split()
                headers = await read_headers(reader)
                if "100-continue" in (header(headers, "expect") or "").lower():
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await read_body(reader, headers)
                req = Request(method, target, version, headers, body or b"", body is not None)
                req.conn = conn
                if not await self.serve(req, reader, writer):
                    break
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass                         # shutting down: end quietly
        finally:
            self.clients.discard(writer)
            writer.close()

    async def serve(self, req, reader, writer):
        """Answer one request as the mode says; False to close the connection."""
        mode, arg, changed = self.ctl.poll(), self.ctl.arg, self.ctl.changed
        req.mode = " ".join(self.ctl.key[0].split()) or "pass"
        if req.method == "GET" and req.path == "/__proxy/stats" and mode != "refuse":
            body = json.dumps({"requests": self.total, "by_mode": self.by_mode,
                               "bulks_max_in_flight": self.ctl.bulks_max,
                               "id_overlaps": self.ctl.overlaps}).encode()
            writer.write(render(200, [("Content-Type", "application/json")], body, req.close))
            self.note(req, 200)
            return not req.close
        self.total += 1
        self.by_mode[mode] = self.by_mode.get(mode, 0) + 1
        req.docs = None
        if req.method == "POST" and req.path.endswith("/_bulk"):
            req.docs = bulk_documents(req.body)
            self.bulks_now += 1
            self.ctl.bulks_max = max(self.ctl.bulks_max, self.bulks_now)
            for doc in req.docs:
                self.ctl.overlaps += self.flying.get(doc, 0) > 0
            for doc in req.docs:
                self.flying[doc] = self.flying.get(doc, 0) + 1
        try:
            return await self.answer(req, reader, writer, mode, arg, changed)
        finally:
            self.landed(req)

    def landed(self, req):
        """A _bulk is no longer in flight: answered, or ended otherwise."""
        if req.docs is not None:
            self.bulks_now -= 1
            for doc in req.docs:
                self.flying[doc] -= 1
            req.docs = None

    async def answer(self, req, reader, writer, mode, arg, changed):
        """serve()'s answer in mode."""
        if mode == "refuse":
            self.note(req, "refused")
            return False
        if mode == "hang":
            self.note(req, "hang")       # no answer; drain input until the mode changes
            async def discard():
                while await reader.read(65536):
                    pass
            waits = [asyncio.create_task(changed.wait()), asyncio.create_task(discard())]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for t in waits:
                t.cancel()
            return False
        head, outcome = False, ""
        if mode == "status":
            status = int(arg)
            headers, body = json_error(status, "simulated")
        elif mode == "toolarge" and len(req.body) > arg:
            status = 413
            headers, body = json_error(413, "request_entity_too_large")
        elif mode == "nomapping" and req.path.endswith("/_mapping"):
            status = 503
            headers, body = json_error(503, "simulated")
        elif mode in ("bulk413", "deep", "huge") and req.path.endswith("/_bulk"):
            status, headers, body = bulk_answer(mode, arg)
        else:
            try:
                status, headers, body, head = await self.forward(req)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError) as e:
                status = 502
                headers, body = json_error(502, "upstream_unavailable", f"fault proxy: {e!r}")
            if mode == "bignum" and req.path.endswith("/_bulk") and status == 200:
                body, outcome = big_statuses(body), " (statuses rewritten)"
            if mode == "major" and req.method == "GET" and req.path == "/" and status == 200:
                body, outcome = with_major(body, int(arg)), " (version rewritten)"
            if mode == "item429" and req.path.endswith("/_bulk"):
                self.ctl.bulks += 1
                if self.ctl.bulks <= 3 and status == 200:
                    body, outcome = rewrite_bulk(body), " (items rewritten)"
        data = render(status, headers, body, req.close, keep_length=head)
        if mode == "slow":
            await asyncio.sleep(arg)
            if writer.is_closing():      # closed meanwhile by entering refuse
                self.note(req, "closed")
                return False
        elif mode == "reset" and status != 502:
            # Half the response, then SO_LINGER (on, 0 s) makes close() send a RST.
            writer.write(data[:len(data) // 2])
            await writer.drain()
            while writer.transport.get_write_buffer_size():
                await asyncio.sleep(0.01)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            self.note(req, "reset")
            return False
        self.landed(req)                 # before the client can read the answer
        writer.write(data)
        await writer.drain()
        self.note(req, f"{status}{outcome}")
        return not req.close

    async def forward(self, req):
        """Send req upstream on a fresh connection; (status, headers, body, no-body)."""
        lines = [f"{req.method} {req.target} HTTP/1.1", f"Host: {self.up_netloc}"]
        lines += [f"{k}: {v}" for k, v in req.headers if k.lower() not in REQ_DROP]
        if req.had_body:
            lines.append(f"Content-Length: {len(req.body)}")
        lines.append("Connection: close")
        reader, writer = await asyncio.open_connection(self.up_host, self.up_port, limit=1 << 20)
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + req.body)
            await writer.drain()
            status = 100
            while 100 <= status < 200:   # skip interim responses
                status = int((await reader.readline()).split()[1])
                headers = await read_headers(reader)
            if req.method == "HEAD" or status in (204, 304):
                return status, headers, b"", True
            body = await read_body(reader, headers)
            return status, headers, (await reader.read() if body is None else body), False
        finally:
            writer.close()


HUGE = {}


def bulk_documents(body):
    """The (index, id) of every item of a _bulk body, in order."""
    docs = []
    for line in body.split(b"\n"):
        try:
            action = json.loads(line)
        except ValueError:
            continue
        if isinstance(action, dict) and len(action) == 1:
            meta = next(iter(action.values()))
            if isinstance(meta, dict) and "_id" in meta:
                docs.append((meta.get("_index"), meta["_id"]))
    return docs


def bulk_answer(mode, arg):
    """What a _bulk is answered in the modes that never forward it."""
    if mode == "bulk413":
        return (413, *json_error(413, "request_entity_too_large"))
    headers = [("Content-Type", "application/json")]
    if mode == "deep":
        return 200, headers, b"[" * 100000 + b"]" * 100000
    size = int(arg * (1 << 20))
    if size not in HUGE:                 # built once: hundreds of MiB are not built twice
        HUGE.clear()
        HUGE[size] = b'{"took":1,"errors":false,"items":[' + b" " * size + b"]}"
    return 200, headers, HUGE[size]


def with_major(body, major):
    """GET /'s answer with version.number's major version replaced by major."""
    try:
        doc = json.loads(body)
        number = doc["version"]["number"]
    except (ValueError, KeyError, TypeError):
        return body
    doc["version"]["number"] = ".".join([str(major)] + number.split(".")[1:])
    return json.dumps(doc).encode()


def big_statuses(body):
    """The _bulk response with every item's status 1e30: JSON, and no status."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return body
    for item in doc["items"]:
        for result in item.values():
            if isinstance(result, dict):
                result["status"] = "@BIG@"
    return json.dumps(doc, separators=(",", ":")).replace('"@BIG@"', "1e30").encode()


def rewrite_bulk(body):
    """Turn the _bulk response items at even indexes into 429 rejections."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return body
    for item in doc["items"][::2]:
        for result in item.values():
            if isinstance(result, dict):
                result["status"] = 429
                result["error"] = {"type": "es_rejected_execution_exception", "reason": "fault proxy"}
    doc["errors"] = True
    return json.dumps(doc, separators=(",", ":")).encode()


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--log")
    proxy = Proxy(ap.parse_args())
    await proxy.listen()
    if not proxy.server:
        sys.exit(1)
    print(f"fault_proxy: listening on 127.0.0.1:{proxy.port}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    watcher = asyncio.create_task(proxy.watch())
    await stop.wait()
    watcher.cancel()
    if proxy.server:
        proxy.server.close()
    for w in list(proxy.clients):
        w.transport.abort()


if __name__ == "__main__":
    asyncio.run(main())
