#include "app/ui/CompressorEditor.h"

#include "app/ui/SliderScales.h"

#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>

namespace ps::ui {
namespace {

const QStringList kMethods = {"none", "fp16", "bf16", "quantize", "qsgd", "sign", "topk", "randk", "gaussiank", "sampledk"};
const QStringList kFeedback = {"none", "ef", "ef21", "diana", "randdiana", "aqsgd"};

bool isSparse(const QString& m) { return m == "topk" || m == "randk" || m == "gaussiank" || m == "sampledk"; }

QSlider* makeSlider(int lo, int hi) {
  auto* s = new QSlider(Qt::Horizontal);
  s->setRange(lo, hi);
  s->setTracking(true);
  return s;
}

}  // namespace

CompressorEditor::CompressorEditor(const QString& direction, const QString& title, QWidget* parent)
    : QGroupBox(title, parent), prefix_("compression." + direction + ".") {
  method_ = new QComboBox;
  method_->addItems(kMethods);
  method_->setToolTip(tr("Codec applied to everything crossing a stage boundary in this direction"));
  k_ = makeSlider(0, kSliderSteps);
  k_->setPageStep(10);  // a decade
  k_->setToolTip(tr("Fraction of elements a sparsifier keeps (logarithmic, 0.1% to 100%)"));
  kLabel_ = new QLabel;
  kLabel_->setMinimumWidth(48);
  bits_ = makeSlider(1, kBitsPositions);
  bits_->setPageStep(1);
  bits_->setTickPosition(QSlider::TicksBelow);
  bits_->setToolTip(tr("Bits per quantized element: 1 to 8, or 16 (fp16)"));
  bitsLabel_ = new QLabel;
  bitsLabel_->setMinimumWidth(48);
  rounding_ = new QComboBox;
  rounding_->addItems({"nearest", "stochastic"});
  feedback_ = new QComboBox;
  feedback_->addItems(kFeedback);
  feedback_->setToolTip(tr("Error compensation around the codec (ef, ef21, diana, randdiana; aqsgd for activations)"));
  if (direction == "backward") feedback_->removeItem(feedback_->findText("aqsgd"));
  adapt_ = new QComboBox;
  adapt_->addItems({"none", "gravac", "accordion"});
  adapt_->setToolTip(tr("Let GraVAC or Accordion choose a sparsifier's K during the run; every change is a marker"));

  auto row = [](QWidget* a, QWidget* b) {
    auto* w = new QWidget;
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(a, 1);
    l->addWidget(b);
    return w;
  };
  auto* form = new QFormLayout(this);
  form->addRow(tr("Method"), method_);
  form->addRow(tr("K"), row(k_, kLabel_));
  form->addRow(tr("Bits"), row(bits_, bitsLabel_));
  form->addRow(tr("Rounding"), rounding_);
  form->addRow(tr("Compensation"), feedback_);
  form->addRow(tr("Adaptive K"), adapt_);

  connect(method_, &QComboBox::currentTextChanged, this, [this](const QString& m) {
    updateEnabled();
    emitChange("method", m);
  });
  // Sliders report when released (or moved by keyboard), not on every pixel of a drag: each report is a command
  // to the running session and a marker on the charts.
  connect(k_, &QSlider::valueChanged, this, [this](int v) {
    showK(kFromSlider(v));
    if (!k_->isSliderDown()) emitChange("k", kFromSlider(v));
  });
  // A click without a move changes nothing: only a release at another position is a change.
  connect(k_, &QSlider::sliderPressed, this, [this] { pressedK_ = k_->value(); });
  connect(k_, &QSlider::sliderReleased, this, [this] {
    if (k_->value() != pressedK_) emitChange("k", kFromSlider(k_->value()));
  });
  connect(bits_, &QSlider::valueChanged, this, [this](int v) {
    showBits(bitsFromSlider(v));
    if (!bits_->isSliderDown()) emitChange("bits", bitsFromSlider(v));
  });
  connect(bits_, &QSlider::sliderPressed, this, [this] { pressedBits_ = bits_->value(); });
  connect(bits_, &QSlider::sliderReleased, this, [this] {
    if (bits_->value() != pressedBits_) emitChange("bits", bitsFromSlider(bits_->value()));
  });
  // Scrolling the settings dock must not change a codec under the pointer: wheel input only once focused.
  for (QWidget* w : std::initializer_list<QWidget*>{method_, k_, bits_, rounding_, feedback_, adapt_}) {
    w->setFocusPolicy(Qt::StrongFocus);
    w->installEventFilter(this);
  }
  connect(rounding_, &QComboBox::currentTextChanged, this, [this](const QString& r) { emitChange("rounding", r); });
  connect(feedback_, &QComboBox::currentTextChanged, this, [this](const QString& f) { emitChange("feedback", f); });
  connect(adapt_, &QComboBox::currentTextChanged, this, [this](const QString& a) { emitChange("adapt", a); });
  showK(kFromSlider(k_->value()));
  showBits(bitsFromSlider(bits_->value()));
  updateEnabled();
}

bool CompressorEditor::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Wheel) {
    auto* w = qobject_cast<QWidget*>(watched);
    if (w && !w->hasFocus()) {
      event->ignore();  // handed on to the scroll area
      return true;
    }
  }
  return QGroupBox::eventFilter(watched, event);
}

void CompressorEditor::load(const nlohmann::json& config) {
  loading_ = true;
  const std::string dir = prefix_.section('.', 1, 1).toStdString();
  const auto& c = config.at("compression").at(dir);
  method_->setCurrentText(QString::fromStdString(c.value("method", "none")));
  const double k = c.value("k", 0.1);
  if (!k_->isSliderDown()) k_->setValue(sliderFromK(k));  // never yank a slider out of the user's hand
  showK(k);  // the exact configured value, not the slider's rounding of it
  const int bits = c.value("bits", 8);
  if (!bits_->isSliderDown()) bits_->setValue(sliderFromBits(bits));
  showBits(bits);
  rounding_->setCurrentText(QString::fromStdString(c.value("rounding", "nearest")));
  feedback_->setCurrentText(QString::fromStdString(c.value("feedback", "none")));
  adapt_->setCurrentText(QString::fromStdString(c.value("adapt", "none")));
  updateEnabled();
  loading_ = false;
}

void CompressorEditor::emitChange(const QString& leaf, const QVariant& value) {
  if (!loading_) Q_EMIT changed(prefix_ + leaf, value);
}

void CompressorEditor::showK(double k) { kLabel_->setText(QString::number(k * 100.0, 'g', 3) + "%"); }
void CompressorEditor::showBits(int bits) { bitsLabel_->setText(tr("%1 bit").arg(bits)); }

void CompressorEditor::updateEnabled() {
  const QString m = method_->currentText();
  k_->setEnabled(isSparse(m));
  kLabel_->setEnabled(isSparse(m));
  const bool quantized = m == "quantize";
  bits_->setEnabled(quantized);
  bitsLabel_->setEnabled(quantized);
  rounding_->setEnabled(quantized || m == "qsgd");
  adapt_->setEnabled(isSparse(m));
}

}  // namespace ps::ui
