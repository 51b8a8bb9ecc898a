#pragma once
// ps::ui::FlowLayout: widgets left to right at their size hints, starting a new row where the next one does not fit,
// so a bar of controls wraps in a narrow window instead of forcing the window wider. Its height follows its width.
#include <QLayout>
#include <QList>

namespace ps::ui {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr, int spacing = 6);
  ~FlowLayout() override;

  void addItem(QLayoutItem* item) override;
  int count() const override;
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override;
  bool hasHeightForWidth() const override;
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;  // the widest item: narrower than that, nothing fits
  QSize sizeHint() const override;     // everything in one row
  void setGeometry(const QRect& rect) override;

  int rows() const { return rows_; }  // as laid out last

 private:
  int place(const QRect& rect, bool apply) const;  // the height the items take in `rect`'s width

  QList<QLayoutItem*> items_;
  int spacing_;
  mutable int rows_ = 0;
};

}  // namespace ps::ui
