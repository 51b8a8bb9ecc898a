#include "app/ui/ReproduceDialog.h"

#include "app/report/ReportCharts.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/SuiteRunner.h"
#include "engine/suites/SuiteResults.h"

#include <QCheckBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QEventLoop>
#include <QDir>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

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
  list_ = new QListWidget;
  claim_ = new QTextBrowser;
  claim_->setOpenExternalLinks(true);
  for (const auto& file : suiteFiles()) {
    try {
      const Suite s = Suite::load(file);
      auto* item = new QListWidgetItem(QString::fromStdString(s.title), list_);
      item->setData(Qt::UserRole, QString::fromStdString(file));
      item->setToolTip(QString::fromStdString(s.claim).toHtmlEscaped());
    } catch (const std::exception& e) {
      auto* item = new QListWidgetItem(tr("%1 (cannot be read)").arg(QString::fromStdString(file)), list_);
      item->setData(Qt::UserRole + 1, QString::fromStdString(e.what()));
    }
  }
  auto* split = new QSplitter;
  split->addWidget(list_);
  split->addWidget(claim_);
  split->setStretchFactor(1, 2);

  seeds_ = new QSpinBox;
  seeds_->setRange(1, 20);
  seeds_->setToolTip(tr("Runs per variant, each with its own seed; a verdict needs at least two"));
  quick_ = new QCheckBox(tr("Quick scale (a first look in minutes, not the paper's scale)"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_ = new QLabel(tr("Pick a suite."));
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
    status_->setText(path.isEmpty() ? error : tr("Report written: %1").arg(path));
  });
  connect(list_, &QListWidget::currentRowChanged, this, [this] { showSelected(); });

  auto* options = new QFormLayout;
  options->addRow(tr("Seeds:"), seeds_);
  options->addRow(QString(), quick_);
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
  updateButtons();
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
    planSuite(suite, seeds_->value(), quick_->isChecked());  // every configuration checked before anything runs
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  // Sessions write from the worker thread: it gets its own connection to the store.
  runner_ = std::make_unique<SuiteRunner>(std::make_shared<RunStore>(store_->path()));
  progress_->setRange(0, int(suite.variants.size() * size_t(seeds_->value())));
  progress_->setValue(0);
  status_->setText(tr("Starting %1…").arg(QString::fromStdString(suite.name)));
  const int seeds = seeds_->value();
  const bool quick = quick_->isChecked();
  worker_ = std::thread([this, suite, seeds, quick] {
    QString status = QStringLiteral("finished");
    try {
      const auto outcome = runner_->run(suite, seeds, quick, [this](const SuiteRunEvent& e) {
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
    status_->setText(path.isEmpty() ? error : tr("Suite %1; report: %2").arg(status, path));
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
    const SuiteResults results = collectSuiteResults(*store_, suite, seeds_->value(), quick_->isChecked());
    const QString dir =
        QDir(reportRoot_).filePath(QString::fromStdString(suite.name) + (quick_->isChecked() ? "-quick" : ""));
    const QString path = QString::fromStdString(report::writeReport(results, dir.toStdString()));
    Q_EMIT reportWritten(path);
    if (openReports_) QDesktopServices::openUrl(QUrl::fromLocalFile(path));
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
