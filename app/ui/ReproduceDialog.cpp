#include "app/ui/ReproduceDialog.h"

#include "app/report/ReportCharts.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/SuiteRunner.h"
#include "engine/suites/SuiteResults.h"

#include <QCheckBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QEventLoop>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <cmath>

namespace ps::ui {
namespace {

QString html(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

QString describe(const Suite& s) {
  QString t = QStringLiteral("<h3>%1</h3><blockquote><i>%2</i><br>— %3</blockquote><p><b>Scale:</b> %4</p>")
                  .arg(html(s.title), html(s.claim), html(s.citation), html(s.scale));
  t += QObject::tr("<p><b>Variants</b> (%1, each for every seed):</p><ul>").arg(s.variants.size());
  for (const auto& v : s.variants) t += QStringLiteral("<li>%1</li>").arg(html(v.label));
  t += QObject::tr("</ul><p><b>Rules:</b></p><ul>");
  for (const auto& r : s.rules) t += QStringLiteral("<li>%1</li>").arg(html(r.text));
  t += QStringLiteral("</ul>");
  if (!s.notes.empty()) t += QStringLiteral("<p>%1</p>").arg(html(s.notes));
  return t;
}

}  // namespace

ReproduceDialog::ReproduceDialog(std::shared_ptr<RunStore> store, QString reportRoot, bool openReports, QWidget* parent)
    : QDialog(parent), store_(std::move(store)), reportRoot_(std::move(reportRoot)), openReports_(openReports) {
  setWindowTitle(tr("Reproduce a Claim"));
  resize(980, 620);
  openReport_ = [](const QUrl& url) { return QDesktopServices::openUrl(url); };
  list_ = new QListWidget;
  list_->setWordWrap(true);  // full titles, wrapped, each with its suite's id below
  list_->setTextElideMode(Qt::ElideNone);
  list_->setResizeMode(QListView::Adjust);
  list_->setSpacing(2);
  claim_ = new QTextBrowser;
  claim_->setOpenExternalLinks(true);
  verdicts_ = new QTableWidget(0, 6);
  verdicts_->setHorizontalHeaderLabels(
      {tr("Rule"), tr("Verdict"), tr("Mean margin [95% CI]"), tr("Seeds"), tr("p (Holm)"), tr("Why")});
  verdicts_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  verdicts_->setWordWrap(true);
  verdicts_->verticalHeader()->setVisible(false);
  verdicts_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  verdicts_->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
  pages_ = new QTabWidget;
  pages_->addTab(claim_, tr("Claim"));
  pages_->addTab(verdicts_, tr("Verdicts"));
  pages_->setTabToolTip(1, tr("The verdicts of the last report written for this suite"));
  for (const auto& file : suiteFiles()) {
    try {
      const Suite s = Suite::load(file);
      auto* item = new QListWidgetItem(QString::fromStdString(s.title) + "\n" + QString::fromStdString(s.name), list_);
      item->setData(Qt::UserRole, QString::fromStdString(file));
      item->setToolTip(QString::fromStdString(s.claim).toHtmlEscaped());
    } catch (const std::exception& e) {
      auto* item = new QListWidgetItem(tr("%1 (cannot be read)").arg(QString::fromStdString(file)), list_);
      item->setData(Qt::UserRole + 1, QString::fromStdString(e.what()));
    }
  }
  auto* split = new QSplitter;
  split->addWidget(list_);
  split->addWidget(pages_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  split->setSizes({320, 640});

  seeds_ = new QSpinBox;
  seeds_->setRange(1, 20);
  seeds_->setToolTip(tr("Runs per variant, each with its own seed; a verdict needs at least two"));
  quick_ = new QCheckBox(tr("Quick scale (a first look in minutes, not the paper's scale)"));
  gpu_ = new QCheckBox(tr("GPU scale (the claim on GPU-sized models; they run on a GPU where there is one)"));
  gpu_->setToolTip(tr("Only suites with GPU settings offer it"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);  // reasons and errors are text, never markup
  run_ = new QPushButton(tr("&Run"));
  cancel_ = new QPushButton(tr("&Cancel"));
  report_ = new QPushButton(tr("Write &Report"));
  report_->setToolTip(tr("Write and open the report from the runs the store holds (finished runs are reused)"));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addButton(run_, QDialogButtonBox::ActionRole);
  buttons->addButton(cancel_, QDialogButtonBox::ActionRole);
  buttons->addButton(report_, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(run_, &QPushButton::clicked, this, [this] {
    const QString error = start();
    if (!error.isEmpty()) status_->setText(error);
  });
  connect(cancel_, &QPushButton::clicked, this, &ReproduceDialog::cancel);
  connect(report_, &QPushButton::clicked, this, [this] {
    QString error;
    const QString path = writeReport(&error);
    status_->setText(path.isEmpty() ? error : afterReport(path));
  });
  connect(list_, &QListWidget::currentRowChanged, this, [this] { showSelected(); });
  connect(seeds_, &QSpinBox::valueChanged, this, [this] { showPlan(); });
  connect(quick_, &QCheckBox::toggled, this, [this] { showPlan(); });
  connect(gpu_, &QCheckBox::toggled, this, [this] { showPlan(); });

  auto* options = new QFormLayout;
  options->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
  options->addRow(tr("Seeds:"), seeds_);
  options->addRow(QString(), quick_);
  options->addRow(QString(), gpu_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addLayout(options);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons);
  if (list_->count() > 0) list_->setCurrentRow(0);
  updateButtons();
}

ReproduceDialog::~ReproduceDialog() {
  if (runner_) runner_->cancel();
  if (worker_.joinable()) worker_.join();
}

void ReproduceDialog::showSelected() {
  const QListWidgetItem* item = list_->currentItem();
  if (!item) return;
  if (item->data(Qt::UserRole + 1).isValid()) {
    claim_->setPlainText(item->data(Qt::UserRole + 1).toString());
    return;
  }
  try {
    const Suite s = Suite::load(item->data(Qt::UserRole).toString().toStdString());
    claim_->setHtml(describe(s));
    seeds_->setValue(int(s.seeds.size()));
  } catch (const std::exception& e) {
    claim_->setPlainText(QString::fromStdString(e.what()));
  }
  verdicts_->setRowCount(0);  // another suite's verdicts are not this one's
  pages_->setCurrentWidget(claim_);
  showPlan();
  updateButtons();
}

void ReproduceDialog::showPlan() {
  const QListWidgetItem* item = list_->currentItem();
  if (running() || !item || item->data(Qt::UserRole + 1).isValid()) return;
  try {
    const Suite s = Suite::load(item->data(Qt::UserRole).toString().toStdString());
    const int seeds = seeds_->value(), runs = int(s.variants.size()) * seeds;
    gpuOffered_ = !s.gpu.empty();
    if (!gpuOffered_) gpu_->setChecked(false);
    updateButtons();
    status_->setText(
        tr("%1: %2 variants × %3 seed(s) = %4 runs at %5 scale; runs already in the store are reused.")
            .arg(QString::fromStdString(s.name))
            .arg(s.variants.size())
            .arg(seeds)
            .arg(runs)
            .arg((gpu_->isChecked() ? tr("GPU, ") : QString()) + (quick_->isChecked() ? tr("quick") : tr("full"))));
  } catch (const std::exception& e) {
    status_->setText(QString::fromStdString(e.what()));
  }
}

QString ReproduceDialog::statusText() const {
  return status_->text();
}

void ReproduceDialog::showVerdicts(const Suite& suite, const std::vector<Verdict>& verdicts) {
  verdicts_->setRowCount(0);
  const auto number = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 3) : QStringLiteral("–"); };
  for (size_t i = 0; i < verdicts.size() && i < suite.rules.size(); ++i) {
    const Verdict& v = verdicts[i];
    const int row = verdicts_->rowCount();
    verdicts_->insertRow(row);
    auto cell = [&](int column, const QString& text) {
      auto* item = new QTableWidgetItem(text);
      item->setToolTip(text);
      verdicts_->setItem(row, column, item);
      return item;
    };
    cell(0, QString::fromStdString(suite.rules[i].text));
    QTableWidgetItem* kind = cell(1, QString::fromLatin1(verdictName(v.kind)));
    kind->setForeground(v.kind == VerdictKind::Holds   ? QColor(0x1a, 0x7f, 0x37)
                        : v.kind == VerdictKind::Fails ? QColor(0xb3, 0x26, 0x1e)
                                                       : palette().color(QPalette::PlaceholderText));
    QFont bold = kind->font();
    bold.setBold(true);
    kind->setFont(bold);
    const bool ci = std::isfinite(v.ciLow) && std::isfinite(v.ciHigh);
    cell(2, number(v.margin.count ? v.margin.mean : NAN) +
                (ci ? QStringLiteral(" [%1, %2]").arg(number(v.ciLow), number(v.ciHigh)) : QString()));
    cell(3, QString::number(v.seeds.size()));
    cell(4, number(v.p) + (std::isfinite(v.holmP) ? QStringLiteral(" (%1)").arg(number(v.holmP)) : QString()));
    cell(5, QString::fromStdString(v.why));
  }
  verdicts_->resizeColumnsToContents();
  verdicts_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  verdicts_->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
  verdicts_->resizeRowsToContents();
  pages_->setCurrentWidget(verdicts_);
}

QString ReproduceDialog::afterReport(const QString& path) {
  if (openReports_ && !openReport_(QUrl::fromLocalFile(path)))
    return tr("Report written: %1. No web browser could be started to show it; its verdicts are in the Verdicts tab, "
              "and report.md beside it reads as plain text.")
        .arg(path);
  return tr("Report written: %1").arg(path);
}

void ReproduceDialog::updateButtons() {
  const bool busy = running();
  const QListWidgetItem* item = list_->currentItem();
  const bool valid = item && !item->data(Qt::UserRole + 1).isValid();
  run_->setEnabled(!busy && valid);
  report_->setEnabled(!busy && valid);
  cancel_->setEnabled(busy);
  list_->setEnabled(!busy);
  seeds_->setEnabled(!busy);
  quick_->setEnabled(!busy);
  gpu_->setEnabled(!busy && valid && gpuOffered_);
}

SuiteScale ReproduceDialog::scale() const {
  return {quick_->isChecked(), gpu_->isChecked()};
}

QString ReproduceDialog::start() {
  if (running()) return tr("A suite is running; cancel it first.");
  if (startCheck_)
    if (const QString why = startCheck_(); !why.isEmpty()) return why;
  const QListWidgetItem* item = list_->currentItem();
  if (!item || item->data(Qt::UserRole + 1).isValid()) return tr("Pick a suite that can be read.");
  Suite suite;
  try {
    suite = Suite::load(item->data(Qt::UserRole).toString().toStdString());
    planSuite(suite, seeds_->value(), scale());  // every configuration checked before anything runs
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  // Sessions write from the worker thread: it gets its own connection to the store.
  runner_ = std::make_unique<SuiteRunner>(std::make_shared<RunStore>(store_->path()));
  progress_->setRange(0, int(suite.variants.size() * size_t(seeds_->value())));
  progress_->setValue(0);
  status_->setText(tr("Starting %1…").arg(QString::fromStdString(suite.name)));
  const int seeds = seeds_->value();
  const SuiteScale scale = this->scale();
  worker_ = std::thread([this, suite, seeds, scale] {
    QString status = QStringLiteral("finished");
    try {
      const auto outcome = runner_->run(suite, seeds, scale, [this](const SuiteRunEvent& e) {
        QMetaObject::invokeMethod(
            this, [this, e] { onEvent(e); }, Qt::QueuedConnection);
      });
      if (outcome.cancelled)
        status = QStringLiteral("cancelled");
      else if (outcome.unsuccessful)
        status = tr("finished, %1 runs failed or stopped").arg(outcome.unsuccessful);
    } catch (const std::exception& e) {
      status = QStringLiteral("failed: ") + QString::fromStdString(e.what());
    } catch (...) {
      status = QStringLiteral("failed: an unexpected error");
    }
    QMetaObject::invokeMethod(
        this, [this, status] { onDone(status); }, Qt::QueuedConnection);
  });
  updateButtons();
  return {};
}

void ReproduceDialog::cancel() {
  if (!runner_ || !running()) return;
  runner_->cancel();
  status_->setText(tr("Stopping after the current step; finished runs are kept and a later run resumes."));
}

void ReproduceDialog::cancelAndWait() {
  if (!running()) return;
  cancel();
  QEventLoop loop;
  connect(this, &ReproduceDialog::suiteFinished, &loop, &QEventLoop::quit);
  if (running()) loop.exec();
}

void ReproduceDialog::onEvent(const SuiteRunEvent& e) {
  const QString who =
      e.variant.empty() ? tr("prepare step") : tr("%1, seed %2").arg(QString::fromStdString(e.variant)).arg(e.seed);
  switch (e.kind) {
    case SuiteRunEvent::Kind::Prepare:
      status_->setText(tr("Preparing: %1…").arg(QString::fromStdString(e.reason)));
      break;
    case SuiteRunEvent::Kind::Start:
      status_->setText(tr("Run %1 of %2: %3…").arg(e.index).arg(e.total).arg(who));
      break;
    case SuiteRunEvent::Kind::Skip:
      progress_->setValue(e.index);
      status_->setText(
          tr("Run %1 of %2: %3 is already in the store (run %4)").arg(e.index).arg(e.total).arg(who).arg(e.run_id));
      break;
    case SuiteRunEvent::Kind::Finish:
      if (e.index > 0) progress_->setValue(e.index);
      status_->setText(tr("Run %1 of %2: %3 %4 (run %5)")
                           .arg(e.index)
                           .arg(e.total)
                           .arg(who, QString::fromStdString(e.status))
                           .arg(e.run_id));
      Q_EMIT runFinished(e.run_id);
      break;
  }
}

void ReproduceDialog::onDone(const QString& status) {
  if (worker_.joinable()) worker_.join();
  runner_.reset();
  updateButtons();
  if (status.startsWith(QStringLiteral("finished"))) {
    QString error;
    const QString path = writeReport(&error);
    status_->setText(path.isEmpty() ? error : tr("Suite %1. %2").arg(status, afterReport(path)));
  } else {
    status_->setText(tr("Suite %1.").arg(status));
  }
  Q_EMIT suiteFinished(status);
}

QString ReproduceDialog::writeReport(QString* error) {
  const QListWidgetItem* item = list_->currentItem();
  try {
    if (!item) throw std::runtime_error("no suite selected");
    const Suite suite = Suite::load(item->data(Qt::UserRole).toString().toStdString());
    const SuiteResults results = collectSuiteResults(*store_, suite, seeds_->value(), scale());
    const QString dir = QDir(reportRoot_).filePath(QString::fromStdString(suite.name + scale().suffix()));
    const QString path = QString::fromStdString(report::writeReport(results, dir.toStdString()));
    showVerdicts(suite, results.verdicts());
    Q_EMIT reportWritten(path);
    return path;
  } catch (const std::exception& e) {
    if (error) *error = tr("Cannot write the report: %1").arg(QString::fromStdString(e.what()));
    return {};
  }
}

void ReproduceDialog::reject() {
  if (running()) {
    cancel();
    return;  // closes once the worker is done and the user closes again
  }
  QDialog::reject();
}

}  // namespace ps::ui
