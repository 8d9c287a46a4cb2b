// Licensed under the Apache License, Version 2.0. See LICENSE.
//
// A Java 4.9.8 client program for tests/interop/test_java_tx_sql.py: a TransactionMQProducer that
// ends four transactions (commit, rollback, unknown then commit on check, unknown then rollback on
// check), a push consumer that reads them back, and a SQL92 subscription (MessageSelector.bySql)
// read by a push consumer, plus one that does not compile. It prints one line per finding,
// "key=value", for the test to compare between our broker and the Java broker.

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public class TxSqlProbe {
    static void say(String key, Object value) {
        System.out.println(key + "=" + value);
        System.out.flush();
    }

    static LocalTransactionState state(String name) {
        switch (name) {
            case "commit": return LocalTransactionState.COMMIT_MESSAGE;
            case "rollback": return LocalTransactionState.ROLLBACK_MESSAGE;
            default: return LocalTransactionState.UNKNOW;
        }
    }

    static Set<String> consume(String ns, String group, String topic, MessageSelector selector, String tag,
                               int expected, long waitMs) throws Exception {
        final Set<String> seen = new ConcurrentSkipListSet<>();
        final List<String> props = Collections.synchronizedList(new ArrayList<>());
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(ns);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setPullInterval(0);
        if (selector != null) {
            consumer.subscribe(topic, selector);
        } else {
            consumer.subscribe(topic, tag);
        }
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                seen.add(new String(m.getBody()));
                props.add(new String(m.getBody()) + ":" + new TreeSet<>(m.getProperties().keySet()));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long end = System.currentTimeMillis() + waitMs;
        while (seen.size() < expected && System.currentTimeMillis() < end) {
            Thread.sleep(100);
        }
        // anything that should not come has had its chance too
        Thread.sleep(1500);
        consumer.shutdown();
        synchronized (props) {
            for (String p : new TreeSet<>(props)) {
                say(group + ".props", p);
            }
        }
        return new TreeSet<>(seen);
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String suffix = args[1];
        String txTopic = "TxT" + suffix;
        String sqlTopic = "SqlT" + suffix;

        // ---------------------------------------------------------------- transactions
        final AtomicInteger checks = new AtomicInteger();
        TransactionMQProducer producer = new TransactionMQProducer("TxPG" + suffix);
        producer.setNamesrvAddr(ns);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return state(msg.getUserProperty("outcome"));
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                checks.incrementAndGet();
                say("tx.check", new String(msg.getBody()) + " topic=" + msg.getTopic()
                    + " checkTimes=" + msg.getProperty("TRANSACTION_CHECK_TIMES"));
                return state(msg.getUserProperty("check"));
            }
        });
        producer.start();
        String[][] cases = {{"commit", "-"}, {"rollback", "-"}, {"unknown", "commit"}, {"unknown", "rollback"}};
        for (String[] c : cases) {
            Message msg = new Message(txTopic, "tx", (c[0] + "/" + c[1]).getBytes());
            msg.putUserProperty("outcome", c[0]);
            msg.putUserProperty("check", c[1]);
            TransactionSendResult r = producer.sendMessageInTransaction(msg, null);
            say("tx.send", c[0] + "/" + c[1] + " " + r.getSendStatus() + " " + r.getLocalTransactionState());
        }
        long end = System.currentTimeMillis() + 60000;
        while (checks.get() < 2 && System.currentTimeMillis() < end) {
            Thread.sleep(100);
        }
        say("tx.checks.atLeast2", checks.get() >= 2);
        Thread.sleep(1000);
        producer.shutdown();
        say("tx.consumed", consume(ns, "TxCG" + suffix, txTopic, null, "*", 2, 20000));

        // ---------------------------------------------------------------- SQL92
        DefaultMQProducer plain = new DefaultMQProducer("SqlPG" + suffix);
        plain.setNamesrvAddr(ns);
        plain.start();
        for (int i = 0; i < 6; i++) {
            Message msg = new Message(sqlTopic, i % 2 == 0 ? "even" : "odd", ("m" + i).getBytes());
            msg.putUserProperty("a", String.valueOf(i));
            msg.putUserProperty("b", i < 3 ? "x" : "y");
            plain.send(msg);
        }
        plain.shutdown();
        say("sql.consumed", consume(ns, "SqlCG" + suffix, sqlTopic,
            MessageSelector.bySql("a >= 2 AND b = 'y' OR a IN ('0') OR c IS NOT NULL"), null, 4, 20000));
        say("tag.consumed", consume(ns, "TagCG" + suffix, sqlTopic, null, "odd", 3, 20000));
        try {
            consume(ns, "BadCG" + suffix, sqlTopic, MessageSelector.bySql("a > 'x'"), null, 0, 0);
            say("sql.bad", "started");
        } catch (MQClientException e) {
            say("sql.bad.code", e.getResponseCode());
            say("sql.bad.message", e.getErrorMessage());
        }
        System.exit(0);
    }
}
