// Licensed under the Apache License, Version 2.0. See LICENSE.
//
// A Java 4.9.8 client program for tests/interop/test_java_relays.py: a push consumer of GROUP on
// TOPIC that stays online until its standard input closes, so that the broker can relay admin
// requests to it (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY). It prints its client id.
//
//   ConsumerProbe NAMESRV GROUP TOPIC

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;

public class ConsumerProbe {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[1]);
        consumer.setNamesrvAddr(args[0]);
        consumer.subscribe(args[2], "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();
        System.out.println("clientId=" + consumer.buildMQClientId());
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for the test to close the pipe
        }
        consumer.shutdown();
        System.exit(0);
    }
}
