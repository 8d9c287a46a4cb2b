// Licensed under the Apache License, Version 2.0. See LICENSE.
//
// A Java 4.9.8 client program for tests/interop/test_java_request_reply.py: request-reply
// messaging. A responder (a push consumer of TOPIC) answers each request with
// MessageUtil.createReplyMessage, sent by its own producer (SEND_REPLY_MESSAGE_V2); a requester
// sends requests with DefaultMQProducer.request, synchronously and with a RequestCallback, and
// gets each reply pushed by the broker (PUSH_REPLY_MESSAGE_TO_CLIENT). A request on a topic nobody
// answers times out. One "key=value" line per finding.
//
//   RequestReplyProbe NAMESRV TOPIC SILENT_TOPIC

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public class RequestReplyProbe {
    static void say(String key, Object value) {
        System.out.println(key + "=" + value);
        System.out.flush();
    }

    static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    static String describe(Message reply) {
        return text(reply.getBody()) + " topic=" + reply.getTopic()
            + " correlated=" + (reply.getProperty("CORRELATION_ID") != null)
            + " pushTime=" + (reply.getProperty("PUSH_REPLY_TIME") != null);
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        String silent = args[2];

        DefaultMQProducer replier = new DefaultMQProducer("RRReplier");
        replier.setNamesrvAddr(ns);
        replier.start();

        DefaultMQPushConsumer responder = new DefaultMQPushConsumer("RRResponder");
        responder.setNamesrvAddr(ns);
        responder.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        responder.setPullInterval(0);
        responder.subscribe(topic, "*");
        responder.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                try {
                    Message reply = MessageUtil.createReplyMessage(m, ("reply to " + text(m.getBody()))
                        .getBytes(StandardCharsets.UTF_8));
                    SendResult r = replier.send(reply, 10000);
                    if (r.getSendStatus() != SendStatus.SEND_OK) {
                        say("replyError", r.getSendStatus());
                    }
                } catch (Exception e) {
                    say("replyError", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        responder.start();

        DefaultMQProducer requester = new DefaultMQProducer("RRRequester");
        requester.setNamesrvAddr(ns);
        requester.start();
        try {
            for (int i = 0; i < 3; i++) {
                Message reply = requester.request(new Message(topic, "ask", ("question " + i)
                    .getBytes(StandardCharsets.UTF_8)), 30000);
                say("reply", describe(reply));
            }
            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<String> got = new AtomicReference<>("none");
            requester.request(new Message(topic, "ask", "question async".getBytes(StandardCharsets.UTF_8)),
                new RequestCallback() {
                    @Override
                    public void onSuccess(Message message) {
                        got.set(describe(message));
                        done.countDown();
                    }

                    @Override
                    public void onException(Throwable e) {
                        got.set("exception " + e.getClass().getSimpleName());
                        done.countDown();
                    }
                }, 30000);
            done.await(40, TimeUnit.SECONDS);
            say("asyncReply", got.get());
            try {
                requester.request(new Message(silent, "ask", "nobody answers".getBytes(StandardCharsets.UTF_8)), 3000);
                say("silent", "answered");
            } catch (Exception e) {
                say("silent", e.getClass().getSimpleName());
            }
        } finally {
            requester.shutdown();
            responder.shutdown();
            replier.shutdown();
        }
        System.exit(0);
    }
}
