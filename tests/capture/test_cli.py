# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl pcap``: the sub-app under typer's CliRunner, and the real ``mqctl`` process end to end
(global ``-o``, damaged files, standard input, exit codes, live recording on loopback)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mqctl.pcap import app
from tests.capture.helpers import exchange, write_conversation
from tests.conftest import ROOT, shared_path
from wire import RemotingCommand, encode_command, fastjson

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def conv(tmp_path: Path) -> Path:
    return write_conversation(tmp_path / "c.pcap", exchange(3), server=("10.0.0.2", 9876))


def test_decode_table(conv: Path) -> None:
    res = run("decode", str(conv))
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "time", "stream"]
    assert len(lines) == 7
    assert "GET_ROUTEINFO_BY_TOPIC(105)" in lines[1] and "topic=T0" in lines[1]
    assert "SUCCESS(0)" in lines[2] and "←" in lines[2]


def test_decode_jsonl_json_and_yaml_agree(conv: Path) -> None:
    jl = run("decode", "-o", "jsonl", str(conv))
    rows = [json.loads(line) for line in jl.stdout.splitlines()]
    assert len(rows) == 6 and rows[0]["rocketmq.code"] == 105 and rows[0]["rocketmq.ext.topic"] == "T0"
    assert rows[1]["rocketmq.request_row"] == rows[0]["rocketmq.row"] and rows[1]["rocketmq.latency"] >= 0
    assert json.loads(run("decode", "-o", "json", str(conv)).stdout) == rows
    assert yaml.safe_load(run("decode", "-o", "yaml", str(conv)).stdout) == rows


def test_filters_fields_and_follow(tmp_path: Path, conv: Path) -> None:
    out = run("decode", "-o", "jsonl", "--filter", "code=10", str(conv)).stdout.splitlines()
    got = [json.loads(x) for x in out]
    # the request with code 10 and the response that answers it
    assert [(r["rocketmq.type"], r["rocketmq.code"]) for r in got] == [("request", 10), ("response", 0)]
    out = run("decode", "-o", "jsonl", "-f", "topic=T2", "-f", "type=response", str(conv)).stdout.splitlines()
    assert [json.loads(x)["rocketmq.request_row"] for x in out] == [5]
    assert run("decode", "-o", "jsonl", "-f", "topic=T2 type=response", str(conv)).stdout.splitlines() == out
    out = run("decode", "-o", "jsonl", "-f", "code=GET_ROUTEINFO_BY_TOPIC,SEND_MESSAGE", "-f", "dir=c2s",
              str(conv)).stdout.splitlines()
    assert len(out) == 3
    out = run("decode", "-o", "jsonl", "--fields", "rocketmq.code,topic,opaque", str(conv)).stdout.splitlines()
    assert json.loads(out[0]) == {"rocketmq.code": 105, "rocketmq.ext.topic": "T0", "rocketmq.opaque": 1}
    out = run("decode", "-o", "jsonl", "--fields", "rocketmq.ext.*", str(conv)).stdout.splitlines()
    assert json.loads(out[1]) == {"rocketmq.ext.queueId": "0"}
    other = write_conversation(tmp_path / "two.pcap", exchange(1), client=("10.0.0.9", 41000))
    res = run("decode", "-o", "jsonl", "--follow", "0", str(other), str(conv))
    files = {json.loads(x)["frame.file"] for x in res.stdout.splitlines()}
    assert files == {str(other), str(conv)}
    assert len(res.stdout.splitlines()) == 8
    assert len(run("decode", "--follow", "7", str(conv)).stdout.splitlines()) == 0


@pytest.mark.parametrize("term", ["code=abc", "code!=10,bogus", "rocketmq.code=5x", "rocketmq.code_name=NOPE"])
def test_a_code_filter_names_real_codes(conv: Path, term: str) -> None:
    # a typo must not pass as "no rows"
    res = mqctl("pcap", "decode", "-f", term, str(conv))
    err = res.stderr.decode()
    assert res.returncode == 2 and err.count("\n") == 1
    assert f"error: filter '{term}': " in err and "is neither a code number nor the name of a" in err
    assert run("decode", "-f", "code=send_message,-5", str(conv)).exit_code == 0


@pytest.mark.parametrize("target, problem", [("missing/x.pcap", "does not exist"), (".", "is a directory")])
def test_record_says_what_is_wrong_with_the_output_file(tmp_path: Path, target: str, problem: str) -> None:
    res = mqctl("pcap", "record", "-w", str(tmp_path / target), "--port", "1", "--duration", "1")
    err = res.stderr.decode()
    assert res.returncode == 2 and err.startswith("error: --write ") and problem in err and "Traceback" not in err


def test_lone_surrogates_are_written_as_json_escapes(tmp_path: Path) -> None:
    """A JSON header may escape half of a surrogate pair; UTF-8 cannot carry it, so the output has the
    JSON escape again (and reads back as the same text) instead of failing."""
    hdr = (b'{"code":105,"extFields":{"topic":"T\\ud800"},"flag":0,"language":"JAVA","opaque":1,'
           b'"remark":"r\\udfff","serializeTypeCurrentRPC":"JSON","version":373}')
    path = write_conversation(tmp_path / "s.pcap", [(0, struct.pack(">iI", 4 + len(hdr), len(hdr)) + hdr)])
    res = run("decode", "-o", "jsonl", str(path))
    assert res.exit_code == 0
    assert b'"rocketmq.remark":"r\\udfff"' in res.stdout_bytes
    row = json.loads(res.stdout_bytes.decode("utf-8"))
    assert (row["rocketmq.remark"], row["rocketmq.ext.topic"]) == ("r\udfff", "T\ud800")
    assert json.loads(run("decode", "-o", "json", str(path)).stdout_bytes.decode("utf-8")) == [row]
    assert yaml.safe_load(run("decode", "-o", "yaml", str(path)).stdout_bytes.decode("utf-8")) == [row]
    res = run("decode", str(path))
    assert res.exit_code == 0 and b"'r\\udfff'" in res.stdout_bytes


def test_field_list() -> None:
    res = run("decode", "--fields", "list", "x.pcap")
    assert res.exit_code == 0 and "rocketmq.ext.*" in res.stdout and "tcp.stream" in res.stdout


def test_bodies(tmp_path: Path) -> None:
    path = shared_path("captures", "java-4.9.8", "02-topicRoute.pcap")
    out = run("decode", "-o", "jsonl", "-f", "code=105", "-f", "type=response", "--bodies", "decoded", str(path))
    bodies = [json.loads(x)["rocketmq.body"] for x in out.stdout.splitlines()]
    text = run("decode", "-o", "jsonl", "-f", "code=105", "-f", "type=response", "--bodies", "text", str(path))
    texts = [json.loads(x)["rocketmq.body"] for x in text.stdout.splitlines()]
    assert all(t.startswith("{") for t in texts)

    def quoted_keys(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): quoted_keys(x) for k, x in v.items()}
        return [quoted_keys(x) for x in v] if isinstance(v, list) else v

    # a decoded body is the JSON the server sent, under the wire's names, its bare keys quoted
    assert bodies and bodies == [quoted_keys(fastjson.loads(t)) for t in texts]
    assert all(b["brokerDatas"] and b["queueDatas"] for b in bodies)
    raw = run("decode", "-o", "jsonl", "-f", "code=105", "-f", "type=response", "--bodies", "hex", str(path))
    assert all(json.loads(x)["rocketmq.body"].startswith("7b") for x in raw.stdout.splitlines())
    pulled = run("decode", "-o", "jsonl", "-f", "code=11", "-f", "type=response", "--bodies", "decoded",
                 str(shared_path("captures", "java-4.9.8", "07-queryMsgByOffset.pcap")))
    msgs = [json.loads(x)["rocketmq.body"] for x in pulled.stdout.splitlines()]
    assert msgs and msgs[0][0]["topic"] == "QryTopic" and msgs[0][0]["body"] == "query me please"
    sent = run("decode", "-o", "jsonl", "-f", "code=310", "-f", "type=request", "--bodies", "decoded",
               str(shared_path("captures", "java-4.9.8", "07-sendMessage-tag-key.pcap")))
    body = json.loads(sent.stdout.splitlines()[0])["rocketmq.body"]
    assert body == {"properties": {"KEYS": "qkey-7", "UNIQ_KEY": "C000020216C05FFD2B276E4D0ACC0000", "WAIT": "true",
                                   "TAGS": "tagQ"}, "body": "query me please"}


def test_hostile_send_bodies_are_body_errors(tmp_path: Path) -> None:
    """A sysFlag that is not a number, and a zstd body of 8 KB that inflates to 256 MiB: each row
    says what is wrong with its body (the first was an internal error, the second took the
    memory of the whole inflated body before any check)."""
    import zstandard

    zc = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    bomb = b"".join(zc.compress(bytes(1 << 20)) for _ in range(256)) + zc.flush()
    ext = {"a": "P", "b": "T", "c": "TBW102", "d": "4", "e": "0", "g": "1", "h": "0", "i": "", "j": "0",
           "k": "false", "m": "false"}
    frames = [(0, encode_command(RemotingCommand.request(310, {**ext, "f": "9" * 5000}, b"x", opaque=1))),
              (0, encode_command(RemotingCommand.request(310, {**ext, "f": "513"}, bomb, opaque=2)))]
    path = write_conversation(tmp_path / "hostile.pcap", frames, server=("10.0.0.2", 10911))
    out = run("decode", "-o", "jsonl", "--bodies", "decoded", str(path))
    assert out.exit_code == 0
    errors = [json.loads(x).get("rocketmq.body_error") for x in out.stdout.splitlines()]
    assert errors[0] == "f: '9999999999999999999999999999999999999999'… (5000 chars) is not an int (field extFields.f)"
    assert errors[1] == "compressed body inflates past 67108864 bytes (offset 0)"


def test_strict_and_problem_warning() -> None:
    path = shared_path("captures", "java-4.9.8", "10-malformed-frames.pcap")
    res = run("decode", "-o", "jsonl", str(path))
    assert res.exit_code == 0 and "6 decode" in res.stderr
    problems = [json.loads(x) for x in res.stdout.splitlines() if '"problem"' in x]
    assert {p["rocketmq.problem.field"] for p in problems if p["rocketmq.problem"] == "decode"} == {
        "headerLength", "serializeType", "totalLength"}
    assert runner.invoke(app, ["decode", "--strict", str(path)]).exit_code == 1
    assert runner.invoke(app, ["stats", "--strict", str(path)]).exit_code == 1
    assert run("decode", "--strict", str(shared_path("captures", "java-4.9.8", "02-topicList.pcap"))).exit_code == 0


@pytest.mark.parametrize("args", [
    ["decode", "-o", "xml", "x.pcap"],
    ["decode", "--bodies", "all", "x.pcap"],
    ["decode", "--filter", "code", "x.pcap"],
    ["decode", "--port", "ha", "x.pcap"],
    ["decode", "--port", "ha=70000", "x.pcap"],
    ["decode", "--port", "bogus=10", "x.pcap"],
    ["record", "-w", "x.pcap", "--port", "abc"],
    ["record", "-w", "x.pcap", "--duration", "0"],
])
def test_usage_errors(args: list[str]) -> None:
    from mqctl.errors import UsageError

    with pytest.raises(UsageError):
        runner.invoke(app, args, catch_exceptions=False)


def test_stats_table_and_data(conv: Path) -> None:
    res = run("stats", str(conv))
    assert res.exit_code == 0
    assert "Requests by code" in res.stdout and "GET_ROUTEINFO_BY_TOPIC" in res.stdout
    assert "Conversations" in res.stdout and "10.0.0.2:9876" in res.stdout


def test_port_override_on_the_command_line(tmp_path: Path) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(1), server=("10.0.0.2", 10912))
    res = run("decode", "-o", "jsonl", "--port", "broker=10912", str(path))
    assert [json.loads(x)["rocketmq.role"] for x in res.stdout.splitlines()] == ["broker", "broker"]


# ------------------------------------------------------------------------------------- the real process

def mqctl(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "mqctl.app", *args], input=stdin, capture_output=True, env=env,
                          cwd=ROOT, timeout=120)


def test_process_global_output_json(conv: Path) -> None:
    res = mqctl("-o", "json", "pcap", "decode", str(conv))
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) == 6
    stats = json.loads(mqctl("-o", "json", "pcap", "stats", str(conv)).stdout)
    assert stats["totals"]["commands"] == 6
    assert {c["name"]: c["answered"] for c in stats["requests"]} == {"GET_ROUTEINFO_BY_TOPIC": 2, "SEND_MESSAGE": 1}
    # the command's own -o wins over the global one
    jl = mqctl("-o", "json", "pcap", "decode", "-o", "jsonl", str(conv))
    assert [json.loads(x) for x in jl.stdout.splitlines()] == rows


def test_process_reads_standard_input_and_gzip(conv: Path, tmp_path: Path) -> None:
    res = mqctl("pcap", "decode", "-o", "jsonl", "-", stdin=conv.read_bytes())
    assert res.returncode == 0 and len(res.stdout.splitlines()) == 6
    packed = tmp_path / "c.pcap.gz"
    packed.write_bytes(gzip.compress(conv.read_bytes()))
    assert mqctl("pcap", "decode", "-o", "jsonl", str(packed)).stdout == res.stdout


@pytest.mark.parametrize(("cut", "record"), [(-5, 18), (30, 1)])
def test_process_damaged_file_is_one_line(conv: Path, tmp_path: Path, cut: int, record: int) -> None:
    data = conv.read_bytes()
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data[:cut])
    res = mqctl("pcap", "decode", "-o", "jsonl", str(bad))
    assert res.returncode == 1
    err = res.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {bad}, record {record}, byte offset ")


def test_process_not_a_capture(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not a capture\n")
    res = mqctl("pcap", "stats", str(path))
    assert res.returncode == 1
    assert res.stderr.decode().strip() == f"error: {path}, byte offset 0: not a pcap or pcapng file (magic 68656c6c)"
    missing = mqctl("pcap", "decode", str(tmp_path / "nope.pcap"))
    assert missing.returncode == 1 and "cannot open" in missing.stderr.decode()


def test_process_shared_capture_end_to_end() -> None:
    path = shared_path("captures", "java-4.9.8", "05-cpp-produce.pcap")
    res = mqctl("pcap", "decode", "-o", "jsonl", "--filter", "code=10", "--filter", "type=response", str(path))
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    assert len(rows) == 30 and {r["rocketmq.code_name"] for r in rows} == {"SUCCESS"}
    usage = mqctl("pcap", "decode", "--bodies", "all", str(path))
    assert usage.returncode == 2 and "--bodies" in usage.stderr.decode()


@pytest.mark.skipif(os.geteuid() != 0, reason="live capture needs root")
def test_process_records_loopback_traffic(tmp_path: Path) -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    request = RemotingCommand.request(105, {"topic": "Live"}, opaque=7)
    answer = request.response(0, body=b"r" * 200_000)

    def serve() -> None:
        while True:
            c, _ = srv.accept()
            if not c.recv(65536):
                c.close()  # a probe (below)
                continue
            c.sendall(encode_command(answer))
            time.sleep(0.3)
            c.close()
            return

    threading.Thread(target=serve, daemon=True).start()
    out = tmp_path / "live.pcap"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "mqctl.app", "pcap", "record", "-w", str(out), "--port", str(port),
                             "--duration", "60"], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Empty connections until the first packet is in the file: the recorder is capturing (its start-up
    # takes seconds on a busy machine).
    deadline = time.monotonic() + 30
    while not (out.exists() and out.stat().st_size > 24):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        socket.create_connection(("127.0.0.1", port)).close()
        time.sleep(0.2)
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(encode_command(request))
        got = b""
        while len(got) < len(encode_command(answer)):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += chunk
    # Ctrl-C once the file has stopped growing: the recorder has written what the exchange sent (a
    # busy machine makes it lag behind the socket, and stopping drops what it has not read yet).
    want = len(encode_command(request)) + len(encode_command(answer))
    size, still = -1, 0
    while still < 10 and time.monotonic() < deadline + 30:
        now = out.stat().st_size
        size, still = now, (still + 1 if now == size and now > want else 0)
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    srv.close()
    assert proc.returncode == 0, err
    rows = [json.loads(x) for x in mqctl("pcap", "decode", "-o", "jsonl", "--port", f"remoting={port}",
                                         str(out)).stdout.splitlines()]
    commands = [(r["rocketmq.code"], r["rocketmq.type"], r["rocketmq.body_length"]) for r in rows
                if r["rocketmq.kind"] == "command"]
    assert commands == [(105, "request", 0), (0, "response", 200_000)], (out.stat().st_size, rows[:3], err[-300:])
    assert not [r for r in rows if r["rocketmq.kind"] == "problem"]


@pytest.mark.skipif(os.geteuid() != 0, reason="live capture needs root")
def test_record_says_when_it_captures_and_stops_whole_on_sigterm(tmp_path: Path) -> None:
    """What a script does (scripts/demo): wait for the 'capturing' line, talk at once, SIGTERM at
    once. Nothing sent after the line is missed, and what the kernel held at the signal is written."""
    import select

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    request = RemotingCommand.request(105, {"topic": "Term"}, opaque=9)
    answer = request.response(0, body=b"t" * 300_000)

    def serve() -> None:
        c, _ = srv.accept()
        with c:
            c.recv(65536)
            c.sendall(encode_command(answer))

    out = tmp_path / "term.pcap"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "mqctl.app", "pcap", "record", "-w", str(out), "--port", str(port)],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    try:
        said = b""
        deadline = time.monotonic() + 60
        while b"capturing" not in said:
            assert proc.poll() is None and time.monotonic() < deadline, said
            if select.select([proc.stderr], [], [], 0.5)[0]:
                said += proc.stderr.readline()
        threading.Thread(target=serve, daemon=True).start()
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(encode_command(request))
            got = b""
            while len(got) < len(encode_command(answer)):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                got += chunk
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        srv.close()
    assert proc.returncode == 0, err
    assert b"packets" in err  # its closing line: the count written
    rows = [json.loads(x) for x in mqctl("pcap", "decode", "-o", "jsonl", "--port", f"remoting={port}",
                                         str(out)).stdout.splitlines()]
    commands = [(r["rocketmq.code"], r["rocketmq.type"], r["rocketmq.body_length"]) for r in rows
                if r["rocketmq.kind"] == "command"]
    assert commands == [(105, "request", 0), (0, "response", 300_000)], rows[:3]
    assert not [r for r in rows if r["rocketmq.kind"] == "problem"]


# ------------------------------------------------------------------ issue 15 items 2 and 3: pipes, cut files

def _records(data: bytes) -> list[bytes]:
    """The records of a little-endian classic pcap (file header left out)."""
    out, pos = [], 24
    while pos + 16 <= len(data):
        incl = struct.unpack_from("<I", data, pos + 8)[0]
        out.append(data[pos:pos + 16 + incl])
        pos += 16 + incl
    return out


def _read_until(proc: subprocess.Popen[bytes], predicate: Any, timeout: float = 60.0) -> bytes:
    """What the process has written to stdout once ``predicate(bytes so far)`` holds (it keeps running)."""
    import select

    got = b""
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while not predicate(got):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no output in {timeout:g}s while the input stays open; got {got!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"stdout closed early; got {got!r}")
            got += chunk
    return got


@pytest.mark.parametrize("fmt", ["jsonl", "table"])
def test_process_decodes_a_pipe_as_it_arrives(conv: Path, fmt: str) -> None:
    """``tcpdump -w - | mqctl pcap decode -o jsonl -``: rows go out as frames complete, not at the end
    of the input."""
    data = conv.read_bytes()
    records = _records(data)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with subprocess.Popen([sys.executable, "-m", "mqctl.app", "pcap", "decode", "-o", fmt, "-"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          cwd=ROOT) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            # the handshake and the first requests and answers; the input stays open
            first = len(records) // 2
            proc.stdin.write(data[:24] + b"".join(records[:first]))
            proc.stdin.flush()
            marker = b"rocketmq.code" if fmt == "jsonl" else b"GET_ROUTEINFO_BY_TOPIC(105)"
            early = _read_until(proc, lambda got: marker in got)
            proc.stdin.write(b"".join(records[first:]))
            proc.stdin.close()
            rest, err = proc.stdout.read(), proc.stderr.read()
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    lines = (early + rest).decode().splitlines()
    assert len(lines) == (6 if fmt == "jsonl" else 7)


def test_process_cut_capture_decodes_what_is_complete(conv: Path, tmp_path: Path) -> None:
    """A capture cut short inside a record: the complete records are decoded and printed, then the
    truncation is reported (exit 1), as tshark does."""
    data = conv.read_bytes()
    records = _records(data)
    whole = tmp_path / "whole.pcap"
    whole.write_bytes(data[:24] + b"".join(records[:-1]))
    expected = mqctl("pcap", "decode", "-o", "jsonl", str(whole))
    assert expected.returncode == 0 and len(expected.stdout.splitlines()) == 6
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[:24] + b"".join(records[:-1]) + records[-1][:-5])
    for fmt in ("jsonl", "table", "json"):
        res = mqctl("pcap", "decode", "-o", fmt, str(cut))
        assert res.returncode == 1, res.stderr
        err = res.stderr.decode()
        assert err.count("\n") == 1 and "record data cut short" in err and f"record {len(records)}" in err
        if fmt == "jsonl":
            assert res.stdout == expected.stdout
        elif fmt == "json":
            assert len(json.loads(res.stdout)) == 6
        else:
            assert len(res.stdout.splitlines()) == 7
    stats = mqctl("-o", "json", "pcap", "stats", str(cut))
    assert stats.returncode == 1 and json.loads(stats.stdout)["totals"]["commands"] == 6


# ------------------------------------------------------------------ issue 15 items 4 and 5


def test_table_shows_the_bodies_asked_for() -> None:
    """``--bodies decoded`` (and text, hex) in the table: a last column with the body."""
    fixture = str(ROOT / "fixtures" / "peers" / "peers-cpp-produce-consume.pcap")
    plain = run("decode", fixture, "-f", "code=105")
    decoded = run("decode", fixture, "-f", "code=105", "--bodies", "decoded")
    assert plain.exit_code == 0 and decoded.exit_code == 0
    assert "brokerDatas" not in plain.stdout
    head, *rows = decoded.stdout.splitlines()
    assert head.split()[-2:] == ["decoded", "body"]
    route = [r for r in rows if "brokerDatas" in r]
    assert route and json.loads(route[0][route[0].index("{"):])["brokerDatas"][0]["brokerName"] == "broker-a"
    text = run("decode", fixture, "-f", "code=10", "--bodies", "text").stdout
    assert "text body" in text.splitlines()[0] and "cppfix:0:" in text
    hexed = run("decode", fixture, "-f", "code=10", "--bodies", "hex").stdout
    assert b"cppfix:0:".hex() in hexed


def run_on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """The real mqctl with stderr on a pseudo-terminal (stdout a pipe): exit code, stdout, and what the
    terminal received."""
    import pty
    import select

    master, slave = pty.openpty()
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", **(env or {}))
    full_env.pop("NO_COLOR", None)
    with subprocess.Popen([sys.executable, "-m", "mqctl.app", *args], stdout=subprocess.PIPE, stderr=slave,
                          stdin=subprocess.DEVNULL, env=full_env, cwd=ROOT) as proc:
        os.close(slave)
        assert proc.stdout is not None
        outs, tty = [], []
        fds = [proc.stdout.fileno(), master]
        while fds:
            ready, _, _ = select.select(fds, [], [], 120)
            assert ready, "mqctl produced nothing for 120 s"
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal's other end closed
                    chunk = b""
                if not chunk:
                    fds.remove(fd)
                elif fd == master:
                    tty.append(chunk)
                else:
                    outs.append(chunk)
        proc.wait(60)
    os.close(master)
    return proc.returncode, b"".join(outs), b"".join(tty)


def test_long_runs_show_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """A long ``pcap decode``/``stats`` shows a bar on a terminal whatever the file's size (here a small
    gzip file); the bar goes away at the end and never reaches stdout. The bar appears after
    MQCTL_PROGRESS_DELAY seconds of running (0 here, so that the test does not depend on speed)."""
    big = write_conversation(tmp_path / "big.pcap", exchange(3000, body=2000))
    packed = tmp_path / "big.pcap.gz"
    packed.write_bytes(gzip.compress(big.read_bytes()))
    assert packed.stat().st_size < 1 << 20 < big.stat().st_size
    now = {"MQCTL_PROGRESS_DELAY": "0"}
    for args in (("pcap", "decode", "-o", "jsonl", str(packed)), ("pcap", "stats", str(packed))):
        rc, out, tty = run_on_a_terminal(*args, env=now)
        assert rc == 0, tty
        assert b"reading" in tty and b"\xe2\x94\x81" in tty, tty[:500]  # the bar's line characters
        assert b"reading" not in out
    # a short run with the default delay draws nothing
    rc, out, tty = run_on_a_terminal("pcap", "stats", str(write_conversation(tmp_path / "s.pcap", exchange(2))))
    assert rc == 0 and b"reading" not in tty
