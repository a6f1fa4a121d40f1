// SPDX-License-Identifier: MIT
//
// gen_values_java.java: the Java half of the value tables. Run by gen_values.sh
// with the JDK's source-file launcher:
//
//   java -cp spymemcached.jar gen_values_java.java [--readback=MANIFEST] VALUES_TXT HOST:PORT
//       DRAFT_DIR NAME=VERSION...
//
// Stores every value of values.txt through spymemcached (new MemcachedClient(
// address): DefaultConnectionFactory, text protocol, SerializingTranscoder) under
// "<case>:<value-name>", reads each back through the same client and compares it
// (Objects.equals) with what was stored. Writes the draft spymemcached.values in
// DRAFT_DIR: `stored` lines, which values_collect.py replaces with the raw (flags,
// bytes) the server holds, `refused` lines and "# roundtrip" comments.
//
// With --readback=MANIFEST (readback.sh) it writes no draft: for every item of
// MANIFEST ("<case> <value> <flags> <base64>", what memshard's codec stored under
// "rb:<case>:<value>"), it stores the value itself as above, reads memshard's item
// through the client, and prints one line per item (see readback.sh): ok, same
// (read back as the client reads its own item), refused (the client refuses the
// value itself) or DIFF. Equal there means of the same classes and equals().
//
// Java types: strings are String; in case spymemcached-default the integers are
// Integer when they fit in an int (int2p40 is a Long), in case spymemcached-long they
// are all Long; floats are Double; booleans Boolean; the map is a java.util.HashMap
// {"a" -> Integer 1, "b" -> java.util.ArrayList of Integer 2, 3}.

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import net.spy.memcached.MemcachedClient;

final class GenValuesJava {
  private static final String MAP_SPEC = "{\"a\":1,\"b\":[2,3]}";

  /** One line of values.txt. */
  private static final class Value {
    final String name;
    final String kind;
    final String spec;
    final Object natural;   // the Java value of case spymemcached-default

    Value(String name, String kind, String spec, Object natural) {
      this.name = name;
      this.kind = kind;
      this.spec = spec;
      this.natural = natural;
    }
  }

  private static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder();
    for (byte b : bytes) {
      sb.append(String.format("%02x", b & 0xff));
    }
    return sb.toString();
  }

  private static List<Value> readValues(String path) throws Exception {
    List<Value> values = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split(" +", 4);
      String name = f[0], kind = f[1], check = f[2], spec = f[3];
      Object v;
      switch (kind) {
        case "str":
          v = spec;
          break;
        case "lines": {
          String[] p = spec.split(" ");
          int n = Integer.parseInt(p[0]);
          StringBuilder sb = new StringBuilder(p.length > 1 ? p[1] : "");
          for (int i = 1; sb.length() < n; i++) {
            sb.append(String.format("line %05d: the quick brown fox jumps over the lazy dog\n", i));
          }
          v = sb.substring(0, n);
          break;
        }
        case "int": {
          long l = Long.parseLong(spec);
          v = (l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) ? (Object) (int) l : (Object) l;
          break;
        }
        case "float": {
          double d;
          if (spec.contains("/")) {
            String[] ab = spec.split("/");
            d = Double.parseDouble(ab[0]) / Double.parseDouble(ab[1]);
          } else {
            d = Double.parseDouble(spec);
          }
          String bits = String.format("%016x", Double.doubleToRawLongBits(d));
          if (!bits.equals(check)) {
            throw new IllegalStateException(name + ": bits " + bits + ", want " + check);
          }
          v = d;
          break;
        }
        case "bool":
          v = Boolean.valueOf(spec.equals("true"));
          break;
        case "map": {
          if (!spec.equals(MAP_SPEC)) {
            throw new IllegalStateException(name + ": this program builds only the map " + MAP_SPEC);
          }
          HashMap<String, Object> m = new HashMap<>();
          m.put("a", 1);
          m.put("b", new ArrayList<>(Arrays.asList(2, 3)));
          v = m;
          break;
        }
        default:
          throw new IllegalStateException(name + ": unknown kind " + kind);
      }
      if (kind.equals("str") || kind.equals("lines")) {
        byte[] utf8 = ((String) v).getBytes(StandardCharsets.UTF_8);
        String sha = hex(MessageDigest.getInstance("SHA-256").digest(utf8));
        if (!sha.equals(check)) {
          throw new IllegalStateException(name + ": sha256 " + sha + ", want " + check);
        }
      }
      values.add(new Value(name, kind, spec, v));
    }
    return values;
  }

  private static String describe(Object v) {
    if (v == null) {
      return "null";
    }
    String text = String.valueOf(v).replace("\n", "\\n").replace("\r", "\\r");
    if (text.length() > 100) {
      text = text.substring(0, 100) + "... (" + text.length() + " chars)";
    }
    return v.getClass().getName() + " " + text;
  }

  /** Readback mode: the "<case> <value>" items memshard wrote; null when recording. */
  private static Set<String> readback;

  /** Equal and of the same classes, all the way down. */
  private static boolean same(Object a, Object b) {
    if (a == null || b == null || a.getClass() != b.getClass()) {
      return a == b;
    }
    if (a instanceof Map) {
      Map<?, ?> x = (Map<?, ?>) a, y = (Map<?, ?>) b;
      if (!x.keySet().equals(y.keySet())) {
        return false;
      }
      for (Map.Entry<?, ?> e : x.entrySet()) {
        if (!same(e.getValue(), y.get(e.getKey()))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof List) {
      List<?> x = (List<?>) a, y = (List<?>) b;
      if (x.size() != y.size()) {
        return false;
      }
      for (int i = 0; i < x.size(); i++) {
        if (!same(x.get(i), y.get(i))) {
          return false;
        }
      }
      return true;
    }
    return a.equals(b);
  }

  /** Readback mode: reads memshard's item for one value back and prints its line. */
  private static void readbackItem(MemcachedClient client, String id, String name, Object obj) {
    String key = id + ":" + name;
    Object own = null;
    String refused = null;
    try {
      Boolean ok = client.set(key, 0, obj).get(30, TimeUnit.SECONDS);
      if (Boolean.TRUE.equals(ok)) {
        own = client.get(key);
      } else {
        refused = "set() answered " + ok;
      }
    } catch (Exception e) {
      refused = e.toString();
    }
    Object got;
    try {
      got = client.get("rb:" + key);
    } catch (Exception e) {
      System.out.println("DIFF " + id + " " + name + ": get() threw " + e);
      return;
    }
    if (got == null) {
      System.out.println("DIFF " + id + " " + name + ": get() found nothing");
    } else if (same(got, obj)) {
      System.out.println("ok " + id + " " + name);
    } else if (refused == null && same(got, own)) {
      System.out.println("same " + id + " " + name + ": read back as " + describe(got)
          + ", as the client reads its own item");
    } else if (refused != null) {
      System.out.println("refused " + id + " " + name + ": the client refuses the value itself ("
          + refused + "); memshard's item read back as " + describe(got));
    } else {
      System.out.println("DIFF " + id + " " + name + ": read back as " + describe(got)
          + "; the client's own item as " + describe(own));
    }
  }

  private static void runCase(MemcachedClient client, String id, String clientLine,
                              List<String> settings, List<Value> values, boolean longs,
                              List<String> out) {
    if (readback != null) {
      for (Value v : values) {
        if ((!longs || v.kind.equals("int")) && readback.contains(id + " " + v.name)) {
          readbackItem(client, id, v.name,
              longs ? (Object) Long.valueOf(((Number) v.natural).longValue()) : v.natural);
        }
      }
      return;
    }
    out.add("case " + id);
    out.add("client " + clientLine);
    out.add("codec spymemcached");
    for (String s : settings) {
      out.add("setting " + s);
    }
    if (longs) {
      StringBuilder subset = new StringBuilder("subset");
      for (Value v : values) {
        if (v.kind.equals("int")) {
          subset.append(' ').append(v.name);
        }
      }
      out.add(subset.toString());
    }
    StringBuilder types = new StringBuilder("# java types:");
    for (Value v : values) {
      if (longs && !v.kind.equals("int")) {
        continue;
      }
      Object obj = longs ? (Object) Long.valueOf(((Number) v.natural).longValue()) : v.natural;
      types.append(' ').append(v.name).append('=').append(obj.getClass().getSimpleName());
    }
    out.add(types.toString());
    for (Value v : values) {
      if (longs && !v.kind.equals("int")) {
        continue;
      }
      Object obj = longs ? (Object) Long.valueOf(((Number) v.natural).longValue()) : v.natural;
      String key = id + ":" + v.name;
      try {
        Boolean ok = client.set(key, 0, obj).get(30, TimeUnit.SECONDS);
        if (!Boolean.TRUE.equals(ok)) {
          out.add("refused " + v.name + " set() answered " + ok);
          continue;
        }
      } catch (Exception e) {
        out.add("refused " + v.name + " " + e);
        continue;
      }
      out.add("stored " + v.name);
      Object got = client.get(key);
      if (!Objects.equals(got, obj)) {
        out.add("# roundtrip " + v.name + ": read back as " + describe(got));
      }
    }
    out.add("end");
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SunLogger");
    Logger.getLogger("net.spy.memcached").setLevel(Level.WARNING);
    if (args.length > 0 && args[0].startsWith("--readback=")) {
      readback = new java.util.HashSet<>();
      for (String line : Files.readAllLines(Paths.get(args[0].substring("--readback=".length())),
                                            StandardCharsets.UTF_8)) {
        String[] f = line.split(" ");
        if (f.length >= 2) {
          readback.add(f[0] + " " + f[1]);
        }
      }
      args = Arrays.copyOfRange(args, 1, args.length);
    }
    String valuesTxt = args[0];
    String[] hp = args[1].split(":");
    String draftDir = args[2];
    Map<String, String> versions = new LinkedHashMap<>();
    for (int i = 3; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      versions.put(kv[0], kv[1]);
    }
    List<Value> values = readValues(valuesTxt);

    MemcachedClient client =
        new MemcachedClient(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])));
    List<String> out = new ArrayList<>();
    out.add("# spymemcached: new MemcachedClient(new InetSocketAddress(" + args[1] + ")), i.e.");
    out.add("# DefaultConnectionFactory (text protocol) with its default SerializingTranscoder");
    out.add("# (compression threshold 16384); every value stored with set(key, 0, value), read");
    out.add("# back with get(key) and compared (Objects.equals) with what was stored.");
    out.add("# The map is a java.util.HashMap {\"a\" -> Integer 1, \"b\" -> java.util.ArrayList");
    out.add("# [Integer 2, Integer 3]}; strings are String, floats Double, booleans Boolean.");
    out.add("# Values read back unchanged unless a \"# roundtrip\" comment says otherwise.");
    String version = versions.get("spymemcached");
    List<String> settings = new ArrayList<>(List.of("transcoder=SerializingTranscoder",
        "compression_threshold=16384", "java_int=Integer"));
    runCase(client, "spymemcached-default",
        version + "; default SerializingTranscoder, integers as Integer (int2p40 as Long: it"
            + " does not fit in an int)", settings, values, false, out);
    settings.set(2, "java_int=Long");
    runCase(client, "spymemcached-long",
        version + "; default SerializingTranscoder, integers as Long", settings, values, true,
        out);
    client.shutdown(10, TimeUnit.SECONDS);
    if (readback != null) {
      return;
    }

    try (PrintWriter w = new PrintWriter(
             Files.newBufferedWriter(Paths.get(draftDir, "spymemcached.values"),
                                     StandardCharsets.UTF_8))) {
      for (String line : out) {
        w.print(line);
        w.print('\n');
      }
    }
  }
}
