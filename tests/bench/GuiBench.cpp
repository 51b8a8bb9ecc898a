// bench_gui: does the lab keep up while it trains? Trains the same preset from the CLI (a child process) and from
// the GUI with every chart live, alternating, and prints:
//   - GUI event-loop latency while training: a probe posted every 10 ms records how long it waits (p50, p99, max);
//   - training throughput (samples/s over the steps after warm-up) of the GUI run over the CLI run.
// Targets (issue #4): p99 < 50 ms, throughput ratio >= 0.95. Run it under xvfb-run for a real X11 window:
//   xvfb-run -a -s "-screen 0 1920x1200x24" build/tests/bench/bench_gui [--steps N] [--rounds R]
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/charts/PlotWidget.h"
#include "engine/runs/store/RunStore.h"
#include "tests/bench/BenchArgs.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <sys/resource.h>
#include <cstdio>
#include <fstream>

namespace {

const char* kPreset = PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-4stage.json";
constexpr int kWarmupSteps = 20;

// Samples per second between the end of the warm-up step and the last step, from the run's stored timings.
double throughput(const ps::RunStore& store, int64_t run, int64_t batch) {
  const auto points = store.metrics(run, "train/loss");
  if (points.size() <= size_t(kWarmupSteps) + 1) return 0;
  const auto& a = points[kWarmupSteps - 1];
  const auto& b = points.back();
  return double(b.step - a.step) * double(batch) / (b.wall_s - a.wall_s);
}

double threadCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  int steps = 300, rounds = 2;
  bool hidden = false;
  CLI::App args{"The lab's GUI against the CLI on the same preset: event-loop latency, GUI CPU share, throughput"};
  ps::bench::addCount(args, "--steps", steps, "steps per run");
  ps::bench::addCount(args, "--rounds", rounds, "rounds, alternating CLI and GUI");
  args.add_flag("--hidden", hidden, "no window, to separate painting from telemetry handling");
  ps::bench::parse(args, argc, argv);
  QTemporaryDir dir;
  nlohmann::json preset = nlohmann::json::parse(std::ifstream(kPreset));
  preset["train"]["epochs"] = 0;
  preset["train"]["max_steps"] = steps;
  const int64_t batch = preset["train"]["batch_size"];
  const QString presetPath = dir.filePath("bench.json");
  std::ofstream(presetPath.toStdString()) << preset.dump(2);
  const QString storePath = dir.filePath("runs.sqlite");

  ps::ui::MainWindowOptions options;
  options.storePath = storePath;
  options.presetPath = presetPath;
  options.userPresetDir = dir.filePath("presets");
  options.restoreLayout = false;
  ps::ui::MainWindow window(options);
  window.resize(1600, 1000);
  if (!hidden) window.show();

  std::printf("bench_gui: %s, %d steps per run, %d rounds, platform %s\n", kPreset, steps, rounds,
              qPrintable(QGuiApplication::platformName()));
  std::vector<double> cli, gui, latencies;
  double guiCpu = 0, guiWall = 0;  // the GUI thread's CPU time while the GUI trained
  long long frames = 0, paints = 0;  // live redraws and chart paints while the GUI trained
  for (int round = 0; round < rounds; ++round) {
    // The CLI, as a user runs it (piped, so it prints plain lines).
    QProcess child;
    child.start(QStringLiteral(PIPESQUEEZE_CLI), {"train", "--preset", presetPath, "--store", storePath, "--json"});
    if (!child.waitForFinished(600000) || child.exitCode() != 0) {
      std::fprintf(stderr, "bench_gui: the CLI run failed: %s\n", child.readAllStandardError().constData());
      return 1;
    }
    const auto summary = nlohmann::json::parse(child.readAllStandardOutput().trimmed().split('\n').last().toStdString());
    ps::RunStore store(storePath.toStdString());
    cli.push_back(throughput(store, summary["run_id"], batch));

    // The GUI, every chart live, with the latency probe.
    std::vector<double> roundLatency;
    QTimer probe;
    QElapsedTimer clock;
    clock.start();
    probe.setInterval(10);
    QObject::connect(&probe, &QTimer::timeout, [&] {
      const qint64 posted = clock.nsecsElapsed();
      QMetaObject::invokeMethod(
          &window, [&, posted] { roundLatency.push_back(double(clock.nsecsElapsed() - posted) * 1e-6); },
          Qt::QueuedConnection);
    });
    QEventLoop loop;
    QObject::connect(window.bridge(), &ps::ui::SessionBridge::runEnded, &loop, &QEventLoop::quit);
    const QString error = window.startRun();
    if (!error.isEmpty()) {
      std::fprintf(stderr, "bench_gui: %s\n", qPrintable(error));
      return 1;
    }
    probe.start();
    const long long frames0 = window.live()->frameCount();
    const long long paints0 = ps::ui::PlotWidget::paintCountTotal();
    const double cpu0 = threadCpuSeconds();
    QElapsedTimer wall;
    wall.start();
    loop.exec();
    probe.stop();
    guiCpu += threadCpuSeconds() - cpu0;
    const double roundWall = double(wall.nsecsElapsed()) * 1e-9;
    guiWall += roundWall;
    frames += window.live()->frameCount() - frames0;
    paints += ps::ui::PlotWidget::paintCountTotal() - paints0;
    gui.push_back(throughput(*window.store(), window.bridge()->runId(), batch));
    latencies.insert(latencies.end(), roundLatency.begin(), roundLatency.end());
    std::printf("round %d: CLI %.1f samples/s, GUI %.1f samples/s, latency p99 %.2f ms over %zu probes, "
                "live charts redrawn every %d ms at the end\n",
                round + 1, cli.back(), gui.back(), percentile(roundLatency, 0.99), roundLatency.size(),
                window.live()->redrawIntervalMs());
  }
  const double bestCli = *std::max_element(cli.begin(), cli.end());
  const double bestGui = *std::max_element(gui.begin(), gui.end());
  std::printf("\nGUI event-loop latency while training: p50 %.2f ms, p99 %.2f ms, max %.2f ms (target p99 < 50 ms)\n",
              percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1.0));
  std::printf("chart paints: %lld, %.2f ms each on average\n", ps::ui::PlotWidget::paintCountTotal(),
              1e3 * ps::ui::PlotWidget::paintSecondsTotal() / double(std::max(1LL, ps::ui::PlotWidget::paintCountTotal())));
  std::printf("live redraw rate while training: %.1f Hz (%lld frames, %lld chart paints, over %.1f s)\n",
              double(frames) / std::max(guiWall, 1e-9), frames, paints, guiWall);
  std::printf("GUI thread CPU while training: %.2f s over %.1f s (%.1f%% of one core)\n", guiCpu, guiWall,
              100.0 * guiCpu / guiWall);
  std::vector<double> paired;  // each round's GUI / CLI: the machine's drift between rounds cancels out
  for (size_t i = 0; i < gui.size(); ++i) paired.push_back(gui[i] / cli[i]);
  std::printf("throughput, best of %d: CLI %.1f samples/s, GUI %.1f samples/s, ratio %.3f; median of the paired "
              "per-round ratios %.3f (target >= 0.95)\n",
              rounds, bestCli, bestGui, bestGui / bestCli, percentile(paired, 0.5));
  return 0;
}
