#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# gen_perl.pl: writes cache_memcached.golden (Cache::Memcached) and
# cache_memcached_fast.golden (Cache::Memcached::Fast) in this folder.
#
# Neither client exposes its placement without a connection, so every case
# runs against real memcached servers on loopback: each key of keys.txt is
# stored through the client (value "<case>:<key index>"), then every server of
# the case is asked, over a plain socket, which keys it holds. Each key must be
# found on exactly one server. Keys are passed as Perl byte strings (the raw
# UTF-8 bytes of keys.txt), as Perl programs read them from files and sockets.
#
# Servers: 127.77.0.i:11211 (IP hosts, default port), localhost:<port> (host
# names; the only name that resolves on every machine) and 127.77.1.i:<port>
# (weighted cases). Cache::Memcached::Fast hashes the host and port strings in
# its ketama mode, so the tables record exactly the address strings given.
# Requires root (apt-get, memcached -u nobody).
use strict;
use warnings;
use File::Basename qw(dirname);
use Cwd qw(abs_path);
use IO::Socket::INET;
use POSIX qw(:sys_wait_h);

my $here = dirname(abs_path($0));
my @NS = (25, 10, 5, 3, 2, 1);
@NS = sort { $a <=> $b } @NS;

# ---------------------------------------------------------------- packages
sub installed {
    my ($pkg) = @_;
    my $st = `dpkg-query -W -f='\${Status}' $pkg 2>/dev/null`;
    return $st =~ /install ok installed/;
}

sub ensure_packages {
    my @missing = grep { !installed($_) } @_;
    return unless @missing;
    local $ENV{DEBIAN_FRONTEND} = 'noninteractive';
    if (system('apt-get', 'install', '-y', '--no-install-recommends', @missing) != 0) {
        system('apt-get', 'update') == 0 or die "apt-get update failed\n";
        system('apt-get', 'install', '-y', '--no-install-recommends', @missing) == 0
            or die "apt-get install @missing failed\n";
    }
}

sub pkg_version {
    my ($pkg) = @_;
    my $v = `dpkg-query -W -f='\${Version}' $pkg 2>/dev/null`;
    return $v eq '' ? 'unknown' : $v;
}

ensure_packages(qw(memcached libcache-memcached-perl libcache-memcached-fast-perl));
require Cache::Memcached;
require Cache::Memcached::Fast;

# ---------------------------------------------------------------- servers
my %children;    # pid => "addr:port"

sub stop_servers {
    for my $pid (keys %children) {
        kill 'TERM', $pid;
    }
    for my $pid (keys %children) {
        waitpid($pid, 0);
        delete $children{$pid};
    }
}

my $main_pid = $$;
END {
    my $rc = $?;
    stop_servers() if $$ == $main_pid;
    $? = $rc;
}
$SIG{INT} = $SIG{TERM} = $SIG{HUP} = sub { die "interrupted\n" };

sub try_connect {
    my ($addr, $port) = @_;
    return IO::Socket::INET->new(PeerAddr => $addr, PeerPort => $port, Proto => 'tcp',
                                 Timeout => 2);
}

# Starts memcached on addr:port; returns 1 once it answers "version", 0 if it
# exited (port taken) or never answered within the bounded wait.
sub start_server {
    my ($addr, $port) = @_;
    my $pid = fork();
    die "fork: $!\n" unless defined $pid;
    if ($pid == 0) {
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>', '/dev/null');
        exec('memcached', '-u', 'nobody', '-l', $addr, '-p', $port, '-U', '0', '-t', '1',
             '-m', '64', '-c', '256') or POSIX::_exit(127);
    }
    $children{$pid} = "$addr:$port";
    for (my $i = 0; $i < 200; $i++) {    # at most ~10 s
        if (waitpid($pid, WNOHANG) == $pid) {
            delete $children{$pid};
            return 0;
        }
        if (my $s = try_connect($addr, $port)) {
            print $s "version\r\n";
            my $line = <$s>;
            close $s;
            return 1 if defined $line && $line =~ /^VERSION /;
        }
        select(undef, undef, undef, 0.05);
    }
    kill 'TERM', $pid;
    waitpid($pid, 0);
    delete $children{$pid};
    return 0;
}

sub port_free {
    my ($addr, $port) = @_;
    my $s = IO::Socket::INET->new(LocalAddr => $addr, LocalPort => $port, Proto => 'tcp',
                                  Listen => 1, ReuseAddr => 1);
    return 0 unless $s;
    close $s;
    return 1;
}

sub kernel_port {
    my ($addr) = @_;
    my $s = IO::Socket::INET->new(LocalAddr => $addr, LocalPort => 0, Proto => 'tcp',
                                  Listen => 1) or die "no free port on $addr: $!\n";
    my $p = $s->sockport;
    close $s;
    return $p;
}

# Starts one server per wanted (addr, port); a port already taken on that
# address is replaced by one the kernel hands out. Returns the [addr, port]s.
sub start_set {
    my @out;
    for my $w (@_) {
        my ($addr, $port) = @$w;
        my $ok = port_free($addr, $port) && start_server($addr, $port);
        my $tries = 0;
        while (!$ok) {
            die "cannot start memcached on $addr\n" if ++$tries > 5;
            $port = kernel_port($addr);
            $ok = start_server($addr, $port);
        }
        push @out, [$addr, $port];
    }
    return @out;
}

my @ip_set = start_set(map { ["127.77.0.$_", 11211] } 1 .. 25);
my @name_set = start_set(map { ['127.0.0.1', 21300 + $_] } 1 .. 25);
my @weight_set = start_set(map { ["127.77.1.$_", 11300 + 7 * $_] } 1 .. 25);
$_->[2] = 'localhost' for @name_set;     # the client is given "localhost:<port>"
$_->[2] = $_->[0] for @ip_set, @weight_set;

# ---------------------------------------------------------------- keys
my @keys;
{
    open(my $fh, '<:raw', "$here/keys.txt") or die "keys.txt: $!\n";
    while (my $line = <$fh>) {
        $line =~ s/\r?\n\z//;
        push @keys, $line;
    }
    close $fh;
    die "keys.txt: no keys\n" unless @keys;
}

# ---------------------------------------------------------------- probing
sub read_exact {
    my ($s, $n) = @_;
    my $buf = '';
    while (length($buf) < $n) {
        my $got = sysread($s, $buf, $n - length($buf), length($buf));
        die "read: " . (defined $got ? 'eof' : $!) . "\n" unless $got;
    }
    return $buf;
}

sub read_line {
    my ($s) = @_;
    my $line = '';
    while ($line !~ /\r\n\z/) {
        my $c;
        my $got = sysread($s, $c, 1);
        die "read: " . (defined $got ? 'eof' : $!) . "\n" unless $got;
        $line .= $c;
    }
    return $line;
}

sub flush_server {
    my ($srv) = @_;
    my $s = try_connect($srv->[0], $srv->[1]) or die "connect $srv->[0]:$srv->[1]: $!\n";
    print $s "flush_all\r\n";
    my $r = read_line($s);
    die "flush_all on $srv->[0]:$srv->[1]: $r" unless $r eq "OK\r\n";
    close $s;
}

# Asks one server for every wire key; returns { wire key => value }.
sub held_keys {
    my ($srv, $wire) = @_;
    my $s = try_connect($srv->[0], $srv->[1]) or die "connect $srv->[0]:$srv->[1]: $!\n";
    binmode $s;
    $s->autoflush(1);
    my %held;
    for (my $i = 0; $i < @$wire; $i += 50) {
        my $j = $i + 49 < $#$wire ? $i + 49 : $#$wire;
        print $s 'get ' . join(' ', @{$wire}[$i .. $j]) . "\r\n";
        while (1) {
            my $line = read_line($s);
            last if $line eq "END\r\n";
            $line =~ /^VALUE (\S+) \d+ (\d+)\r\n\z/ or die "unexpected reply: $line";
            my ($k, $n) = ($1, $2);
            my $data = read_exact($s, $n + 2);
            $held{$k} = substr($data, 0, $n);
        }
    }
    close $s;
    return \%held;
}

# Stores every key through $store->(\@pairs) (pairs [key, value]) and returns
# the server index of each key, found by asking every server. $prefix is what
# the client prepends on the wire (its namespace).
sub measure {
    my ($tag, $servers, $store, $idx, $prefix, $keyset) = @_;
    $prefix //= '';
    $keyset //= \@keys;
    flush_server($_) for @$servers;
    my @pairs = map { [$keyset->[$_], "$tag:$_"] } @$idx;
    $store->(\@pairs);
    my @wire = map { $prefix . $keyset->[$_] } @$idx;
    my %where;
    for my $si (0 .. $#$servers) {
        my $held = held_keys($servers->[$si], \@wire);
        for my $n (0 .. $#$idx) {
            my $v = $held->{$wire[$n]};
            next unless defined $v && $v eq "$tag:$idx->[$n]";
            die "$tag: key #$idx->[$n] found on servers $where{$idx->[$n]} and $si\n"
                if defined $where{$idx->[$n]};
            $where{$idx->[$n]} = $si;
        }
    }
    for my $i (@$idx) {
        die "$tag: key #$i found on no server\n" unless defined $where{$i};
    }
    return [map { $where{$_} } @$idx];
}

my @all_idx = (0 .. $#keys);

sub addr_str {
    my ($srv) = @_;
    return "$srv->[2]:$srv->[1]";
}

sub spec_line {
    my ($srv, $w) = @_;
    return 'server ' . addr_str($srv) . ':' . $w;
}

# ---------------------------------------------------------------- weights
my @int_weights = (1, 3, 5, 2, 4, 1, 2, 5, 3, 4, 2, 1, 4, 5, 3, 3, 1, 5, 2, 4, 5, 2, 1, 3, 4);
my @real_weights = (2.5, 0.5, 1, 3.25, 1.5, 4, 0.75, 2, 5, 1.25, 3, 0.5, 2.5, 4.5, 1,
                    1.75, 3.5, 0.25, 2, 4.75, 1.5, 3, 0.5, 2.25, 5);

sub header {
    my ($fh, @lines) = @_;
    print $fh "# $_\n" for @lines;
    print $fh "\n";
}

sub write_case {
    my ($fh, %c) = @_;
    print $fh "case $c{id}\n";
    print $fh "client $c{client}\n";
    print $fh "profile $c{profile}\n";
    print $fh "option $_\n" for @{ $c{options} || [] };
    for my $i (0 .. $#{ $c{servers} }) {
        print $fh spec_line($c{servers}[$i], $c{weights}[$i]), "\n";
    }
    print $fh 'place ', join(' ', @{ $c{place} }), "\n";
    print $fh "end\n\n";
}

my $versions = sprintf('perl %vd; memcached %s; libcache-memcached-perl %s; '
                       . 'libcache-memcached-fast-perl %s', $^V, pkg_version('memcached'),
                       pkg_version('libcache-memcached-perl'),
                       pkg_version('libcache-memcached-fast-perl'));
my $start = time;

# ---------------------------------------------------------------- Cache::Memcached
my $cm_version = $Cache::Memcached::VERSION;

sub cm_store {
    my ($servers) = @_;
    return sub {
        my ($pairs) = @_;
        my $c = Cache::Memcached->new({ servers => $servers, no_rehash => 1 });
        for my $p (@$pairs) {
            $c->set($p->[0], $p->[1]) or die "Cache::Memcached set failed\n";
        }
        $c->disconnect_all;
    };
}

{
    my $out = "$here/cache_memcached.golden";
    open(my $fh, '>:raw', "$out.tmp") or die "$out: $!\n";
    header($fh, 'Written by tests/golden/gen_perl.pl (run as root; see generate.sh).',
           "Cache::Memcached $cm_version; $versions.",
           'Keys stored through the client as Perl byte strings (raw UTF-8), then found by',
           'asking every memcached server (127.77.x.y and localhost) which keys it holds.');
    for my $n (@NS) {
        my @groups = (
            ['ip', [@ip_set[0 .. $n - 1]], [(1) x $n], 'plain "host:port" strings'],
            ['names', [@name_set[0 .. $n - 1]], [(1) x $n], 'plain "host:port" strings'],
            ['weights', [@weight_set[0 .. $n - 1]], [@int_weights[0 .. $n - 1]],
             '[ "host:port", weight ] pairs'],
        );
        # Cache::Memcached 1.30 cannot use a single server given as a
        # [ "host:port", weight ] pair (it takes the array reference for the
        # address), and one server gets every key anyway: no weighted case for N = 1.
        @groups = grep { $_->[0] ne 'weights' } @groups if $n == 1;
        for my $g (@groups) {
            my ($kind, $srv, $w, $how) = @$g;
            my @given = map {
                $kind eq 'weights' ? [addr_str($srv->[$_]), $w->[$_]] : addr_str($srv->[$_])
            } 0 .. $#$srv;
            my $id = "n$n-$kind";
            my $place = measure("cm-$id", $srv, cm_store(\@given), \@all_idx);
            write_case($fh, id => $id, profile => 'cache-memcached', servers => $srv,
                       weights => $w, place => $place,
                       client => "Cache::Memcached $cm_version, servers as $how, no_rehash => 1");
        }
    }
    close $fh;
    rename("$out.tmp", $out) or die "rename: $!\n";
    print STDERR "gen_perl.pl: wrote $out\n";
}

# ---------------------------------------------------------------- Cache::Memcached::Fast
my $cmf_version = $Cache::Memcached::Fast::VERSION;

sub cmf_conf {
    my ($srv, $w, $weighted, %opt) = @_;
    my @given = map {
        $weighted ? { address => addr_str($srv->[$_]), weight => $w->[$_] }
                  : addr_str($srv->[$_])
    } 0 .. $#$srv;
    return { servers => \@given, %opt };
}

sub cmf_store {
    my ($conf) = @_;
    return sub {
        my ($pairs) = @_;
        my $c = Cache::Memcached::Fast->new({ %$conf });
        for (my $i = 0; $i < @$pairs; $i += 100) {
            my $j = $i + 99 < $#$pairs ? $i + 99 : $#$pairs;
            my @res = $c->set_multi(@{$pairs}[$i .. $j]);
            for my $r (@res) {
                die "Cache::Memcached::Fast set failed\n" unless $r;
            }
        }
        $c->disconnect_all;
    };
}

# Whether the namespace option moves keys (no table; reported as comments).
sub namespace_notes {
    my @notes;
    my $ns = 'ns:';
    my @idx = grep { length($ns) + length($keys[$_]) <= 250 } @all_idx;
    for my $n (3, 10) {
        my @srv = @ip_set[0 .. $n - 1];
        for my $points (0, 150) {
            my %o = $points ? (ketama_points => $points) : ();
            my $plain = measure("ns0-$n-$points", \@srv,
                                cmf_store(cmf_conf(\@srv, undef, 0, %o)), \@idx);
            my $with_ns = measure("ns1-$n-$points", \@srv,
                                  cmf_store(cmf_conf(\@srv, undef, 0, %o, namespace => $ns)),
                                  \@idx, $ns);
            my $hashed = measure("ns2-$n-$points", \@srv,
                                 cmf_store(cmf_conf(\@srv, undef, 0, %o, namespace => $ns,
                                                    hash_namespace => 1)), \@idx, $ns);
            my @prefixed_keys = map { $ns . $_ } @keys;
            my $prefixed = measure("ns3-$n-$points", \@srv,
                                   cmf_store(cmf_conf(\@srv, undef, 0, %o)), \@idx, '',
                                   \@prefixed_keys);
            my $diff = sub {
                my ($a, $b) = @_;
                return scalar grep { $a->[$_] != $b->[$_] } 0 .. $#$a;
            };
            my $mode = $points ? "ketama_points => $points" : 'compat modulo';
            push @notes, sprintf('N=%d, %s: namespace => "%s" moves %d of %d keys; adding '
                                 . 'hash_namespace => 1 places %d of them like the key '
                                 . '"%s<key>" without namespace (and moves %d)',
                                 $n, $mode, $ns, $diff->($plain, $with_ns), scalar(@idx),
                                 scalar(@idx) - $diff->($hashed, $prefixed), $ns,
                                 $diff->($plain, $hashed));
        }
    }
    return @notes;
}

{
    my $out = "$here/cache_memcached_fast.golden";
    open(my $fh, '>:raw', "$out.tmp") or die "$out: $!\n";
    my @notes = namespace_notes();
    header($fh, 'Written by tests/golden/gen_perl.pl (run as root; see generate.sh).',
           "Cache::Memcached::Fast $cmf_version; $versions.",
           'Keys stored through the client as Perl byte strings (raw UTF-8), then found by',
           'asking every memcached server (127.77.x.y and localhost) which keys it holds.',
           'Measured, not tabled (keys of at most 247 bytes):', @notes);
    my @modes = ([0, [], ''], [150, ['points=150'], '-points150'],
                 [40, ['points=40'], '-points40']);
    for my $m (@modes) {
        my ($points, $options, $suffix) = @$m;
        for my $n (@NS) {
            my @groups = (
                ['ip', [@ip_set[0 .. $n - 1]], [(1) x $n], 0],
                ['names', [@name_set[0 .. $n - 1]], [(1) x $n], 0],
                ['weights', [@weight_set[0 .. $n - 1]], [@int_weights[0 .. $n - 1]], 1],
            );
            # real-valued weights: every N in the default mode, N = 3 and 10 with ketama
            push @groups, ['realweights', [@weight_set[0 .. $n - 1]],
                           [@real_weights[0 .. $n - 1]], 1]
                if $points == 0 || $n == 3 || $n == 10;
            for my $g (@groups) {
                my ($kind, $srv, $w, $weighted) = @$g;
                my %o = $points ? (ketama_points => $points) : ();
                my $id = "n$n-$kind$suffix";
                my $place = measure("cmf-$id", $srv, cmf_store(cmf_conf($srv, $w, $weighted, %o)),
                                    \@all_idx);
                my $how = $weighted ? '{ address => "host:port", weight => w }'
                                    : 'plain "host:port" strings';
                my $settings = $points ? "ketama_points => $points" : 'ketama_points => 0 (default)';
                write_case($fh, id => $id, profile => 'cache-memcached-fast', options => $options,
                           servers => $srv, weights => $w, place => $place,
                           client => "Cache::Memcached::Fast $cmf_version, servers as $how, "
                                     . "$settings, other settings default");
            }
        }
    }
    close $fh;
    rename("$out.tmp", $out) or die "rename: $!\n";
    print STDERR "gen_perl.pl: wrote $out\n";
}

stop_servers();
printf STDERR "gen_perl.pl: done in %d s\n", time - $start;
