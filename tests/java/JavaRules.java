// Licensed under the Apache License, Version 2.0. See LICENSE.
// The JDK's own answers for the rules wire.java reproduces, one request per input line:
//   double <16 hex digits of the IEEE bits>     -> Double.toString of that double
//   hashmap <capacity> <key>\t<key>...          -> the keys in new HashMap<>(capacity) order
// Run as a single-file program: java tests/java/JavaRules.java < requests
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public class JavaRules {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith("double ")) {
                long bits = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                out.println(Double.toString(Double.longBitsToDouble(bits)));
            } else if (line.startsWith("hashmap ")) {
                String[] parts = line.substring(8).split(" ", 2);
                Map<String, Boolean> map = new HashMap<>(Integer.parseInt(parts[0]));
                if (parts.length > 1 && !parts[1].isEmpty()) {
                    for (String key : parts[1].split("\t", -1)) {
                        map.put(key, Boolean.TRUE);
                    }
                }
                out.println(String.join("\t", map.keySet()));
            } else {
                throw new IllegalArgumentException("unknown request: " + line);
            }
        }
        out.flush();
    }
}
