#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs, with apt-get, the Debian packages memshard's build, tests and
# benchmarks need, when any is missing. Extra package names may be passed as
# arguments. Safe to run again: it does nothing when everything is present.
set -euo pipefail

# zlib1g-dev and libzstd-dev: the value codecs (memshard::codecs). sasl2-bin (saslpasswd2) and
# libsasl2-modules (PLAIN, CRAM-MD5): the SASL tests.
packages=(cmake g++ make pkg-config libmemcached-dev memcached libgtest-dev libgmock-dev
  zlib1g-dev libzstd-dev libbenchmark-dev libsqlite3-dev sasl2-bin libsasl2-modules "$@")

# libssl-dev: Debian's libmemcached.pc requires libcrypto (Requires.private), which only
# libssl-dev provides, so without it `pkg-config --cflags --libs memshard` fails (the
# pkg-config package tests, and any user of memshard.pc).
packages+=(libssl-dev)

# The fleet: libcurl to talk to etcd, and etcd itself, which its tests and the benchmarks start.
packages+=(libcurl4-openssl-dev etcd-server)

# nftables and iproute2 (nft, ip, tc): the network-namespace fault tests (netns_fault_test).
packages+=(nftables iproute2)

# php-cli and php-memcached: memshard-php-session's tests run against PHP's own session handler.
packages+=(php-cli php-memcached)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "memshard: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; an old list may name versions that are gone.
"${sudo_cmd[@]}" apt-get update -q >&2
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
