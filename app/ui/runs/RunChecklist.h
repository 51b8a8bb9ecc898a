#pragma once
// ps::ui::RunChecklist: a list of runs, each with its colour swatch and a checkbox that shows or hides it.
#include <QListWidget>

#include <set>
#include <utility>
#include <vector>

namespace ps::ui {

class RunChecklist : public QListWidget {
  Q_OBJECT
 public:
  explicit RunChecklist(QWidget* parent = nullptr);

  // (id, label) per run; the runs in `hidden` start unticked. Emits nothing.
  void setRuns(const std::vector<std::pair<qint64, QString>>& runs, const std::set<qint64>& hidden);
  void setChecked(qint64 id, bool checked);  // emits nothing

 Q_SIGNALS:
  void runToggled(qint64 id, bool visible);
};

}  // namespace ps::ui
