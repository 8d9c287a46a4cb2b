# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Errors as a user meets them, with the real ``mqctl`` process: one line that says what and where,
and the documented exit code (issue 15 items 6, 7, 28)."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator

import pytest

from .test_e2e import mqctl_cmd, run_mqctl


@pytest.fixture
def http_port() -> Iterator[int]:
    """A server that answers anything with an HTTP 400 and closes, as nginx does."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(5)
    srv.close()


@pytest.mark.parametrize("args", [("cluster", "list"), ("topic", "list"), ("topic", "route", "T")])
def test_an_http_port_is_not_a_rocketmq_server(http_port, args):
    r = run_mqctl("-n", f"127.0.0.1:{http_port}", *args)
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"error: 127.0.0.1:{http_port} is not a RocketMQ server: "
                               "it answered 'HTTP/1.1 400 Bad Request'")
    assert r.stdout == ""


def test_a_missing_topic_names_the_server_and_the_request(servers):
    """docs/cli.md's example error line, as the code prints it."""
    r = run_mqctl("-n", servers.namesrv, "topic", "route", "NoSuchTopic15")
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: TOPIC_NOT_EXIST(17) from {servers.namesrv} to GET_ROUTEINFO_BY_TOPIC: "
                               "No topic route info in name server for the topic: NoSuchTopic15")
    assert r.stderr.count("\n") == 1


def test_a_full_disk_is_one_error_line(servers):
    r = run_mqctl("-n", servers.namesrv, "-o", "json", "cluster", "list", stdout="/dev/full")
    assert r.returncode == 1
    assert r.stderr == "error: cannot write the output: No space left on device\n"


def test_a_closed_pipe_ends_quietly(servers, tmp_path):
    """``mqctl ... | head -1``: the reader has what it wanted; exit 0, nothing on stderr."""
    from tests.capture.helpers import exchange, write_conversation

    big = write_conversation(tmp_path / "big.pcap", exchange(3000))
    for args in (("pcap", "decode", str(big)), ("pcap", "decode", "-o", "jsonl", str(big)),
                 ("-n", servers.namesrv, "-o", "yaml", "broker", "config", "get", "-b", servers.broker_addr(0))):
        with subprocess.Popen([*mqctl_cmd(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            first = proc.stdout.readline()
            proc.stdout.close()  # as head -1 does
            err = proc.stderr.read()
            rc = proc.wait(120)
        assert first and rc == 0 and err == b"", (args, rc, err)


# ---------------------------------------------------------------------- items 8, 9, 24, 27


def test_a_config_value_the_broker_cannot_take_fails(servers):
    """Issue 15 item 8: the broker refuses the update (and a Java broker, which answers SUCCESS and
    keeps the old value, is caught by reading the configuration back); exit 1."""
    b = servers.broker_addr(0)
    r = run_mqctl("-n", servers.namesrv, "broker", "config", "set", "-b", b, "flushIntervalCommitLog=abc")
    assert r.returncode == 1 and r.stdout == ""
    assert "flushIntervalCommitLog: expected an integer (Java int), got 'abc'" in r.stderr
    got = run_mqctl("-n", servers.namesrv, "broker", "config", "get", "-b", b, "flushIntervalCommitLog")
    assert got.stdout.splitlines()[1].split() == ["flushIntervalCommitLog", "500"]
    r = run_mqctl("-n", servers.namesrv, "broker", "config", "set", "-b", b, "flushIntervalCommitLog")
    assert r.returncode == 2
    assert r.stderr == "error: KEY=VALUE 'flushIntervalCommitLog': expected KEY=VALUE\n"


def test_a_config_value_the_name_server_cannot_take_fails(servers):
    """Issue 15 item 24."""
    r = run_mqctl("-n", servers.namesrv, "namesrv", "config", "set", "scanNotActiveBrokerInterval=abc")
    assert r.returncode == 1 and r.stdout == ""
    assert "scanNotActiveBrokerInterval: expected an integer, got 'abc'" in r.stderr


def test_what_does_not_exist_exits_1(servers):
    """Issue 15 item 9: an empty answer to a question about something that does not exist."""
    r = run_mqctl("-n", servers.namesrv, "broker", "config", "get", "-b", servers.broker_addr(0), "noSuchKey")
    assert r.returncode == 1 and r.stderr == "error: no such configuration key: noSuchKey\n"
    r = run_mqctl("-n", servers.namesrv, "namesrv", "kv", "list", "NOPE")
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: QUERY_NOT_FOUND(22) from {servers.namesrv} to GET_KVLIST_BY_NAMESPACE")
    r = run_mqctl("-n", servers.namesrv, "namesrv", "config", "get", "noSuchKey")
    assert r.returncode == 1 and "noSuchKey" in r.stderr


def test_namesrv_config_get_keeps_the_order_asked(servers):
    """Issue 15 item 29."""
    r = run_mqctl("-n", servers.namesrv, "namesrv", "config", "get", "listenPort", "kvConfigPath", "clusterTest")
    assert r.returncode == 0, r.stderr
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["listenPort", "kvConfigPath", "clusterTest"]


def test_read_only_and_empty_messages(servers):
    """Issue 15 item 27: no negative offsets, no pull outside a queue (the broker would write an
    OFFSET_MOVED_EVENT message), no empty body, no empty topic."""
    ns = servers.namesrv
    r = run_mqctl("-n", ns, "message", "send", "-t", "OffTopic", "-p", "one")
    assert r.returncode == 0, r.stderr
    r = run_mqctl("-n", ns, "message", "consume", "-t", "OffTopic", "-O", "-5")
    assert r.returncode == 2 and r.stderr == "error: --offset: -5 is negative\n"
    r = run_mqctl("-n", ns, "-o", "json", "message", "consume", "-t", "OffTopic", "-O", "999999")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["messages"] == []
    r = run_mqctl("-n", ns, "message", "query", "--offset", "999999", "-t", "OffTopic", "-b", "broker-a", "-q", "0")
    assert r.returncode == 1
    moved = json.loads(run_mqctl("-n", ns, "-o", "json", "topic", "status", "OFFSET_MOVED_EVENT").stdout)
    assert all(q["max_offset"] == 0 for q in moved["queues"]), moved
    r = run_mqctl("-n", ns, "message", "send", "-t", "OffTopic", "-p", "")
    assert r.returncode == 2 and "body is empty" in r.stderr
    r = run_mqctl("-n", ns, "message", "send", "-t", "", "-p", "x")
    assert r.returncode == 2 and r.stderr == "error: --topic: the topic name is blank\n"


def test_consume_stats_wait_the_timeout_given():
    """Issue 15 item 26: GET_CONSUME_STATS (and QUERY_MESSAGE) wait --timeout, not three times it."""
    import asyncio

    from wire.admin import consumer
    from wire.admin.client import AdminClient
    from wire.bodies import BrokerData, QueueData, TopicRouteData
    from wire.codes import RequestCode

    seen: list[tuple[int, float | None]] = []

    class Client(AdminClient):
        async def namesrv(self, code, ext=None, body=None, *, ok=None):  # type: ignore[override]
            route = TopicRouteData(queue_datas=(QueueData(broker_name="a", read_queue_nums=1, write_queue_nums=1,
                                                          perm=6),),
                                   broker_datas=(BrokerData(cluster="C", broker_name="a",
                                                            broker_addrs={0: "10.0.0.1:1"}),))
            self.last_namesrv = "n:1"
            return self.command(0).response(0, body=route.encode())

        async def call(self, addr, code, ext=None, body=None, *, ok=None, timeout=None):  # type: ignore[override]
            seen.append((code, timeout))
            return self.command(0).response(0, body=b'{"offsetTable":{},"consumeTps":0.0}')

    async def main() -> None:
        async with Client(["n:1"], timeout=2.0) as c:
            await consumer.consumer_progress(c, "G")

    with pytest.raises(Exception, match="no consume stats"):
        asyncio.run(main())
    assert seen == [(RequestCode.GET_CONSUME_STATS, None)]
