#pragma once
// ps::ui::CompressorEditor: the controls for one direction's compressor (forward activations or backward
// gradients): method, K (log slider), bits, rounding, error compensation and adaptive K (GraVAC, Accordion). It edits the config keys under
// `compression.<direction>.` and reports each change as (key, value); whether that goes to the next run or to the
// running session is the window's business.
#include <QGroupBox>
#include <QVariant>

#include <nlohmann/json.hpp>

class QComboBox;
class QLabel;
class QSlider;

namespace ps::ui {

class CompressorEditor : public QGroupBox {
  Q_OBJECT
 public:
  // direction: "forward" or "backward".
  CompressorEditor(const QString& direction, const QString& title, QWidget* parent = nullptr);

  // Shows the values of a full config without emitting changes.
  void load(const nlohmann::json& config);
  QString prefix() const { return prefix_; }  // "compression.forward."

  QSlider* kSlider() const { return k_; }
  QSlider* bitsSlider() const { return bits_; }
  QComboBox* methodBox() const { return method_; }
  QComboBox* feedbackBox() const { return feedback_; }
  QComboBox* adaptBox() const { return adapt_; }

 Q_SIGNALS:
  void changed(const QString& key, const QVariant& value);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateEnabled();
  void emitChange(const QString& leaf, const QVariant& value);
  void showK(double k);
  void showBits(int bits);

  QString prefix_;
  QComboBox* method_;
  QSlider* k_;
  QLabel* kLabel_;
  QSlider* bits_;
  QLabel* bitsLabel_;
  QComboBox* rounding_;
  QComboBox* feedback_;
  QComboBox* adapt_;
  bool loading_ = false;
  int pressedK_ = -1, pressedBits_ = -1;
};

}  // namespace ps::ui
