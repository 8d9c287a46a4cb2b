// Licensed under the Apache License, Version 2.0. See LICENSE.
//
// A Java 5.0.0 client program for tests/interop/test_java_compression.py.
//
//   CompressProbe NAMESRV produce TOPIC TYPE   a DefaultMQProducer whose compressType is TYPE (ZLIB,
//                                              LZ4 or ZSTD: the rocketmq.message.compressType
//                                              property) sends bodies of 6000, 3000 and 20000 bytes
//                                              (it compresses those of 4096 bytes and more); prints
//                                              "sent=LENGTH:SHA256" for each
//   CompressProbe NAMESRV consume TOPIC N      a pull consumer reads every queue of TOPIC from offset 0
//                                              until it has N messages; prints
//                                              "got=SYSFLAG:LENGTH:SHA256" for each, the body as the
//                                              client gives it to the application (inflated)

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

public class CompressProbe {
    static final int[] SIZES = {6000, 3000, 20000};

    static void say(String key, Object value) {
        System.out.println(key + "=" + value);
        System.out.flush();
    }

    static String sha256(byte[] data) throws Exception {
        StringBuilder out = new StringBuilder();
        for (byte b : MessageDigest.getInstance("SHA-256").digest(data)) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }

    static byte[] body(String type, int size) {
        StringBuilder text = new StringBuilder();
        int i = 0;
        while (text.length() < size) {
            text.append("a ").append(type).append(" body from a Java 5.0.0 producer, line ").append(i++).append('\n');
        }
        return text.substring(0, size).getBytes(StandardCharsets.UTF_8);
    }

    static void produce(String ns, String topic, String type) throws Exception {
        // read when the producer is made (DefaultMQProducerImpl's compressType field)
        System.setProperty("rocketmq.message.compressType", type);
        DefaultMQProducer producer = new DefaultMQProducer("CompressProbe" + type);
        producer.setNamesrvAddr(ns);
        producer.setSendMsgTimeout(10000);
        producer.start();
        try {
            for (int size : SIZES) {
                byte[] data = body(type, size);
                SendResult r = producer.send(new Message(topic, "zip", data));
                if (r.getSendStatus() != SendStatus.SEND_OK) {
                    throw new IllegalStateException("send: " + r);
                }
                say("sent", size + ":" + sha256(data));
            }
        } finally {
            producer.shutdown();
        }
    }

    static void consume(String ns, String topic, int expected) throws Exception {
        DefaultMQPullConsumer consumer = new DefaultMQPullConsumer("CompressProbeReader");
        consumer.setNamesrvAddr(ns);
        consumer.start();
        try {
            int got = 0;
            long deadline = System.currentTimeMillis() + 60000;
            Set<MessageQueue> queues = consumer.fetchSubscribeMessageQueues(topic);
            long[] next = new long[64];
            while (got < expected && System.currentTimeMillis() < deadline) {
                for (MessageQueue mq : queues) {
                    PullResult r = consumer.pull(mq, "*", next[mq.getQueueId()], 32);
                    if (r.getPullStatus() != PullStatus.FOUND) {
                        continue;
                    }
                    next[mq.getQueueId()] = r.getNextBeginOffset();
                    for (MessageExt m : r.getMsgFoundList()) {
                        say("got", m.getSysFlag() + ":" + m.getBody().length + ":" + sha256(m.getBody()));
                        got++;
                    }
                }
                if (got < expected) {
                    Thread.sleep(200);
                }
            }
        } finally {
            consumer.shutdown();
        }
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        switch (args[1]) {
            case "produce":
                produce(ns, args[2], args[3]);
                break;
            case "consume":
                consume(ns, args[2], Integer.parseInt(args[3]));
                break;
            default:
                throw new IllegalArgumentException("produce or consume, not " + args[1]);
        }
        System.exit(0);
    }
}
