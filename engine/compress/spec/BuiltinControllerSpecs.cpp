// Catalogue entries of the adaptive controllers and the option rules each adds (their behaviour is in
// engine/compress/Adaptive.cpp).
#include "engine/compress/ControllerList.h"

namespace ps {

MethodSpec FixedFactorEntry::spec() {
  return methodSpec("none", "none", "K stays as configured");
}
std::string FixedFactorEntry::check(const CompressionOptions&, const std::string&) {
  return "";
}

MethodSpec GravacEntry::spec() {
  MethodSpec m =
      methodSpec("gravac", "GraVAC", "explores factors from theta_min to theta_max and sends the best gain per second",
                 {"theta_min", "theta_max", "adapt_policy", "epsilon", "omega", "window"});
  m.ownCompressors = true;
  return m;
}
std::string GravacEntry::check(const CompressionOptions& o, const std::string& where) {
  if (o.theta_max >= o.theta_min)
    return where + ".theta_max must be below " + where +
           ".theta_min (GraVAC explores from the mildest factor theta_min down to theta_max)";
  if (o.feedback != "none" && o.feedback != "ef")
    return where + ".feedback = " + o.feedback + " cannot go with " + where +
           ".adapt = gravac: GraVAC's two compressors keep error-feedback residuals of their own; use feedback ef "
           "(or none, which means the same under GraVAC)";
  return "";
}

MethodSpec AccordionEntry::spec() {
  MethodSpec m =
      methodSpec("accordion", "Accordion", "mild factor in critical phases (the gradient norm moves), K otherwise",
                 {"theta_min", "window", "eta"});
  m.measuresNorm = true;
  return m;
}
std::string AccordionEntry::check(const CompressionOptions&, const std::string&) {
  return "";
}

std::string checkController(const CompressionOptions& options, const std::string& where) {
  std::string why;
  ControllerList::named(options.adapt, [&](auto entry) { why = decltype(entry)::check(options, where); });
  return why;
}

}  // namespace ps
