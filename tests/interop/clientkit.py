# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What the Java client programs of tests/interop share: compiling one against a version's jars
of ../shared/javakit (skipping with the reason when the kit or a JDK is missing), and our name
server and broker served from a thread of their own while the program runs."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.javakit import javakit_missing, require_javakit

JAVA_DIR = Path(__file__).parent / "java"


def compile_probe(name: str, version: str, out: Path) -> list[str]:
    """Compile ``java/NAME.java`` against ``lib-VERSION`` into ``out``; the command that runs it."""
    missing = javakit_missing()
    if missing:
        pytest.skip(missing)
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac (a JDK) is needed to compile the Java client program")
    lib = require_javakit() / f"lib-{version}"
    classpath = f"{lib}/*"
    done = subprocess.run([javac, "-cp", classpath, "-d", str(out), str(JAVA_DIR / f"{name}.java")],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    # the JNI libraries (zstd, lz4) as the kit's own scripts load them
    return ["java", "-Xmx128m", "-cp", f"{out}:{classpath}", f"-Djava.library.path={lib / 'native'}",
            "-Duser.home=" + str(out), "-Drocketmq.client.logRoot=" + str(out / "logs"), name]


@contextmanager
def threaded_servers(base: Path, **broker_settings: str) -> Iterator[tuple[str, str]]:
    """Our name server and broker (``broker_settings`` on top of the test defaults, topics
    created on send) on free ports, in a thread with its own event loop; yields their addresses."""
    from reference_broker.broker import Broker
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer
    from tests.broker.helpers import broker_config

    ready: dict[str, str] = {}
    started = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        ns_cfg = NamesrvConfig(overrides={"kvConfigPath": str(base / "kv.json"),
                                          "configStorePath": str(base / "ns.properties")})
        async with NameServer(ns_cfg, port=0) as ns:
            cfg = broker_config(base / "store", ns.address, autoCreateTopicEnable="true", **broker_settings)
            async with Broker(cfg, host="127.0.0.1", port=0) as b:
                ready["namesrv"], ready["broker"] = ns.address, b.address
                started.set()
                await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    assert started.wait(60), "our servers did not start"
    try:
        yield ready["namesrv"], ready["broker"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()
