#pragma once
// ps::ui::ControlPanel: the settings side of the window: preset picker, run settings (task, stages,
// micro-batches, schedule, learning rate, link bandwidth and latency) and one CompressorEditor per direction.
// It owns the settings for the next run as a full config; every edit is validated against the schema and
// reported as (key, value) so the window can forward changeable keys to a running session.
#include "app/ui/PresetLibrary.h"

#include <QVariant>
#include <QWidget>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace ps::ui {

class CompressorEditor;

nlohmann::json jsonFromVariant(const QVariant& value);

class ControlPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ControlPanel(PresetLibrary library, QWidget* parent = nullptr);

  // Loads a preset file; returns an error to show (the current settings stay) or empty.
  QString loadPresetFile(const QString& path);
  void loadConfig(const nlohmann::json& config);  // a validated full config
  // What a run started now records: config() with the preset's name and tags replaced once a setting that shapes
  // training differs from the config loaded (engine/runs/config/RunLabels.h).
  nlohmann::json runConfig() const;
  const nlohmann::json& config() const { return config_; }
  QString presetPath() const { return presetPath_; }
  // Shows a setting the running session applied (a slider moved here, or a change made by the engine itself, as
  // adaptive compression does), without emitting changed().
  void showApplied(const QString& key, const nlohmann::json& value);
  // While a run is going, only keys that can change mid-run stay editable.
  void setRunning(bool running);
  void reloadPresetList();  // after a preset was saved
  // The settings differ from the preset loaded: the picker shows "(modified)", and choosing another preset asks
  // `confirmDiscard` first (a question box unless set; tests answer it).
  bool modified() const { return config_ != loaded_; }
  void setConfirmDiscard(std::function<bool(const QString& preset)> confirm) { confirmDiscard_ = std::move(confirm); }
  PresetLibrary& library() { return library_; }
  // What a user of this panel calls the control of a config key ("Stages", "Forward activations ▸ K"), or empty.
  QString controlName(const QString& key) const;

  QComboBox* presetBox() const { return preset_; }
  CompressorEditor* forwardEditor() const { return forward_; }
  CompressorEditor* backwardEditor() const { return backward_; }
  CompressorEditor* gradientsEditor() const { return gradients_; }
  QSpinBox* replicasBox() const { return replicas_; }
  QSpinBox* microbatchesBox() const { return microbatches_; }
  QSpinBox* stagesBox() const { return stages_; }
  QDoubleSpinBox* latencyBox() const { return latency_; }

 Q_SIGNALS:
  // A setting changed (already in config()). Emitted for user edits only, not for loads.
  void changed(const QString& key, const QVariant& value);
  void errorOccurred(const QString& message);

 private:
  void showModified();  // the picker's current entry, with "(modified)" while the settings differ from it
  void createControls();
  void layOut();
  void connectEdits();
  void edit(const QString& key, const QVariant& value);
  void showConfig();
  // The spin boxes' maxima follow the settings: no more stages than the model has blocks, no more micro-batches than
  // a replica's share of the batch; each tooltip says why.
  void updateLimits();
  QString keyOf(QWidget* control) const;  // the config key a control edits, empty for none
  // A validation error in the panel's words: keys named by their controls, and the keys the panel has no control
  // for said to come from the preset.
  QString inPanelTerms(const QString& error) const;

  PresetLibrary library_;
  nlohmann::json config_;
  nlohmann::json loaded_;  // the config as loaded (a preset), before any edit
  QString presetPath_;
  bool loading_ = false;
  QComboBox* preset_;
  std::function<bool(const QString& preset)> confirmDiscard_;
  QComboBox* task_;
  QSpinBox* stages_;
  QSpinBox* microbatches_;
  QComboBox* schedule_;
  QSpinBox* epochs_;
  QSpinBox* maxSteps_;
  QDoubleSpinBox* lr_;
  QDoubleSpinBox* bandwidth_;
  QDoubleSpinBox* latency_;
  QCheckBox* inference_;
  QLabel* overrides_;
  CompressorEditor* forward_;
  CompressorEditor* backward_;
  CompressorEditor* gradients_;  // the replicas' weight gradients: shown with more than one replica
  QSpinBox* replicas_;
  QCheckBox* processes_;
  bool running_ = false;
  std::vector<std::pair<QWidget*, QString>> keyed_;  // each run setting's widget and the config key it edits
  std::map<QWidget*, QString> schemaTips_;           // a spin box's tooltip from the schema, before any limit
};

}  // namespace ps::ui
