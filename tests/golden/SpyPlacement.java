// SPDX-License-Identifier: MIT
//
// SpyPlacement: writes spymemcached.golden by asking spymemcached's own node
// locators where every key of keys.txt goes. Compiled and run by
// gen_spymemcached.sh:
//
//   java -cp spymemcached.jar:. SpyPlacement keys.txt out.golden "header line"...
//
// MemcachedNode is an interface; the locators only call getSocketAddress()
// on it (plus hashCode/equals, as the key formatter caches node keys in a
// map), so each server is a java.lang.reflect.Proxy answering exactly that.

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import net.spy.memcached.ArrayModNodeLocator;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.util.DefaultKetamaNodeLocatorConfiguration;

public final class SpyPlacement {
  private static final int[] SWEEP = {1, 2, 3, 5, 10, 25};
  // Unequal weights, 1..5, taken in order for the first N servers.
  private static final int[] WEIGHTS = {3, 1, 4, 1, 5, 2, 2, 5, 3, 5, 4, 1, 3, 2, 5, 1, 4, 2, 3,
                                        5, 1, 4, 3, 2, 5};

  /** One server: how its address was made, and the address itself. */
  private static final class Host {
    final String host;        // as written in the server spec
    final int port;
    final InetSocketAddress address;
    final String how;         // the Java expression that made the address

    Host(String host, int port, InetSocketAddress address, String how) {
      this.host = host;
      this.port = port;
      this.address = address;
      this.how = how;
    }
  }

  private static MemcachedNode node(final InetSocketAddress address) {
    InvocationHandler handler = (proxy, method, args) -> {
      switch (method.getName()) {
        case "getSocketAddress":
          return address;
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == args[0];
        case "toString":
          return "node " + address;
        default:
          throw new UnsupportedOperationException("locator called " + method);
      }
    };
    return (MemcachedNode) Proxy.newProxyInstance(SpyPlacement.class.getClassLoader(),
        new Class<?>[] {MemcachedNode.class}, handler);
  }

  // InetAddress of each IP literal, shared by the cases of one key format:
  // InetAddress caches the result of its reverse lookup (getHostName(), which
  // Format.LIBMEMCACHED calls), so each address is looked up once.
  private static final Map<String, InetAddress> LITERALS = new HashMap<>();

  /**
   * IP literal, as AddrUtil.getAddresses makes it: new InetSocketAddress(ip,
   * port), which is new InetSocketAddress(InetAddress.getByName(ip), port).
   */
  private static Host ip(String ip, int port) {
    InetAddress literal = LITERALS.computeIfAbsent(ip, text -> {
      try {
        return InetAddress.getByName(text);
      } catch (UnknownHostException e) {
        throw new IllegalStateException(e);
      }
    });
    return new Host(ip, port, new InetSocketAddress(literal, port),
        "new InetSocketAddress(\"" + ip + "\", " + port + ")");
  }

  /**
   * Host name that does not resolve. createUnresolved gives the same address
   * (and text) as new InetSocketAddress(name, port) when the lookup fails,
   * without depending on DNS.
   */
  private static Host unresolved(String name, int port) {
    return new Host(name, port, InetSocketAddress.createUnresolved(name, port),
        "InetSocketAddress.createUnresolved(\"" + name + "\", " + port + ")");
  }

  /** A name the machine resolves (localhost, from /etc/hosts). */
  private static Host resolved(String name, int port) {
    return new Host(name, port, new InetSocketAddress(name, port),
        "new InetSocketAddress(\"" + name + "\", " + port + ")");
  }

  /** An IP literal on which getHostName() was called before the locator saw it. */
  private static Host ipLookedUp(String ip, int port) {
    InetSocketAddress address = new InetSocketAddress(ip, port);
    address.getHostName();
    return new Host(ip, port, address, "new InetSocketAddress(\"" + ip + "\", " + port
        + ") after getHostName()");
  }

  private static List<Host> hosts(String kind, int n) {
    List<Host> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      switch (kind) {
        case "ip11211":
          out.add(ip("10.0.0." + (i + 1), 11211));
          break;
        case "ipport":
          out.add(ip("10.0.1." + (i + 1), 11212 + 3 * i));
          break;
        case "names":
          out.add(unresolved("cache-" + (i + 1) + ".example.net", 11212 + i));
          break;
        case "names11211":
          out.add(unresolved("mc" + (i + 1) + ".example.com", 11211));
          break;
        default:
          throw new IllegalArgumentException(kind);
      }
    }
    return out;
  }

  private final List<String> keys;
  private final PrintWriter out;
  private final String version;
  private int cases;

  private SpyPlacement(List<String> keys, PrintWriter out, String version) {
    this.keys = keys;
    this.out = out;
    this.version = version;
  }

  private void ketama(String id, String profile, KetamaNodeKeyFormatter.Format format,
                      List<Host> hosts, int[] weights) {
    List<MemcachedNode> nodes = new ArrayList<>();
    Map<InetSocketAddress, Integer> weightMap = new HashMap<>();
    for (int i = 0; i < hosts.size(); i++) {
      nodes.add(node(hosts.get(i).address));
      if (weights != null) {
        weightMap.put(hosts.get(i).address, weights[i]);
      }
    }
    if (weights != null && weightMap.size() != hosts.size()) {
      throw new IllegalStateException(id + ": two servers share one address");
    }
    // What new KetamaNodeLocator(nodes, hash, format, weights) does, keeping
    // the configuration to read back the node keys the locator hashed.
    DefaultKetamaNodeLocatorConfiguration config =
        new DefaultKetamaNodeLocatorConfiguration(new KetamaNodeKeyFormatter(format));
    KetamaNodeLocator locator = new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH,
        weightMap, config);
    if (config.getNodeRepetitions() != 160) {
      throw new IllegalStateException(id + ": " + config.getNodeRepetitions() + " repetitions");
    }
    List<String> names = new ArrayList<>();
    for (MemcachedNode node : nodes) {
      String key = config.getKeyForNode(node, 0);
      if (!key.endsWith("-0")) {
        throw new IllegalStateException(id + ": node key " + key + " lacks -0");
      }
      names.add(key.substring(0, key.length() - 2));
    }
    StringBuilder client = new StringBuilder();
    client.append("spymemcached ").append(version)
        .append(": new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH, ")
        .append(weights == null ? "empty weights map" : "weights map")
        .append(", new DefaultKetamaNodeLocatorConfiguration(new KetamaNodeKeyFormatter(")
        .append("KetamaNodeKeyFormatter.Format.").append(format.name()).append("))); nodes: ");
    for (int i = 0; i < hosts.size(); i++) {
      client.append(i == 0 ? "" : ", ").append(hosts.get(i).how);
      if (weights != null) {
        client.append(" => ").append(weights[i]);
      }
    }
    List<String> options = new ArrayList<>();
    if (weights != null) {
      options.add("weighted=true");
    }
    write(id, client.toString(), profile, options, hosts, weights, names, locator, nodes);
  }

  private void arrayMod(String id, String hashOption, DefaultHashAlgorithm hash,
                        List<Host> hosts) {
    List<MemcachedNode> nodes = new ArrayList<>();
    for (Host h : hosts) {
      nodes.add(node(h.address));
    }
    ArrayModNodeLocator locator = new ArrayModNodeLocator(nodes, hash);
    StringBuilder client = new StringBuilder();
    client.append("spymemcached ").append(version).append(": new ArrayModNodeLocator(nodes, ")
        .append("DefaultHashAlgorithm.").append(hash.name()).append("); nodes: ");
    for (int i = 0; i < hosts.size(); i++) {
      client.append(i == 0 ? "" : ", ").append(hosts.get(i).how);
    }
    List<String> options = new ArrayList<>();
    options.add("hash=" + hashOption);
    write(id, client.toString(), "spymemcached-arraymod", options, hosts, null, null, locator,
        nodes);
  }

  private void write(String id, String client, String profile, List<String> options,
                     List<Host> hosts, int[] weights, List<String> names, NodeLocator locator,
                     List<MemcachedNode> nodes) {
    Map<MemcachedNode, Integer> index = new IdentityHashMap<>();
    for (int i = 0; i < nodes.size(); i++) {
      index.put(nodes.get(i), i);
    }
    StringBuilder place = new StringBuilder("place");
    for (String key : keys) {
      Integer i = index.get(locator.getPrimary(key));
      if (i == null) {
        throw new IllegalStateException(id + ": no node for key " + key);
      }
      place.append(' ').append(i);
    }
    out.println("case " + id);
    out.println("client " + client);
    out.println("profile " + profile);
    for (String option : options) {
      out.println("option " + option);
    }
    for (int i = 0; i < hosts.size(); i++) {
      Host h = hosts.get(i);
      String spec = h.host + ":" + h.port + ":" + (weights == null ? 1 : weights[i]);
      if (names != null) {
        spec += ":" + names.get(i);
      }
      out.println("server " + spec);
    }
    out.println(place);
    out.println("end");
    out.println();
    cases++;
  }

  private static int[] unequal(int n) {
    int[] w = new int[n];
    System.arraycopy(WEIGHTS, 0, w, 0, n);
    return w;
  }

  private static int[] equal(int n, int value) {
    int[] w = new int[n];
    java.util.Arrays.fill(w, value);
    return w;
  }

  private void run() {
    Map<String, KetamaNodeKeyFormatter.Format> formats = new LinkedHashMap<>();
    formats.put("spymemcached-ketama", KetamaNodeKeyFormatter.Format.SPYMEMCACHED);
    formats.put("spymemcached-ketama-libmemcached", KetamaNodeKeyFormatter.Format.LIBMEMCACHED);
    for (Map.Entry<String, KetamaNodeKeyFormatter.Format> f : formats.entrySet()) {
      LITERALS.clear();
      String p = f.getKey().substring("spymemcached-".length());
      KetamaNodeKeyFormatter.Format format = f.getValue();
      for (int n : SWEEP) {
        ketama(p + "-n" + n + "-ip11211", f.getKey(), format, hosts("ip11211", n), null);
        ketama(p + "-n" + n + "-names", f.getKey(), format, hosts("names", n), null);
        ketama(p + "-n" + n + "-ipport-w", f.getKey(), format, hosts("ipport", n), unequal(n));
        ketama(p + "-n" + n + "-names-w", f.getKey(), format, hosts("names", n), unequal(n));
      }
      // Weights map with equal weights: float rounding leaves 156 points
      // per server at N = 25 (160 without a weights map).
      ketama(p + "-n25-ip11211-w-equal", f.getKey(), format, hosts("ip11211", 25),
          equal(25, 1));
      ketama(p + "-n10-names11211-w-equal", f.getKey(), format, hosts("names11211", 10),
          equal(10, 3));
      // Addresses whose text depends on lookups: a name resolved from
      // /etc/hosts, 127.0.0.1 (reverse-resolves to localhost), and IP
      // literals on which getHostName() had already been called.
      List<Host> mixed = new ArrayList<>();
      mixed.add(resolved("localhost", 11213));
      mixed.add(ip("127.0.0.1", 11211));
      mixed.add(ip("10.0.2.1", 11211));
      mixed.add(unresolved("cache-x.example.net", 11211));
      mixed.add(ipLookedUp("10.0.2.2", 11211));
      mixed.add(ipLookedUp("10.0.2.3", 11214));
      ketama(p + "-n6-lookups", f.getKey(), format, mixed, null);
      ketama(p + "-n6-lookups-w", f.getKey(), format, mixed, unequal(6));
    }
    DefaultHashAlgorithm[] hashes = {DefaultHashAlgorithm.NATIVE_HASH,
                                     DefaultHashAlgorithm.CRC_HASH};
    String[] options = {"java_string", "crc"};
    for (int h = 0; h < hashes.length; h++) {
      for (int n : SWEEP) {
        arrayMod("arraymod-" + options[h] + "-n" + n + "-ip11211", options[h], hashes[h],
            hosts("ip11211", n));
        arrayMod("arraymod-" + options[h] + "-n" + n + "-names", options[h], hashes[h],
            hosts("names", n));
      }
    }
  }

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: SpyPlacement keys.txt out.golden version [comment...]");
      System.exit(2);
    }
    List<String> keys = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      if (!line.isEmpty()) {
        keys.add(line);
      }
    }
    Path target = Paths.get(args[1]);
    Path tmp = Paths.get(args[1] + ".tmp");
    int count;
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(tmp, StandardCharsets.UTF_8))) {
      for (int i = 3; i < args.length; i++) {
        out.println("# " + args[i]);
      }
      out.println();
      SpyPlacement p = new SpyPlacement(keys, out, args[2]);
      p.run();
      count = p.cases;
    }
    Files.move(tmp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    System.err.println("SpyPlacement: wrote " + count + " cases for " + keys.size()
        + " keys to " + target);
  }
}
