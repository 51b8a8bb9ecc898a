#include "app/ui/runs/SettingsDiffView.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

namespace ps::ui {

SettingsDiffView::SettingsDiffView(QWidget* parent)
    : QWidget(parent),
      model_(new SettingsDiffModel(this)),
      showAll_(new QCheckBox(tr("Show all settings"), this)),
      view_(new QTableView(this)) {
  view_->setModel(model_);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setToolTip(tr("The settings the runs started with; mid-run changes are markers on the charts"));
  connect(showAll_, &QCheckBox::toggled, this, &SettingsDiffView::setShowAll);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(showAll_);
  layout->addWidget(view_);
}

void SettingsDiffView::setRuns(const std::vector<SettingsDiffModel::Run>& runs) {
  model_->setRuns(runs);
  view_->resizeColumnsToContents();
}

void SettingsDiffView::setShowAll(bool all) {
  {
    const QSignalBlocker block(showAll_);
    showAll_->setChecked(all);
  }
  model_->setShowAll(all);
  view_->resizeColumnsToContents();
}

}  // namespace ps::ui
