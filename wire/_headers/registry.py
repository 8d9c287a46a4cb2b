# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Which header class each request code and its response carry (see :mod:`wire.headers`).

Importing this module loads every header class.
"""

from __future__ import annotations

from ..codes import RequestCode, ResponseCode
from ..headers import CustomHeader
from . import acl, admin, client, controller, namesrv

__all__ = ["REQUEST_HEADERS", "RESPONSE_HEADERS", "RESPONSE_HEADER_CODES", "SUCCESS_ONLY"]

_RC = RequestCode

#: request code -> the header class of the request. Codes absent here carry no header in any
#: release (e.g. GET_BROKER_CLUSTER_INFO, GET_BROKER_RUNTIME_INFO, GET_ALL_TOPIC_CONFIG,
#: GET_BROKER_CONFIG, GET_BROKER_HA_STATUS, GET_BROKER_EPOCH_CACHE, the controller config codes).
REQUEST_HEADERS: dict[int, type[CustomHeader]] = {
    _RC.UPDATE_AND_CREATE_ACL_CONFIG: acl.CreateAccessConfigRequestHeader,
    _RC.DELETE_ACL_CONFIG: acl.DeleteAccessConfigRequestHeader,
    _RC.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: acl.UpdateGlobalWhiteAddrsConfigRequestHeader,
    _RC.SEND_MESSAGE: client.SendMessageRequestHeader,
    _RC.PULL_MESSAGE: client.PullMessageRequestHeader,
    _RC.QUERY_MESSAGE: client.QueryMessageRequestHeader,
    _RC.QUERY_CONSUMER_OFFSET: client.QueryConsumerOffsetRequestHeader,
    _RC.UPDATE_CONSUMER_OFFSET: client.UpdateConsumerOffsetRequestHeader,
    _RC.UPDATE_AND_CREATE_TOPIC: admin.CreateTopicRequestHeader,
    _RC.SEARCH_OFFSET_BY_TIMESTAMP: client.SearchOffsetRequestHeader,
    _RC.GET_MAX_OFFSET: client.GetMaxOffsetRequestHeader,
    _RC.GET_MIN_OFFSET: client.GetMinOffsetRequestHeader,
    _RC.GET_EARLIEST_MSG_STORETIME: client.GetEarliestMsgStoretimeRequestHeader,
    _RC.VIEW_MESSAGE_BY_ID: client.ViewMessageRequestHeader,
    _RC.HEART_BEAT: client.HeartbeatRequestHeader,
    _RC.UNREGISTER_CLIENT: client.UnregisterClientRequestHeader,
    _RC.CONSUMER_SEND_MSG_BACK: client.ConsumerSendMsgBackRequestHeader,
    _RC.END_TRANSACTION: client.EndTransactionRequestHeader,
    _RC.CHECK_TRANSACTION_STATE: client.CheckTransactionStateRequestHeader,
    _RC.PUSH_REPLY_MESSAGE_TO_CLIENT: client.ReplyMessageRequestHeader,
    _RC.RESUME_CHECK_HALF_MESSAGE: client.ResumeCheckHalfMessageRequestHeader,
    _RC.INVOKE_BROKER_TO_RESET_OFFSET: client.ResetOffsetRequestHeader,
    _RC.RESET_CONSUMER_CLIENT_OFFSET: client.ResetOffsetRequestHeader,
    _RC.GET_CONSUMER_RUNNING_INFO: client.GetConsumerRunningInfoRequestHeader,
    _RC.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: client.GetConsumerStatusRequestHeader,
    _RC.GET_CONSUMER_STATUS_FROM_CLIENT: client.GetConsumerStatusRequestHeader,
    _RC.CONSUME_MESSAGE_DIRECTLY: client.ConsumeMessageDirectlyResultRequestHeader,
    _RC.GET_CONSUMER_LIST_BY_GROUP: client.GetConsumerListByGroupRequestHeader,
    _RC.NOTIFY_CONSUMER_IDS_CHANGED: client.NotifyConsumerIdsChangedRequestHeader,
    _RC.LOCK_BATCH_MQ: client.LockBatchMqRequestHeader,
    _RC.UNLOCK_BATCH_MQ: client.UnlockBatchMqRequestHeader,
    _RC.PUT_KV_CONFIG: namesrv.PutKVConfigRequestHeader,
    _RC.GET_KV_CONFIG: namesrv.GetKVConfigRequestHeader,
    _RC.DELETE_KV_CONFIG: namesrv.DeleteKVConfigRequestHeader,
    _RC.REGISTER_BROKER: namesrv.RegisterBrokerRequestHeader,
    _RC.UNREGISTER_BROKER: namesrv.UnRegisterBrokerRequestHeader,
    _RC.QUERY_DATA_VERSION: namesrv.QueryDataVersionRequestHeader,
    _RC.GET_ROUTEINFO_BY_TOPIC: namesrv.GetRouteInfoRequestHeader,
    _RC.GET_TOPIC_STATS_INFO: admin.GetTopicStatsInfoRequestHeader,
    _RC.GET_CONSUMER_CONNECTION_LIST: admin.GetConsumerConnectionListRequestHeader,
    _RC.GET_PRODUCER_CONNECTION_LIST: admin.GetProducerConnectionListRequestHeader,
    _RC.QUERY_CONSUME_TIME_SPAN: admin.QueryConsumeTimeSpanRequestHeader,
    _RC.QUERY_CORRECTION_OFFSET: admin.QueryCorrectionOffsetHeader,
    _RC.QUERY_CONSUME_QUEUE: admin.QueryConsumeQueueRequestHeader,
    _RC.GET_ALL_PRODUCER_INFO: admin.GetAllProducerInfoRequestHeader,
    _RC.WIPE_WRITE_PERM_OF_BROKER: namesrv.WipeWritePermOfBrokerRequestHeader,
    _RC.DELETE_SUBSCRIPTIONGROUP: admin.DeleteSubscriptionGroupRequestHeader,
    _RC.GET_CONSUME_STATS: admin.GetConsumeStatsRequestHeader,
    _RC.DELETE_TOPIC_IN_BROKER: admin.DeleteTopicRequestHeader,
    _RC.DELETE_TOPIC_IN_NAMESRV: namesrv.DeleteTopicFromNamesrvRequestHeader,
    _RC.GET_KVLIST_BY_NAMESPACE: namesrv.GetKVListByNamespaceRequestHeader,
    _RC.GET_TOPICS_BY_CLUSTER: namesrv.GetTopicsByClusterRequestHeader,
    _RC.QUERY_TOPIC_CONSUME_BY_WHO: client.QueryTopicConsumeByWhoRequestHeader,
    _RC.SEND_MESSAGE_V2: client.SendMessageRequestHeaderV2,
    _RC.SEND_BATCH_MESSAGE: client.SendMessageRequestHeaderV2,
    _RC.SEND_REPLY_MESSAGE: client.SendMessageRequestHeader,
    _RC.SEND_REPLY_MESSAGE_V2: client.SendMessageRequestHeaderV2,
    _RC.ADD_WRITE_PERM_OF_BROKER: namesrv.AddWritePermOfBrokerRequestHeader,
    _RC.GET_BROKER_MEMBER_GROUP: controller.GetBrokerMemberGroupRequestHeader,
    _RC.ADD_BROKER: controller.AddBrokerRequestHeader,
    _RC.REMOVE_BROKER: controller.RemoveBrokerRequestHeader,
    _RC.BROKER_HEARTBEAT: controller.BrokerHeartbeatRequestHeader,
    _RC.NOTIFY_MIN_BROKER_ID_CHANGE: controller.NotifyMinBrokerIdChangeRequestHeader,
    _RC.EXCHANGE_BROKER_HA_INFO: controller.ExchangeHAInfoRequestHeader,
    _RC.RESET_MASTER_FLUSH_OFFSET: controller.ResetMasterFlushOffsetHeader,
    _RC.CONTROLLER_ALTER_SYNC_STATE_SET: controller.AlterSyncStateSetRequestHeader,
    _RC.CONTROLLER_ELECT_MASTER: controller.ElectMasterRequestHeader,
    _RC.CONTROLLER_REGISTER_BROKER: controller.RegisterBrokerToControllerRequestHeader,
    _RC.CONTROLLER_GET_REPLICA_INFO: controller.GetReplicaInfoRequestHeader,
    _RC.CONTROLLER_GET_SYNC_STATE_DATA: controller.GetSyncStateDataRequest,
    _RC.NOTIFY_BROKER_ROLE_CHANGED: controller.NotifyBrokerRoleChangedRequestHeader,
    _RC.CLEAN_BROKER_DATA: controller.CleanControllerBrokerDataRequestHeader,
    _RC.CONTROLLER_GET_NEXT_BROKER_ID: controller.GetNextBrokerIdRequestHeader,
    _RC.CONTROLLER_APPLY_BROKER_ID: controller.ApplyBrokerIdRequestHeader,
}

#: request code -> the header class of its response
RESPONSE_HEADERS: dict[int, type[CustomHeader]] = {
    _RC.GET_BROKER_CLUSTER_ACL_INFO: acl.GetBrokerAclConfigResponseHeader,
    _RC.QUERY_DATA_VERSION: namesrv.QueryDataVersionResponseHeader,
    _RC.SEND_MESSAGE: client.SendMessageResponseHeader,
    _RC.PULL_MESSAGE: client.PullMessageResponseHeader,
    _RC.QUERY_MESSAGE: client.QueryMessageResponseHeader,
    _RC.QUERY_CONSUMER_OFFSET: client.QueryConsumerOffsetResponseHeader,
    _RC.UPDATE_CONSUMER_OFFSET: client.UpdateConsumerOffsetResponseHeader,
    _RC.GET_ALL_TOPIC_CONFIG: admin.GetAllTopicConfigResponseHeader,
    _RC.GET_BROKER_CONFIG: admin.GetBrokerConfigResponseHeader,
    _RC.SEARCH_OFFSET_BY_TIMESTAMP: client.SearchOffsetResponseHeader,
    _RC.GET_MAX_OFFSET: client.GetMaxOffsetResponseHeader,
    _RC.GET_MIN_OFFSET: client.GetMinOffsetResponseHeader,
    _RC.GET_EARLIEST_MSG_STORETIME: client.GetEarliestMsgStoretimeResponseHeader,
    _RC.VIEW_MESSAGE_BY_ID: client.ViewMessageResponseHeader,
    _RC.UNREGISTER_CLIENT: client.UnregisterClientResponseHeader,
    _RC.GET_CONSUMER_LIST_BY_GROUP: client.GetConsumerListByGroupResponseHeader,
    _RC.GET_KV_CONFIG: namesrv.GetKVConfigResponseHeader,
    _RC.REGISTER_BROKER: namesrv.RegisterBrokerResponseHeader,
    _RC.WIPE_WRITE_PERM_OF_BROKER: namesrv.WipeWritePermOfBrokerResponseHeader,
    _RC.SEND_MESSAGE_V2: client.SendMessageResponseHeader,
    _RC.SEND_BATCH_MESSAGE: client.SendMessageResponseHeader,
    _RC.SEND_REPLY_MESSAGE: client.SendMessageResponseHeader,
    _RC.SEND_REPLY_MESSAGE_V2: client.SendMessageResponseHeader,
    _RC.ADD_WRITE_PERM_OF_BROKER: namesrv.AddWritePermOfBrokerResponseHeader,
    _RC.EXCHANGE_BROKER_HA_INFO: controller.ExchangeHAInfoResponseHeader,
    _RC.CONTROLLER_ALTER_SYNC_STATE_SET: controller.AlterSyncStateSetResponseHeader,
    _RC.CONTROLLER_ELECT_MASTER: controller.ElectMasterResponseHeader,
    _RC.CONTROLLER_REGISTER_BROKER: controller.RegisterBrokerToControllerResponseHeader,
    _RC.CONTROLLER_GET_REPLICA_INFO: controller.GetReplicaInfoResponseHeader,
    _RC.CONTROLLER_GET_METADATA_INFO: controller.GetMetaDataResponseHeader,
    _RC.CONTROLLER_GET_NEXT_BROKER_ID: controller.GetNextBrokerIdResponseHeader,
    _RC.CONTROLLER_APPLY_BROKER_ID: controller.ApplyBrokerIdResponseHeader,
}

SUCCESS_ONLY = frozenset({int(ResponseCode.SUCCESS)})
_SEND_CODES = frozenset({int(ResponseCode.SUCCESS), int(ResponseCode.FLUSH_DISK_TIMEOUT),
                         int(ResponseCode.FLUSH_SLAVE_TIMEOUT), int(ResponseCode.SLAVE_NOT_AVAILABLE)})

#: request code -> the response codes whose responses carry the typed header, as the Java side
#: reads it (``MQClientAPIImpl.processSendResponse``: the four "send OK" codes;
#: ``processPullResponse``: SUCCESS and the three not-found/retry/moved codes;
#: ``BrokerOuterAPI.brokerElect``: SUCCESS and CONTROLLER_MASTER_STILL_EXIST). Any other code
#: answers with a remark only. Codes not listed here: SUCCESS only.
RESPONSE_HEADER_CODES: dict[int, frozenset[int]] = {
    _RC.SEND_MESSAGE: _SEND_CODES,
    _RC.SEND_MESSAGE_V2: _SEND_CODES,
    _RC.SEND_BATCH_MESSAGE: _SEND_CODES,
    _RC.SEND_REPLY_MESSAGE: _SEND_CODES,
    _RC.SEND_REPLY_MESSAGE_V2: _SEND_CODES,
    _RC.PULL_MESSAGE: frozenset({int(ResponseCode.SUCCESS), int(ResponseCode.PULL_NOT_FOUND),
                                 int(ResponseCode.PULL_RETRY_IMMEDIATELY),
                                 int(ResponseCode.PULL_OFFSET_MOVED)}),
    _RC.CONTROLLER_ELECT_MASTER: frozenset({int(ResponseCode.SUCCESS),
                                            int(ResponseCode.CONTROLLER_MASTER_STILL_EXIST)}),
}
