// SPDX-License-Identifier: MIT

// gen_gomemcache_table KEYS OUT VERSIONS [confirm]: writes the gomemcache
// table. Each case gives the server list to memcache.ServerList.SetServers
// and places every key with the client's own ServerList.PickServer(key); the
// returned address is mapped back to its index through ServerList.Each (the
// client's own resolved list, in order). SetServers resolves names, so the
// lists use IP literals, and "localhost" for the host-name cases. Keys are Go
// strings holding the UTF-8 bytes of each line of keys.txt.
//
// With "confirm", the "gomemcache-confirm-5" case is also checked on real
// memcached servers (127.0.97.1-5:21981-21985, started by gen_gomemcache.sh):
// every key is stored with Client.Set, then every server is asked which keys
// it holds (lru_crawler metadump).
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

type server struct {
	host string
	port int
}

func (s server) addr() string { return fmt.Sprintf("%s:%d", s.host, s.port) }

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gen_gomemcache: "+format+"\n", args...)
	os.Exit(1)
}

func readKeys(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		fail("%s must end with a newline", path)
	}
	keys := strings.Split(string(data[:len(data)-1]), "\n")
	for i, k := range keys {
		if k == "" {
			fail("%s: empty key on line %d", path, i+1)
		}
	}
	return keys
}

func serverList(layout string, n int) []server {
	out := make([]server, n)
	for i := 0; i < n; i++ {
		switch layout {
		case "ip": // IP hosts on the default port
			out[i] = server{fmt.Sprintf("127.0.0.%d", i+1), 11211}
		case "names": // a host name that resolves everywhere, other ports
			out[i] = server{"localhost", 11212 + i}
		case "ports": // one IP host, many ports
			out[i] = server{"127.0.1.1", 11311 + 7*i}
		case "confirm":
			out[i] = server{fmt.Sprintf("127.0.97.%d", i+1), 21981 + i}
		default:
			fail("unknown layout %s", layout)
		}
	}
	return out
}

func placeAll(servers []server, keys []string) []int {
	var sl memcache.ServerList
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.addr()
	}
	if err := sl.SetServers(addrs...); err != nil {
		fail("SetServers: %v", err)
	}
	index := map[string]int{}
	i := 0
	sl.Each(func(a net.Addr) error {
		id := a.Network() + " " + a.String()
		if _, dup := index[id]; dup {
			fail("server %s listed twice", id)
		}
		index[id] = i
		i++
		return nil
	})
	if i != len(servers) {
		fail("ServerList holds %d servers, %d given", i, len(servers))
	}
	place := make([]int, len(keys))
	for k, key := range keys {
		a, err := sl.PickServer(key)
		if err != nil {
			fail("PickServer(%q): %v", key, err)
		}
		idx, ok := index[a.Network()+" "+a.String()]
		if !ok {
			fail("PickServer(%q) returned unknown address %v", key, a)
		}
		place[k] = idx
	}
	return place
}

func caseText(id, client string, servers []server, place []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %s\nclient %s\nprofile gomemcache\n", id, client)
	for _, s := range servers {
		fmt.Fprintf(&b, "server %s:%d:1\n", s.host, s.port)
	}
	b.WriteString("place")
	for _, p := range place {
		fmt.Fprintf(&b, " %d", p)
	}
	b.WriteString("\nend\n\n")
	return b.String()
}

// ------------------------------------------------------------ real servers

func mcCommand(s server, cmd, until string) []byte {
	conn, err := net.DialTimeout("tcp", s.addr(), 5*time.Second)
	if err != nil {
		fail("connect %s: %v", s.addr(), err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		fail("%s: %v", s.addr(), err)
	}
	var buf bytes.Buffer
	r := bufio.NewReader(conn)
	chunk := make([]byte, 65536)
	for !bytes.HasSuffix(buf.Bytes(), []byte(until)) {
		n, err := r.Read(chunk)
		buf.Write(chunk[:n])
		if err != nil && !bytes.HasSuffix(buf.Bytes(), []byte(until)) {
			fail("%s during %q: %v", s.addr(), strings.TrimSpace(cmd), err)
		}
	}
	return buf.Bytes()
}

func flushAll(servers []server) {
	for _, s := range servers {
		if r := string(mcCommand(s, "flush_all\r\n", "\r\n")); r != "OK\r\n" {
			fail("flush_all on %s answered %q", s.addr(), r)
		}
	}
}

// Every key a server holds (metadump lines end in "\n", keys URL-encoded).
func dumpKeys(s server) []string {
	var keys []string
	for _, line := range strings.Split(string(mcCommand(s, "lru_crawler metadump all\r\n", "END\r\n")), "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasPrefix(line, "key=") {
			continue
		}
		field := strings.SplitN(line, " ", 2)[0][4:]
		k, err := url.PathUnescape(field)
		if err != nil {
			fail("%s: bad metadump line %q", s.addr(), line)
		}
		keys = append(keys, k)
	}
	return keys
}

func confirm(what string, servers []server, keys []string, place []int) string {
	flushAll(servers)
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.addr()
	}
	c := memcache.New(addrs...)
	c.Timeout = 2 * time.Second
	expect := map[string]int{}
	refused := 0
	for i, k := range keys {
		err := c.Set(&memcache.Item{Key: k, Value: []byte(fmt.Sprintf("v%d", i))})
		if err == memcache.ErrMalformedKey {
			refused++
			continue
		}
		if err != nil {
			fail("%s: Set(%q): %v", what, k, err)
		}
		expect[k] = place[i]
	}
	found := map[string]int{}
	for si, s := range servers {
		for _, k := range dumpKeys(s) {
			if _, dup := found[k]; dup {
				fail("%s: key %q is on two servers", what, k)
			}
			found[k] = si
		}
	}
	for k, si := range expect {
		got, ok := found[k]
		if !ok {
			fail("%s: key %q is on no server", what, k)
		}
		if got != si {
			fail("%s: key %q is on server %d, the table says %d", what, k, got, si)
		}
	}
	if len(found) != len(expect) {
		fail("%s: the servers hold %d keys, %d were stored", what, len(found), len(expect))
	}
	flushAll(servers)
	return fmt.Sprintf("%s: %d keys stored on %d real servers agree with the table (%d refused by the client: ErrMalformedKey)",
		what, len(expect), len(servers), refused)
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: gen_gomemcache_table KEYS OUT VERSIONS [confirm]")
	}
	keys := readKeys(os.Args[1])
	outPath, versions := os.Args[2], os.Args[3]
	doConfirm := len(os.Args) > 4 && os.Args[4] == "confirm"
	client := versions + ": memcache.ServerList.SetServers(\"host:port\"...); PickServer(key)"

	var out strings.Builder
	var notes []string
	count := 0
	for _, n := range []int{1, 2, 3, 5, 10, 25} {
		for _, layout := range []string{"ip", "names", "ports"} {
			servers := serverList(layout, n)
			out.WriteString(caseText(fmt.Sprintf("gomemcache-%s-%d", layout, n), client, servers, placeAll(servers, keys)))
			count++
		}
	}
	servers := serverList("confirm", 5)
	place := placeAll(servers, keys)
	out.WriteString(caseText("gomemcache-confirm-5", client, servers, place))
	count++
	if doConfirm {
		notes = append(notes, confirm("gomemcache-confirm-5", servers, keys, place))
	}

	var header strings.Builder
	header.WriteString("# gomemcache.golden: written by tests/golden/gen_gomemcache.sh (gen_gomemcache_table.go)\n")
	fmt.Fprintf(&header, "# %s\n", versions)
	header.WriteString("# Placement from ServerList.PickServer(); keys are Go strings of the UTF-8 bytes.\n")
	header.WriteString("# The client has no weights (every server has weight 1).\n")
	if doConfirm {
		header.WriteString("# The gomemcache-confirm-5 case was also checked on real memcached servers (Client.Set,\n")
		header.WriteString("# then every server asked which keys it holds; the client refuses keys with bytes > 0x7e).\n")
	}
	fmt.Fprintf(&header, "# %d cases.\n\n", count)
	text := header.String() + strings.TrimRight(out.String(), "\n") + "\n"
	if err := os.WriteFile(outPath, []byte(text), 0o644); err != nil {
		fail("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "gen_gomemcache: %s\n", n)
	}
	fmt.Fprintf(os.Stderr, "gen_gomemcache: wrote %s (%d cases)\n", outPath, count)
}
