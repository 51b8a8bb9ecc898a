// ControlPanel's limits and words: the maxima its boxes follow from the settings, and a refused setting explained by
// the panel's own controls.
#include "app/ui/ControlPanel.h"

#include "app/ui/CompressorEditor.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/ConfigSchema.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QSpinBox>

#include <algorithm>

namespace ps::ui {

void ControlPanel::updateLimits() {
  const auto& c = config_;
  const std::string task = c.value("task", "synthetic");
  const int64_t depth = c.contains("model") ? c["model"].value("depth", int64_t(4)) : 4;
  const int blocks = modelBlocks(task, depth);
  const int64_t batch = c.contains("train") ? c["train"].value("batch_size", int64_t(1)) : 1;
  const int replicas = c.contains("parallel") ? c["parallel"].value("replicas", 1) : 1;
  const int perReplica = int(std::max<int64_t>(1, batch / std::max(1, replicas)));
  auto limit = [this](QSpinBox* box, int most, const QString& why) {
    if (!schemaTips_.count(box)) schemaTips_[box] = box->toolTip();
    const KeySpec* spec = ConfigSchema::instance().find(keyOf(box).toStdString());
    box->setMaximum(std::max(box->minimum(), spec ? std::min(most, int(spec->max)) : most));
    box->setToolTip(schemaTips_[box] + "\n" + why);
  };
  limit(stages_, blocks,
        tr("At most %1 here: the %2 model at model.depth = %3 has %1 blocks, and every stage needs one.")
            .arg(blocks)
            .arg(QString::fromStdString(task))
            .arg(depth));
  limit(microbatches_, perReplica,
        tr("At most %1 here: the batch of %2 (train.batch_size, from the preset) split over %3 replica(s).")
            .arg(perReplica)
            .arg(batch)
            .arg(replicas));
}

QString ControlPanel::keyOf(QWidget* w) const {
  for (const auto& [widget, key] : keyed_)
    if (widget == w) return key;
  return {};
}

QString ControlPanel::controlName(const QString& key) const {
  for (CompressorEditor* e : {forward_, backward_, gradients_})
    if (key.startsWith(e->prefix())) {
      const QString label = e->controlLabel(key.mid(e->prefix().size()).toStdString());
      return label.isEmpty() ? QString() : e->title() + " ▸ " + label;
    }
  for (const auto& [widget, k] : keyed_) {
    if (k != key) continue;
    if (auto* box = qobject_cast<QCheckBox*>(widget)) return box->text();
    auto* form = widget->parentWidget() ? qobject_cast<QFormLayout*>(widget->parentWidget()->layout()) : nullptr;
    auto* label = form ? qobject_cast<QLabel*>(form->labelForField(widget)) : nullptr;
    if (label) return label->text().remove('&');
  }
  return {};
}

QString ControlPanel::inPanelTerms(const QString& error) const {
  QString text = error;
  text.remove(QRegularExpression(QStringLiteral("^the settings panel: ")));
  static const QRegularExpression keyPattern(QStringLiteral("\\b[a-z_]+(\\.[a-z0-9_]+)+\\b"));
  QStringList elsewhere, named;
  QString out;
  qsizetype from = 0;
  for (auto it = keyPattern.globalMatch(text); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    const QString key = m.captured(0);
    const QString name = controlName(key);
    out += text.mid(from, m.capturedStart() - from);
    from = m.capturedEnd();
    if (!name.isEmpty() && !named.contains(key)) {  // the first mention says both; later ones the key alone
      out += QStringLiteral("“%1” (%2)").arg(name, key);
      named << key;
      continue;
    }
    out += key;
    if (name.isEmpty() && ConfigSchema::instance().find(key.toStdString()) && !elsewhere.contains(key))
      elsewhere << key;
  }
  out += text.mid(from);
  if (!elsewhere.isEmpty())
    out += tr(" (%1 has no control in this panel: it comes from the preset; change it in a preset file, or with "
              "pipesqueeze-cli --set)")
               .arg(elsewhere.join(", "));
  return out;
}

}  // namespace ps::ui
