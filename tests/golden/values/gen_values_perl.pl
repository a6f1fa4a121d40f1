#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# gen_values_perl.pl: the Perl half of the value tables. Run by gen_values.sh:
#
#   perl gen_values_perl.pl [--readback=MANIFEST] VALUES_TXT HOST:PORT DRAFT_DIR NAME=VERSION...
#
# Stores every value of values.txt through Cache::Memcached and
# Cache::Memcached::Fast under "<case>:<value-name>", one case per setting,
# reads each back through the same client and compares it with what was stored.
# Writes the drafts cache_memcached.values and cache_memcached_fast.values in
# DRAFT_DIR: `stored` lines, which values_collect.py replaces with the raw
# (flags, bytes) the server holds, `refused` lines and "# roundtrip" comments.
#
# With --readback=MANIFEST (readback.sh) it writes no drafts: for every item of
# MANIFEST ("<case> <value> <flags> <base64>", what memshard's codec stored under
# "rb:<case>:<value>"), it stores the value itself as above, reads memshard's item
# through the client configured as the case says, and prints one line per item
# (see readback.sh): ok, same (read back as the client reads its own item),
# refused (the client refuses the value itself) or DIFF.
#
# Perl has no string/number/boolean types, so the values are what a Perl
# program naturally holds:
#   - strings are character strings; the ASCII ones are plain (not UTF8-flagged,
#     as an ASCII literal is), the one with non-ASCII characters is UTF8-flagged
#     (as a literal under `use utf8` or text read through a UTF-8 layer is);
#   - integers are IVs (0, 42, -7, 1099511627776), floats NVs (3.25, 1/3, 1e21);
#   - true and false are !!1 and !!0 (the special yes/no scalars: "1" and "");
#   - the map is a hash reference { a => 1, b => [2, 3] }.
# Comparison: strings with eq (characters), numbers with eq and ==, booleans with
# eq, the map recursively.
#
# The UTF8 flag matters to Cache::Memcached::Fast: with utf8 => 1 it sets flag 0x4
# on every UTF8-flagged string, ASCII ones included (a decoded "hello" is stored
# with flags 4), and without it a flagged string of characters < 256 is stored as
# Latin-1 (measured by hand; the tables hold only the plain ASCII strings above).
#
# Nondeterministic: the map, stored as Storable::nfreeze of a hash, whose key
# order follows Perl's per-process hash seed.
use strict;
use warnings;
use utf8;
use Cache::Memcached;
use Cache::Memcached::Fast;
use Data::Dumper;
use Digest::SHA qw(sha256_hex);

my $MAP_SPEC = '{"a":1,"b":[2,3]}';

# ([name, kind, value], ...) in file order.
sub read_values {
    my ($path) = @_;
    my @values;
    open(my $fh, '<:encoding(UTF-8)', $path) or die "$path: $!\n";
    while (my $line = <$fh>) {
        chomp $line;
        next if $line eq '' || $line =~ /^#/;
        my ($name, $kind, $check, $spec) = split / +/, $line, 4;
        my $v;
        if ($kind eq 'str') {
            $v = $spec;
        } elsif ($kind eq 'lines') {
            my ($n, $prefix) = split / /, $spec;
            $v = $prefix // '';
            for (my $i = 1; length($v) < $n; $i++) {
                $v .= sprintf("line %05d: the quick brown fox jumps over the lazy dog\n", $i);
            }
            $v = substr($v, 0, $n);
        } elsif ($kind eq 'int') {
            $v = int($spec);
            die "$name: $spec is not an integer\n" unless "$v" eq $spec;
        } elsif ($kind eq 'float') {
            if ($spec =~ m{^(.+)/(.+)$}) {
                $v = $1 / $2;
            } else {
                $v = $spec + 0;
            }
            my $bits = unpack('H*', pack('d>', $v));
            die "$name: bits $bits, want $check\n" unless $bits eq $check;
        } elsif ($kind eq 'bool') {
            $v = $spec eq 'true' ? !!1 : !!0;
        } elsif ($kind eq 'map') {
            die "$name: this script builds only the map $MAP_SPEC\n" unless $spec eq $MAP_SPEC;
            $v = { a => 1, b => [2, 3] };
        } else {
            die "$name: unknown kind $kind\n";
        }
        if ($kind eq 'str' || $kind eq 'lines') {
            my $utf8 = $v;
            utf8::encode($utf8);
            my $sha = sha256_hex($utf8);
            die "$name: sha256 $sha, want $check\n" unless $sha eq $check;
            # ASCII strings plain, like ASCII literals; the others stay character strings.
            utf8::downgrade($v) if $v !~ /[^\x00-\x7f]/;
        }
        push @values, [$name, $kind, $v];
    }
    close $fh;
    return @values;
}

sub same {
    my ($kind, $got, $v) = @_;
    return 0 unless defined $got;
    if (ref $v eq 'HASH') {
        return 0 unless ref $got eq 'HASH' && join(',', sort keys %$got) eq join(',', sort keys %$v);
        return !grep { !same('any', $got->{$_}, $v->{$_}) } keys %$v;
    }
    if (ref $v eq 'ARRAY') {
        return 0 unless ref $got eq 'ARRAY' && @$got == @$v;
        return !grep { !same('any', $got->[$_], $v->[$_]) } 0 .. $#$v;
    }
    return 0 if ref $got;
    return 0 unless $got eq $v;
    if ($kind eq 'int' || $kind eq 'float') {
        no warnings 'numeric';
        return $got == $v;
    }
    return 1;
}

sub describe {
    my ($v, $stored) = @_;
    return 'undef' unless defined $v;
    if (!ref $v && !ref $stored && !utf8::is_utf8($v) && utf8::is_utf8($stored)) {
        my $encoded = $stored;
        utf8::encode($encoded);
        return 'byte string: the UTF-8 encoding of the stored characters' if $v eq $encoded;
    }
    local $Data::Dumper::Indent = 0;
    local $Data::Dumper::Terse = 1;
    local $Data::Dumper::Useqq = 1;
    local $Data::Dumper::Sortkeys = 1;
    my $text = Dumper($v);
    $text = substr($text, 0, 100) . sprintf('... (%d chars of Data::Dumper)', length $text)
        if length $text > 100;
    my $what = ref $v ? ref $v : utf8::is_utf8($v) ? 'character string' : 'byte string';
    return "$what $text";
}

sub clean_error {
    my ($e) = @_;
    $e =~ s/ at \S+ line \d+\.?\n?\z//;
    $e =~ s/\n/ /g;
    return $e;
}

our %readback;    # readback mode: "<case> <value>" => 1 for what memshard wrote
our $readback_mode = 0;

# Readback mode: reads memshard's item for one value of case $id back through
# $client and prints its line.
sub readback_item {
    my ($id, $client, $value) = @_;
    my ($name, $kind, $v) = @$value;
    my $key = "$id:$name";
    my ($own, $refused);
    my $ok = eval {
        local $SIG{__WARN__} = sub { };
        $client->set($key, $v);
    };
    if (my $e = $@) {
        $refused = 'died: ' . clean_error($e);
    } elsif (!$ok) {
        $refused = 'set returned ' . (defined $ok ? "'$ok'" : 'undef');
    } else {
        $own = [eval { $client->get($key) }];
    }
    my $got = eval { $client->get("rb:$key") };
    if (my $e = $@) {
        print "DIFF $id $name: get died: " . clean_error($e) . "\n";
    } elsif (!defined $got) {
        print "DIFF $id $name: get found nothing\n";
    } elsif (same($kind, $got, $v)) {
        print "ok $id $name\n";
    } elsif ($own && same($kind, $got, $own->[0])) {
        print "same $id $name: read back as " . describe($got, $v) . ", as the client reads its own item\n";
    } elsif (!$own) {
        print "refused $id $name: the client refuses the value itself ($refused); memshard's item read back as "
            . describe($got, $v) . "\n";
    } else {
        print "DIFF $id $name: read back as " . describe($got, $v) . "; the client's own item as "
            . describe($own->[0], $v) . "\n";
    }
}

sub run_case {
    my ($out, $id, $client_line, $codec, $settings, $values, $client) = @_;
    if ($readback_mode) {
        $readback{"$id $_->[0]"} && readback_item($id, $client, $_) for @$values;
        return;
    }
    push @$out, "case $id", "client $client_line", "codec $codec";
    push @$out, map { "setting $_" } @$settings;
    for my $value (@$values) {
        my ($name, $kind, $v) = @$value;
        my $key = "$id:$name";
        my @warnings;
        my $ok = eval {
            local $SIG{__WARN__} = sub { push @warnings, clean_error($_[0]) };
            $client->set($key, $v);
        };
        if (my $e = $@) {
            push @$out, "refused $name died: " . clean_error($e);
            next;
        }
        if (!$ok) {
            push @$out, "refused $name set returned " . (defined $ok ? "'$ok'" : 'undef')
                . (@warnings ? " (warned: @warnings)" : '');
            next;
        }
        push @$out, "stored $name" . (ref $v eq 'HASH' ? ' nondeterministic' : '');
        my $got = eval { $client->get($key) };
        if (my $e = $@) {
            push @$out, "# roundtrip $name: get died: " . clean_error($e);
        } elsif (!same($kind, $got, $v)) {
            push @$out, "# roundtrip $name: read back as " . describe($got, $v);
        }
    }
    push @$out, 'end';
}

sub write_draft {
    my ($path, $lines) = @_;
    return if $readback_mode;
    open(my $fh, '>:encoding(UTF-8)', $path) or die "$path: $!\n";
    print $fh map { "$_\n" } @$lines;
    close $fh or die "$path: $!\n";
}

if (@ARGV && $ARGV[0] =~ /^--readback=(.*)\z/) {
    shift @ARGV;
    open(my $fh, '<', $1) or die "$1: $!\n";
    while (my $line = <$fh>) {
        my ($id, $name) = split ' ', $line;
        $readback{"$id $name"} = 1 if defined $name;
    }
    close $fh;
    $readback_mode = 1;
}
my ($values_txt, $address, $draft_dir, @rest) = @ARGV;
my %versions = map { split /=/, $_, 2 } @rest;
my @values = read_values($values_txt);
my $footer = '# Values read back unchanged unless a "# roundtrip" comment says otherwise.';
my $nondet = '# nondeterministic: the map (Storable::nfreeze of a hash: key order follows the hash seed).';

my @out = (
    "# Cache::Memcached: Cache::Memcached->new({ servers => ['$address'][, compress_threshold => N] });",
    '# every value stored with set($key, $value), read back with get($key).', $nondet, $footer);
run_case(\@out, 'cache-memcached-default', "$versions{cache_memcached}; new({ servers => [...] })",
    'cache-memcached', ['compress_threshold=0'], \@values,
    Cache::Memcached->new({ servers => [$address] }));
run_case(\@out, 'cache-memcached-compress1000',
    "$versions{cache_memcached}; new({ servers => [...], compress_threshold => 1000 })",
    'cache-memcached', ['compress_threshold=1000', 'compress_savings=0.2'], \@values,
    Cache::Memcached->new({ servers => [$address], compress_threshold => 1000 }));
write_draft("$draft_dir/cache_memcached.values", \@out);

@out = (
    "# Cache::Memcached::Fast: Cache::Memcached::Fast->new({ servers => ['$address'], ... });",
    '# every value stored with set($key, $value), read back with get($key).', $nondet, $footer);
run_case(\@out, 'cache-memcached-fast-default', "$versions{cache_memcached_fast}; new({ servers => [...] })",
    'cache-memcached-fast', ['utf8=0', 'compress_threshold=-1'], \@values,
    Cache::Memcached::Fast->new({ servers => [$address] }));
run_case(\@out, 'cache-memcached-fast-utf8',
    "$versions{cache_memcached_fast}; new({ servers => [...], utf8 => 1 })",
    'cache-memcached-fast', ['utf8=1', 'compress_threshold=-1'], \@values,
    Cache::Memcached::Fast->new({ servers => [$address], utf8 => 1 }));
run_case(\@out, 'cache-memcached-fast-compress1000',
    "$versions{cache_memcached_fast}; new({ servers => [...], compress_threshold => 1000 })",
    'cache-memcached-fast', ['utf8=0', 'compress_threshold=1000', 'compress_ratio=0.8'], \@values,
    Cache::Memcached::Fast->new({ servers => [$address], compress_threshold => 1000 }));
write_draft("$draft_dir/cache_memcached_fast.values", \@out);
