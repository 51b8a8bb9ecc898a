#!/usr/bin/env bash
# Builds the engine, the CLI and the tests without the GUI against another LibTorch (a CUDA build from Python's
# torch, say) on a machine without Debian's packages, and runs the GPU checks.
#
#   tools/gpu-build.sh prepare   on a Debian machine: unpacks the small dependencies (nlohmann-json, CLI11, SQLite,
#                                zlib, GoogleTest, Gloo's headers) and the Fashion-MNIST data into .devdeps/ (ignored)
#   tools/gpu-build.sh check     on the GPU machine, with .devdeps/ copied beside the sources: configures against
#                                python3's torch (torch.utils.cmake_prefix_path), builds, runs the CUDA kernel and NCCL
#                                tests, bench_cuda_kernels and a pipeline.device=cuda training run; logs to $OUT or .
#
# This path has been prepared but has not run on a GPU machine yet: treat its first run as the test of the script.
set -uo pipefail
cd "$(dirname "$0")/.."
deps=$PWD/.devdeps
case "${1:-}" in
  prepare)
    set -e
    mkdir -p "$deps/debs" "$deps/root"
    (cd "$deps/debs" && apt-get download nlohmann-json3-dev libcli11-dev libsqlite3-dev libsqlite3-0 zlib1g-dev zlib1g \
       libgtest-dev libgloo-dev dataset-fashion-mnist)
    for f in "$deps"/debs/*.deb; do dpkg -x "$f" "$deps/root"; done
    cp "$deps"/root/lib/x86_64-linux-gnu/libz.so.1.* "$deps/root/usr/lib/x86_64-linux-gnu/"
    rm -rf "$deps/debs" "$deps/root/usr/share/doc"
    du -sh "$deps"
    ;;
  check)
    out=${OUT:-.}
    exec > >(tee "$out/gpu-check.log") 2>&1
    root=$deps/root
    export PATH=/usr/local/cuda/bin:$PATH
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    prefix=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)")
    nccl=()
    if [[ ! -f /usr/local/cuda/include/nccl.h ]]; then  # NCCL from the pip wheel torch uses
      dir=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
      lib=$(ls "$dir"/lib/libnccl.so* 2>/dev/null | head -1)
      [[ -n $lib ]] && nccl=(-DPS_NCCL_LIBRARY="$lib" -DPS_NCCL_INCLUDE="$dir/include")
    fi
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIPESQUEEZE_BUILD_GUI=OFF \
      -DCMAKE_PREFIX_PATH="$prefix;$root/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DZLIB_LIBRARY="$(ls "$root"/usr/lib/x86_64-linux-gnu/libz.so.1.* | head -1)" -DZLIB_INCLUDE_DIR="$root/usr/include" \
      -DSQLite3_INCLUDE_DIR="$root/usr/include" -DSQLite3_LIBRARY="$root/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" \
      -DCMAKE_CXX_FLAGS="-idirafter $root/usr/include" "${nccl[@]}" || exit 1
    export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    ninja -C build-gpu -k 0 test_cuda_kernels test_nccl bench_cuda_kernels
    build-gpu/tests/test_cuda_kernels
    build-gpu/tests/test_nccl
    build-gpu/tests/bench/bench_cuda_kernels --sizes 1,16,64
    ninja -C build-gpu -k 0 pipesqueeze-cli test_engine
    export PIPESQUEEZE_FASHION_MNIST=$root/usr/share/datasets/fashion-mnist PIPESQUEEZE_STORE=/tmp/gpu-runs.sqlite
    build-gpu/app/pipesqueeze-cli train --preset fashion-mnist-topk10 --set pipeline.device=cuda --set train.epochs=1 --json
    ;;
  *) echo "usage: tools/gpu-build.sh prepare|check" >&2; exit 2 ;;
esac
