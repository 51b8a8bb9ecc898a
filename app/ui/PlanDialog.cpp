#include "app/ui/PlanDialog.h"

#include "engine/runs/config/Config.h"
#include "engine/session/Planner.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEventLoop>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace ps::ui {
namespace {

QString ms(double seconds) {
  return QString::number(1000 * seconds, 'f', 2) + QStringLiteral(" ms");
}

QString evidenceText(const nlohmann::json& evidence) {
  if (evidence.is_string()) return QString::fromStdString(evidence.get<std::string>());
  QStringList ids;
  for (const auto& id : evidence) ids << QString::number(id.get<int64_t>());
  return QObject::tr("runs %1").arg(ids.join(QStringLiteral(", ")));
}

}  // namespace

PlanDialog::PlanDialog(nlohmann::json config, QString store, QWidget* parent)
    : QDialog(parent), config_(std::move(config)), store_(std::move(store)) {
  setWindowTitle(tr("Plan for This Network"));
  resize(900, 560);
  LinkModel network;
  try {
    network = Config::fromJson(config_, "the settings").link;
  } catch (const std::exception&) {
    // start() names what is wrong; the fields keep the defaults meanwhile
  }
  bandwidth_ = new QDoubleSpinBox;
  bandwidth_->setRange(0.001, 1e6);
  bandwidth_->setDecimals(3);
  bandwidth_->setSuffix(tr(" Mbit/s"));
  bandwidth_->setValue(network.bandwidth_mbps);
  bandwidth_->setToolTip(tr("The bandwidth of each link between stages"));
  latency_ = new QDoubleSpinBox;
  latency_->setRange(0, 10000);
  latency_->setDecimals(3);
  latency_->setSuffix(tr(" ms"));
  latency_->setValue(network.latency_ms);
  egress_ = new QComboBox;
  egress_->addItem(tr("A wire per link direction"), QStringLiteral("link"));
  egress_->addItem(tr("One interface per stage"), QStringLiteral("stage"));
  egress_->setCurrentIndex(network.shared_egress ? 1 : 0);
  egress_->setToolTip(tr("Whether a stage's activations and gradients share one network interface"));
  accuracyBudget_ = new QDoubleSpinBox;
  accuracyBudget_->setRange(0, 100);
  accuracyBudget_->setValue(1);
  accuracyBudget_->setSuffix(tr(" points"));
  accuracyBudget_->setToolTip(tr("Final accuracy the plan may lose against dense, by the finished runs in the store"));
  errorBudget_ = new QDoubleSpinBox;
  errorBudget_->setRange(0, 1);
  errorBudget_->setDecimals(3);
  errorBudget_->setSingleStep(0.01);
  errorBudget_->setValue(0.1);
  errorBudget_->setToolTip(tr("The most relative error a setting no finished run vouches for may have"));
  steps_ = new QSpinBox;
  steps_->setRange(2, 10000);
  steps_->setValue(30);
  steps_->setToolTip(tr("Uncompressed steps to profile (the median step after the first is kept)"));

  table_ = new QTableWidget(0, 7);
  table_->setHorizontalHeaderLabels(
      {tr("Direction"), tr("Setting"), tr("Bytes/msg"), tr("Encode"), tr("Decode"), tr("Rel. error"), tr("Evidence")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(6, QHeaderView::Stretch);
  summary_ = new QLabel;
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::PlainText);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);  // errors are text, never markup

  plan_ = new QPushButton(tr("&Plan"));
  cancel_ = new QPushButton(tr("&Cancel"));
  load_ = new QPushButton(tr("&Load into Settings"));
  load_->setToolTip(tr("Put the planned settings into the settings panel, ready to start"));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addButton(plan_, QDialogButtonBox::ActionRole);
  buttons->addButton(cancel_, QDialogButtonBox::ActionRole);
  buttons->addButton(load_, QDialogButtonBox::AcceptRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(plan_, &QPushButton::clicked, this, [this] {
    const QString error = start();
    if (!error.isEmpty()) status_->setText(error);
  });
  connect(cancel_, &QPushButton::clicked, this, &PlanDialog::cancel);
  connect(load_, &QPushButton::clicked, this, [this] {
    if (planned_.is_null()) return;
    Q_EMIT loadRequested(planned_);
    accept();
  });

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
  form->addRow(tr("Bandwidth:"), bandwidth_);
  form->addRow(tr("Latency:"), latency_);
  form->addRow(tr("Egress:"), egress_);
  form->addRow(tr("Accuracy budget:"), accuracyBudget_);
  form->addRow(tr("Error budget:"), errorBudget_);
  form->addRow(tr("Profile steps:"), steps_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(table_, 1);
  layout->addWidget(summary_);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons);
  updateButtons();
}

PlanDialog::~PlanDialog() {
  cancelled_ = true;
  if (worker_.joinable()) worker_.join();
}

QString PlanDialog::statusText() const {
  return status_->text();
}

QString PlanDialog::summaryText() const {
  return summary_->text();
}

QString PlanDialog::start() {
  if (running()) return tr("Planning is under way; cancel it first.");
  if (startCheck_)
    if (const QString why = startCheck_(); !why.isEmpty()) return why;
  PlanRequest request;
  request.preset = config_;
  request.preset["link"]["bandwidth_mbps"] = bandwidth_->value();
  request.preset["link"]["latency_ms"] = latency_->value();
  request.preset["link"]["egress"] = egress_->currentData().toString().toStdString();
  request.name = "the settings";
  request.accuracy_budget = accuracyBudget_->value();
  request.error_budget = errorBudget_->value();
  request.store = store_.toStdString();
  request.steps = steps_->value();
  try {
    const Config checked = Config::fromJson(request.preset, request.name);  // named here, before a thread starts
    if (checked.pipeline.stages < 2)
      return tr("The settings have one stage, so there is no link to plan; raise Stages.");
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  cancelled_ = false;
  planned_ = nullptr;
  table_->setRowCount(0);
  summary_->clear();
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_->setText(tr("Starting…"));
  worker_ = std::thread([this, request] {
    QString status = QStringLiteral("planned");
    std::shared_ptr<PlanOutcome> outcome;
    try {
      outcome = std::make_shared<PlanOutcome>(planLinks(request, [this](const std::string& what, int done, int total) {
        QMetaObject::invokeMethod(
            this, [this, w = QString::fromStdString(what), done, total] { onProgress(w, done, total); },
            Qt::QueuedConnection);
        return !cancelled_.load();
      }));
    } catch (const PlanCancelled&) {
      status = QStringLiteral("cancelled");
    } catch (const std::exception& e) {
      status = QStringLiteral("failed: ") + QString::fromStdString(e.what());
    } catch (...) {
      status = QStringLiteral("failed: an unexpected error");
    }
    QMetaObject::invokeMethod(
        this, [this, status, outcome] { onDone(status, outcome); }, Qt::QueuedConnection);
  });
  updateButtons();
  return {};
}

void PlanDialog::cancel() {
  if (!running()) return;
  cancelled_ = true;
  status_->setText(tr("Stopping after the current measurement…"));
}

void PlanDialog::reject() {
  if (running()) {
    cancel();
    waitForWorker();
  }
  QDialog::reject();
}

void PlanDialog::waitForWorker() {
  QEventLoop loop;
  connect(this, &PlanDialog::planFinished, &loop, &QEventLoop::quit);
  if (running()) loop.exec();
}

void PlanDialog::onProgress(const QString& what, int done, int total) {
  progress_->setRange(0, total);
  progress_->setValue(done);
  status_->setText(tr("Step %1 of %2: %3…").arg(done + 1).arg(total).arg(what));
}

void PlanDialog::onDone(const QString& status, std::shared_ptr<PlanOutcome> outcome) {
  if (worker_.joinable()) worker_.join();
  if (outcome) {
    showOutcome(*outcome);
    progress_->setValue(progress_->maximum());
    status_->setText(tr("Planned in %1 s. Load into Settings puts the plan in the settings panel.")
                         .arg(outcome->seconds, 0, 'f', 1));
  } else {
    status_->setText(status == QStringLiteral("cancelled") ? tr("Planning cancelled.") : tr("Planning %1").arg(status));
  }
  updateButtons();
  Q_EMIT planFinished(status);
}

void PlanDialog::showOutcome(const PlanOutcome& o) {
  planned_ = o.planned;
  table_->setRowCount(int(o.directions.size()));
  for (int r = 0; r < int(o.directions.size()); ++r) {
    const PlannedDirection& d = o.directions[size_t(r)];
    const QStringList cells = {QString::fromStdString(linkDirectionName(d.direction)),
                               QString::fromStdString(d.setting),
                               QString::number(d.measure.cost.bytes, 'f', 0),
                               ms(d.measure.cost.encode_s),
                               ms(d.measure.cost.decode_s),
                               QString::number(d.measure.relative_error, 'f', 4),
                               d.float32_share > 0  // AQ-SGD's first epochs
                                   ? tr("%1; float32 for %2% of its steps")
                                         .arg(evidenceText(d.evidence))
                                         .arg(std::lround(100 * d.float32_share))
                                   : evidenceText(d.evidence)};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c >= 2 && c <= 5) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(r, c, item);
    }
  }
  table_->resizeColumnsToContents();
  QString text = tr("Predicted step %1 against %2 uncompressed; time to target %3 × dense")
                     .arg(ms(o.best.step_s), ms(o.dense.step_s))
                     .arg(o.best.time_factor() / o.dense.time_factor(), 0, 'f', 3);
  if (o.uniform)
    text += tr(", %1 × the best uniform setting (%2)")
                .arg(o.best.time_factor() / o.uniform->time_factor(), 0, 'f', 3)
                .arg(QString::fromStdString(o.uniform_setting));
  text += tr(". Accuracy cost %1 of %2 points%3.")
              .arg(o.best.accuracy_cost, 0, 'g', 3)
              .arg(o.accuracy_budget, 0, 'g', 3)
              .arg(o.best.optimal ? tr("; proved optimal") : tr("; the search stopped at its limit"));
  if (o.best.fastest < o.best.time_factor() * (1 - 1e-9))
    text += tr(" The fastest assignment is predicted %1% sooner, within the %2% the model cannot tell apart: this "
               "plan rests less on error alone.")
                .arg(100 * (1 - o.best.fastest / o.best.time_factor()), 0, 'f', 1)
                .arg(100 * o.tie_tolerance, 0, 'g', 3);
  summary_->setText(text);
}

void PlanDialog::updateButtons() {
  const bool busy = running();
  plan_->setEnabled(!busy);
  cancel_->setEnabled(busy);
  load_->setEnabled(!busy && !planned_.is_null());
  for (QWidget* w :
       std::initializer_list<QWidget*>{bandwidth_, latency_, egress_, accuracyBudget_, errorBudget_, steps_})
    w->setEnabled(!busy);
}

}  // namespace ps::ui
