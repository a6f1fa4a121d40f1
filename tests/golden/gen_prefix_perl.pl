#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# gen_prefix_perl.pl KEYS OUT VERSIONS NET: writes prefix/cache_memcached_fast.golden,
# where Cache::Memcached::Fast puts keys stored with its namespace option,
# with hash_namespace => 0 and => 1, measured on real memcached servers
# (NET.1-5, ports 21981-21985, started by gen_prefix.sh).
#
# For each case: every server is flushed, every key of keys.txt is stored
# through the real client (set, one key at a time), then every server is asked
# which keys it holds (lru_crawler metadump). Key i is recorded on the one
# server holding exactly the bytes namespace.key_i, or as "x" when no server
# does (a namespaced key of more than 250 bytes is sent as it is, and the
# server refuses it: what the client sends for each such key is checked on a
# listening socket). Two more runs without a namespace (the bare keys, then
# the keys namespace.key_i) tell whether the client placed by the bare or by
# the prefixed key, and a run with hash_namespace left out shows the default.
# The client has no placement call of its own. Keys are Perl byte strings
# (the raw UTF-8 bytes of keys.txt).
use strict;
use warnings;
use IO::Socket::INET;
use Cache::Memcached::Fast;

my ($keys_path, $out_path, $versions, $net) = @ARGV;
die "usage: $0 KEYS OUT VERSIONS NET\n" unless defined $net;

sub fail { print STDERR "gen_prefix_perl: $_[0]\n"; exit 1 }
sub note { print STDERR "gen_prefix_perl: $_[0]\n" }

my @keys;
{
    open(my $fh, '<:raw', $keys_path) or fail("$keys_path: $!");
    local $/;
    my $text = <$fh>;
    close $fh;
    fail("$keys_path must end with a newline") unless $text =~ /\n\z/;
    @keys = split /\n/, $text;
    for my $i (0 .. $#keys) {
        fail("$keys_path: empty key on line " . ($i + 1)) if $keys[$i] eq '';
    }
}

# ---------------------------------------------------------------- raw server access

# Sends one command, reads until the answer ends with $until (or a one-line BUSY).
sub mc_command {
    my ($host, $port, $cmd, $until) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp',
                                  Timeout => 5) or fail("cannot connect to $host:$port: $!");
    binmode $s;
    $s->autoflush(1);
    print $s $cmd;
    my $buf = '';
    my $deadline = time + 20;
    while (substr($buf, -length($until)) ne $until) {
        last if $until eq "END\r\n" && $buf =~ /\ABUSY.*\r\n\z/s;
        fail("$host:$port timed out during '$cmd'") if time > $deadline;
        my $rin = '';
        vec($rin, fileno($s), 1) = 1;
        next unless select(my $rout = $rin, undef, undef, 1);
        my $got = sysread($s, $buf, 65536, length $buf);
        fail("$host:$port closed the connection during '$cmd'") unless $got;
    }
    close $s;
    return $buf;
}

# One lru_crawler metadump of the server: its keys as bytes (metadump writes
# them %XX-encoded).
sub metadump {
    my ($srv) = @_;
    my $r;
    for (1 .. 100) {
        $r = mc_command(@$srv, "lru_crawler metadump all\r\n", "END\r\n");
        last unless $r =~ /\ABUSY/;
        select(undef, undef, undef, 0.05);
    }
    fail("$srv->[0]:$srv->[1]: metadump answered $r") unless $r =~ /END\r\n\z/;
    my @out;
    for my $line (split /\n/, $r) {
        next unless $line =~ /\Akey=(\S+)/;
        (my $k = $1) =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
        push @out, $k;
    }
    return @out;
}

# Every key the server holds, each once. The crawler walks the LRU segments
# one after the other, so an item moving between them during a walk can be
# listed twice or missed: the dumps are repeated until one adds no key.
sub dump_keys {
    my ($srv) = @_;
    my %seen;
    for my $pass (0 .. 9) {
        my $added = 0;
        for my $k (metadump($srv)) {
            $added++ unless $seen{$k}++;
        }
        return keys %seen if $pass > 0 && $added == 0;
    }
    fail("$srv->[0]:$srv->[1]: the dumps keep listing new keys");
}

sub flush_servers {
    my @servers = @_;
    for my $srv (@servers) {
        my $r = mc_command(@$srv, "flush_all\r\n", "\r\n");
        fail("flush_all on $srv->[0]:$srv->[1] answered $r") unless $r eq "OK\r\n";
    }
    for my $srv (@servers) {
        fail("$srv->[0]:$srv->[1] still holds keys after flush_all") if dump_keys($srv);
    }
}

# { key bytes => server index } of every key the servers hold; fails if a
# key is on two servers.
sub held_keys {
    my @servers = @_;
    my %where;
    for my $s (0 .. $#servers) {
        for my $k (dump_keys($servers[$s])) {
            fail("key " . unpack('H*', $k) . " is on servers $where{$k} and $s") if exists $where{$k};
            $where{$k} = $s;
        }
    }
    return \%where;
}

# ---------------------------------------------------------------- the client

# The client of a run: servers as plain "host:port" strings (weight 1), and
# only the options given (%opt: namespace, hash_namespace, ketama_points).
sub make_client {
    my ($servers, %opt) = @_;
    return Cache::Memcached::Fast->new({ servers => [map { "$_->[0]:$_->[1]" } @$servers], %opt });
}

# One run: flush, store every key of @$list (value "v<i>"), return the held
# keys and how many sets returned false.
sub run {
    my ($servers, $list, %opt) = @_;
    flush_servers(@$servers);
    my $c = make_client($servers, %opt);
    my @refused;
    for my $i (0 .. $#$list) {
        push @refused, $i unless $c->set($list->[$i], "v$i");
    }
    $c->disconnect_all;
    return (held_keys(@$servers), \@refused);
}

# What the client sends for a set of $key (with %opt) to a listening socket
# that never answers: the bytes received, or undef if no connection was made.
sub bytes_sent {
    my ($key, %opt) = @_;
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                  Listen => 1) or fail("listen: $!");
    my $c = make_client([['127.0.0.1', $l->sockport]], %opt, io_timeout => 0.1);
    $c->set($key, 'v');
    $c->disconnect_all;
    my $rin = '';
    vec($rin, fileno($l), 1) = 1;
    return undef unless select(my $rout = $rin, undef, undef, 0);
    my $s = $l->accept or fail("accept: $!");
    my $buf = '';
    1 while sysread($s, $buf, 65536, length $buf);
    close $s;
    close $l;
    return $buf;
}

sub settings_text {
    my (%opt) = @_;
    my @s = ("namespace => '$opt{namespace}'");
    push @s, exists $opt{hash_namespace} ? "hash_namespace => $opt{hash_namespace}"
                                         : 'hash_namespace not given';
    push @s, exists $opt{ketama_points} ? "ketama_points => $opt{ketama_points}"
                                        : 'ketama_points => 0 (default)';
    return join(', ', @s);
}

# ---------------------------------------------------------------- the cases

my @prefixes = (['app', 'app:'], ['svc', 'svc.v2|tenant-7_']);
my @cases;
for my $points (0, 150) {
    for my $hn (0, 1) {
        for my $p (@prefixes) {
            for my $n (3, 5) {
                push @cases, { id => "cmf-hash_namespace$hn" . ($points ? "-points$points" : '')
                                     . "-$p->[0]-$n",
                               hn => $hn, points => $points, prefix => $p->[1], n => $n };
            }
        }
    }
}

my $out = '';
my @summary;
my %default_like;    # "points/prefix/n" => which hash_namespace the default placed like
for my $c (@cases) {
    my $prefix = $c->{prefix};
    my @servers = map { ["$net.$_", 21980 + $_] } 1 .. $c->{n};
    my %base = $c->{points} ? (ketama_points => $c->{points}) : ();
    my %opt = (%base, namespace => $prefix, hash_namespace => $c->{hn});
    my @prefixed = map { $prefix . $_ } @keys;

    my ($held, $refused) = run(\@servers, \@keys, %opt);
    my @place = map { $held->{$_} } @prefixed;
    my %want = map { $_ => 1 } @prefixed;
    my @stray = grep { !$want{$_} } keys %$held;
    fail("$c->{id}: the servers hold " . scalar(@stray) . ' unexpected keys, e.g. '
         . unpack('H*', $stray[0])) if @stray;
    my %is_refused = map { $_ => 1 } @$refused;
    for my $i (0 .. $#keys) {
        my $long = length($prefixed[$i]) > 250;
        fail("$c->{id}: key #$i refused, yet on a server") if $is_refused{$i} && defined $place[$i];
        fail("$c->{id}: key #$i stored, yet on no server") if !$is_refused{$i} && !defined $place[$i];
        fail("$c->{id}: key #$i is " . ($long ? 'over' : 'within') . ' 250 bytes with the namespace, yet '
             . ($is_refused{$i} ? 'refused' : 'stored')) if $long != !!$is_refused{$i};
        if ($is_refused{$i}) {
            # What the client sends for it: the set command with the key prefix+key.
            my $sent = bytes_sent($keys[$i], %opt) // '';
            fail("$c->{id}: key #$i refused; the client sent '" . substr($sent, 0, 40) . "...'")
                unless index($sent, "set $prefixed[$i] ") == 0;
        }
    }

    # The references: no namespace, the bare keys, then the keys namespace.key_i.
    my ($held_bare) = run(\@servers, \@keys, %base);
    my ($held_pref) = run(\@servers, \@prefixed, %base);
    my ($stored, $agree_bare, $agree_pref, $both) = (0, 0, 0, 0);
    for my $i (0 .. $#keys) {
        next unless defined $place[$i];
        $stored++;
        $agree_bare++ if ($held_bare->{$keys[$i]} // -1) == $place[$i];
        next unless exists $held_pref->{$prefixed[$i]};
        $both++;
        $agree_pref++ if $held_pref->{$prefixed[$i]} == $place[$i];
    }
    my $hashing;
    if ($agree_pref == $both && $both == $stored && $agree_bare < $stored) {
        $hashing = 'prefixed';
    } elsif ($agree_bare == $stored && $agree_pref < $both) {
        $hashing = 'bare';
    } else {
        fail("$c->{id}: neither the bare ($agree_bare of $stored) nor the prefixed key "
             . "($agree_pref of $both) explains the placement");
    }

    # The default: the same client without hash_namespace.
    my ($held_default) = run(\@servers, \@keys, %base, namespace => $prefix);
    my $default_same = grep {
        defined $place[$_] && ($held_default->{$prefixed[$_]} // -1) == $place[$_]
    } 0 .. $#keys;
    my $default_text = $default_same == $stored
        ? "the client without hash_namespace places all $stored keys as here"
        : "the client without hash_namespace places " . ($stored - $default_same)
          . " of the $stored keys elsewhere";
    $default_like{"$c->{points}/$prefix/$c->{n}"}{ $c->{hn} } = $default_same == $stored;

    my $line = sprintf("%s: %d on a server, %d x; bare %d/%d, prefixed %d/%d\n    x: %d sent as "
                       . "namespace+key of over 250 bytes and refused by the server (set returned false); default: %s",
                       $c->{id}, $stored, scalar(@keys) - $stored, $agree_bare, $stored,
                       $agree_pref, $both, scalar(@keys) - $stored, $default_text);
    push @summary, $line;
    (my $one = $line) =~ s/\n    /; /;
    note($one);

    my $client = "$versions: Cache::Memcached::Fast->new({ servers => [\"host:port\", ...], "
        . settings_text(%opt) . ', other settings default }); set(key, value) one key at a time; '
        . $default_text;
    $out .= "case $c->{id}\nclient $client\nprofile cache-memcached-fast\n";
    $out .= "option points=$c->{points}\n" if $c->{points};
    $out .= "prefix $prefix\nprefix_hashing $hashing\n";
    $out .= "server $_->[0]:$_->[1]:1\n" for @servers;
    $out .= 'place ' . join(' ', map { $_ // 'x' } @place) . "\nend\n\n";
}
flush_servers(map { ["$net.$_", 21980 + $_] } 1 .. 5);

my @default_is;
for my $hn (0, 1) {
    push @default_is, $hn if !grep { !$_->{$hn} } values %default_like;
}
fail('hash_namespace left out places like neither 0 nor 1 in every case') unless @default_is == 1;

open(my $fh, '>:raw', $out_path) or fail("$out_path: $!");
print $fh "# cache_memcached_fast.golden: written by tests/golden/gen_prefix.sh (gen_prefix_perl.pl)\n";
print $fh "# $versions\n";
print $fh "# Recorded on real memcached servers: each key of keys.txt (Perl byte strings, the raw UTF-8)\n";
print $fh "# stored with set() through a client with namespace => PREFIX, then every server asked which\n";
print $fh "# keys it holds (lru_crawler metadump); place = the server holding exactly the bytes\n";
print $fh "# prefix+key, x when none does.\n";
print $fh "# prefix_hashing is measured: clients without a namespace, storing the bare keys and then the\n";
print $fh "# keys prefix+key, must put every key where the namespaced client did.\n";
print $fh "# hash_namespace left out (the real default) places every key of every case like\n";
print $fh "# hash_namespace => $default_is[0].\n";
print $fh "# A key whose namespace+key is over 250 bytes is sent as it is (checked for every such key:\n";
print $fh "# set against a listening socket that never answers receives \"set <namespace+key> ...\"), the\n";
print $fh "# server refuses it and set returns false: x.\n";
print $fh "# Per case: keys held by a server as prefix+key, and x; bare a/b: of the b keys on a server, a\n";
print $fh "# lie where a client without a namespace puts the bare key; prefixed a/b: where it puts the key\n";
print $fh "# prefix+key; default: where the same client without hash_namespace puts them (the client has\n";
print $fh "# no placement call of its own).\n";
for my $s (@summary) {
    (my $t = $s) =~ s/\n/\n#   /g;
    print $fh "#   $t\n";
}
print $fh '# ' . scalar(@cases) . " cases.\n\n";
$out =~ s/\s+\z/\n/;
print $fh $out;
close $fh or fail("$out_path: $!");
note("wrote $out_path (" . scalar(@cases) . " cases; hash_namespace default: $default_is[0])");
