# Licensed under the Apache License, Version 2.0. See LICENSE.
# ruff: noqa: E501 (the table of mqadmin commands reads one option per tuple)
"""mqadmin's command names as hidden aliases of mqctl's commands, with mqadmin's options.

Every command of mqadmin 4.9.8 and 5.0.0 (``MQAdminStartup.initCommand``: 56 in 4.9.8, all kept in
5.0.0, which adds 15) and of today's mqadmin (5.3.3: 89, of which 24 came after 5.0.0, and 6 of
5.0.0's are gone; 95 names in all) is in :data:`MQADMIN`: either the mqctl command it stands for,
with how each of its options (``-t``/``--topic`` …, Java's short and long names) becomes an mqctl
argument, or why mqctl has no such command. ``mqctl topicRoute -t T`` runs ``mqctl topic route T``, ``mqctl
updateTopic -c C -t T -r 4 -o true`` runs ``mqctl topic create T -c C -r 4 --order``. The names are
matched without regard to case, as mqadmin's ``findSubCommand`` does, and listed nowhere in
``--help``; docs/cli.md has the table.

Under an mqadmin name the short options are mqadmin's (``-o`` is updateTopic's order, not the
output); ``-n`` stays the name servers, and mqctl's global options work in their long forms
(``--output json``). An mqadmin option mqctl has no equivalent of is a usage error naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .errors import UsageError

__all__ = ["MQADMIN", "Alias", "resolve_alias"]

Rewrite = Callable[[list[str]], list[str]]


# ---------------------------------------------------------------------- option actions


@dataclass(frozen=True)
class Pos:
    """The value is a positional argument, at this index."""

    index: int


@dataclass(frozen=True)
class Opt:
    """The value goes to this mqctl option."""

    name: str


@dataclass(frozen=True)
class Bool:
    """``true``/``false`` becomes ``--name``/``--no-name``."""

    name: str


@dataclass(frozen=True)
class Flag:
    """An mqadmin option without a value becomes this mqctl flag."""

    name: str


@dataclass(frozen=True)
class Fn:
    """The value becomes the arguments ``fn(value)`` returns (and takes no value when ``takes`` is false)."""

    fn: Callable[[str], list[str]]
    takes: bool = True


@dataclass(frozen=True)
class No:
    """An mqadmin option mqctl has no equivalent of (usage error naming ``why``)."""

    why: str
    takes: bool = True


Action = Pos | Opt | Bool | Flag | Fn | No


@dataclass(frozen=True)
class Alias:
    """An mqadmin command: ``path`` is the mqctl command (empty: not covered, ``why`` says why);
    ``options`` maps mqadmin's short letter and long name to what each becomes."""

    name: str
    path: tuple[str, ...] = ()
    options: dict[tuple[str, str], Action] = field(default_factory=dict)
    why: str = ""
    #: only in 5.0.0 (the others are in 4.9.8 and 5.0.0)
    since_5: bool = False
    #: a command mqadmin gained after 5.0.0: the first release with it (then not in 4.9.8 or 5.0.0)
    since: str = ""
    #: the mqadmin release that dropped it (5.3.3 replaced the plain ACL commands with ACL 2.0's)
    gone: str = ""
    #: leading arguments (a fixed positional, a flag the alias stands for)
    fixed: tuple[str, ...] = ()
    #: a path chosen by an option's value (updateOrderConf -m put|get|delete)
    route: Callable[[list[str]], tuple[tuple[str, ...], list[str]]] | None = None

    @property
    def covered(self) -> bool:
        return bool(self.path) or self.route is not None

    def rewrite(self, args: list[str]) -> list[str]:
        """mqadmin's arguments as mqctl's."""
        return _rewrite(self, args)


def _lookup(alias: Alias, arg: str) -> tuple[tuple[str, str], Action] | None:
    if arg.startswith("--"):
        name = arg[2:]
        for key, action in alias.options.items():
            if key[1] == name:
                return key, action
        return None
    if arg.startswith("-") and len(arg) > 1:
        name = arg[1:]
        for key, action in alias.options.items():
            if key[0] == name:
                return key, action
    return None


def _bool_text(alias: Alias, key: tuple[str, str], value: str) -> bool:
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise UsageError(f"{alias.name}: -{key[0]} ({key[1]}) takes true or false, not {value!r}")
    return text == "true"


def _rewrite(alias: Alias, args: list[str]) -> list[str]:
    positional: dict[int, str] = {}
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        found = _lookup(alias, arg)
        if found is None:
            # -n (the name servers, global as in mqadmin), -h, mqctl's own long options
            out.append(arg)
            i += 1
            continue
        key, action = found
        takes = not isinstance(action, Flag) and getattr(action, "takes", True)
        if takes:
            if i + 1 >= len(args):
                raise UsageError(f"{alias.name}: -{key[0]} ({key[1]}) needs a value")
            value = args[i + 1]
            i += 2
        else:
            value = ""
            i += 1
        if isinstance(action, Pos):
            positional[action.index] = value
        elif isinstance(action, Opt):
            out += [action.name, value]
        elif isinstance(action, Bool):
            name = action.name
            out.append(name if _bool_text(alias, key, value) else "--no-" + name[2:])
        elif isinstance(action, Flag):
            out.append(action.name)
        elif isinstance(action, Fn):
            out += action.fn(value)
        else:
            raise UsageError(f"{alias.name}: mqadmin's -{key[0]} ({key[1]}) has no mqctl equivalent: "
                             f"{action.why}")
    wanted = sorted((a.index, k) for k, a in alias.options.items() if isinstance(a, Pos))
    if any(index not in positional for index, _k in wanted) and not {"-h", "--help"} & set(out):
        raise UsageError(f"{alias.name}: give " + ", ".join(f"-{k[0]} ({k[1]})" for _i, k in wanted))
    return [*alias.fixed, *(positional[n] for n in sorted(positional)), *out]


def _order_conf(args: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """updateOrderConf -t TOPIC -v CONF -m put|get|delete: the ORDER_TOPIC_CONFIG entry of the
    name servers (``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``)."""
    method, topic, value, rest = None, None, None, []
    it = iter(args)
    for arg in it:
        if arg in ("-m", "--method"):
            method = next(it, None)
        elif arg in ("-t", "--topic"):
            topic = next(it, None)
        elif arg in ("-v", "--orderConf"):
            value = next(it, None)
        else:
            rest.append(arg)
    if method not in ("put", "get", "delete") or topic is None:
        raise UsageError("updateOrderConf: give -t TOPIC and -m put|get|delete (put needs -v ORDERCONF)")
    if method == "put":
        if value is None:
            raise UsageError("updateOrderConf: -m put needs -v ORDERCONF (brokerName:queues;...)")
        return ("namesrv", "kv", "put"), ["ORDER_TOPIC_CONFIG", topic, value, *rest]
    return ("namesrv", "kv", method), ["ORDER_TOPIC_CONFIG", topic, *rest]


def _now_or_time(value: str) -> list[str]:
    return ["--time", value]


def _ms_to_s(value: str) -> list[str]:
    try:
        return ["--timeout", str(int(value) / 1000)]
    except ValueError:
        raise UsageError(f"timeoutMillis: {value!r} is not a number of milliseconds") from None


def _each(option: str) -> Fn:
    """A comma-separated mqadmin list (``topicA=DENY,topicB=SUB``) as a repeated mqctl option."""
    return Fn(lambda value: [a for item in value.split(",") if item.strip() for a in (option, item.strip())])


def _admin(value: str) -> list[str]:
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise UsageError(f"updateAclConfig: -m (admin) takes true or false, not {value!r}")
    return ["--admin"] if text == "true" else []


def _export_file(value: str) -> list[str]:
    # mqadmin's -f is a directory: the document is DIR/metadata.json
    return ["--file", value.rstrip("/") + "/metadata.json"]


def _kv(option: str) -> Fn:
    """-k KEY / -v VALUE of updateBrokerConfig and updateNamesrvConfig become one KEY=VALUE."""
    return Fn(lambda value: [f"\0{option}\0{value}"])


def _join_kv(args: list[str]) -> list[str]:
    key = next((a.split("\0")[2] for a in args if a.startswith("\0k\0")), None)
    value = next((a.split("\0")[2] for a in args if a.startswith("\0v\0")), None)
    rest = [a for a in args if not a.startswith("\0")]
    if key is None or value is None:
        raise UsageError("give -k KEY and -v VALUE")
    return [f"{key}={value}", *rest]


_NOT_SUPPORTED_BY_MQCTL = "mqctl does not take it"
_CONTROLLER_CONFIG = "mqctl controller reads a controller's configuration (controller config) but does not change it yet"
_CLEAN_BROKER = "CLEAN_BROKER_DATA is not sent by mqctl yet (the reference controller answers it)"
_STATIC = "static topics (5.x logic queues) are not supported by mqctl and the reference servers"
_CONTAINER = "the 5.x broker container is not supported by mqctl and the reference servers"
_ROCKSDB = ("the RocksDB metadata and consume-queue store (5.1.4+) is not supported by mqctl and the reference "
            "servers; cluster metadata export gives the topics and groups")
_POP = "POP consumption (5.x) is not supported by mqctl and the reference servers"
_COLD = "cold-data flow control (5.1.2) is not supported by mqctl and the reference servers"
_ACL2 = ("ACL 2.0 (users and policies, 5.3) is not supported by mqctl and the reference servers; mqctl acl "
         "speaks the plain ACL of 4.9.8 and 5.0.0")


def _a(name: str, path: tuple[str, ...], opts: Sequence[tuple[str, str, Action]] = (), **kw: object) -> Alias:
    return Alias(name, path, {(s, long): action for s, long, action in opts}, **kw)  # type: ignore[arg-type]


def _no(name: str, why: str, since_5: bool = False, since: str = "", gone: str = "") -> Alias:
    return Alias(name, (), {}, why, since_5, since=since, gone=gone)


_CHARSET = No("bodies are shown as text when they are UTF-8, else hex (--hex)")
_SUBEXPR = No("message consume reads every tag (subscription *)")

#: every mqadmin command of 4.9.8 and 5.0.0, in mqadmin's order, then those added since
MQADMIN: tuple[Alias, ...] = (
    _a("updateTopic", ("topic", "create"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("a", "attributes", No("topic attributes are 5.x")), ("t", "topic", Pos(0)),
        ("r", "readQueueNums", Opt("--read-queues")), ("w", "writeQueueNums", Opt("--write-queues")),
        ("p", "perm", Opt("--perm")), ("o", "order", Bool("--order")), ("u", "unit", Bool("--unit")),
        ("s", "hasUnitSub", Bool("--has-unit-sub"))]),
    _a("deleteTopic", ("topic", "delete"), [("t", "topic", Pos(0)), ("c", "clusterName", Opt("--cluster"))]),
    _a("updateSubGroup", ("consumer", "group", "create"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("g", "groupName", Opt("--group")), ("s", "consumeEnable", Bool("--consume-enable")),
        ("m", "consumeFromMinEnable", Bool("--from-min")), ("d", "consumeBroadcastEnable", Bool("--broadcast")),
        ("o", "consumeMessageOrderly", No("consumeMessageOrderly is 5.x")),
        ("q", "retryQueueNums", Opt("--retry-queues")), ("r", "retryMaxTimes", Opt("--retry-max-times")),
        ("p", "groupRetryPolicy", No("groupRetryPolicy is 5.x")), ("i", "brokerId", Opt("--broker-id")),
        ("w", "whichBrokerWhenConsumeSlowly", Opt("--slow-broker-id")),
        ("a", "notifyConsumerIdsChanged", Bool("--notify-ids-changed"))]),
    _a("deleteSubGroup", ("consumer", "group", "delete"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("g", "groupName", Opt("--group")), ("r", "removeOffset", Bool("--remove-offset"))]),
    _a("updateBrokerConfig", ("broker", "config", "set"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("a", "updateAllBroker", No("-c writes to the masters, as mqadmin without -a")),
        ("k", "key", _kv("k")), ("v", "value", _kv("v"))]),
    _a("updateTopicPerm", ("topic", "perm"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")), ("t", "topic", Pos(0)),
        ("p", "perm", Opt("--perm"))]),
    _a("topicRoute", ("topic", "route"), [("t", "topic", Pos(0)),
                                          ("l", "list", No("-o json gives the route as data"))]),
    _a("topicStatus", ("topic", "status"), [("t", "topic", Pos(0))]),
    _a("topicClusterList", ("topic", "clusters"), [("t", "topic", Pos(0))]),
    _a("brokerStatus", ("broker", "status"), [("b", "brokerAddr", Opt("--broker")),
                                              ("c", "clusterName", Opt("--cluster"))]),
    _a("queryMsgById", ("message", "query"), [
        ("i", "msgId", Opt("--id")), ("g", "consumerGroup", No("resending to a consumer is not supported")),
        ("d", "clientId", No("resending to a consumer is not supported")),
        ("s", "sendMessage", No("resending is not supported")), ("u", "unitName", No(_NOT_SUPPORTED_BY_MQCTL)),
        ("f", "bodyFormat", No(_CHARSET.why))]),
    _a("queryMsgByKey", ("message", "query"), [("t", "topic", Opt("--topic")), ("k", "msgKey", Opt("--key"))]),
    _a("queryMsgByUniqueKey", ("message", "query"), [
        ("i", "msgId", Opt("--unique-key")), ("t", "topic", Opt("--topic")),
        ("g", "consumerGroup", No("resending to a consumer is not supported")),
        ("d", "clientId", No("resending to a consumer is not supported")),
        ("a", "showAll", Fn(lambda _v: [], takes=False))]),
    _a("queryMsgByOffset", ("message", "query"), [
        ("t", "topic", Opt("--topic")), ("b", "brokerName", Opt("--broker")), ("i", "queueId", Opt("--queue")),
        ("o", "offset", Opt("--offset")), ("f", "bodyFormat", No(_CHARSET.why))]),
    _no("queryMsgTraceById", "message traces (the trace topic's records) are not decoded by mqctl yet"),
    _a("printMsg", ("message", "consume"), [
        ("t", "topic", Opt("--topic")), ("c", "charsetName", _CHARSET), ("s", "subExpression", _SUBEXPR),
        ("b", "beginTimestamp", Opt("--begin")), ("e", "endTimestamp", Opt("--end")),
        ("d", "printBody", Fn(lambda _v: [], takes=True))]),
    _a("printMsgByQueue", ("message", "consume"), [
        ("t", "topic", Opt("--topic")), ("a", "brokerName", Opt("--broker")), ("i", "queueId", Opt("--queue")),
        ("c", "charsetName", _CHARSET), ("s", "subExpression", _SUBEXPR),
        ("b", "beginTimestamp", Opt("--begin")), ("e", "endTimestamp", Opt("--end")),
        ("p", "print msg", Fn(lambda _v: [], takes=True)), ("d", "printBody", Fn(lambda _v: [], takes=True)),
        ("f", "calculate", No("tag counting is not supported"))]),
    _a("sendMsgStatus", ("cluster", "rt"), [
        ("b", "brokerName", Opt("--broker")), ("s", "messageSize", Opt("--size")), ("c", "count", Opt("--amount"))]),
    _a("brokerConsumeStats", ("broker", "consume-stats"), [
        ("b", "brokerAddr", Opt("--broker")), ("t", "timeoutMillis", Fn(_ms_to_s)),
        ("l", "level", No("every queue is listed; filter the output by #Diff")), ("o", "order", Bool("--order"))]),
    _a("producerConnection", ("producer", "connection"), [
        ("g", "producerGroup", Opt("--group")), ("t", "topic", Opt("--topic"))]),
    _a("consumerConnection", ("consumer", "connection"), [
        ("g", "consumerGroup", Opt("--group")), ("b", "brokerAddr", Opt("--broker"))]),
    _a("consumerProgress", ("consumer", "progress"), [
        ("g", "groupName", Opt("--group")), ("t", "topicName", Opt("--topic")),
        ("s", "showClientIP", No("consumer connection shows the clients"))]),
    _a("consumerStatus", ("consumer", "status"), [
        ("g", "consumerGroup", Opt("--group")), ("i", "clientId", Opt("--client")),
        ("b", "brokerAddr", Opt("--broker")), ("s", "jstack", Flag("--jstack"))]),
    _a("cloneGroupOffset", ("consumer", "clone-offset"), [
        ("s", "srcGroup", Opt("--from")), ("d", "destGroup", Opt("--to")), ("t", "topic", Opt("--topic")),
        ("o", "offline", Bool("--offline"))]),
    _a("producer", ("producer", "list"), [("b", "broker", Opt("--broker"))]),
    _a("clusterList", ("cluster", "list"), [
        ("m", "moreStats", Flag("--more")), ("i", "interval", Opt("--watch")), ("c", "clusterName", Opt("--cluster"))]),
    _a("topicList", ("topic", "list"), [("c", "clusterModel", Flag("--clusters"))]),
    _a("updateKvConfig", ("namesrv", "kv", "put"), [
        ("s", "namespace", Pos(0)), ("k", "key", Pos(1)), ("v", "value", Pos(2))]),
    _a("deleteKvConfig", ("namesrv", "kv", "delete"), [("s", "namespace", Pos(0)), ("k", "key", Pos(1))]),
    _a("wipeWritePerm", ("namesrv", "write-perm", "wipe"), [("b", "brokerName", Pos(0))]),
    _a("addWritePerm", ("namesrv", "write-perm", "add"), [("b", "brokerName", Pos(0))]),
    _a("resetOffsetByTime", ("consumer", "reset-offset"), [
        ("g", "group", Opt("--group")), ("t", "topic", Opt("--topic")), ("s", "timestamp", Fn(_now_or_time)),
        ("f", "force", Bool("--force")), ("c", "cplus", Fn(lambda _v: [], takes=False)),
        ("b", "broker", No("a reset of one queue (5.x) is not supported")),
        ("q", "queue", No("a reset of one queue (5.x) is not supported"))]),
    _a("skipAccumulatedMessage", ("consumer", "skip-accumulated"), [
        ("g", "group", Opt("--group")), ("t", "topic", Opt("--topic")), ("f", "force", Bool("--force"))]),
    Alias("updateOrderConf", route=_order_conf),
    _a("cleanExpiredCQ", ("broker", "clean-expired-cq"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "cluster", Opt("--cluster"))]),
    _a("deleteExpiredCommitLog", ("broker", "delete-expired-commitlog"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "cluster", Opt("--cluster"))]),
    _a("cleanUnusedTopic", ("broker", "clean-unused-topic"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "cluster", Opt("--cluster"))]),
    _no("startMonitoring", "a monitor that consumes every topic and reports unfinished consumption; the "
        "status commands of mqctl take --watch instead"),
    _a("statsAll", ("stats", "all"), [("a", "activeTopic", Flag("--active")), ("t", "topic", Opt("--topic"))]),
    _no("allocateMQ", "the client-side queue allocation of a rebalance is not computed by mqctl"),
    _no("checkMsgSendRT", "cluster rt measures send round-trips per broker, not per topic"),
    _a("clusterRT", ("cluster", "rt"), [
        ("a", "amount", Opt("--amount")), ("s", "size", Opt("--size")), ("c", "cluster", Opt("--cluster")),
        ("p", "print log", No("the table is the output")), ("m", "machine room", No(_NOT_SUPPORTED_BY_MQCTL)),
        ("i", "interval", No("cluster rt measures once"))]),
    _a("getNamesrvConfig", ("namesrv", "config", "get")),
    _a("updateNamesrvConfig", ("namesrv", "config", "set"), [("k", "key", _kv("k")), ("v", "value", _kv("v"))]),
    _a("getBrokerConfig", ("broker", "config", "get"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster"))]),
    _a("getConsumerConfig", ("consumer", "config"), [("g", "groupName", Opt("--group"))]),
    _a("queryCq", ("broker", "query-cq"), [
        ("t", "topic", Opt("--topic")), ("q", "queue", Opt("--queue")), ("i", "index", Opt("--index")),
        ("c", "count", Opt("--count")), ("b", "broker", Opt("--broker")), ("g", "consumer", Opt("--group"))]),
    _a("sendMessage", ("message", "send"), [
        ("t", "topic", Opt("--topic")), ("p", "body", Opt("--body")), ("k", "key", Opt("--keys")),
        ("c", "tags", Opt("--tags")), ("b", "broker", Opt("--broker")), ("i", "qid", Opt("--queue")),
        ("m", "msgTraceEnable", No("message traces are not written by mqctl"))]),
    _a("consumeMessage", ("message", "consume"), [
        ("t", "topic", Opt("--topic")), ("b", "brokerName", Opt("--broker")), ("i", "queueId", Opt("--queue")),
        ("o", "offset", Opt("--offset")), ("g", "consumerGroup", Opt("--group")),
        ("s", "beginTimestamp", Opt("--begin")), ("e", "endTimestamp", Opt("--end")),
        ("c", "MessageNumber", Opt("--count"))]),
    _a("updateAclConfig", ("acl", "update"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("a", "accessKey", Opt("--account")), ("s", "secretKey", Opt("--account-secret")),
        ("w", "whiteRemoteAddress", Opt("--white-address")), ("i", "defaultTopicPerm", Opt("--default-topic-perm")),
        ("u", "defaultGroupPerm", Opt("--default-group-perm")), ("t", "topicPerms", _each("--topic-perm")),
        ("g", "groupPerms", _each("--group-perm")), ("m", "admin", Fn(_admin))], gone="5.3.3"),
    _a("deleteAclConfig", ("acl", "delete"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")), ("a", "accessKey", Pos(0))],
       gone="5.3.3"),
    _a("clusterAclConfigVersion", ("acl", "version"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster"))], gone="5.3.3"),
    _a("updateGlobalWhiteAddr", ("acl", "white-addrs"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")),
        ("g", "globalWhiteRemoteAddresses", Pos(0)), ("p", "aclFileFullPath", Opt("--file"))], gone="5.3.3"),
    _a("getAclConfig", ("acl", "list"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster"))], since_5=True,
       gone="5.3.3"),
    _no("updateStaticTopic", _STATIC, since_5=True),
    _no("remappingStaticTopic", _STATIC, since_5=True),
    _a("exportMetadata", ("cluster", "metadata", "export"), [
        ("c", "clusterName", Opt("--cluster")), ("b", "brokerAddr", No("the export is of a cluster (-c)")),
        ("f", "filePath", Fn(_export_file)), ("t", "topic", Flag("--topics-only")),
        ("g", "subscriptionGroup", Flag("--groups-only")),
        ("s", "specialTopic", No("system, retry and dead-letter topics are left out"))]),
    _no("exportConfigs", "broker config get -c and namesrv config get give the configurations"),
    _no("exportMetrics", "stats all and broker status give the figures; no export file"),
    _a("haStatus", ("ha", "status"), [
        ("c", "clusterName", Opt("--cluster")), ("b", "brokerAddr", Opt("--broker")),
        ("i", "interval", Opt("--watch"))], since_5=True),
    _no("setConsumeMode", "POP consumption (5.x) is not supported by mqctl and the reference servers",
        since_5=True),
    _no("addBroker", _CONTAINER, since_5=True),
    _no("removeBroker", _CONTAINER, since_5=True),
    _no("resetMasterFlushOffset", "not sent by mqctl yet", since_5=True),
    _a("getSyncStateSet", ("controller", "sync-state-set"), [
        ("a", "controllerAddress", Opt("--controller")), ("b", "brokerName", Pos(0)),
        ("c", "clusterName", No("mqctl asks by broker name (-b)")), ("i", "interval", No("asked once"))],
       since_5=True),
    _a("getBrokerEpoch", ("controller", "epochs"), [
        ("b", "brokerName", Pos(0)), ("c", "clusterName", Opt("--cluster")), ("i", "interval", No("asked once"))],
       since_5=True),
    _a("getControllerMetaData", ("controller", "metadata"), [("a", "controllerAddress", Opt("--controller"))],
       since_5=True),
    _a("getControllerConfig", ("controller", "config"), [("a", "controllerAddress", Opt("--controller"))],
       since_5=True),
    _no("updateControllerConfig", _CONTROLLER_CONFIG, since_5=True),
    # -n is electMaster's broker name, not the name servers (the controller is asked, with -a)
    _a("electMaster", ("controller", "elect"), [
        ("a", "controllerAddress", Opt("--controller")), ("b", "brokerAddress", Opt("--addr")),
        ("n", "brokerName", Opt("--broker")), ("c", "clusterName", Opt("--cluster"))], since_5=True),
    _no("cleanBrokerData", _CLEAN_BROKER, since_5=True, gone="5.3.3"),
    # added after 5.0.0 (today's MQAdminStartup, in its order)
    _a("updateTopicList", ("cluster", "metadata", "import"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")), ("f", "filename", Pos(0))],
       since="5.3.0"),
    _a("updateSubGroupList", ("cluster", "metadata", "import"), [
        ("b", "brokerAddr", Opt("--broker")), ("c", "clusterName", Opt("--cluster")), ("f", "filename", Pos(0))],
       since="5.3.1"),
    _no("exportMetadataInRocksDB", _ROCKSDB, since="5.1.4"),
    _no("exportPopRecord", _POP, since="5.3.2"),
    _no("cleanBrokerMetadata", _CLEAN_BROKER, since="5.1.1"),
    _no("dumpCompactionLog", "compaction topics (5.1's COMPACTION cleanup policy) are not supported by mqctl "
        "and the reference servers", since="5.1.0"),
    _no("getColdDataFlowCtrInfo", _COLD, since="5.1.2"),
    _no("updateColdDataFlowCtrGroupConfig", _COLD, since="5.1.2"),
    _no("removeColdDataFlowCtrGroupConfig", _COLD, since="5.1.2"),
    _no("setCommitLogReadAheadMode", "the commit log read-ahead switch (5.1.2) is not supported by mqctl and "
        "the reference servers", since="5.1.2"),
    *(_no(name, _ACL2, since="5.3.0") for name in (
        "createUser", "updateUser", "deleteUser", "getUser", "listUser", "copyUser",
        "createAcl", "updateAcl", "deleteAcl", "getAcl", "listAcl", "copyAcl")),
    _no("rocksDBConfigToJson", _ROCKSDB, since="5.3.1"),
    _no("checkRocksdbCqWriteProgress", _ROCKSDB, since="5.3.1"),
)

_BY_NAME = {a.name.lower(): a for a in MQADMIN}


def resolve_alias(name: str) -> tuple[tuple[str, ...], Rewrite] | None:
    """The mqctl command path an mqadmin command name stands for, and how its arguments are
    rewritten into mqctl's; ``None`` for a name that is not an mqadmin command. An mqadmin command
    mqctl does not cover is a usage error saying why."""
    alias = _BY_NAME.get(name.lower())
    if alias is None:
        return None
    if alias.route is not None:
        route = alias.route

        def by_route(args: list[str]) -> list[str]:
            return route(args)[1]

        # the path depends on the arguments: resolve it with them (see RootGroup.resolve_command)
        return ("namesrv",), by_route
    if not alias.path:
        raise UsageError(f"mqadmin's {alias.name} has no mqctl command: {alias.why} (see docs/cli.md)")
    path = alias.path
    if alias.name in ("updateBrokerConfig", "updateNamesrvConfig"):
        return path, lambda args: _join_kv(_rewrite(alias, args))
    return path, alias.rewrite


def route_alias(name: str, args: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
    """For an alias whose command depends on its arguments (updateOrderConf): the path and the
    arguments; else ``None``."""
    alias = _BY_NAME.get(name.lower())
    if alias is None or alias.route is None:
        return None
    return alias.route(args)
