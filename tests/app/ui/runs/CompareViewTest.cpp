// CompareView: charts for every run, settings diff, x axes, smoothing, markers, linked zoom and exports.
#include "app/ui/charts/ChartLegend.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/CompareControls.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/SettingsDiffModel.h"
#include "app/ui/runs/TargetTable.h"

#include "RunsTestStore.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDoubleSpinBox>
#include <QImage>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabBar>
#include <QTableWidget>
#include <QToolButton>
#include <QtTest>

#include <cmath>
#include <optional>

using ps::ui::CompareView;
using ps::ui::PlotWidget;
using ps::ui::XAxis;

class CompareViewTest : public QObject {
  Q_OBJECT

  ps::test::TestStore* t_ = nullptr;
  qint64 a_ = 0, b_ = 0;
  static QString sid(qint64 id) { return QStringLiteral("run%1").arg(id); }

 private Q_SLOTS:
  void init() {
    t_ = new ps::test::TestStore;
    a_ = t_->addRun("k 10%", ps::test::runConfig(0.1), 20);
    b_ = t_->addRun("k 5%", ps::test::runConfig(0.05), 20, false,
                    {ps::test::settingEvent(10, "compression.forward.k", 0.05, 0.02)});
  }
  void cleanup() {
    delete t_;
    t_ = nullptr;
  }

  void everyChartHasBothRuns() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    QCOMPARE(view.runIds(), (QList<qint64>{a_, b_}));
    QVERIFY(view.plots().size() >= 8);
    QVERIFY(view.plot(QStringLiteral("Accuracy")));
    QVERIFY(!view.plot(QStringLiteral("Perplexity")));
    for (PlotWidget* p : view.plots())
      for (qint64 id : {a_, b_}) {
        QVERIFY2(p->hasSeries(sid(id)), qPrintable(p->title()));
        QVERIFY2(p->pointCount(sid(id)) > 0, qPrintable(p->title()));
      }
    // The compression error is the mean over the links: (0.1 + 0.3) / 2 forward, (0.2 + 0.4) / 2 backward.
    view.setSmoothing(0);
    QCOMPARE(view.plot(QStringLiteral("Compression error, forward"))->points(sid(a_)).front().y(), 0.2);
    QCOMPARE(view.plot(QStringLiteral("Compression error, backward"))->points(sid(a_)).front().y(), 0.3);
    // Step times are drawn in milliseconds (recorded in seconds: 0.1 s a step).
    PlotWidget* stepTime = view.plot(QStringLiteral("Step time"));
    QVERIFY(stepTime);
    QCOMPARE(stepTime->points(sid(a_)).front().y(), 100.0);
    // Pareto: one point at (total wire bytes, final eval loss).
    const auto pareto = view.plot(QStringLiteral("Eval loss vs wire bytes"))->points(sid(b_));
    QCOMPARE(pareto.size(), size_t(1));
    QCOMPARE(pareto.front(), QPointF(20000, 1.0 / 20));
    // Each run's final point is a dot (not a bar from zero), and names the run once: its dashed path is not listed.
    PlotWidget* paretoPlot = view.plot(QStringLiteral("Eval loss vs wire bytes"));
    const auto items = paretoPlot->legendItems();
    QCOMPARE(items.size(), size_t(2));
    for (const auto& item : items) QVERIFY(item.style.scatter && !item.style.bars && !item.style.dashed);
  }

  void diffShowsTheDifferingKey() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    QAbstractItemModelTester tester(view.diffModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(view.diffRowCount() >= 1);
    auto* diff = view.diffModel();
    const int row = diff->rowOfKey(QStringLiteral("compression.forward.k"));
    QVERIFY(row >= 0);
    QCOMPARE(diff->index(row, 0).data().toString(), QStringLiteral("compression.forward.k"));
    QCOMPARE(diff->index(row, 1).data().toString(), QStringLiteral("10 %"));
    QCOMPARE(diff->index(row, 2).data().toString(),
             QStringLiteral("5 % → 2 % at step 10"));  // K as the table writes it
    QCOMPARE(diff->headerData(2, Qt::Horizontal).toString(), QStringLiteral("#%1 · fwd k 5 %").arg(b_));
    QCOMPARE(diff->rowOfKey(QStringLiteral("pipeline.stages")), -1);  // the same in both
    const int differing = view.diffRowCount();
    view.setShowAllSettings(true);
    QVERIFY(view.diffRowCount() > differing);
    QVERIFY(diff->rowOfKey(QStringLiteral("pipeline.stages")) >= 0);
    QVERIFY(diff->differs(QStringLiteral("compression.forward.k")));
    view.setShowAllSettings(false);
    QCOMPARE(view.diffRowCount(), differing);
  }

  // A change during the run shows in its cell; an option the direction's method does not read is "n/a", and two
  // runs that differ only in such an option do not differ.
  void theDiffShowsMidRunChangesAndHidesWhatAMethodDoesNotRead() {
    auto unusedBits = ps::test::runConfig(0.1);
    unusedBits["compression"]["forward"]["bits"] = 2;  // TopK does not read bits
    const qint64 c = t_->addRun("bits unused", unusedBits, 20);
    auto quantize = ps::test::runConfig(0.1);
    quantize["compression"]["forward"]["method"] = "quantize";
    const qint64 d = t_->addRun("quantize", quantize, 20);
    CompareView view;
    view.setRuns(t_->store, {a_, b_, c});
    auto* diff = view.diffModel();
    int row = diff->rowOfKey(QStringLiteral("compression.forward.k"));
    QVERIFY(row >= 0);
    QCOMPARE(diff->index(row, 2).data().toString(), QStringLiteral("5 % → 2 % at step 10"));
    QCOMPARE(diff->rowOfKey(QStringLiteral("compression.forward.bits")), -1);
    view.setShowAllSettings(true);
    row = diff->rowOfKey(QStringLiteral("compression.forward.bits"));
    QVERIFY(row >= 0);
    QCOMPARE(diff->index(row, 3).data().toString(), QStringLiteral("n/a"));
    view.setShowAllSettings(false);
    view.setRuns(t_->store, {a_, d});
    row = diff->rowOfKey(QStringLiteral("compression.forward.k"));
    QVERIFY(row >= 0);
    QCOMPARE(diff->index(row, 1).data().toString(), QStringLiteral("10 %"));
    QCOMPARE(diff->index(row, 2).data().toString(), QStringLiteral("n/a"));    // a quantizer has no K
    QVERIFY(diff->rowOfKey(QStringLiteral("compression.forward.bits")) >= 0);  // it has bits, TopK has none
  }

  void xAxisChangesTheXValues() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    view.setSmoothing(0);
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    QCOMPARE(loss->points(sid(a_))[2].x(), 3.0);
    view.setXAxis(XAxis::Bytes);
    QCOMPARE(view.xAxis(), XAxis::Bytes);
    QCOMPARE(loss->points(sid(a_))[2].x(), 3000.0);
    view.setXAxis(XAxis::WallTime);
    QCOMPARE(loss->points(sid(a_))[2].x(), 1.5);
    view.setXAxis(XAxis::EmulatedTime);
    QCOMPARE(loss->points(sid(a_))[2].x(), 0.75);
    // Markers follow the axis: run b's change at step 10.
    const auto& markers = loss->markers();
    QCOMPARE(markers.size(), size_t(1));
    QCOMPARE(markers.front().x, 2.5);
    QCOMPARE(markers.front().label, QStringLiteral("#%1: fwd k = 2 %").arg(b_));  // whose change, and what it was
    view.setXAxis(XAxis::Bytes);
    QCOMPARE(loss->markers().front().x, 10000.0);
  }

  void smoothingAddsTheFaintRawLine() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    view.setSmoothing(0);
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    QVERIFY(!loss->hasSeries(sid(a_) + QStringLiteral("/raw")));
    const int plain = loss->seriesCount();
    const auto raw = loss->points(sid(a_));
    view.setSmoothing(0.9);
    QCOMPARE(view.smoothing(), 0.9);
    QVERIFY(loss->hasSeries(sid(a_) + QStringLiteral("/raw")));
    QCOMPARE(loss->seriesCount(), 2 * plain);
    QCOMPARE(loss->points(sid(a_) + QStringLiteral("/raw")), raw);
    QVERIFY(loss->points(sid(a_))[5].y() > raw[5].y());  // the average of a falling curve lags above it
    view.setSmoothing(5);                                // clamped
    QCOMPARE(view.smoothing(), 0.99);
    view.setLogY(true);
    QVERIFY(loss->logY());
    // Ignoring outliers is on by default and one switch for every chart, as the bar's check box shows it.
    QVERIFY(view.ignoreOutliers() && loss->ignoreOutliers());
    QCheckBox* box = nullptr;
    for (QCheckBox* c : view.findChildren<QCheckBox*>())
      if (c->text() == QStringLiteral("Ignore outliers")) box = c;
    QVERIFY(box && box->isChecked());
    box->setChecked(false);
    QVERIFY(!view.ignoreOutliers());
    for (PlotWidget* p : view.plots()) QVERIFY2(!p->ignoreOutliers(), qPrintable(p->title()));
    view.setIgnoreOutliers(true);
    QVERIFY(box->isChecked() && loss->ignoreOutliers());
  }

  void evaluationsAreDrawnAsMeasuredWhileDenseSeriesAreSmoothed() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    view.setSmoothing(0.9);
    // Accuracy is evaluated every 5 steps: its line keeps the measured values, the last one included.
    PlotWidget* accuracy = view.plot(QStringLiteral("Accuracy"));
    QVERIFY(accuracy != nullptr);
    QVERIFY(!accuracy->hasSeries(sid(a_) + QStringLiteral("/raw")));
    const auto points = accuracy->points(sid(a_));
    QVERIFY(!points.empty());
    const auto stored = t_->store->metrics(a_, "eval/accuracy");
    QCOMPARE(points.size(), stored.size());
    QCOMPARE(points.back().y(), stored.back().value);
    // The loss has a value every step: smoothed, with the raw line behind.
    QVERIFY(view.plot(QStringLiteral("Loss"))->hasSeries(sid(a_) + QStringLiteral("/raw")));
  }

  void zoomIsLinked() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    const auto plots = view.plots();
    PlotWidget* pareto = view.plot(QStringLiteral("Eval loss vs wire bytes"));
    Q_EMIT plots[0]->xRangeChanged(4, 9);
    for (PlotWidget* p : plots) {
      if (p == plots[0]) continue;
      if (p == pareto)
        QVERIFY(!p->xRange().has_value());
      else
        QCOMPARE(p->xRange(), std::make_optional(std::make_pair(4.0, 9.0)));
    }
    // The visible-range CSV has only the zoomed steps of the line charts.
    for (PlotWidget* p : plots) p->setXRange(std::make_pair(4.0, 9.0));
    const QString csv = t_->dir.filePath(QStringLiteral("visible.csv"));
    QCOMPARE(view.exportVisibleCsv(csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.front(), QByteArray("run_id,run_name,key,step,x,value"));
    QVERIFY(lines.size() > 1);
    bool sawA = false, sawB = false;
    for (int i = 1; i < lines.size(); ++i) {
      const auto fields = lines[i].split(',');
      QCOMPARE(fields.size(), 6);
      const double x = fields[4].toDouble();
      QVERIFY2(x >= 4 && x <= 9, lines[i].constData());
      sawA |= fields[0].toLongLong() == a_;
      sawB |= fields[0].toLongLong() == b_;
    }
    QVERIFY(sawA && sawB);
    QVERIFY(lines.contains(QByteArray::number(a_) + ",k 10%,train/loss,4,4,0.5"));
    // A reset (NaN) unzooms every linked chart; so does a change of axis.
    Q_EMIT plots[1]->xRangeChanged(std::nan(""), std::nan(""));
    QVERIFY(!plots[0]->xRange().has_value());
    plots[0]->setXRange(std::make_pair(1.0, 2.0));
    view.setXAxis(XAxis::Bytes);
    QVERIFY(!plots[0]->xRange().has_value());
  }

  void exportsEveryChartAsPng() {
    CompareView view;
    view.resize(1000, 800);
    view.setRuns(t_->store, {a_, b_});
    const QString dir = t_->dir.filePath(QStringLiteral("png"));
    QCOMPARE(view.exportAllPng(dir), int(view.plots().size()));
    QVERIFY(QFile::exists(dir + QStringLiteral("/loss.png")));
    QVERIFY(QFile::exists(dir + QStringLiteral("/compression-error-forward.png")));
    for (const QFileInfo& file : QDir(dir).entryInfoList(QDir::Files)) {
      QVERIFY(file.size() > 0);
      QVERIFY(!QImage(file.filePath()).isNull());
    }
    QCOMPARE(QDir(dir).entryList(QDir::Files).size(), int(view.plots().size()));
  }

  // For papers: every chart as vectors, one SVG or PDF per chart, named as the PNGs are.
  void exportsEveryChartAsVectors() {
    CompareView view;
    view.resize(1000, 800);
    view.setRuns(t_->store, {a_, b_});
    for (const auto format : {ps::ui::ChartFormat::Svg, ps::ui::ChartFormat::Pdf}) {
      const QString suffix = ps::ui::chartSuffix(format);
      const QString dir = t_->dir.filePath(suffix);
      QCOMPARE(view.exportAll(dir, format), int(view.plots().size()));
      QVERIFY(QFile::exists(dir + QStringLiteral("/loss.") + suffix));
      const QStringList files = QDir(dir).entryList({QStringLiteral("*.") + suffix}, QDir::Files);
      QCOMPARE(files.size(), int(view.plots().size()));
      QFile loss(dir + QStringLiteral("/loss.") + suffix);
      QVERIFY(loss.open(QIODevice::ReadOnly));
      const QByteArray head = loss.read(8);
      QVERIFY2(format == ps::ui::ChartFormat::Pdf ? head.startsWith("%PDF-") : head.startsWith("<?xml"),
               head.constData());
    }
  }

  // Three seeds of one setting become a mean line over a min–max band; a run with another K stays on its own.
  void seedsGroupIntoAMeanLineWithABand() {
    std::vector<qint64> seeds;
    for (int seed : {1, 2, 3}) {
      auto config = ps::test::runConfig(0.1);
      config["train"]["seed"] = seed;
      const qint64 id = t_->store->createRun("k 10% seed " + std::to_string(seed), config.dump(), "test");
      std::vector<ps::MetricPoint> metrics;
      for (int s = 1; s <= 20; ++s) metrics.push_back({s, "train/loss", double(seed) / s, 0.5 * s, 0.25 * s});
      t_->store->append(id, metrics, {}, {});
      t_->store->finishRun(id, "finished", "", "{}");
      seeds.push_back(id);
    }
    CompareView view;
    view.setSmoothing(0);
    view.setRuns(t_->store, {seeds[0], seeds[1], seeds[2], b_});
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    QVERIFY(loss);
    QVERIFY(!view.groupSeeds());
    QVERIFY(loss->hasSeries(sid(seeds[1])));
    view.setGroupSeeds(true);
    const QString group = QStringLiteral("group%1").arg(seeds[0]);
    for (const QString& id : {group, group + QStringLiteral("/lo"), group + QStringLiteral("/hi"), sid(b_)})
      QVERIFY2(loss->hasSeries(id), qPrintable(id));
    for (qint64 id : seeds) QVERIFY(!loss->hasSeries(sid(id)));
    // The legend names the group once, and the other run; the band's edges are not listed.
    QCOMPARE(loss->legendLabels(), (QStringList{QStringLiteral("#%1 · fwd k 10 % (mean of 3 seeds)").arg(seeds[0]),
                                                QStringLiteral("#%1 · seed 1 · fwd k 5 %").arg(b_)}));
    const auto mean = loss->points(group), lo = loss->points(group + QStringLiteral("/lo")),
               hi = loss->points(group + QStringLiteral("/hi"));
    QCOMPARE(mean.size(), size_t(20));
    for (size_t i = 0; i < mean.size(); ++i) {
      const double step = double(i + 1);
      QCOMPARE(mean[i], QPointF(step, 2.0 / step));
      QCOMPARE(lo[i], QPointF(step, 1.0 / step));
      QCOMPARE(hi[i], QPointF(step, 3.0 / step));
    }
    view.setGroupSeeds(false);
    QVERIFY(loss->hasSeries(sid(seeds[2])));
    QVERIFY(!loss->hasSeries(group));
  }

  // Accuracy 0.55, 0.60, 0.65, 0.70 at steps 5..20 (0.5 s and 1000 wire bytes a step): 62% falls 40% of the way
  // from step 10 to 15.
  void timeAndBytesToTarget() {
    const auto run = ps::ui::RunSeries::load(*t_->store, a_);
    const auto reached = ps::ui::reachTarget(run, 0.62);
    QVERIFY(reached);
    QCOMPARE(reached->step, 12.0);
    QCOMPARE(reached->wall_s, 6.0);
    QCOMPARE(reached->emulated_s, 3.0);
    QCOMPARE(reached->wire_bytes, 12000.0);
    QVERIFY(!ps::ui::reachTarget(run, 0.9));

    CompareView v;
    v.setRuns(t_->store, {a_, b_});
    auto* table = v.targetTable()->table();
    v.targetTable()->setTarget(62);
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("#%1 · fwd k 10 %").arg(a_));
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("12"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("6.0 s"));
    QCOMPARE(table->item(0, 3)->text(), QStringLiteral("3.0 s"));
    QCOMPARE(table->item(0, 4)->text(), QStringLiteral("12.0 KB"));
    v.targetTable()->setTarget(90);
    QCOMPARE(table->item(1, 1)->text(), QStringLiteral("not reached"));
    v.setRunVisible(b_, false);
    QCOMPARE(table->rowCount(), 1);
  }

  // Re-timed for another network: run a's stored traces put 10 Mbit on the critical path of each 0.25 s step at
  // its recorded 100 Mbit/s, so at 50 Mbit/s a step takes 0.35 s; run b has no traces and keeps its recorded time.
  void retimesTheEmulatedAxisAndTheTargetTableForAnotherNetwork() {
    t_->addTraces(a_, 20);
    CompareView view;
    QSignalSpy messages(&view, &CompareView::statusMessage);
    view.setRuns(t_->store, {a_, b_});
    view.setSmoothing(0);
    view.setXAxis(XAxis::EmulatedTime);
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    QCOMPARE(loss->points(sid(a_))[2].x(), 0.75);
    ps::RetimeNetwork slower;
    slower.bandwidth_mbps = 50;
    slower.latency_ms = 0;
    view.setNetwork(slower);
    QVERIFY2(std::abs(loss->points(sid(a_))[2].x() - 1.05) < 1e-6,
             qPrintable(QString::number(loss->points(sid(a_))[2].x(), 'g', 17)));
    QCOMPARE(loss->points(sid(b_))[2].x(), 0.75);
    QVERIFY(!messages.isEmpty());
    QVERIFY2(messages.last().at(0).toString().contains(QStringLiteral("Runs %1 keep their recorded").arg(b_)),
             qPrintable(messages.last().at(0).toString()));
    view.targetTable()->setTarget(62);
    QCOMPARE(view.targetTable()->table()->item(0, 3)->text(), QStringLiteral("4.2 s"));
    // Unticked: the recorded times again.
    view.setNetwork({});
    QCOMPARE(loss->points(sid(a_))[2].x(), 0.75);
    QCOMPARE(view.targetTable()->table()->item(0, 3)->text(), QStringLiteral("3.0 s"));
  }

  // The framing and where a stage's messages leave re-time too, set in code or picked in the controls: run a's middle
  // stage sends 0.1 s of bytes each way, so a step takes 0.125 s with a wire per direction and 0.225 s when both
  // queue for one interface; TCP/IPv4 framing adds its headers on top.
  void retimesForTheFramingAndTheStagesInterface() {
    t_->addTracesBothWays(a_, 20);
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    view.setSmoothing(0);
    view.setXAxis(XAxis::EmulatedTime);
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    auto third = [&] { return loss->points(sid(a_))[2].x(); };  // after step 3
    ps::RetimeNetwork n;
    n.bandwidth_mbps = 100;
    n.latency_ms = 0;
    n.shared_egress = false;
    view.setNetwork(n);
    QVERIFY2(std::abs(third() - 3 * 0.125) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
    n.shared_egress = true;
    view.setNetwork(n);
    QVERIFY2(std::abs(third() - 3 * 0.225) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
    QCOMPARE(view.network().shared_egress, std::optional<bool>(true));
    QVERIFY(!view.network().tcp);
    // The user's way: the controls' two lists, framing first.
    auto* controls = view.findChild<ps::ui::NetworkControls*>();
    QVERIFY(controls);
    const auto lists = controls->findChildren<QComboBox*>();
    QCOMPARE(lists.size(), 2);
    QComboBox* framing = lists[0];
    QComboBox* egress = lists[1];
    QCOMPARE(egress->currentText(), QStringLiteral("one interface per stage"));
    QVERIFY(egress->isEnabled());
    framing->setCurrentIndex(framing->findText(QStringLiteral("TCP/IPv4 framing")));
    QCOMPARE(view.network().tcp, std::optional<bool>(true));
    QVERIFY2(third() > 3 * 0.225 * 1.04, qPrintable(QString::number(third(), 'g', 17)));
    QCOMPARE(controls->describe(), QStringLiteral("100 Mbit/s, 0 ms, TCP/IPv4 framing, one interface per stage"));
    egress->setCurrentIndex(egress->findText(QStringLiteral("egress as recorded")));
    framing->setCurrentIndex(framing->findText(QStringLiteral("framing as recorded")));
    QVERIFY(!view.network().shared_egress);
    QVERIFY(!view.network().tcp);
    QVERIFY2(std::abs(third() - 3 * 0.125) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
    // Unticked, the lists are off with the rest and the recorded times come back.
    view.setNetwork({});
    QVERIFY(!egress->isEnabled());
    QCOMPARE(third(), 0.75);
    // An egress alone: the figures it leaves unset read "as recorded" and stay unset, so it round-trips.
    ps::RetimeNetwork egressOnly;
    egressOnly.shared_egress = true;
    view.setNetwork(egressOnly);
    QVERIFY(!view.network().bandwidth_mbps);
    QVERIFY(!view.network().latency_ms);
    QVERIFY(!view.network().tcp);
    QCOMPARE(view.network().shared_egress, std::optional<bool>(true));
    QCOMPARE(controls->describe(), QStringLiteral("one interface per stage"));
    QVERIFY2(std::abs(third() - 3 * 0.225) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
    const auto figures = controls->findChildren<QDoubleSpinBox*>();
    QCOMPARE(figures.size(), 2);
    QDoubleSpinBox* bandwidth = figures[0];
    QCOMPARE(bandwidth->text(), QStringLiteral("bandwidth as recorded"));
    QCOMPARE(figures[1]->text(), QStringLiteral("latency as recorded"));
    // The user gives a bandwidth: at 10 Mbit/s each 1.25 MB message takes 1 s, one after the other through the
    // interface, then the last stage's 25 ms.
    bandwidth->setValue(10);
    QCOMPARE(view.network().bandwidth_mbps, std::optional<double>(10));
    QVERIFY2(std::abs(third() - 3 * 2.025) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
    bandwidth->setValue(bandwidth->minimum());
    QVERIFY(!view.network().bandwidth_mbps);
    QVERIFY2(std::abs(third() - 3 * 0.225) < 1e-6, qPrintable(QString::number(third(), 'g', 17)));
  }

  // Any recorded key gets a chart of its own: here one link's forward error, 0.1 at every step for both runs.
  void anyRecordedMetricGetsAChart() {
    CompareView view;
    view.setSmoothing(0);
    view.setRuns(t_->store, {a_, b_});
    const int before = view.plots().size();
    // The picker lists the recorded keys by title and finds them by any part of it.
    QComboBox* picker = view.controls()->metricPicker();
    QVERIFY(picker->isEditable());
    const QString title = QStringLiteral("Link 0 forward activations: relative error");
    const int at = picker->findText(title);
    QVERIFY2(at >= 0, "listed by its title");
    QCOMPARE(picker->itemData(at).toString(), QStringLiteral("link0/fwd/rel_error"));
    for (int i = 0; i < picker->count(); ++i) QVERIFY(!picker->itemText(i).contains('/'));
    picker->completer()->setCompletionPrefix(QStringLiteral("RELATIVE err"));
    QVERIFY(picker->completer()->completionCount() >= 1);
    for (int i = 0; i < picker->completer()->completionCount(); ++i) {
      picker->completer()->setCurrentRow(i);
      QVERIFY(picker->completer()->currentCompletion().contains(QStringLiteral("relative error")));
    }
    QVERIFY(view.controls()->removeMetricsButton()->isHidden());
    Q_EMIT picker->activated(at);
    QCOMPARE(view.plots().size(), before + 1);
    QVERIFY(!view.controls()->removeMetricsButton()->isHidden());
    QCOMPARE(picker->currentText(), QString());  // ready for the next search
    PlotWidget* chart = view.plot(title);
    QVERIFY(chart);
    for (qint64 id : {a_, b_}) {
      const auto points = chart->points(sid(id));
      QCOMPARE(points.size(), size_t(20));
      QCOMPARE(points.front().y(), 0.1);
    }
    QVERIFY2(!view.addMetricChart("link0/fwd/rel_error"), "a key gets one chart");
    QVERIFY(!view.addMetricChart("no/such/key"));
    view.reload();  // a live reload keeps the added chart
    QVERIFY(view.plot(title));
    view.removeMetricCharts();
    QCOMPARE(view.plots().size(), before);
  }

  // The bar wraps in a narrow window rather than widening it: one row when wide, more rows when narrow, and it
  // never asks for more width than its widest control.
  void theBarWrapsInANarrowWindow() {
    ps::ui::CompareControls bar;
    bar.setMetricKeys({"train/loss", "link0/fwd/rel_error"}, true);
    QVERIFY(bar.sizePolicy().hasHeightForWidth());
    const int wide = bar.heightForWidth(3000), narrow = bar.heightForWidth(600);
    QVERIFY2(narrow > wide, qPrintable(QStringLiteral("%1 at 600 px, %2 at 3000 px").arg(narrow).arg(wide)));
    QVERIFY2(bar.minimumSizeHint().width() < 420, qPrintable(QString::number(bar.minimumSizeHint().width())));
    bar.resize(600, narrow);
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    for (QWidget* w : bar.findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
      if (w->isVisible()) QVERIFY2(bar.rect().contains(w->geometry()), qPrintable(w->metaObject()->className()));
  }

  // With smoothing the raw line stays faint behind the smoothed one; the legend names each run once.
  void theLegendNamesEachRunOnce() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    QVERIFY(view.smoothing() > 0);
    PlotWidget* loss = view.plot(QStringLiteral("Loss"));
    QVERIFY(loss->hasSeries(sid(a_) + QStringLiteral("/raw")));
    QCOMPARE(loss->legendLabels(),
             (QStringList{QStringLiteral("#%1 · fwd k 10 %").arg(a_), QStringLiteral("#%1 · fwd k 5 %").arg(b_)}));
    // One legend above every chart, each run once; no chart spends its height on a legend of its own.
    auto* legend = view.findChild<ps::ui::ChartLegend*>();
    QVERIFY(legend);
    QStringList shared;
    for (const auto& item : legend->items()) shared << item.label;
    QCOMPARE(shared, loss->legendLabels());
    QCOMPARE(legend->items()[1].style.color, ps::ui::runColor(b_));
    for (PlotWidget* p : view.plots()) {
      QVERIFY2(!p->legendVisible(), qPrintable(p->title()));
      QVERIFY(p->legendBoxes().empty());
    }
    view.setRunVisible(a_, false);
    QCOMPARE(legend->items().size(), size_t(1));
  }

  // The diff and target pane folds to its tabs while the view is short, unfolds when it grows; once the user folds
  // or unfolds it, it stays so. A click on a tab unfolds it.
  void theDetailsPaneFoldsOnAShortView() {
    CompareView view;
    view.setRuns(t_->store, {a_, b_});
    view.resize(1200, 450);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(!view.detailsShown());
    auto* tabs = view.targetTable()->parentWidget()->parentWidget();  // the pane: a tab widget over a page stack
    QVERIFY(tabs->height() < 60);
    view.resize(1200, 900);
    QTRY_VERIFY(view.detailsShown());
    QTRY_VERIFY(view.targetTable()->parentWidget()->parentWidget()->height() > 100);
    auto* toggle = view.findChild<QToolButton*>(QStringLiteral("detailsToggle"));
    QVERIFY(toggle);
    toggle->click();
    QVERIFY(!view.detailsShown());
    view.resize(1200, 1000);  // the user's choice holds
    QVERIFY(!view.detailsShown());
    auto* bar = view.findChild<QTabBar*>();
    QVERIFY(bar);
    Q_EMIT bar->tabBarClicked(0);
    QVERIFY(view.detailsShown());
  }

  void hiddenRunsAndLanguageModels() {
    const auto lm = t_->addRun("lm", ps::test::runConfig(0.1, "brown_lm"), 10);
    CompareView view;
    view.setRuns(t_->store, {a_, lm});
    QVERIFY(view.plot(QStringLiteral("Perplexity")));
    QVERIFY(view.plot(QStringLiteral("Accuracy")));  // a mix shows both
    QVERIFY(view.plot(QStringLiteral("Perplexity"))->hasSeries(sid(lm)));
    view.setRunVisible(lm, false);
    for (PlotWidget* p : view.plots()) QVERIFY(!p->hasSeries(sid(lm)));
    QVERIFY(view.plot(QStringLiteral("Loss"))->hasSeries(sid(a_)));
    view.setRunVisible(lm, true);
    QVERIFY(view.plot(QStringLiteral("Loss"))->hasSeries(sid(lm)));
    // A deleted run is reported and left out.
    QSignalSpy errors(&view, &CompareView::errorOccurred);
    view.setRuns(t_->store, {a_, 9999});
    QCOMPARE(errors.count(), 1);
    QCOMPARE(view.runIds(), QList<qint64>{a_});
  }
};

QTEST_MAIN(CompareViewTest)
#include "CompareViewTest.moc"
