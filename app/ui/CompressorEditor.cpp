#include "app/ui/CompressorEditor.h"
#include "app/ui/WheelGuard.h"

#include "app/ui/SliderScales.h"
#include "engine/compress/spec/Catalogue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <memory>

namespace ps::ui {
namespace {

using Control = OptionSpec::Control;

QString qs(const std::string& s) { return QString::fromStdString(s); }

QComboBox* methodCombo(const std::vector<MethodSpec>& methods, const QString& tip, bool forward) {
  auto* box = new QComboBox;
  for (const auto& m : methods) {
    if ((m.forwardOnly || m.layers) && !forward) continue;  // activations only, or layers around a boundary
    box->addItem(qs(m.name));
    box->setItemData(box->count() - 1, qs(m.label + ": " + m.help), Qt::ToolTipRole);
  }
  box->setToolTip(tip);
  return box;
}

// Decimals enough to show the smallest value of the range.
int decimalsFor(const OptionSpec& s) {
  const double smallest = s.min > 0 ? s.min : 0.001;
  return std::clamp(int(std::ceil(-std::log10(smallest))) + 1, 2, 8);
}

double toDouble(const nlohmann::json& v, double fallback) { return v.is_number() ? v.get<double>() : fallback; }

}  // namespace

CompressorEditor::CompressorEditor(const QString& direction, const QString& title, QWidget* parent)
    : QGroupBox(title, parent), prefix_("compression." + direction + ".") {
  const bool forward = direction == "forward";
  method_ = methodCombo(catalogue::codecs(), tr("Codec applied to everything crossing a boundary in this direction"),
                        forward);
  feedback_ = methodCombo(catalogue::compensations(), tr("Error compensation around the codec"), forward);
  adapt_ = methodCombo(catalogue::controllers(),
                       tr("Let an adaptive controller choose a sparsifier's K during the run; every change is a marker"),
                       forward);

  // Each option's row sits under the first chooser whose methods read it: the codec's, the compensation's or the
  // adaptive controller's.
  auto readBy = [](const std::vector<MethodSpec>& methods, const std::string& option) {
    return std::any_of(methods.begin(), methods.end(), [&](const MethodSpec& m) { return m.reads(option); });
  };
  const std::vector<MethodSpec>* sections[] = {&catalogue::codecs(), &catalogue::compensations(),
                                               &catalogue::controllers()};
  QComboBox* choosers[] = {method_, feedback_, adapt_};
  const QString titles[] = {tr("Method"), tr("Compensation"), tr("Adaptive K")};
  form_ = new QFormLayout(this);
  for (int section = 0; section < 3; ++section) {
    form_->addRow(titles[section], choosers[section]);
    for (const auto& spec : catalogue::options()) {
      int home = 0;
      while (home < 2 && !readBy(*sections[home], spec.name)) ++home;
      if (home != section) continue;
      Row row = makeRow(spec);
      row.control->setToolTip(qs(spec.help) + " (" + qs(spec.allowed()) + ")");
      form_->addRow(qs(spec.label), row.field);
      rows_[spec.name] = std::move(row);
    }
  }

  auto chooser = [this](QComboBox* box, const QString& leaf) {
    connect(box, &QComboBox::currentTextChanged, this, [this, leaf](const QString& v) {
      updateShown();
      emitChange(leaf, v);
    });
  };
  chooser(method_, "method");
  chooser(feedback_, "feedback");
  chooser(adapt_, "adapt");
  // Scrolling the settings dock must not change a codec under the pointer: wheel input only once focused.
  std::vector<QWidget*> inputs = {method_, feedback_, adapt_};
  for (const auto& [name, row] : rows_) inputs.push_back(row.control);
  for (QWidget* w : inputs) guardWheel(w);
  loading_ = true;
  for (const auto& spec : catalogue::options()) rows_[spec.name].show(spec.fallback);
  loading_ = false;
  updateShown();
}

CompressorEditor::Row CompressorEditor::makeRow(const OptionSpec& spec) {
  switch (spec.control) {
    case Control::LogSlider:
    case Control::BitsSlider:
    case Control::Slider: return makeSliderRow(spec);
    case Control::Combo:
    case Control::Check: return makeChoiceRow(spec);
    case Control::Spin: break;
  }
  return makeNumberRow(spec);
}

// K on a log scale, bits on their few useful positions, any other integer range linearly.
CompressorEditor::Row CompressorEditor::makeSliderRow(const OptionSpec& spec) {
  if (spec.control == Control::LogSlider) {
    k_ = new QSlider(Qt::Horizontal);
    k_->setRange(0, kSliderSteps);
    k_->setPageStep(10);  // a decade
    Row row = sliderRow(
        spec, k_, [](int p) { return QVariant(kFromSlider(p)); },
        [](const nlohmann::json& v) { return sliderFromK(toDouble(v, 0.1)); },
        [](const nlohmann::json& v) { return QString::number(toDouble(v, 0.1) * 100.0, 'g', 3) + "%"; });
    return withTypedK(spec, std::move(row));
  }
  if (spec.control == Control::BitsSlider) {
    bits_ = new QSlider(Qt::Horizontal);
    bits_->setRange(1, kBitsPositions);
    bits_->setTickPosition(QSlider::TicksBelow);
    return sliderRow(
        spec, bits_, [](int p) { return QVariant(bitsFromSlider(p)); },
        [](const nlohmann::json& v) { return sliderFromBits(int(toDouble(v, 8))); },
        [this](const nlohmann::json& v) { return tr("%1 bit").arg(int(toDouble(v, 8))); });
  }
  auto* s = new QSlider(Qt::Horizontal);
  s->setRange(int(spec.min), int(spec.max));
  const double fallback = toDouble(spec.fallback, spec.min);
  return sliderRow(
      spec, s, [](int p) { return QVariant(p); },
      [fallback](const nlohmann::json& v) { return int(std::lround(toDouble(v, fallback))); },
      [fallback](const nlohmann::json& v) { return QString::number(std::lround(toDouble(v, fallback))); });
}

// A combo box over the option's choices, or a check box for a yes-or-no option.
CompressorEditor::Row CompressorEditor::makeChoiceRow(const OptionSpec& spec) {
  const QString leaf = qs(spec.name);
  if (spec.control == Control::Combo) {
    auto* box = new QComboBox;
    for (const auto& c : spec.choices) box->addItem(qs(c));
    connect(box, &QComboBox::currentTextChanged, this, [this, leaf](const QString& v) { emitChange(leaf, v); });
    return {box, box, [box](const nlohmann::json& v) {
              if (v.is_string()) box->setCurrentText(qs(v.get<std::string>()));
            }};
  }
  auto* box = new QCheckBox;
  connect(box, &QCheckBox::toggled, this, [this, leaf](bool on) { emitChange(leaf, on); });
  return {box, box, [box](const nlohmann::json& v) {
            if (v.is_boolean()) box->setChecked(v.get<bool>());
          }};
}

// A spin box in the option's range: whole numbers for integers, decimals enough for the range otherwise.
CompressorEditor::Row CompressorEditor::makeNumberRow(const OptionSpec& spec) {
  const QString leaf = qs(spec.name);
  if (spec.type == OptionSpec::Type::Int) {
    auto* box = new QSpinBox;
    box->setRange(int(std::max(spec.min, -2e9)), int(std::min(spec.max, 2e9)));
    box->setKeyboardTracking(false);  // typed digits count once the value is entered, not per keystroke
    connect(box, qOverload<int>(&QSpinBox::valueChanged), this, [this, leaf](int v) { emitChange(leaf, v); });
    return {box, box, [box](const nlohmann::json& v) {
              if (v.is_number()) box->setValue(int(std::lround(v.get<double>())));
            }};
  }
  auto* box = new QDoubleSpinBox;
  if (!spec.atMinimum.empty()) box->setSpecialValueText(qs(spec.atMinimum));
  box->setDecimals(decimalsFor(spec));
  box->setRange(spec.min, spec.max);
  box->setSingleStep(std::max(spec.min, (spec.max - spec.min) / 100.0));
  box->setKeyboardTracking(false);
  connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, leaf](double v) { emitChange(leaf, v); });
  return {box, box, [box](const nlohmann::json& v) {
            if (v.is_number()) box->setValue(v.get<double>());
          }};
}

// Sliders report when released (or moved by keyboard), not on every pixel of a drag: each report is a command to
// the running session and a marker on the charts. A click without a move changes nothing.
CompressorEditor::Row CompressorEditor::sliderRow(const OptionSpec& spec, QSlider* slider,
                                                   std::function<QVariant(int)> value,
                                                   std::function<int(const nlohmann::json&)> position,
                                                   std::function<QString(const nlohmann::json&)> text) {
  const QString leaf = qs(spec.name);
  slider->setTracking(true);
  auto* label = new QLabel;
  label->setMinimumWidth(48);
  auto* field = new QWidget;
  auto* layout = new QHBoxLayout(field);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(slider, 1);
  layout->addWidget(label);
  auto pressed = std::make_shared<int>(-1);
  connect(slider, &QSlider::valueChanged, this, [=](int p) {
    label->setText(text(nlohmann::json(value(p).toDouble())));
    if (!slider->isSliderDown()) emitChange(leaf, value(p));
  });
  connect(slider, &QSlider::sliderPressed, this, [=] { *pressed = slider->value(); });
  connect(slider, &QSlider::sliderReleased, this, [=] {
    if (slider->value() != *pressed) emitChange(leaf, value(slider->value()));
  });
  auto show = [=](const nlohmann::json& v) {
    if (!slider->isSliderDown()) slider->setValue(position(v));  // never yank a slider out of the user's hand
    label->setText(text(v));  // the exact configured value, not the slider's rounding of it
  };
  return {field, slider, show};
}

// K's slider moves in orders of magnitude; beside it a field takes any K typed in percent (0.37 %), which the
// slider then follows to its nearest position, and which shows the slider's K as it moves.
CompressorEditor::Row CompressorEditor::withTypedK(const OptionSpec& spec, Row row) {
  kField_ = new QDoubleSpinBox;
  kField_->setRange(std::max(spec.min, kMinK) * 100.0, std::min(spec.max, 1.0) * 100.0);
  kField_->setDecimals(3);
  kField_->setSuffix(QStringLiteral(" %"));
  kField_->setKeyboardTracking(false);  // one change when the number is entered
  kField_->setToolTip(tr("K in percent of the elements sent; type any value, or move the slider"));
  auto* layout = static_cast<QHBoxLayout*>(row.field->layout());
  layout->itemAt(1)->widget()->hide();  // the slider's value label: the field says it now
  layout->addWidget(kField_);
  const QString leaf = qs(spec.name);
  QSlider* slider = k_;
  QDoubleSpinBox* field = kField_;
  connect(slider, &QSlider::valueChanged, field, [field](int p) {
    const QSignalBlocker quiet(field);
    field->setValue(kFromSlider(p) * 100.0);
  });
  connect(field, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, slider, leaf](double percent) {
    {
      const QSignalBlocker quiet(slider);
      slider->setValue(sliderFromK(percent / 100.0));
    }
    emitChange(leaf, percent / 100.0);
  });
  auto show = row.show;
  row.show = [show, field](const nlohmann::json& v) {
    show(v);
    const QSignalBlocker quiet(field);
    field->setValue(toDouble(v, 0.1) * 100.0);  // the exact configured K, not the slider's rounding of it
  };
  return row;
}

void CompressorEditor::load(const nlohmann::json& config) {
  loading_ = true;
  const std::string dir = prefix_.section('.', 1, 1).toStdString();
  const auto& c = config.at("compression").at(dir);
  method_->setCurrentText(qs(c.value("method", "none")));
  feedback_->setCurrentText(qs(c.value("feedback", "none")));
  adapt_->setCurrentText(qs(c.value("adapt", "none")));
  for (const auto& spec : catalogue::options()) rows_[spec.name].show(c.value(spec.name, spec.fallback));
  const auto bits = c.find("value_bits");
  valueBits_ = bits != c.end() && bits->is_number_integer() ? bits->get<int>() : 32;
  updateShown();
  loading_ = false;
}

QWidget* CompressorEditor::optionControl(const std::string& name) const {
  auto it = rows_.find(name);
  return it == rows_.end() ? nullptr : it->second.control;
}

bool CompressorEditor::optionShown(const std::string& name) const {
  auto it = rows_.find(name);
  return it != rows_.end() && form_->isRowVisible(it->second.field);
}

void CompressorEditor::emitChange(const QString& leaf, const QVariant& value) {
  if (leaf == QLatin1String("value_bits")) {
    valueBits_ = value.toInt();
    updateShown();
  }
  if (!loading_) Q_EMIT changed(prefix_ + leaf, value);
}

// A row shows while the chosen codec, compensation or controller reads its option; a controller only adapts a
// sparsifier.
void CompressorEditor::updateShown() {
  const MethodSpec* codec = catalogue::codec(method_->currentText().toStdString());
  const bool sparse = codec && codec->sparse;
  adapt_->setEnabled(sparse);
  const std::string method = method_->currentText().toStdString(), feedback = feedback_->currentText().toStdString(),
                    adapt = adapt_->currentText().toStdString();
  for (auto& [name, row] : rows_) {
    const bool read = catalogue::optionApplies(name, method, feedback, adapt, valueBits_);
    form_->setRowVisible(row.field, read);
    row.control->setEnabled(read);
  }
}

QString CompressorEditor::controlLabel(const std::string& leaf) const {
  QWidget* field = leaf == "method" ? method_ : leaf == "feedback" ? feedback_ : leaf == "adapt" ? adapt_ : nullptr;
  if (!field) {
    const auto row = rows_.find(leaf);
    if (row == rows_.end()) return {};
    field = row->second.field;
  }
  auto* label = qobject_cast<QLabel*>(form_->labelForField(field));
  return label ? label->text() : QString();
}

}  // namespace ps::ui
