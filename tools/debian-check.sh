#!/usr/bin/env bash
# Checks the project on another Debian release: makes a fresh Debian root with debootstrap on this machine (13
# "trixie" by default: LibTorch 2.6, Qt 6.8), copies the committed tree into it and runs the README's test command
# there (./setup.sh test, then ./setup.sh check: it installs the packages and the data itself, builds, runs the
# functional suite, then the sanitizers and fuzzers), timing each part. Needs root and the Debian mirror; the root is kept between runs (a second run only refreshes the tree).
#
#   sudo tools/debian-check.sh [all|prepare|test|shell|clean] [--suite trixie] [--root DIR] [--mirror URL] [--quick]
#     prepare  debootstrap the root (minbase, plus what setup.sh itself needs: sudo-free root, ca-certificates)
#     test     copy HEAD (git archive) into the root and run .ci/run there; the log goes to ROOT.log
#     all      prepare when the root is missing, then test (the default)
#     shell    a shell in the root, with /proc, /sys and /dev mounted
#     clean    unmount and remove the root
#   --quick    ./setup.sh test alone: the functional suite without the fuzz targets and sanitizer runs
set -euo pipefail
cd "$(dirname "$0")/.."
action=all suite=trixie mirror=http://deb.debian.org/debian root= command='.ci/run'
while (($#)); do
  case "$1" in
    all | prepare | test | shell | clean) action=$1 ;;
    --suite) suite=${2:?--suite needs a Debian release name}; shift ;;
    --root) root=${2:?--root needs a folder}; shift ;;
    --mirror) mirror=${2:?--mirror needs a URL}; shift ;;
    --quick) command='./setup.sh test' ;;
    *) echo "debian-check: unknown argument '$1' (usage: see the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
root=$(realpath -m "${root:-$PWD/.chroot/$suite}")
[[ $(id -u) -eq 0 ]] || { echo "debian-check: debootstrap and chroot need root; run it with sudo" >&2; exit 1; }

mounted=()
unmount() {
  # Everything mounted under the root, deepest first: ours, and what ran inside left (ip netns mounts run/netns).
  local m
  for m in $(awk -v r="$root" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  mounted=()
}
trap unmount EXIT
trap 'exit 130' INT TERM
mountAll() {
  local m
  # The root bound onto itself is a mount point, as / is on a machine: `ip netns` (the namespace tests) remounts it.
  mount --bind "$root" "$root" && mounted+=("$root")
  for m in proc sys dev dev/pts; do
    mkdir -p "$root/$m"
    case $m in
      proc) mount -t proc proc "$root/proc" ;;
      sys) mount -t sysfs sys "$root/sys" ;;
      *) mount --bind "/$m" "$root/$m" ;;
    esac
    mounted+=("$root/$m")
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # The machine's own trust additions (a proxy's CA, say) go into the root too: npm fetches the corpus over TLS.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
  fi
}

prepare() {
  if [[ -x $root/bin/bash && -f $root/.debian-check-ready ]]; then
    echo "debian-check: $root is ready ($(cat "$root/etc/debian_version"))"
    return
  fi
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
  local t=$SECONDS
  mkdir -p "$root"
  debootstrap --variant=minbase --include=ca-certificates,git "$suite" "$root" "$mirror"
  echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
  touch "$root/.debian-check-ready"
  echo "debian-check: debootstrap of $suite took $((SECONDS - t)) s"
}

runTest() {
  [[ -f $root/.debian-check-ready ]] || { echo "debian-check: no root at $root; run prepare first" >&2; exit 1; }
  rm -rf "$root/src" && mkdir -p "$root/src"
  git archive HEAD | tar -x -C "$root/src"
  mountAll
  local t=$SECONDS rc=0
  echo "debian-check: $command in Debian $(cat "$root/etc/debian_version") ($suite), log in $root.log"
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt bash -c "cd /src && $command" \
    >"$root.log" 2>&1 || rc=$?
  { grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout|error:|Unable to locate|ERR" "$root.log" || true; } |
    tail -40
  echo "debian-check: '$command' exited $rc after $((SECONDS - t)) s"
  return $rc
}

case $action in
  prepare) prepare ;;
  test) runTest ;;
  all) prepare && runTest ;;
  shell) mountAll && chroot "$root" /bin/bash -l ;;
  clean) unmount && rm -rf "$root" "$root.log" && echo "debian-check: removed $root" ;;
esac
