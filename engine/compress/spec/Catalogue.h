#pragma once
// The lab's compressors as data: every codec, error compensation and adaptive controller, with the options each
// reads (type, default, range, help and the control that edits it in the app). The config schema and presets
// validation, the app's compressor editor, the runs table and the settings diff read them from here, and the
// engine's entry lists (engine/compress/CodecEntry.h and the *List.h files) pair each entry with the code that
// builds it. Torch-free.
//
// A codec's entry comes from the codec list (engine/compress/CodecList.h), a compensation's from
// engine/compress/CompensationList.h and a controller's from engine/compress/ControllerList.h: adding one is its own
// code plus one line there. The options several methods share are listed in Catalogue.cpp.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ps {

struct OptionSpec {
  enum class Type { Int, Double, Bool, Choice };
  // How the app edits it: a spin box, a slider over an integer range, K's logarithmic slider, the bits slider
  // (1..8 and 16), a combo box of the choices, a check box.
  enum class Control { Spin, Slider, LogSlider, BitsSlider, Combo, Check };

  std::string name;  // the key under compression.<direction>.
  Type type = Type::Double;
  nlohmann::json fallback;           // the default
  double min = 0, max = 0;           // Int and Double
  std::vector<std::string> choices;  // Choice
  std::string label, help;
  Control control = Control::Spin;
  std::string atMinimum;  // what the minimum means, when it is a setting of its own ("auto" for DIANA's alpha 0)

  // Checks a value of this option; returns what is wrong ("" when it is fine).
  std::string check(const nlohmann::json& value) const;
  std::string allowed() const;  // "an integer in 1 .. 64", "one of a, b"
};

// Helpers that keep the tables short.
OptionSpec intOption(std::string name, long long fallback, double min, double max, std::string label, std::string help,
                     OptionSpec::Control control = OptionSpec::Control::Spin);
OptionSpec realOption(std::string name, double fallback, double min, double max, std::string label, std::string help);
OptionSpec boolOption(std::string name, bool fallback, std::string label, std::string help);
OptionSpec choiceOption(std::string name, std::string fallback, std::vector<std::string> choices, std::string label,
                        std::string help);

// One codec, compensation or controller.
struct MethodSpec {
  std::string name, label, help;
  std::vector<std::string> options;  // the options it reads: shared ones by name
  std::vector<OptionSpec> own;       // options no other method has (they appear in `options` too)
  bool sparse = false;               // codecs: sends a subset of the elements (K applies; K can adapt)
  // Sparsifiers: the options that act only when value_bits quantizes the kept values again (at most 8 bits).
  std::vector<std::string> requantizing;
  bool forwardOnly = false;          // compensations: activations only (AQ-SGD keeps per-sample buffers)
  // Codecs whose encoder and decoder are layers of the stages on either side of a boundary (the bottleneck): set on
  // a boundary's forward direction only; its backward direction then carries the gradient of the code.
  bool layers = false;
  // Compensations: why it cannot be switched on during a run ("" when it can), as a refusal gives it.
  std::string onlyAtStart;
  // Codecs: the id their payloads' header carries (engine/compress/Payload.h). Codecs share one only when they
  // share the payload format, so that a receiver of either decodes both (TopK, GaussianK and the sampled threshold).
  int payload = 0;
  // Codecs whose every value travels in a fixed number of bits (fp16 and bf16: 16, sign: 1); 0 for the others, whose
  // bits per value are an option ("bits", or a sparsifier's "value_bits") or not a fixed number at all.
  int valueBits = 0;
  // Controllers: the sender keeps compressors of the controller's own and sends one of their payloads (GraVAC); the
  // link measures the norm of what crossed, which the controller watches (Accordion).
  bool ownCompressors = false;
  bool measuresNorm = false;
  bool reads(const std::string& option) const;
};

// A spec with its name, its label in the app, one line of help and the options it reads; the rest by field name.
MethodSpec methodSpec(std::string name, std::string label, std::string help, std::vector<std::string> options = {});

namespace catalogue {

// Options several methods read (K, bits, rounding, ...), in the order the editor shows them.
const std::vector<OptionSpec>& sharedOptions();
// Every option of a direction: the shared ones, then each method's own, each once. Excludes method, feedback and
// adapt, which choose among codecs(), compensations() and controllers().
const std::vector<OptionSpec>& options();
const OptionSpec* option(const std::string& name);

const std::vector<MethodSpec>& codecs();
const std::vector<MethodSpec>& compensations();
const std::vector<MethodSpec>& controllers();
const MethodSpec* codec(const std::string& name);
const MethodSpec* compensation(const std::string& name);
const MethodSpec* controller(const std::string& name);
std::vector<std::string> names(const std::vector<MethodSpec>& methods);

// Whether a direction's option does anything under this codec, compensation and controller (a controller acts only
// on a sparse codec; a sparsifier's rounding, range and bucket only when its value_bits quantize again): what the
// editor shows and the settings diff compares.
bool optionApplies(const std::string& option, const std::string& method, const std::string& feedback,
                   const std::string& adapt, int valueBits = 32);
// The most value bits at which a sparsifier quantizes its kept values again (16 is fp16, 32 float32).
inline constexpr int kMostRequantizedBits = 8;

}  // namespace catalogue
}  // namespace ps
