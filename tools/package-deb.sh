#!/usr/bin/env bash
# Builds the Debian packages of a release: pipesqueeze-cli (engine, CLI, presets, suites, manual page, completion;
# no Qt of its own beyond what report charts draw with) and pipesqueeze (the desktop app). Prefix /usr, Release, no
# source-tree presets (the installed lab reads only installed and user folders), and no CUDA: Debian's LibTorch is
# CPU-only, and the CUDA toolkit is not a Debian package that Depends could name.
#   tools/package-deb.sh [BUILD_DIR]     (default build/deb; the .deb files land there)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/deb}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DPIPESQUEEZE_SOURCE_PRESETS=OFF -DPIPESQUEEZE_BUILD_TESTS=OFF -DPIPESQUEEZE_CUDA=OFF
cmake --build "$dir"
(cd "$dir" && cpack -G DEB)
ls -l "$dir"/*.deb
echo "install with: sudo apt install ./$dir/pipesqueeze-cli_*.deb ./$dir/pipesqueeze_*.deb"
