#pragma once
// How the runs table and the compare view write sizes and durations: "4.2 MB", "1 m 05 s".
#include <QString>

namespace ps::ui {

QString humanBytes(double bytes);       // decimal units, one decimal above bytes
QString humanDuration(double seconds);  // "12.5 s", "3 m 07 s", "2 h 05 m"

}  // namespace ps::ui
