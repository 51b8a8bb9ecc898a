#include "app/ui/ControlPanel.h"
#include "app/ui/WheelGuard.h"
#include "engine/runs/config/RunLabels.h"

#include "app/ui/CompressorEditor.h"
#include "engine/core/Metrics.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/ConfigSchema.h"
#include "engine/session/Command.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QMessageBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QVBoxLayout>

#include <type_traits>

namespace ps::ui {

nlohmann::json jsonFromVariant(const QVariant& value) {
  switch (value.typeId()) {
    case QMetaType::Bool: return value.toBool();
    case QMetaType::Int:
    case QMetaType::LongLong: return value.toLongLong();
    case QMetaType::Double:
    case QMetaType::Float: return value.toDouble();
    default: return value.toString().toStdString();
  }
}

namespace {

constexpr int kBaseTextRole = Qt::UserRole + 1;  // a preset entry's name without "(modified)"

// Ranges and tooltips come from the config schema, so the panel accepts exactly what a preset may hold.
template <typename Spin>
Spin* fromSchema(Spin* spin, const std::string& key) {
  if (const KeySpec* k = ConfigSchema::instance().find(key)) {
    if constexpr (std::is_same_v<Spin, QSpinBox>)
      spin->setRange(int(std::max<double>(k->min, spin->minimum())), int(std::min<double>(k->max, 2147483647.0)));
    else
      spin->setRange(k->min, k->max);
    spin->setToolTip(QString::fromStdString(k->help) + QStringLiteral(" (") + QString::fromStdString(k->allowed()) + ")");
  }
  return spin;
}

QDoubleSpinBox* doubleSpin(double lo, double hi, int decimals, double step, const QString& suffix = {}) {
  auto* s = new QDoubleSpinBox;
  s->setRange(lo, hi);
  s->setDecimals(decimals);
  s->setSingleStep(step);
  s->setSuffix(suffix);
  s->setKeyboardTracking(false);  // one change when the user is done typing, not one per digit
  return s;
}

QSpinBox* intSpin(int lo, int hi, const QString& special = {}) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  s->setKeyboardTracking(false);
  if (!special.isEmpty()) s->setSpecialValueText(special);
  return s;
}

}  // namespace

ControlPanel::ControlPanel(PresetLibrary library, QWidget* parent) : QWidget(parent), library_(std::move(library)) {
  createControls();
  layOut();
  guardWheelIn(this);  // scrolling the panel never changes a setting under the pointer
  connectEdits();
  config_ = Config::defaults().json;
  reloadPresetList();
}

// One control per run setting, ranges and help from the config schema.
void ControlPanel::createControls() {
  preset_ = new QComboBox;
  preset_->setToolTip(tr("Bundled presets and your own (File ▸ Save Settings as Preset)"));
  task_ = new QComboBox;
  for (const auto& t : tasks()) {
    task_->addItem(QString::fromUtf8(t.name));
    task_->setItemData(task_->count() - 1, QString::fromUtf8(t.help), Qt::ToolTipRole);
  }
  stages_ = fromSchema(intSpin(1, 8), "pipeline.stages");
  microbatches_ = fromSchema(intSpin(1, 64), "pipeline.microbatches");
  schedule_ = new QComboBox;
  schedule_->addItems({"1f1b", "gpipe"});
  epochs_ = fromSchema(intSpin(0, 1000, tr("steps only")), "train.epochs");
  maxSteps_ = fromSchema(intSpin(0, 10000000, tr("no limit")), "train.max_steps");
  lr_ = fromSchema(doubleSpin(1e-6, 10, 8, 1e-4), "train.lr");
  bandwidth_ = fromSchema(doubleSpin(0.001, 1e6, 3, 100, tr(" Mbit/s")), "link.bandwidth_mbps");
  latency_ = fromSchema(doubleSpin(0, 10000, 3, 0.1, tr(" ms")), "link.latency_ms");
  inference_ = new QCheckBox(tr("Compress at inference too"));
  forward_ = new CompressorEditor("forward", tr("Forward activations"));
  backward_ = new CompressorEditor("backward", tr("Backward gradients"));
  gradients_ = new CompressorEditor("gradients", tr("Replica weight gradients"));
  replicas_ = fromSchema(intSpin(1, 64), "parallel.replicas");
  processes_ = new QCheckBox(tr("One process per stage"));
  processes_->setToolTip(
      tr("Run every stage (and replica) in its own pipesqueeze-cli process over torch.distributed "
         "(Gloo on loopback), as `pipesqueeze-cli launch` does; this window is rank 0. "
         "More than one replica always runs this way."));
}

// The preset picker on top, then the run, the link and the three compressor editors in one scrolling column.
void ControlPanel::layOut() {
  auto* run = new QGroupBox(tr("Run"));
  auto* runForm = new QFormLayout(run);
  runForm->addRow(tr("Task"), task_);
  runForm->addRow(tr("Stages"), stages_);
  runForm->addRow(tr("Micro-batches"), microbatches_);
  runForm->addRow(tr("Replicas"), replicas_);
  runForm->addRow(processes_);
  runForm->addRow(tr("Schedule"), schedule_);
  runForm->addRow(tr("Epochs"), epochs_);
  runForm->addRow(tr("Max steps"), maxSteps_);
  runForm->addRow(tr("Learning rate"), lr_);
  auto* link = new QGroupBox(tr("Link"));
  auto* linkForm = new QFormLayout(link);
  linkForm->addRow(tr("Bandwidth"), bandwidth_);
  linkForm->addRow(tr("Latency"), latency_);
  linkForm->addRow(inference_);

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  auto* presetForm = new QFormLayout;
  presetForm->addRow(tr("Preset"), preset_);
  column->addLayout(presetForm);
  for (QWidget* w : {static_cast<QWidget*>(run), static_cast<QWidget*>(link), static_cast<QWidget*>(forward_),
                     static_cast<QWidget*>(backward_), static_cast<QWidget*>(gradients_)})
    column->addWidget(w);
  overrides_ = new QLabel;
  overrides_->setWordWrap(true);
  overrides_->setVisible(false);
  column->addWidget(overrides_);
  column->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  // Never narrower than the controls (a squeezed dock clipped the spin boxes' arrows): it scrolls only vertically.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(content->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);
}

// Every control edits its key of the panel's config, which checks it and announces the change (changed()).
void ControlPanel::connectEdits() {
  connect(preset_, &QComboBox::activated, this, [this](int index) {
    const QString path = preset_->itemData(index).toString();
    const QString name = preset_->itemData(index, kBaseTextRole).toString();
    const auto confirm = confirmDiscard_ ? confirmDiscard_ : [this](const QString& preset) {
      return QMessageBox::question(this, tr("Discard changed settings"),
                                   tr("The settings differ from the preset they came from. Discard the changes and "
                                      "load %1?")
                                       .arg(preset),
                                   QMessageBox::Discard | QMessageBox::Cancel,
                                   QMessageBox::Cancel) == QMessageBox::Discard;
    };
    if (path != presetPath_ && modified() && !confirm(name)) {
      preset_->setCurrentIndex(preset_->findData(presetPath_));  // the settings stay, and so does the picker
      showModified();
      return;
    }
    const QString error = loadPresetFile(path);
    if (!error.isEmpty()) Q_EMIT errorOccurred(error);
  });
  // Each widget's key, recorded once: what it edits, and whether it stays editable during a run (setRunning).
  auto key = [this](QWidget* w, const char* k) {
    keyed_.emplace_back(w, QString::fromLatin1(k));
    return keyed_.back().second;
  };
  connect(task_, &QComboBox::currentTextChanged, this,
          [this, k = key(task_, "task")](const QString& v) { edit(k, v); });
  connect(stages_, &QSpinBox::valueChanged, this, [this, k = key(stages_, "pipeline.stages")](int v) { edit(k, v); });
  connect(microbatches_, &QSpinBox::valueChanged, this,
          [this, k = key(microbatches_, "pipeline.microbatches")](int v) { edit(k, v); });
  connect(replicas_, &QSpinBox::valueChanged, this, [this, k = key(replicas_, "parallel.replicas")](int v) {
    edit(k, v);
    showConfig();  // the gradients editor and the processes box follow the replicas
  });
  connect(processes_, &QCheckBox::toggled, this, [this, k = key(processes_, "parallel.mode")](bool v) {
    edit(k, QString::fromLatin1(v ? "processes" : "auto"));
  });
  connect(schedule_, &QComboBox::currentTextChanged, this,
          [this, k = key(schedule_, "pipeline.schedule")](const QString& v) { edit(k, v); });
  connect(epochs_, &QSpinBox::valueChanged, this, [this, k = key(epochs_, "train.epochs")](int v) { edit(k, v); });
  connect(maxSteps_, &QSpinBox::valueChanged, this,
          [this, k = key(maxSteps_, "train.max_steps")](int v) { edit(k, v); });
  connect(lr_, &QDoubleSpinBox::valueChanged, this, [this, k = key(lr_, "train.lr")](double v) { edit(k, v); });
  connect(bandwidth_, &QDoubleSpinBox::valueChanged, this,
          [this, k = key(bandwidth_, "link.bandwidth_mbps")](double v) { edit(k, v); });
  connect(latency_, &QDoubleSpinBox::valueChanged, this,
          [this, k = key(latency_, "link.latency_ms")](double v) { edit(k, v); });
  connect(inference_, &QCheckBox::toggled, this,
          [this, k = key(inference_, "compression.inference")](bool v) { edit(k, v); });
  connect(forward_, &CompressorEditor::changed, this, &ControlPanel::edit);
  connect(backward_, &CompressorEditor::changed, this, &ControlPanel::edit);
  connect(gradients_, &CompressorEditor::changed, this, &ControlPanel::edit);
}

void ControlPanel::reloadPresetList() {
  const QString current = presetPath_;
  preset_->clear();
  for (const PresetEntry& e : library_.list()) {
    preset_->addItem(e.user ? tr("%1 (mine)").arg(e.name) : e.name, e.path);
    preset_->setItemData(preset_->count() - 1, preset_->itemText(preset_->count() - 1), kBaseTextRole);
  }
  const int index = preset_->findData(current);
  preset_->setCurrentIndex(index);
  showModified();
}

void ControlPanel::showModified() {
  for (int i = 0; i < preset_->count(); ++i) {
    const QString base = preset_->itemData(i, kBaseTextRole).toString();
    const bool mark = i == preset_->currentIndex() && modified();
    preset_->setItemText(i, mark ? tr("%1 (modified)").arg(base) : base);
  }
}

QString ControlPanel::loadPresetFile(const QString& path) {
  if (path.isEmpty()) return tr("No preset file given: choose one in the preset picker or with File ▸ Open Preset.");
  try {
    Config config = loadPreset(path.toStdString());
    presetPath_ = path;
    loadConfig(config.json);
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  int index = preset_->findData(path);
  if (index < 0) {  // a file from elsewhere: listed under its name so the picker shows what is loaded
    preset_->addItem(tr("%1 (file)").arg(QFileInfo(path).completeBaseName()), path);
    index = preset_->count() - 1;
    preset_->setItemData(index, preset_->itemText(index), kBaseTextRole);
  }
  preset_->setCurrentIndex(index);
  showModified();
  return {};
}

void ControlPanel::loadConfig(const nlohmann::json& config) {
  config_ = loaded_ = config;
  showConfig();
}

nlohmann::json ControlPanel::runConfig() const {
  nlohmann::json run = config_;
  relabelModified(loaded_, run);
  return run;
}

void ControlPanel::showConfig() {
  loading_ = true;
  const auto& c = config_;
  task_->setCurrentText(QString::fromStdString(c.value("task", "fashion_mnist")));
  updateLimits();
  stages_->setValue(c["pipeline"].value("stages", 1));
  microbatches_->setValue(c["pipeline"].value("microbatches", 1));
  const nlohmann::json parallel = c.contains("parallel") ? c["parallel"] : nlohmann::json::object();
  replicas_->setValue(parallel.value("replicas", 1));
  processes_->setChecked(parallel.value("mode", "auto") == "processes" || parallel.value("replicas", 1) > 1);
  processes_->setEnabled(parallel.value("replicas", 1) == 1 && !running_);
  schedule_->setCurrentText(QString::fromStdString(c["pipeline"].value("schedule", "1f1b")));
  epochs_->setValue(int(c["train"].value("epochs", 1)));
  maxSteps_->setValue(int(c["train"].value("max_steps", 0)));
  lr_->setValue(c["train"].value("lr", 1e-3));
  bandwidth_->setValue(c["link"].value("bandwidth_mbps", 10000.0));
  latency_->setValue(c["link"].value("latency_ms", 0.0));
  inference_->setChecked(c["compression"].value("inference", true));
  forward_->load(c);
  backward_->load(c);
  gradients_->load(c);
  gradients_->setVisible(parallel.value("replicas", 1) > 1);
  // Per-boundary overrides have no widgets: say they are there, since they win over the controls above.
  QStringList boundaries;
  if (c.contains("compression") && c["compression"].contains("boundaries"))
    for (const auto& [index, _] : c["compression"]["boundaries"].items()) boundaries << QString::fromStdString(index);
  overrides_->setText(tr("<i>Boundaries %1 have their own compression settings in the preset (compression.boundaries); "
                         "they take precedence over these controls.</i>").arg(boundaries.join(", ")));
  overrides_->setVisible(!boundaries.isEmpty());
  loading_ = false;
}

void ControlPanel::edit(const QString& key, const QVariant& value) {
  if (loading_) return;
  nlohmann::json probe = config_;
  try {
    setConfigValue(probe, key.toStdString(), jsonFromVariant(value));
    config_ = Config::fromJson(probe, "the settings panel").json;  // cross-field rules too
  } catch (const std::exception& e) {
    Q_EMIT errorOccurred(inPanelTerms(QString::fromUtf8(e.what())));
    showConfig();  // back to the last valid settings
    return;
  }
  loading_ = true;  // a new maximum never clamps a value: the settings are valid, so within it
  updateLimits();
  loading_ = false;
  showModified();
  Q_EMIT changed(key, value);
}

void ControlPanel::showApplied(const QString& key, const nlohmann::json& value) {
  try {
    setConfigValue(config_, key.toStdString(), value);
  } catch (const std::exception&) {
    return;  // the session validated it; nothing sensible to show otherwise
  }
  // Only the widget of `key` is refreshed: a value being typed elsewhere, or a slider held, stays as it is.
  loading_ = true;
  if (key.startsWith(forward_->prefix())) forward_->load(config_);
  else if (key.startsWith(backward_->prefix())) backward_->load(config_);
  else if (key.startsWith(gradients_->prefix())) gradients_->load(config_);
  else if (key == "train.lr" && !lr_->hasFocus()) lr_->setValue(value.get<double>());
  else if (key == "link.bandwidth_mbps" && !bandwidth_->hasFocus()) bandwidth_->setValue(value.get<double>());
  else if (key == "link.latency_ms" && !latency_->hasFocus()) latency_->setValue(value.get<double>());
  else if (key == "compression.inference") inference_->setChecked(value.get<bool>());
  loading_ = false;
}

void ControlPanel::setRunning(bool running) {
  running_ = running;
  // Disabling the focused input would hand focus to the next enabled one (the learning rate), where a stray key or
  // wheel changes the run: the panel gives focus up instead.
  if (running && isAncestorOf(QApplication::focusWidget())) QApplication::focusWidget()->clearFocus();
  preset_->setEnabled(!running);  // a preset replaces every setting
  // The session decides which keys can change mid-run; a widget follows its key.
  for (const auto& [w, key] : keyed_) w->setEnabled(!running || changeableMidRun(key.toStdString()));
  // More than one replica always runs as processes: the box shows it and cannot be unticked.
  if (!running) processes_->setEnabled(config_["parallel"].value("replicas", 1) == 1);
}

}  // namespace ps::ui
