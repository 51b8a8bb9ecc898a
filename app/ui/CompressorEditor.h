#pragma once
// ps::ui::CompressorEditor: the controls for one direction's compressor (forward activations, backward gradients,
// replicas' weight gradients), generated from the compression catalogue (engine/compress/spec/Catalogue.h): a
// codec, compensation and adaptive controller chooser, and one row per option with the control its spec names (K's
// logarithmic slider, the bits slider, a slider, a spin box, a combo or a check box), its range and its help as
// tooltip. A row shows only while the chosen codec, compensation or controller reads its option. It edits the
// config keys under `compression.<direction>.` and reports each change as (key, value); whether that goes to the
// next run or to the running session is the window's business.
#include <QGroupBox>
#include <QVariant>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QSlider;

namespace ps {
struct OptionSpec;
}

namespace ps::ui {

class CompressorEditor : public QGroupBox {
  Q_OBJECT
 public:
  // direction: "forward", "backward" or "gradients".
  CompressorEditor(const QString& direction, const QString& title, QWidget* parent = nullptr);

  // Shows the values of a full config without emitting changes.
  void load(const nlohmann::json& config);
  QString prefix() const { return prefix_; }  // "compression.forward."

  QSlider* kSlider() const { return k_; }
  QDoubleSpinBox* kField() const { return kField_; }  // K typed in percent, beside the slider
  QComboBox* methodBox() const { return method_; }
  QComboBox* feedbackBox() const { return feedback_; }
  QComboBox* adaptBox() const { return adapt_; }
  // The control of an option by its catalogue name (nullptr for an unknown name), and whether its row shows.
  QWidget* optionControl(const std::string& name) const;
  bool optionShown(const std::string& name) const;
  // The label of the control that edits `leaf` (method, feedback, adapt or an option's name), empty for none.
  QString controlLabel(const std::string& leaf) const;

 Q_SIGNALS:
  void changed(const QString& key, const QVariant& value);

 private:
  struct Row {
    QWidget* field = nullptr;    // what the form holds: the control, or the control and its value label
    QWidget* control = nullptr;  // what takes input
    std::function<void(const nlohmann::json&)> show;  // sets the control without emitting
  };
  Row makeRow(const OptionSpec& spec);
  Row makeSliderRow(const OptionSpec& spec);
  Row makeChoiceRow(const OptionSpec& spec);
  Row makeNumberRow(const OptionSpec& spec);
  Row sliderRow(const OptionSpec& spec, QSlider* slider, std::function<QVariant(int)> value,
                std::function<int(const nlohmann::json&)> position, std::function<QString(const nlohmann::json&)> text);
  Row withTypedK(const OptionSpec& spec, Row row);
  void updateShown();
  void emitChange(const QString& leaf, const QVariant& value);

  QString prefix_;
  QFormLayout* form_;
  QComboBox* method_;
  QComboBox* feedback_;
  QComboBox* adapt_;
  QSlider* k_ = nullptr;
  QDoubleSpinBox* kField_ = nullptr;
  QSlider* bits_ = nullptr;
  std::map<std::string, Row> rows_;
  int valueBits_ = 32;  // a sparsifier's value bits as shown: rounding, range and bucket act only when they requantize
  bool loading_ = false;
};

}  // namespace ps::ui
