# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The real clients with their ACL options through the reference servers with ACL on: the C++
client (``set_session_credentials``) and ali-ons (``accessKey``/``secretKey``) produce and consume
with an account's credentials, and are refused with a wrong secret or without an account."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.peers.harness import PeerCluster, require
from wire import ResponseCode
from wire.acl import Credentials, sign_request
from wire.headers import CreateTopicRequestHeader, request

pytestmark = [pytest.mark.peers, pytest.mark.slow]

ACL = textwrap.dedent("""\
    accounts:
      - accessKey: peer-client
        secretKey: peer-client-secret
        defaultTopicPerm: DENY
        defaultGroupPerm: SUB
        topicPerms:
          - AclPeerTopic=PUB|SUB
      - accessKey: peer-admin
        secretKey: peer-admin-secret
        admin: true
    """)
COUNT = 4


def acl_cluster(peer_cluster: Callable[..., PeerCluster], tmp_path: Path) -> PeerCluster:
    home = tmp_path / "rocketmq-home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "plain_acl.yml").write_text(ACL)
    cluster = peer_cluster(aclEnable="true", rocketmqHome=str(home))
    create = request(17, CreateTopicRequestHeader(topic="AclPeerTopic", default_topic="TBW102", read_queue_nums=2,
                                                  write_queue_nums=2, perm=6, topic_filter_type="SINGLE_TAG"))
    answer = cluster.admin(sign_request(create, Credentials("peer-admin", "peer-admin-secret")))
    assert answer.code == ResponseCode.SUCCESS, answer
    return cluster


@pytest.mark.parametrize("kind", ["cpp", "js"])
def test_a_client_with_credentials_produces_and_consumes(peer_cluster: Callable[..., PeerCluster], tmp_path: Path,
                                                         kind: str) -> None:
    require(kind)
    cluster = acl_cluster(peer_cluster, tmp_path)
    creds = {"access_key": "peer-client", "secret_key": "peer-client-secret"}
    sent = cluster.peer(kind, "produce", topic="AclPeerTopic", count=COUNT, size=100, run_id=f"acl-{kind}",
                        **creds).finish(60)
    assert [r["status"] for r in sent.sent] == ["SEND_OK"] * COUNT, sent.describe()
    got = cluster.peer(kind, "consume", topic="AclPeerTopic", group=f"AclGroup_{kind}", expect=COUNT, timeout=60,
                       **creds).finish(90)
    assert len({m["mark"] for m in got.messages}) == COUNT, got.describe()


@pytest.mark.parametrize("kind", ["cpp", "js"])
@pytest.mark.parametrize("secret", ["wrong-secret-1", None])
def test_a_client_with_a_wrong_secret_or_none_is_refused(peer_cluster: Callable[..., PeerCluster], tmp_path: Path,
                                                         kind: str, secret: str | None) -> None:
    require(kind)
    cluster = acl_cluster(peer_cluster, tmp_path)
    creds = {} if secret is None else {"access_key": "peer-client", "secret_key": secret}
    sent = cluster.peer(kind, "produce", topic="AclPeerTopic", count=1, size=100, run_id=f"refused-{kind}",
                        send_timeout_ms=2000, **creds).finish(90, codes=(0, 1, 3))
    assert not sent.sent or all(r.get("status") != "SEND_OK" for r in sent.sent), sent.describe()
    log = cluster.broker_log()
    expected = ("Check signature failed for accessKey=peer-client",) if secret else \
        ("No accessKey is configured", "No acl config for ")  # the C++ client sends an empty key
    assert any(f"refused SEND_MESSAGE_V2 from 127.0.0.1: {e}" in log or f"refused SEND_MESSAGE from 127.0.0.1: {e}"
               in log for e in expected), log[-3000:]
