#pragma once
// ps::ui::SettingsDiffView: the settings diff table (SettingsDiffModel) with its "Show all settings" box.
#include "app/ui/runs/SettingsDiffModel.h"

#include <QWidget>

class QCheckBox;
class QTableView;

namespace ps::ui {

class SettingsDiffView : public QWidget {
  Q_OBJECT
 public:
  explicit SettingsDiffView(QWidget* parent = nullptr);

  SettingsDiffModel* model() const { return model_; }
  void setRuns(const std::vector<SettingsDiffModel::Run>& runs);
  void setShowAll(bool all);

 private:
  SettingsDiffModel* model_;
  QCheckBox* showAll_;
  QTableView* view_;
};

}  // namespace ps::ui
